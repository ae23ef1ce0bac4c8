/**
 * A base model from outside the market: `pouw data add FILE --format safetensors` of a file written here (its own
 * writer, not pouw's checkpoint encoder; tensors in F32, F16 and BF16, header order unlike data order, a foreign
 * __metadata__), checked against the declared char-transformer and stored as a canonical checkpoint whose weights
 * are the file's values exactly (compared with the values the file was made from). A LoRA job names that CID as its
 * base, `pouw train` then `pouw audit` agree bit for bit. Malformed files each give one SafetensorsError naming the
 * tensor: truncated header, header length past the end, unknown dtype, shape mismatch, missing tensor, extra tensor,
 * overlapping offsets; the CLI exits 2 with one line.
 */
import { expect } from "chai";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../helpers/cli.ts";
import { exampleJson, tempDir } from "../ml/helpers.ts";
import { Rng } from "../../verifier/src/ml/prng.ts";
import { decodeBase } from "../../verifier/src/ml/adapters/index.ts";
import { createRun, offlineSalt, parseManifest, train } from "../../verifier/src/ml/index.ts";
import { transformerParamSpecs } from "../../verifier/src/ml/state-layout.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { bf16ToF32, f16ToF32, parseSafetensors, safetensorsBase, SafetensorsError } from "../../verifier/src/data/index.ts";

const SHAPE = { layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 64 };
const ARCH = JSON.stringify({ arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 });
const sotu = exampleJson("sotu-v2.json") as { corpora: unknown[]; data: object; policy: object };
const SPECS = transformerParamSpecs(SHAPE);

type Dtype = "F32" | "F16" | "BF16" | "F64";
type Entry = { name: string; dtype: Dtype; shape: number[]; values: number[] };

/** binary16 bits of a value with at most 8 significant bits and |x| in [2^-14, 2^15] or 0 (what this test writes). */
function f16Bits(x: number): number {
  if (x === 0) return Object.is(x, -0) ? 0x8000 : 0;
  const sign = x < 0 ? 0x8000 : 0;
  const a = Math.abs(x);
  const e = Math.floor(Math.log2(a));
  const frac = (a / 2 ** e - 1) * 1024;
  if (!Number.isInteger(frac) || e < -14 || e > 15) throw new Error(`test value ${x} is not a binary16 normal`);
  return sign | ((e + 15) << 10) | frac;
}

/** bfloat16 bits: the upper half of the float32 (exact for the values this test writes). */
function bf16Bits(x: number): number {
  const dv = new DataView(new ArrayBuffer(4));
  dv.setFloat32(0, x, false);
  if ((dv.getUint32(0, false) & 0xffff) !== 0) throw new Error(`test value ${x} is not a bfloat16 value`);
  return dv.getUint32(0, false) >>> 16;
}

/** A safetensors file, written the way the format's spec says (header in `order`, data in the entries' order). */
function writeSafetensors(entries: Entry[], opts: { order?: (names: string[]) => string[]; offsets?: (name: string, o: [number, number]) => [number, number]; metadata?: Record<string, string> } = {}): Uint8Array {
  const size = { F32: 4, F16: 2, BF16: 2, F64: 8 };
  const chunks: Uint8Array[] = [];
  const header: Record<string, unknown> = {};
  let offset = 0;
  const at: Record<string, unknown> = {};
  for (const e of entries) {
    const bytes = new Uint8Array(e.values.length * size[e.dtype]);
    const dv = new DataView(bytes.buffer);
    e.values.forEach((v, i) => {
      if (e.dtype === "F32") dv.setFloat32(4 * i, v, true);
      else if (e.dtype === "F64") dv.setFloat64(8 * i, v, true);
      else dv.setUint16(2 * i, e.dtype === "F16" ? f16Bits(v) : bf16Bits(v), true);
    });
    const o: [number, number] = [offset, offset + bytes.length];
    at[e.name] = { dtype: e.dtype, shape: e.shape, data_offsets: opts.offsets ? opts.offsets(e.name, o) : o };
    offset += bytes.length;
    chunks.push(bytes);
  }
  for (const name of (opts.order ?? ((n) => n))(entries.map((e) => e.name))) header[name] = at[name];
  header.__metadata__ = opts.metadata ?? { format: "pt" };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let p = 8 + json.length;
  for (const c of chunks) (out.set(c, p), (p += c.length));
  return out;
}

/**
 * The model's tensors: F32 (full float32 values) for the layer-norm gains and every third tensor, F16 and BF16 for
 * the others with values k/256 (|k| <= 32: exact in both); the values each tensor must decode to.
 */
function baseEntries(seed: number, dtypeOf?: (i: number, name: string) => Dtype): Entry[] {
  const rng = new Rng(seed, "safetensors-test", 0);
  return SPECS.map((s, i) => {
    const n = s.shape.reduce((a, b) => a * b, 1);
    const dtype = dtypeOf ? dtypeOf(i, s.name) : s.name.endsWith(".g") || i % 3 === 0 ? "F32" : i % 3 === 1 ? "F16" : "BF16";
    const values = Array.from({ length: n }, () =>
      s.name.endsWith(".g") ? Math.fround(1 + (rng.nextInt(2001) - 1000) / 16384) : dtype === "F32" ? Math.fround((rng.nextInt(200_001) - 100_000) / 1_000_000) : (rng.nextInt(65) - 32) / 256,
    );
    return { name: s.name, dtype, shape: [...s.shape], values };
  });
}

function adapterManifest(baseCid: string): Record<string, unknown> {
  return {
    version: 2,
    kind: "pouw/training-job",
    model: { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 },
    init: { checkpointCid: baseCid, optimizerState: "fresh" },
    corpora: sotu.corpora,
    data: { ...(sotu.data as object), seed: 77 },
    optimizer: { name: "adam", lr: 0.01 },
    adapter: { kind: "lora", rank: 2, targets: ["wq", "wv"], alpha: 4, seed: 5 },
    training: { batchSize: 4, steps: 8, stepsPerSegment: 4 },
    numerics: "bitwise-v2",
    stateDigest: "sha256-v2",
    policy: sotu.policy,
  };
}

/** The SafetensorsError safetensorsBase raises for `bytes` (fails the test if it raises nothing or another error). */
function refusal(bytes: Uint8Array): SafetensorsError {
  try {
    safetensorsBase(bytes, SHAPE);
  } catch (err) {
    expect(err).to.be.instanceOf(SafetensorsError);
    return err as SafetensorsError;
  }
  throw new Error("expected a SafetensorsError");
}

describe("pouw data add --format safetensors: a base from outside the market", function () {
  this.timeout(600_000);
  let dir: string;
  let store: string;
  let entries: Entry[];
  let cid: string;

  before(async () => {
    dir = await tempDir("safetensors");
    store = join(dir, "store");
    entries = baseEntries(3);
  });

  it("stores the file's weights exactly as a canonical char-transformer checkpoint and prints the fragment naming its CID", async () => {
    const file = join(dir, "base.safetensors");
    // header order reversed against the data order: a reader that assumed them equal would swap tensors
    await writeFile(file, writeSafetensors(entries, { order: (n) => [...n].reverse() }));
    const r = await runPouw(["data", "add", file, "--format", "safetensors", "--arch", ARCH, "--store", store, "--json"]);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { cid: string; weights: number; tensors: number; sourceDtypes: string[]; fragment: { model: object; init: object } };
    cid = out.cid;
    expect(out.tensors).to.equal(SPECS.length);
    expect(out.weights).to.equal(6672); // 96*16 + 16*16 + (4*16 + 4*256 + 2*16*64 + 64 + 16) + 2*16 + 16*96 + 96
    expect([...out.sourceDtypes].sort()).to.deep.equal(["BF16", "F16", "F32"]);
    expect(out.fragment).to.deep.equal({ model: { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 64 }, init: { checkpointCid: cid, optimizerState: "fresh" } });
    const base = decodeBase(await new LocalDirStore(store).get(cid), SHAPE, cid);
    expect(base.optimizer).to.equal("sgd");
    entries.forEach((e, i) => expect(Array.from(base.params[i]!), e.name).to.deep.equal(e.values));
  });

  it("the same weights in another tensor order, dtype and metadata give the same bytes and CID", () => {
    const allF32 = entries.map((e) => ({ ...e, dtype: "F32" as const }));
    const other = safetensorsBase(writeSafetensors(allF32, { metadata: { source: "another writer" } }), SHAPE);
    expect(other.cid).to.equal(cid);
    expect(other.sourceDtypes).to.deep.equal(["F32"]);
  });

  it("F16 and BF16 decode to float32 exactly, specials included", () => {
    expect(f16ToF32(0x3c00)).to.equal(1);
    expect(f16ToF32(0xc000)).to.equal(-2);
    expect(f16ToF32(0x0001)).to.equal(2 ** -24); // the smallest subnormal
    expect(f16ToF32(0x7bff)).to.equal(65504); // the largest normal
    expect(Object.is(f16ToF32(0x8000), -0)).to.equal(true);
    expect(f16ToF32(0x7c00)).to.equal(Infinity);
    expect(f16ToF32(0x7e00)).to.be.NaN;
    expect(bf16ToF32(0x3f80)).to.equal(1);
    expect(bf16ToF32(0xc049)).to.equal(Math.fround(-3.140625));
    expect(bf16ToF32(0x0001)).to.equal(2 ** -133); // a float32 subnormal
    expect(bf16ToF32(0xff80)).to.equal(-Infinity);
  });

  it("a LoRA job on the imported base: pouw train then pouw audit agree bit for bit", async () => {
    const manifestPath = join(dir, "adapter.json");
    await writeFile(manifestPath, JSON.stringify(adapterManifest(cid)));
    const out = join(dir, "lora");
    const t = await runPouw(["train", "--manifest", manifestPath, "--out", out, "--base-store", store, "--data-store", join(dir, "data-store")]);
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stdout).to.match(/8 steps in 2 segments/);
    const a = await runPouw(["audit", "--trace", out, "--manifest", manifestPath, "--base-store", store, "--data-store", join(dir, "audit-store"), "--segments", "all"]);
    expect(a.code, a.stdout + a.stderr).to.equal(0);
    expect(a.stdout).to.match(/all 2 audited segments ok/);
    // the adapter trained on this base: its h(0) state is the zero-B adapter, its loss that of the file's weights
    const trace = JSON.parse(await readFile(join(out, "trace.json"), "utf8")) as { stateHashes: string[] };
    expect(trace.stateHashes).to.have.length(9);
  });

  it("the imported base is also a distillation teacher: a student job on it trains one step", async () => {
    const m = parseManifest({
      ...adapterManifest(cid),
      model: { arch: "char-transformer", layers: 1, dModel: 8, heads: 2, context: 16 },
      init: { seed: 3 },
      adapter: undefined,
      distill: { teacher: { cid, arch: JSON.parse(ARCH) as object }, temperature: 2, alpha: 0.25 },
      training: { batchSize: 4, steps: 1, stepsPerSegment: 1 },
    });
    const run = await createRun(m, { jobId: 0n, salt: offlineSalt(0n), store: new LocalDirStore(store) });
    const { trace } = await train(run, { outDir: join(dir, "student"), strategy: { kind: "honest" }, evaluate: false });
    expect(trace.stateHashes).to.have.length(2);
  });

  describe("malformed files: one SafetensorsError naming the tensor", () => {
    const good = () => writeSafetensors(baseEntries(4));

    it("a truncated header (fewer than 8 bytes)", () => {
      expect(refusal(good().subarray(0, 5)).message).to.equal("file is truncated: 5 bytes, no 8-byte header length");
    });

    it("a header length past the end of the file", () => {
      const bytes = good().slice(0, 100);
      expect(refusal(bytes).message).to.match(/^header length \d+ runs past the end of the file \(92 bytes after the length\)$/);
    });

    it("a header that is not JSON", () => {
      const bytes = good();
      bytes[8] = 0x7b; // "{"
      bytes[9] = 0x7b;
      expect(refusal(bytes).message).to.match(/^header \(\d+ bytes\) is not valid UTF-8 JSON/);
    });

    it("an unknown dtype", () => {
      const bytes = writeSafetensors(baseEntries(4, (i) => (i === 5 ? "F64" : "F32")));
      const e = refusal(bytes);
      expect(e.tensor).to.equal(SPECS[5]!.name);
      expect(e.message).to.equal(`tensor "${SPECS[5]!.name}": dtype "F64" is not one of F32, F16, BF16 (a base is float32, or float16/bfloat16 converted exactly)`);
    });

    it("a shape mismatch", () => {
      const es = baseEntries(4);
      es[0] = { ...es[0]!, shape: [96, 8], values: es[0]!.values.slice(0, 96 * 8) };
      const e = refusal(writeSafetensors(es));
      expect(e.tensor).to.equal("tokEmb");
      expect(e.message).to.equal('tensor "tokEmb": has shape [96,8], the declared char-transformer (layers 1, dModel 16, context 16, ffHidden 64, vocab 96 (sotu)) needs [96,16]');
    });

    it("a missing tensor", () => {
      const e = refusal(writeSafetensors(baseEntries(4).filter((x) => x.name !== "l0.wv")));
      expect(e.tensor).to.equal("l0.wv");
      expect(e.message).to.match(/^tensor "l0.wv": is missing: the declared char-transformer \(.*\) needs it with shape \[16,16\]$/);
    });

    it("an extra tensor", () => {
      const es = [...baseEntries(4), { name: "l1.wq", dtype: "F32" as const, shape: [16, 16], values: new Array<number>(256).fill(0) }];
      const e = refusal(writeSafetensors(es));
      expect(e.tensor).to.equal("l1.wq");
      expect(e.message).to.match(/^tensor "l1.wq": is not a parameter of the declared char-transformer \(layers 1, /);
    });

    it("overlapping data offsets", () => {
      // posEmb's range moved 4 bytes back into tokEmb's (same length, so only the overlap is wrong)
      const e = refusal(writeSafetensors(baseEntries(4, () => "F32"), { offsets: (name, [b, end]) => (name === "posEmb" ? [b - 4, end - 4] : [b, end]) }));
      expect(e.tensor).to.equal("posEmb");
      expect(e.message).to.match(/^tensor "posEmb": data_offsets \[6140,7164\] overlap tensor "tokEmb"'s \[0,6144\]$/);
    });

    it("data offsets past the end of the data", () => {
      const bytes = writeSafetensors(baseEntries(4, () => "F32"));
      const e = refusal(bytes.subarray(0, bytes.length - 4));
      expect(e.tensor).to.equal("headB");
      expect(e.message).to.match(/run past the end of the data .*: the file is truncated$/);
    });

    it("a non-finite weight", () => {
      const es = baseEntries(4, () => "F32");
      es[3]!.values[2] = NaN;
      expect(refusal(writeSafetensors(es)).message).to.equal(`tensor "${SPECS[3]!.name}": has a non-finite weight at [2] (NaN): every state trained on it would be non-finite`);
    });

    it("parseSafetensors keeps only the tensors (the __metadata__ entry is not one)", () => {
      expect([...parseSafetensors(good()).keys()]).to.deep.equal(SPECS.map((s) => s.name));
    });

    it("the CLI: exit 2 with one line; the architecture from a manifest's model block; one of --arch and --manifest", async () => {
      const file = join(dir, "bad.safetensors");
      await writeFile(file, writeSafetensors(baseEntries(4).filter((x) => x.name !== "head")));
      const r = await runPouw(["data", "add", file, "--format", "safetensors", "--arch", ARCH, "--store", store]);
      expect(r.code).to.equal(2);
      expect(r.stderr.trim().split("\n")).to.have.length(1);
      expect(r.stderr).to.match(/tensor "head": is missing/);
      // another architecture declared through a manifest: the first tensor of another shape is named
      const m = join(dir, "wide.json");
      await writeFile(m, JSON.stringify({ model: { arch: "char-transformer", layers: 1, dModel: 32, heads: 2, context: 16 } }));
      const w = await runPouw(["data", "add", join(dir, "base.safetensors"), "--format", "safetensors", "--manifest", m, "--store", store]);
      expect(w.code).to.equal(2);
      expect(w.stderr).to.match(/tensor "tokEmb": has shape \[96,16\], the declared char-transformer \(layers 1, dModel 32, .*\) needs \[96,32\]/);
      const none = await runPouw(["data", "add", file, "--format", "safetensors", "--store", store]);
      expect(none.code).to.equal(2);
      expect(none.stderr).to.match(/give --arch JSON or --manifest FILE/);
      const badArch = await runPouw(["data", "add", file, "--format", "safetensors", "--arch", '{"arch":"mnist-mlp"}', "--store", store]);
      expect(badArch.code).to.equal(2);
      expect(badArch.stderr).to.match(/--arch: not a char-transformer model block/);
    });
  });
});
