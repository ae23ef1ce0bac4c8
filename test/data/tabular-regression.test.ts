/**
 * Regression on the buyer's own tabular data, in-process through main(argv): `pouw data add --task regression` a CSV of
 * 2,000 rows made here (float32 label), `pouw train` a tabular-mlp with the mean-squared-error head by CID on the cpu
 * engine (tfjs) and on the pouw engine (kernels/mlp.ts), which give the same state hash at every step, `pouw audit`
 * recomputes the honest trace bit for bit and fails a copied one at step 1. Bad inputs name the row; a manifest whose
 * task is not the data set's is refused.
 */
import { expect } from "chai";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../helpers/cli.ts";
import { tempDir } from "../ml/helpers.ts";
import { Rng } from "../../verifier/src/ml/prng.ts";
import { createRun, offlineSalt, parseManifest, ManifestError } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { DataFormatError, decodeTabular, encodeTabular, parseTabular } from "../../verifier/src/data/index.ts";
import { meanSquaredError } from "../../verifier/src/ml/kernels/elementwise.ts";

const ROWS = 2000;

/** y = 2 x1 - x2 + |x3| + small noise, three decimal places; a fixed order. */
function rows(): { x: number[]; y: string }[] {
  const rng = new Rng(7, "regression-test", 0);
  return Array.from({ length: ROWS }, () => {
    const x = [0, 1, 2].map(() => (rng.nextInt(4001) - 2000) / 1000);
    const noise = (rng.nextInt(101) - 50) / 1000;
    return { x, y: (2 * x[0]! - x[1]! + Math.abs(x[2]!) + noise).toFixed(3) };
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

type Trace = { segments: { states?: string[]; stateHashes?: string[] }[]; evaluation?: { loss: number; accuracy?: number } };

describe("data sets by content id: tabular regression", function () {
  this.timeout(300_000);
  let dir: string;
  let store: string;
  let added: { cid: string; fragment: Parameters<typeof manifestOf>[0]; schema: { label: unknown; rows: number } };

  before(async () => {
    dir = await tempDir("tabular-regression");
    store = join(dir, "store");
    await writeFile(join(dir, "r.csv"), "x1,x2,x3,y\n" + rows().map((e) => `${e.x.join(",")},${e.y}`).join("\n") + "\n");
    const out = await runPouw(["data", "add", join(dir, "r.csv"), "--format", "csv", "--label", "y", "--task", "regression", "--store", store, "--json"]);
    expect(out.code, out.stderr).to.equal(0);
    added = JSON.parse(out.stdout);
    await writeFile(join(dir, "m.json"), JSON.stringify(manifestOf(added.fragment)));
  });

  it("records the task in the schema (label type float32) and proposes a regression model", () => {
    expect(added.schema.label).to.deep.equal({ name: "y", type: "float32" });
    expect(added.schema.rows).to.equal(ROWS);
    expect(added.fragment.model).to.deep.equal({ arch: "tabular-mlp", task: "regression", hidden: 32, inputs: 3 });
  });

  it("stores each label as the float32 nearest its decimal, after the features, and decodes back", async () => {
    const bytes = await new LocalDirStore(store).get(added.cid);
    const d = decodeTabular(bytes);
    const first = rows()[0]!;
    expect(d.targets![0]).to.equal(Math.fround(Number(first.y)));
    expect(d.features[2]).to.equal(Math.fround(first.x[2]!));
    expect(Buffer.from(encodeTabular(d)).equals(Buffer.from(bytes))).to.equal(true);
    // a non-finite label is not canonical
    const bad = Uint8Array.from(bytes);
    new DataView(bad.buffer).setFloat32(bad.length - 4, Number.NaN, true);
    expect(() => decodeTabular(bad)).to.throw(DataFormatError, new RegExp(`row ${ROWS}'s label is not finite`));
  });

  it("the MSE head: loss and gradient of a hand-computed case", () => {
    // z = [1.5, -0.25] (P2 + b2), y = [1, 0.75]: d = [0.5, -1], loss = (0.25 + 1) / 2, dz = 2 d / 2
    const r = meanSquaredError(Float32Array.of(1, -0.75), Float32Array.of(0.5), Float32Array.of(1, 0.75), 2, 1);
    expect(Array.from(r.z2)).to.deep.equal([1.5, -0.25]);
    expect(r.loss).to.equal(0.625);
    expect(Array.from(r.dz2)).to.deep.equal([0.5, -1]);
  });

  it("trains by CID on the cpu engine and on the pouw engine with the same state hash at every step, and learns", async () => {
    const cpu = join(dir, "honest");
    const t = await runPouw(["train", "--manifest", join(dir, "m.json"), "--out", cpu, "--data-store", store, "--engine", "cpu"]);
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stdout).to.match(/30 steps in 3 segments/);
    const pouw = join(dir, "honest-pouw");
    const p = await runPouw(["train", "--manifest", join(dir, "m.json"), "--out", pouw, "--data-store", store, "--engine", "pouw"]);
    expect(p.code, p.stderr).to.equal(0);
    const a = JSON.parse(await readFile(join(cpu, "trace.json"), "utf8")) as Trace;
    const b = JSON.parse(await readFile(join(pouw, "trace.json"), "utf8")) as Trace;
    expect(JSON.stringify(a.segments)).to.equal(JSON.stringify(b.segments));
    expect(a.evaluation!.loss).to.equal(b.evaluation!.loss);
    expect(a.evaluation!.accuracy).to.equal(undefined);
    // predicting 0 everywhere (about what the initial net does) scores the held-out labels' mean square; 30 steps
    // more than halve it
    const heldOut = rows().slice(ROWS - ROWS / 10);
    const meanSquare = heldOut.reduce((acc, e) => acc + Number(e.y) ** 2, 0) / heldOut.length;
    expect(a.evaluation!.loss).to.be.lessThan(meanSquare / 2);
  });

  it("audits the honest trace bit for bit and fails a copied one at step 1", async () => {
    const m = join(dir, "m.json");
    const a = await runPouw(["audit", "--trace", join(dir, "honest"), "--manifest", m, "--data-store", store]);
    expect(a.code, a.stdout + a.stderr).to.equal(0);
    expect(a.stdout).to.match(/all 3 audited segments ok/);
    const copy = join(dir, "copy");
    const t = await runPouw(["train", "--manifest", m, "--out", copy, "--job-id", "1", "--strategy", `copy:${join(dir, "honest")}`, "--data-store", store]);
    expect(t.code, t.stderr).to.equal(0);
    const c = await runPouw(["audit", "--trace", copy, "--manifest", m, "--job-id", "1", "--data-store", store]);
    expect(c.code).to.equal(1);
    expect(c.stdout).to.match(/segment 0: FAIL recompute: state-divergence at step 1 /);
  });

  it("refuses a manifest whose task or widths are not the data set's", async () => {
    const s = new LocalDirStore(store);
    for (const [model, re] of [
      [{ arch: "tabular-mlp", hidden: 16, inputs: 3, classes: 2 }, /model\.task: classification, but data set .* is a regression set \(label "y" of type float32\)/],
      [{ arch: "tabular-mlp", task: "regression", hidden: 16, inputs: 4 }, /model\.inputs: 4, but data set .* has 3 feature columns/],
    ] as const) {
      const manifest = parseManifest({ ...manifestOf(added.fragment), model });
      let caught: unknown;
      try {
        await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store: s });
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(ManifestError);
      expect((caught as Error).message).to.match(re);
    }
    const base = manifestOf(added.fragment);
    expect(() => parseManifest({ ...base, model: { arch: "tabular-mlp", task: "regression", inputs: 3, classes: 2 } })).to.throw(ManifestError, /model\.classes: is not used by a regression tabular-mlp/);
    expect(() => parseManifest({ ...base, model: { arch: "tabular-mlp", inputs: 3 } })).to.throw(ManifestError, /model\.classes: is required for a classification tabular-mlp/);
  });

  it("malformed regression labels: one error naming the row and column", () => {
    const csv = (text: string) => () => parseTabular(new TextEncoder().encode(text), { format: "csv", label: "y", task: "regression" });
    expect(csv("a,y\n1,2.5\n2,abc\n3,1\n")).to.throw(DataFormatError, /^data row 2 \(line 3\), column "y": regression label "abc" is not a decimal number$/);
    expect(csv("a,y\n1,2.5\n2,\n3,1\n")).to.throw(DataFormatError, /^data row 2 \(line 3\), column "y": regression label "" is not a decimal number$/);
    expect(csv("a,y\n1,1e39\n2,1\n")).to.throw(DataFormatError, /^data row 1 \(line 2\), column "y": regression label "1e39" is out of the float32 range$/);
    const jsonl = (text: string) => () => parseTabular(new TextEncoder().encode(text), { format: "jsonl", label: "y", task: "regression" });
    expect(jsonl('{"a":1,"y":2}\n{"a":2,"y":"3"}\n')).to.throw(DataFormatError, /^data row 2 \(line 2\), column "y": "3" is a JSON string, not a number/);
    expect(jsonl('{"a":1,"y":2}\n{"a":2,"y":null}\n')).to.throw(DataFormatError, /^data row 2 \(line 2\), column "y": a null label \(a regression label is a number\)$/);
    expect(() => parseTabular(new TextEncoder().encode("a,y\n1,2\n"), { format: "csv", label: "y", task: "ranking" as never })).to.throw(DataFormatError, /task "ranking" is not classification or regression/);
  });

  it("data add: --task other than classification|regression is one line, exit 2", async () => {
    const r = await runPouw(["data", "add", join(dir, "r.csv"), "--format", "csv", "--label", "y", "--task", "ranking", "--store", store]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/--task must be classification or regression, got "ranking"/);
  });
});
