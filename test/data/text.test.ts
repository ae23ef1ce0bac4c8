/**
 * The buyer's own text by content id: `pouw data add --format text` of a folder of .txt files made here (files in the
 * byte order of their names, bytes as given, a byte vocabulary derived from the data), canonical bytes pouw-text-1
 * checked against a layout written out by hand, then `pouw train` a char-transformer on it by CID under both numerics
 * (bitwise on tfjs-cpu, bitwise-v2 on the pouw kernels) and `pouw audit` bit for bit; a copied trace fails at step 1.
 * Bad inputs: invalid UTF-8 names the file and the byte offset; a manifest's vocab must be the data set's.
 */
import { expect } from "chai";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import canonicalizeModule from "canonicalize";
import { runPouw } from "../helpers/cli.ts";
import { tempDir } from "../ml/helpers.ts";
import { Rng } from "../../verifier/src/ml/prng.ts";
import { createRun, offlineSalt, parseManifest, ManifestError } from "../../verifier/src/ml/index.ts";
import { LocalDirStore, cidOf } from "../../verifier/src/store/index.ts";
import { DataFormatError, decodeText, invalidUtf8Offset, parseText, readText } from "../../verifier/src/data/index.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;

const WORDS = ["the", "market", "pays", "for", "verified", "training", "café", "and", "every", "step", "is", "audited"];

/** A few thousand bytes of sentences from a fixed word list (one non-ASCII word: two-byte UTF-8). */
function text(seed: number, sentences: number): string {
  const rng = new Rng(seed, "text-test", 0);
  const out: string[] = [];
  for (let s = 0; s < sentences; s++) {
    const n = 4 + rng.nextInt(6);
    out.push(Array.from({ length: n }, () => WORDS[rng.nextInt(WORDS.length)]!).join(" ") + ".\n");
  }
  return out.join("");
}

function manifestOf(fragment: { model: object; corpora: [{ name: string; contentId: string; declaredTokens: number }] }, over: Record<string, unknown> = {}) {
  return {
    version: 2,
    kind: "pouw/training-job",
    model: { ...fragment.model, layers: 1, dModel: 16, heads: 2, context: 16 },
    init: { seed: 5 },
    corpora: [{ ...fragment.corpora[0], licence: "CC0-1.0", payoutAddress: "0x00000000000000000000000000000000000000d3" }],
    data: { seed: 9 },
    optimizer: { name: "adam", lr: 0.01 },
    training: { batchSize: 4, steps: 20, stepsPerSegment: 10 },
    numerics: "bitwise",
    stateDigest: "sha256-v2",
    policy: { auditRate: 0.25, minTier: 4, challengeWindowSeconds: 3600, providerStakeWei: "1000000000000000000", paymentWei: "100000000000000000" },
    ...over,
  };
}

describe("data sets by content id: text", function () {
  this.timeout(300_000);
  let dir: string;
  let store: string;
  let added: { cid: string; bytes: number; fragment: Parameters<typeof manifestOf>[0]; schema: { files: { name: string; bytes: number }[]; vocabulary: number[]; tokens: number; split: { testTokens: number } } };
  const files: Record<string, string> = {};

  before(async () => {
    dir = await tempDir("text-data");
    store = join(dir, "store");
    await mkdir(join(dir, "corpus"));
    // byte order of the names: "B.txt" (0x42) < "a.txt" (0x61) < "b.txt"; "notes.md" is not a .txt file
    files["b.txt"] = text(1, 150);
    files["a.txt"] = text(2, 150);
    files["B.txt"] = text(3, 150);
    for (const [name, body] of Object.entries(files)) await writeFile(join(dir, "corpus", name), body);
    await writeFile(join(dir, "corpus", "notes.md"), "not read");
    const out = await runPouw(["data", "add", join(dir, "corpus"), "--format", "text", "--store", store, "--json"]);
    expect(out.code, out.stderr).to.equal(0);
    added = JSON.parse(out.stdout);
    for (const numerics of ["bitwise", "bitwise-v2"]) await writeFile(join(dir, `m-${numerics}.json`), JSON.stringify(manifestOf(added.fragment, { numerics })));
  });

  it("reads the .txt files in byte order of their names, bytes as given, over the distinct bytes ascending", async () => {
    expect(added.schema.files.map((f) => f.name)).to.deep.equal(["B.txt", "a.txt", "b.txt"]);
    const all = Buffer.concat(["B.txt", "a.txt", "b.txt"].map((n) => Buffer.from(files[n]!, "utf8")));
    const vocabulary = [...new Set(all)].sort((x, y) => x - y);
    expect(added.schema.vocabulary).to.deep.equal(vocabulary);
    expect(vocabulary).to.include(0xc3).and.include(0xa9); // "é" is two byte tokens
    expect(added.schema.tokens).to.equal(all.length);
    expect(added.schema.split.testTokens).to.equal(Math.floor(all.length / 10));
    expect(added.fragment.model).to.deep.equal({ arch: "char-transformer", vocab: vocabulary.length, layers: 2, dModel: 64, heads: 2, context: 64 });
    // the canonical bytes, written out independently: magic, schema length, RFC 8785 schema, one id per byte
    const schema = new TextEncoder().encode(canonicalize(added.schema));
    const expected = Buffer.concat([Buffer.from("POUWTXT1"), Buffer.from(Uint32Array.of(schema.length).buffer), schema, Buffer.from(all.map((b) => vocabulary.indexOf(b)))]);
    const stored = await new LocalDirStore(store).get(added.cid);
    expect(Buffer.from(stored).equals(expected)).to.equal(true);
    expect(added.cid).to.equal(cidOf(expected));
    expect(decodeText(stored).ids.length).to.equal(all.length);
  });

  it("a single file is the same text as a folder holding only it", () => {
    const one = readText(join(dir, "corpus", "a.txt"));
    const folder = parseText([{ name: "a.txt", bytes: new TextEncoder().encode(files["a.txt"]!) }]);
    expect(one.schema).to.deep.equal(folder.schema);
  });

  for (const numerics of ["bitwise", "bitwise-v2"] as const) {
    it(`trains a char-transformer on the text by CID (${numerics}) and the audit recomputes it bit for bit`, async () => {
      const m = join(dir, `m-${numerics}.json`);
      const out = join(dir, `honest-${numerics}`);
      const t = await runPouw(["train", "--manifest", m, "--out", out, "--data-store", store]);
      expect(t.code, t.stderr).to.equal(0);
      expect(t.stdout).to.match(/20 steps in 2 segments/);
      const a = await runPouw(["audit", "--trace", out, "--manifest", m, "--data-store", store]);
      expect(a.code, a.stdout + a.stderr).to.equal(0);
      expect(a.stdout).to.match(/all 2 audited segments ok/);
      const trace = JSON.parse(await readFile(join(out, "trace.json"), "utf8")) as { evaluation: { loss: number } };
      // uniform over the vocabulary is ln V; 20 steps on repetitive text beat it
      expect(trace.evaluation.loss).to.be.lessThan(Math.log(added.schema.vocabulary.length));
    });
  }

  it("fails a copied trace (another job's states) at step 1", async () => {
    const m = join(dir, "m-bitwise-v2.json");
    const copy = join(dir, "copy");
    const t = await runPouw(["train", "--manifest", m, "--out", copy, "--job-id", "1", "--strategy", `copy:${join(dir, "honest-bitwise-v2")}`, "--data-store", store]);
    expect(t.code, t.stderr).to.equal(0);
    const a = await runPouw(["audit", "--trace", copy, "--manifest", m, "--job-id", "1", "--data-store", store]);
    expect(a.code).to.equal(1);
    expect(a.stdout).to.match(/segment 0: FAIL recompute: state-divergence at step 1 /);
  });

  it("refuses a manifest whose vocab is not the data set's, or that omits it, or gives it with an npm corpus", async () => {
    const base = manifestOf(added.fragment);
    const manifest = parseManifest({ ...base, model: { ...base.model, vocab: 7 } });
    let caught: unknown;
    try {
      await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store: new LocalDirStore(store) });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(ManifestError);
    expect((caught as Error).message).to.match(new RegExp(`model\\.vocab: 7, but data set ${added.cid} has a vocabulary of ${added.schema.vocabulary.length} bytes`));
    const { vocab: _, ...noVocab } = base.model as { vocab?: number };
    expect(() => parseManifest({ ...base, model: noVocab })).to.throw(ManifestError, /model\.vocab: is required for a text data set by content id/);
    expect(() => parseManifest({ ...base, data: { seed: 1, years: [1990, 1991] } })).to.throw(ManifestError, /data\.years: is not used by a text data set by content id/);
    const sotu = JSON.parse(await readFile("examples/sotu.json", "utf8")) as { model: object };
    expect(() => parseManifest({ ...sotu, model: { ...sotu.model, vocab: 96 } })).to.throw(ManifestError, /model\.vocab: is not used with an npm corpus/);
  });

  it("invalid UTF-8: one error naming the file and the byte offset", async () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    const cases: [Uint8Array, number][] = [
      [Uint8Array.of(...enc("ok "), 0x80), 3], // a lone continuation byte
      [Uint8Array.of(...enc("ab"), 0xc0, 0xaf), 2], // overlong "/"
      [Uint8Array.of(0x61, 0xed, 0xa0, 0x80), 1], // a UTF-16 surrogate
      [Uint8Array.of(0x61, 0x62, 0x63, 0xe2, 0x82), 3], // truncated at the end
      [Uint8Array.of(0xf4, 0x90, 0x80, 0x80), 0], // above U+10FFFF
    ];
    for (const [bytes, at] of cases) {
      expect(invalidUtf8Offset(bytes)).to.equal(at);
      expect(() => parseText([{ name: "ok.txt", bytes: enc("fine text") }, { name: "bad.txt", bytes }])).to.throw(DataFormatError, new RegExp(`^file "bad.txt": invalid UTF-8 at byte offset ${at} `));
    }
    expect(invalidUtf8Offset(enc("café \u{1F600} \uFEFF"))).to.equal(-1);
    await mkdir(join(dir, "bad"));
    await writeFile(join(dir, "bad", "x.txt"), Buffer.from([0x68, 0x69, 0xff]));
    const r = await runPouw(["data", "add", join(dir, "bad"), "--format", "text", "--store", store]);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim().split("\n")).to.have.length(1);
    expect(r.stderr).to.match(/file "x.txt": invalid UTF-8 at byte offset 2 \(0xff\)/);
  });

  it("empty sets, a one-byte vocabulary, bad splits and non-canonical bytes are named errors", async () => {
    await mkdir(join(dir, "empty"));
    await writeFile(join(dir, "empty", "readme.md"), "x");
    expect(() => readText(join(dir, "empty"))).to.throw(DataFormatError, /has no \.txt files/);
    expect(() => parseText([{ name: "e.txt", bytes: new Uint8Array(0) }])).to.throw(DataFormatError, /the text is empty/);
    expect(() => parseText([{ name: "a.txt", bytes: new TextEncoder().encode("aaaa") }])).to.throw(DataFormatError, /1 distinct byte/);
    expect(() => parseText([{ name: "a.txt", bytes: new TextEncoder().encode("abab") }], { split: "last:4" })).to.throw(DataFormatError, /holds out 4 of 4 tokens/);
    expect(() => parseText([{ name: "a.txt", bytes: new TextEncoder().encode("abcdef") }], { maxBytes: 5 })).to.throw(DataFormatError, /over the 5-byte cap/);
    const stored = Uint8Array.from(await new LocalDirStore(store).get(added.cid));
    stored[stored.length - 1] = added.schema.vocabulary.length; // an id outside the vocabulary
    expect(() => decodeText(stored)).to.throw(DataFormatError, /outside the vocabulary/);
  });
});
