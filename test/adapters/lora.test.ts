/**
 * LoRA adapters on a frozen char-transformer base (ml/adapters/). The base is the final state of a short honest
 * bitwise-v2 run (another job); the adapter job names it by CID and trains only A and B of wq, wv and w1.
 *   - `pouw train` then `pouw audit` passes bit for bit; the state (checkpoints, hashes) is the adapter alone.
 *   - the cheats adapted: a skipped adapter step, a planted adapter and a wrong base each fail the audit at their step.
 *   - a base that does not match the architecture is refused before any stake moves (the dry run a buyer's post and a
 *     provider's accept both run), and with one line from `pouw train`.
 *   - `pouw adapter merge` writes W + (alpha/r) A.B, checked against a computation written out here, and the merged
 *     model's held-out loss is the adapter job's own.
 *   - the adapter's gradient (the chain rule through the merge) against central finite differences of the loss.
 */
import { expect } from "chai";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../helpers/cli.ts";
import { exampleJson, tempDir } from "../ml/helpers.ts";
import { createRun, decodeCheckpoint, encodeCheckpoint, offlineSalt, parseManifest, ManifestError, Rng, Run, train, type Manifest } from "../../verifier/src/ml/index.ts";
import { AdapterBaseError, LoraTransformer, adapterParamSpecs, decodeBase, LORA_MODEL } from "../../verifier/src/ml/adapters/index.ts";
import { jsTransformerKernels } from "../../verifier/src/ml/kernels/transformer.ts";
import { CharTransformer } from "../../verifier/src/ml/models/transformer.ts";
import { optimizerStateSpecs, transformerParamSpecs } from "../../verifier/src/ml/state-layout.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { checkJobTrainable, UntrainableJobError } from "../../verifier/src/provider/check-base.ts";
import { weightsStateHash } from "../../verifier/src/provenance/weights.ts";

const SHAPE = { layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 64 };
const sotu = exampleJson("sotu-v2.json") as { corpora: unknown[]; data: object; policy: object };

function baseManifest(): Record<string, unknown> {
  return {
    version: 2,
    kind: "pouw/training-job",
    model: { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 },
    init: { seed: 21 },
    corpora: sotu.corpora,
    data: sotu.data,
    optimizer: { name: "adam", lr: 0.003 },
    training: { batchSize: 4, steps: 8, stepsPerSegment: 4 },
    numerics: "bitwise-v2",
    stateDigest: "sha256-v2",
    policy: sotu.policy,
  };
}

function adapterManifest(baseCid: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...baseManifest(),
    init: { checkpointCid: baseCid, optimizerState: "fresh" },
    data: { ...(sotu.data as object), seed: 77 },
    optimizer: { name: "adam", lr: 0.01 },
    adapter: { kind: "lora", rank: 2, targets: ["wv", "wq", "w1"], alpha: 3, seed: 5 },
    training: { batchSize: 4, steps: 8, stepsPerSegment: 4 },
    ...over,
  };
}

const f = Math.fround;

describe("LoRA adapters on a frozen base", function () {
  this.timeout(600_000);
  let dir: string;
  let baseStore: string;
  let baseCid: string;
  let manifestPath: string;
  let manifest: Manifest;
  const honest = () => join(dir, "honest");

  before(async () => {
    dir = await tempDir("lora");
    const { trace } = await train(await createRun(parseManifest(baseManifest()), { jobId: 90n, salt: offlineSalt(90n) }), { outDir: join(dir, "base"), strategy: { kind: "honest" }, evaluate: false });
    baseStore = join(dir, "base", "store");
    baseCid = trace.finalCheckpointCid;
    manifest = parseManifest(adapterManifest(baseCid));
    manifestPath = join(dir, "adapter.json");
    await writeFile(manifestPath, JSON.stringify(adapterManifest(baseCid)));
  });

  const trainCli = (out: string, extra: string[] = []) => runPouw(["train", "--manifest", manifestPath, "--out", out, "--base-store", baseStore, "--data-store", join(dir, "data-store"), ...extra]);
  const auditCli = (out: string, extra: string[] = []) => runPouw(["audit", "--trace", out, "--manifest", manifestPath, "--base-store", baseStore, "--data-store", join(dir, "audit-store"), ...extra]);

  it("pouw train then pouw audit: every segment recomputes bit for bit; the checkpoints hold the adapter and its Adam state only", async () => {
    const t = await trainCli(honest());
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stdout).to.match(/8 steps in 2 segments/);
    const a = await auditCli(honest());
    expect(a.code, a.stdout + a.stderr).to.equal(0);
    expect(a.stdout).to.match(/all 2 audited segments ok/);
    const trace = JSON.parse(await readFile(join(honest(), "trace.json"), "utf8")) as { finalCheckpointCid: string; stateHashes: string[] };
    const bytes = await new LocalDirStore(join(honest(), "store")).get(trace.finalCheckpointCid);
    // the provenance record's weights check (and the dApp's) decodes the adapter state and recomputes h(8)
    expect(weightsStateHash(manifest, 0n, bytes, 8)).to.equal(trace.stateHashes[8]);
    const specs = adapterParamSpecs(SHAPE, manifest.adapter!);
    expect(specs.map((s) => s.name)).to.deep.equal(["l0.wq.A", "l0.wq.B", "l0.wv.A", "l0.wv.B", "l0.w1.A", "l0.w1.B"]);
    const state = decodeCheckpoint(bytes, specs, optimizerStateSpecs("adam", specs), { step: 8, model: LORA_MODEL, optimizer: "adam" });
    // B moved away from its zero init; the adapter is (16*2 + 2*16) * 2 + 16*2 + 2*64 = 288 weights, the base 13,920
    expect(state.params[1]!.some((x) => x !== 0)).to.equal(true);
    expect(specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0)).to.equal(288);
    expect(bytes.length).to.be.lessThan(8000);
  });

  for (const [strategy, step] of [["skip:0.25", 4], ["plant:3", 3]] as const) {
    it(`a cheating provider (${strategy}) fails the audit at step ${step}`, async () => {
      const out = join(dir, strategy.replace(":", "-"));
      const t = await trainCli(out, ["--strategy", strategy]);
      expect(t.code, t.stderr).to.equal(0);
      const a = await auditCli(out);
      expect(a.code, a.stdout + a.stderr).to.equal(1);
      expect(a.stdout).to.match(new RegExp(`segment 0: FAIL recompute: state-divergence at step ${step} `));
    });
  }

  it("an adapter trained on another base than the manifest's fails the audit at step 1", async () => {
    const honestRun = await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store: new LocalDirStore(baseStore) });
    const lora = honestRun.model as LoraTransformer;
    // the cheat: a base of the right shape with one weight changed (the buyer's base not used)
    const wrong = lora.base.map((w) => Float32Array.from(w));
    wrong[4]![0] = f(wrong[4]![0]! + 0.5);
    const cheat = new Run(manifest, { jobId: 0n, salt: offlineSalt(0n) }, honestRun.backend, new LoraTransformer(SHAPE, jsTransformerKernels, manifest.adapter!, wrong), honestRun.data, honestRun.kernels);
    const out = join(dir, "wrong-base");
    await train(cheat, { outDir: out, strategy: { kind: "honest" }, evaluate: false });
    const a = await auditCli(out);
    expect(a.code, a.stdout + a.stderr).to.equal(1);
    expect(a.stdout).to.match(/segment 0: FAIL recompute: state-divergence at step 1 /);
  });

  it("a base that does not match the architecture is refused before any stake moves, with one clear error", async () => {
    // a well-formed char-transformer checkpoint of dModel 8 (another architecture) in the store
    const other = { ...SHAPE, dModel: 8, ffHidden: 32 };
    const specs = transformerParamSpecs(other);
    const bytes = encodeCheckpoint(specs, [], { metadata: { step: 0, jobId: 1n, manifestHash: "0x00", model: "char-transformer", optimizer: "sgd" }, params: specs.map((s) => new Float32Array(s.shape.reduce((a, b) => a * b, 1))), opt: [] });
    const store = new LocalDirStore(join(dir, "mismatch-store"));
    const cid = await store.put(bytes);
    const m = parseManifest(adapterManifest(cid));
    let caught: unknown;
    try {
      await createRun(m, { jobId: 0n, salt: offlineSalt(0n), store });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(AdapterBaseError);
    expect((caught as Error).message).to.match(new RegExp(`^manifest field init.checkpointCid: base ${cid} does not match the manifest's char-transformer \\(layers 1, dModel 16, .*tensor param.tokEmb has shape \\[96,8\\], the model needs \\[96,16\\]`));
    // the dry run `pouw buyer create` (before createJob) and `pouw provider accept` (before acceptJob) run
    let refused: unknown;
    try {
      await checkJobTrainable(m, { jobId: 0n, salt: offlineSalt(0n), store, subject: "manifest m.json", what: "not posted" });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(UntrainableJobError);
    expect((refused as Error).message).to.match(/^manifest m.json cannot be trained: manifest field init.checkpointCid: base .* does not match .*; not posted/);
    // a non-finite base is refused too
    const good = await new LocalDirStore(baseStore).get(baseCid);
    const decoded = decodeBase(good, SHAPE, baseCid);
    decoded.params[3]![7] = NaN;
    const baseSpecs = transformerParamSpecs(SHAPE);
    const nanCid = await store.put(encodeCheckpoint(baseSpecs, optimizerStateSpecs("adam", baseSpecs), { metadata: { step: 8, jobId: 90n, manifestHash: "0x00", model: "char-transformer", optimizer: "adam" }, params: decoded.params, opt: decoded.opt }));
    let nanErr: unknown;
    try {
      await createRun(parseManifest(adapterManifest(nanCid)), { jobId: 0n, salt: offlineSalt(0n), store });
    } catch (err) {
      nanErr = err;
    }
    expect((nanErr as Error).message).to.match(/has a non-finite weight \(l0.ln1.b\[7\] = NaN\)/);
    // `pouw train`: exit 2, one line naming the base
    await writeFile(join(dir, "mismatch.json"), JSON.stringify(adapterManifest(cid)));
    const t = await runPouw(["train", "--manifest", join(dir, "mismatch.json"), "--out", join(dir, "mismatch-out"), "--data-store", join(dir, "mismatch-store")]);
    expect(t.code).to.equal(2);
    expect(t.stderr.trim().split("\n")).to.have.length(1);
    expect(t.stderr).to.match(new RegExp(`base ${cid} does not match`));
  });

  it("manifest checks: bitwise-v2 only, a base required, low rank, known and distinct targets", () => {
    expect(() => parseManifest(adapterManifest(baseCid, { numerics: "bitwise" }))).to.throw(ManifestError, /manifest field numerics: must be bitwise-v2 for an adapter job/);
    expect(() => parseManifest(adapterManifest(baseCid, { init: { seed: 1 } }))).to.throw(ManifestError, /manifest field init: an adapter job names its frozen base/);
    const a = (over: object) => adapterManifest(baseCid, { adapter: { kind: "lora", rank: 2, targets: ["wq"], alpha: 4, seed: 5, ...over } });
    expect(() => parseManifest(a({ rank: 17 }))).to.throw(ManifestError, /manifest field adapter.rank: 17 exceeds the smallest dimension \(16\)/);
    expect(() => parseManifest(a({ targets: ["wq", "wq"] }))).to.throw(ManifestError, /adapter.targets: lists a target twice/);
    expect(() => parseManifest(a({ targets: ["head"] }))).to.throw(ManifestError, /adapter.targets.0/);
    expect(() => parseManifest(a({ targets: [] }))).to.throw(ManifestError, /name at least one of/);
    expect(() => parseManifest(a({ alpha: 0 }))).to.throw(ManifestError, /adapter.alpha/);
  });

  it("pouw adapter merge writes W + (alpha/r) A.B in the base's format, equal to a merge written out here, and the merged model's held-out loss is the adapter job's", async () => {
    const trace = JSON.parse(await readFile(join(honest(), "trace.json"), "utf8")) as { finalCheckpointCid: string; evaluation: { loss: number } };
    const adapterFile = join(dir, "adapter.safetensors");
    await writeFile(adapterFile, await new LocalDirStore(join(honest(), "store")).get(trace.finalCheckpointCid));
    const out = join(dir, "merged.safetensors");
    const r = await runPouw(["adapter", "merge", "--manifest", manifestPath, "--base", baseCid, "--adapter", adapterFile, "--out", out, "--store", baseStore, "--json"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.include({ step: 8, matrices: 3 });
    const merged = decodeBase(await readFile(out), SHAPE, "merged");
    const base = decodeBase(await new LocalDirStore(baseStore).get(baseCid), SHAPE, baseCid);
    const specs = adapterParamSpecs(SHAPE, manifest.adapter!);
    const ad = decodeCheckpoint(await readFile(adapterFile), specs, optimizerStateSpecs("adam", specs)).params;
    const names = transformerParamSpecs(SHAPE).map((s) => s.name);
    const s = f(3 / 2); // not a power of two: the product s * (A.B) rounds
    const byName: Record<string, [Float32Array, Float32Array, number, number]> = { "l0.wq": [ad[0]!, ad[1]!, 16, 16], "l0.wv": [ad[2]!, ad[3]!, 16, 16], "l0.w1": [ad[4]!, ad[5]!, 16, 64] };
    names.forEach((name, i) => {
      const m = byName[name];
      if (!m) {
        expect(Buffer.from(merged.params[i]!.buffer).equals(Buffer.from(base.params[i]!.buffer)), name).to.equal(true);
        return;
      }
      const [A, B, din, dout] = m;
      let maxRel = 0;
      for (let p = 0; p < din; p++) {
        for (let q = 0; q < dout; q++) {
          // the defined bits: sum over k in order from +0, each product and sum rounded to float32, then one scale, one add
          let acc = 0;
          let exact = 0;
          for (let k = 0; k < 2; k++) {
            acc = f(acc + f(A[p * 2 + k]! * B[k * dout + q]!));
            exact += A[p * 2 + k]! * B[k * dout + q]!;
          }
          const w = base.params[i]![p * dout + q]!;
          expect(merged.params[i]![p * dout + q]).to.equal(f(w + f(s * acc)));
          maxRel = Math.max(maxRel, Math.abs(merged.params[i]![p * dout + q]! - (w + 1.5 * exact)) / Math.max(1e-3, Math.abs(w)));
        }
      }
      expect(maxRel, name).to.be.lessThan(1e-5); // the real-number merge, to float32 rounding
      expect(merged.params[i]!.some((x, j) => x !== base.params[i]![j]), name).to.equal(true);
    });
    // the merged file as a plain char-transformer: its held-out loss is the one the adapter job's trace reports
    const plain = await createRun(parseManifest(baseManifest()), { jobId: 0n, salt: offlineSalt(0n) });
    expect(plain.model).to.be.instanceOf(CharTransformer);
    expect(plain.evaluate({ step: 8, params: merged.params, opt: [] }, plain.model.finalEvaluationLimit).loss).to.equal(trace.evaluation.loss);
    // --base must be the manifest's
    const wrong = await runPouw(["adapter", "merge", "--manifest", manifestPath, "--base", "bafkreiegvbhmysk4imcmaxwka2exftxdzmvs7mw6tqlnjdnf4y4f7fjxzm", "--adapter", adapterFile, "--out", out, "--store", baseStore]);
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.match(/is not the base manifest .* names/);
    // the merged file (a char-transformer) is not an adapter: exit 2, one line
    const notAdapter = await runPouw(["adapter", "merge", "--manifest", manifestPath, "--base", baseCid, "--adapter", out, "--out", join(dir, "x"), "--store", baseStore]);
    expect(notAdapter.code).to.equal(2);
    expect(notAdapter.stderr).to.match(/is not a state of manifest .*'s adapter: checkpoint is for model char-transformer, expected char-transformer-lora/);
  });

  it("the adapter's gradient is the loss's derivative (central finite differences on the largest entries of A and B)", async () => {
    const run = await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store: new LocalDirStore(baseStore) });
    const lora = run.model as LoraTransformer;
    // a state with B non-zero, so that dA is not zero
    const params = lora.init(5).map((p, i) => (i % 2 === 1 ? new Rng(9, "b", i).uniform(p.length, 0.3) : p));
    const batch = run.batchFor(1);
    const { grads } = lora.lossAndGrads(params, batch);
    for (const t of [0, 1, 4, 5]) {
      const g = grads[t]!;
      let j = 0;
      for (let k = 1; k < g.length; k++) if (Math.abs(g[k]!) > Math.abs(g[j]!)) j = k;
      const eps = 1e-2;
      const at = (d: number) => lora.lossAndGrads(params.map((p, i) => (i === t ? Float32Array.from(p, (x, k) => (k === j ? f(x + d) : x)) : p)), batch).loss;
      const numeric = (at(eps) - at(-eps)) / (2 * eps);
      expect(Math.abs(numeric - g[j]!), `tensor ${t} entry ${j}: ${numeric} vs ${g[j]}`).to.be.lessThan(0.05 * Math.abs(g[j]!) + 2e-4);
    }
  });
});
