/**
 * Distillation (ml/distill/): a student char-transformer trained on a frozen teacher's outputs, the teacher a checkpoint
 * named by CID (here the final state of a short honest bitwise-v2 job) and its forward pass part of every step.
 *   - `pouw train` then `pouw audit` agree bit for bit; the deliverable is a plain char-transformer checkpoint.
 *   - the loss head against a float64 evaluation of its formula, and its gradient against finite differences.
 *   - the cheats: a student step that skips the teacher term (skip-teacher:<s>) and a student trained on another
 *     teacher than the manifest's CID each fail the audit at their step.
 *   - a teacher CID that does not match the declared architecture is refused before any stake moves, with one line.
 */
import { expect } from "chai";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../helpers/cli.ts";
import { exampleJson, tempDir } from "../ml/helpers.ts";
import { createRun, decodeCheckpoint, encodeCheckpoint, offlineSalt, parseManifest, ManifestError, Rng, Run, train, type Manifest } from "../../verifier/src/ml/index.ts";
import { DistilledTransformer, distillHead, DistillTeacherError, decodeTeacher } from "../../verifier/src/ml/distill/index.ts";
import { jsTransformerKernels, kernelOracle, transformerPass } from "../../verifier/src/ml/kernels/transformer.ts";
import { CharTransformer } from "../../verifier/src/ml/models/transformer.ts";
import { optimizerStateSpecs, transformerParamSpecs } from "../../verifier/src/ml/state-layout.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { checkJobTrainable, UntrainableJobError } from "../../verifier/src/provider/check-base.ts";
import { weightsStateHash } from "../../verifier/src/provenance/weights.ts";
import { firstAffectedStep, formatStrategy, parseStrategy } from "../../verifier/src/ml/strategies.ts";
import { affectedSegments, cheatedSteps } from "../../verifier/src/checks/cheated-steps.ts";

const TEACHER = { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 };
const STUDENT = { arch: "char-transformer", layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 16 };
const sotu = exampleJson("sotu-v2.json") as { corpora: unknown[]; data: object; policy: object };

function teacherManifest(): Record<string, unknown> {
  return {
    version: 2,
    kind: "pouw/training-job",
    model: TEACHER,
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

function studentManifest(teacherCid: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...teacherManifest(),
    model: STUDENT,
    init: { seed: 3 },
    data: { ...(sotu.data as object), seed: 55 },
    optimizer: { name: "adam", lr: 0.01 },
    distill: { teacher: { cid: teacherCid, arch: TEACHER }, temperature: 2, alpha: 0.25 },
    ...over,
  };
}

const f = Math.fround;

describe("distillation: a student trained on a teacher checkpoint's outputs", function () {
  this.timeout(600_000);
  let dir: string;
  let teacherStore: string;
  let teacherCid: string;
  let manifestPath: string;
  let manifest: Manifest;
  const honest = () => join(dir, "honest");

  before(async () => {
    dir = await tempDir("distill");
    const { trace } = await train(await createRun(parseManifest(teacherManifest()), { jobId: 91n, salt: offlineSalt(91n) }), { outDir: join(dir, "teacher"), strategy: { kind: "honest" }, evaluate: false });
    teacherStore = join(dir, "teacher", "store");
    teacherCid = trace.finalCheckpointCid;
    manifest = parseManifest(studentManifest(teacherCid));
    manifestPath = join(dir, "student.json");
    await writeFile(manifestPath, JSON.stringify(studentManifest(teacherCid)));
  });

  const trainCli = (out: string, extra: string[] = []) => runPouw(["train", "--manifest", manifestPath, "--out", out, "--base-store", teacherStore, "--data-store", join(dir, "data-store"), ...extra]);
  const auditCli = (out: string) => runPouw(["audit", "--trace", out, "--manifest", manifestPath, "--base-store", teacherStore, "--data-store", join(dir, "audit-store"), "--segments", "all"]);

  it("pouw train then pouw audit: every segment recomputes bit for bit; the deliverable is a plain char-transformer checkpoint", async () => {
    const t = await trainCli(honest());
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stdout).to.match(/8 steps in 2 segments/);
    const a = await auditCli(honest());
    expect(a.code, a.stdout + a.stderr).to.equal(0);
    expect(a.stdout).to.match(/all 2 audited segments ok/);
    const trace = JSON.parse(await readFile(join(honest(), "trace.json"), "utf8")) as { finalCheckpointCid: string; stateHashes: string[] };
    const bytes = await new LocalDirStore(join(honest(), "store")).get(trace.finalCheckpointCid);
    // the provenance record's weights check decodes the student as the manifest's char-transformer and recomputes h(8)
    expect(weightsStateHash(manifest, 0n, bytes, 8)).to.equal(trace.stateHashes[8]);
    const specs = transformerParamSpecs({ layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 16 });
    const state = decodeCheckpoint(bytes, specs, optimizerStateSpecs("adam", specs), { step: 8, model: "char-transformer", optimizer: "adam" });
    expect(state.params).to.have.length(specs.length);
    // the teacher term moved the trajectory: the same student without the distill block ends elsewhere
    const plain = parseManifest({ ...studentManifest(teacherCid), distill: undefined });
    const { trace: plainTrace } = await train(await createRun(plain, { jobId: 0n, salt: offlineSalt(0n) }), { outDir: join(dir, "plain"), strategy: { kind: "honest" }, evaluate: false });
    expect(plainTrace.stateHashes[1]).to.not.equal(trace.stateHashes[1]);
  });

  it("the loss head equals its formula evaluated in float64, and its gradient is the loss's derivative", () => {
    const rows = 3, V = 5, T = 2, alpha = 0.25;
    const z = new Rng(1, "z", 0).uniform(rows * V, 3);
    const u = new Rng(2, "u", 0).uniform(rows * V, 3);
    const targets = Uint8Array.of(0, 4, 2);
    const head = distillHead(u, { temperature: T, alpha });
    const r = head(z, targets, rows, V);
    const softmax = (x: ArrayLike<number>, o: number, t: number) => {
      const e = Array.from({ length: V }, (_, j) => Math.exp(x[o + j]! / t));
      const s = e.reduce((a, b) => a + b, 0);
      return e.map((v) => v / s);
    };
    const lossOf = (zz: ArrayLike<number>) => {
      let total = 0;
      for (let i = 0; i < rows; i++) {
        const p = softmax(u, i * V, T), q = softmax(zz, i * V, T), h = softmax(zz, i * V, 1);
        const soft = -p.reduce((a, pj, j) => a + pj * Math.log(q[j]!), 0);
        total += alpha * -Math.log(h[targets[i]!]!) + (1 - alpha) * T * T * soft;
      }
      return total / rows;
    };
    expect(Math.abs(r.loss - lossOf(z))).to.be.lessThan(1e-5 * Math.abs(lossOf(z)));
    for (let j = 0; j < rows * V; j++) {
      const eps = 1e-4;
      const zp = Float64Array.from(z), zm = Float64Array.from(z);
      zp[j] = zp[j]! + eps;
      zm[j] = zm[j]! - eps;
      const numeric = (lossOf(zp) - lossOf(zm)) / (2 * eps);
      expect(Math.abs(r.dz[j]! - numeric), `dz[${j}]: ${r.dz[j]} vs ${numeric}`).to.be.lessThan(1e-5);
    }
    // the bits: one float32 rounding per op, so two evaluations agree and each dz is a float32
    expect(Buffer.from(head(z, targets, rows, V).dz.buffer).equals(Buffer.from(r.dz.buffer))).to.equal(true);
    expect(r.loss).to.equal(f(r.loss));
    // alpha 0 with the teacher's own logits: the soft term's gradient vanishes (q = p)
    expect(Array.from(distillHead(z, { temperature: T, alpha: 0 })(z, targets, rows, V).dz).every((x) => Math.abs(x) < 1e-7)).to.equal(true);
  });

  for (const [strategy, step] of [["skip-teacher", 1], ["skip-teacher:6", 6]] as const) {
    it(`a student step that skips the teacher term (${strategy}) fails the audit at step ${step}`, async () => {
      const out = join(dir, strategy.replace(":", "-"));
      const t = await trainCli(out, ["--strategy", strategy]);
      expect(t.code, t.stderr).to.equal(0);
      const a = await auditCli(out);
      expect(a.code, a.stdout + a.stderr).to.equal(1);
      const segment = Math.ceil(step / 4) - 1;
      expect(a.stdout).to.match(new RegExp(`segment ${segment}: FAIL recompute: state-divergence at step ${step} `));
      if (segment === 1) expect(a.stdout).to.match(/segment 0: ok/);
    });
  }

  it("a student distilled from another teacher than the manifest's CID fails the audit at step 1", async () => {
    const honestRun = await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store: new LocalDirStore(teacherStore) });
    const model = honestRun.model as DistilledTransformer;
    // the cheat: a cheaper or other teacher of the declared shape (one weight changed stands for any other weights)
    const wrong = model.teacherParams.map((w) => Float32Array.from(w));
    wrong[4]![0] = f(wrong[4]![0]! + 0.5);
    const shape = { layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 16 };
    const tShape = { layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 64 };
    const cheat = new Run(manifest, { jobId: 0n, salt: offlineSalt(0n) }, honestRun.backend, new DistilledTransformer(shape, jsTransformerKernels, { shape: tShape, params: wrong }, manifest.distill!), honestRun.data, honestRun.kernels);
    const out = join(dir, "wrong-teacher");
    await train(cheat, { outDir: out, strategy: { kind: "honest" }, evaluate: false });
    const a = await auditCli(out);
    expect(a.code, a.stdout + a.stderr).to.equal(1);
    expect(a.stdout).to.match(/segment 0: FAIL recompute: state-divergence at step 1 /);
  });

  it("a teacher CID that does not match the declared architecture is refused before any stake moves, with one clear error", async () => {
    // a well-formed char-transformer checkpoint of dModel 8 where the manifest declares a dModel 16 teacher
    const other = { layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 32 };
    const specs = transformerParamSpecs(other);
    const bytes = encodeCheckpoint(specs, [], { metadata: { step: 0, jobId: 1n, manifestHash: "0x00", model: "char-transformer", optimizer: "sgd" }, params: specs.map((s) => new Float32Array(s.shape.reduce((a, b) => a * b, 1))), opt: [] });
    const store = new LocalDirStore(join(dir, "mismatch-store"));
    const cid = await store.put(bytes);
    const m = parseManifest(studentManifest(cid));
    let caught: unknown;
    try {
      await createRun(m, { jobId: 0n, salt: offlineSalt(0n), store });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(DistillTeacherError);
    expect((caught as Error).message).to.match(new RegExp(`^manifest field distill.teacher.cid: teacher ${cid} does not match the manifest's char-transformer \\(layers 1, dModel 16, .*tensor param.tokEmb has shape \\[96,8\\], the model needs \\[96,16\\]`));
    // the dry run `pouw buyer create` (before createJob) and `pouw provider accept` (before acceptJob) run
    let refused: unknown;
    try {
      await checkJobTrainable(m, { jobId: 0n, salt: offlineSalt(0n), store, subject: "manifest m.json", what: "not posted" });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(UntrainableJobError);
    expect((refused as Error).message).to.match(/^manifest m.json cannot be trained: manifest field distill.teacher.cid: teacher .* does not match .*; not posted/);
    // a non-finite teacher is refused too
    const good = await new LocalDirStore(teacherStore).get(teacherCid);
    const params = decodeTeacher(good, manifest.distill!);
    params[2]![5] = Infinity;
    const tSpecs = transformerParamSpecs({ layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 64 });
    const infCid = await store.put(encodeCheckpoint(tSpecs, [], { metadata: { step: 8, jobId: 91n, manifestHash: "0x00", model: "char-transformer", optimizer: "sgd" }, params, opt: [] }));
    let infErr: unknown;
    try {
      await createRun(parseManifest(studentManifest(infCid)), { jobId: 0n, salt: offlineSalt(0n), store });
    } catch (err) {
      infErr = err;
    }
    expect((infErr as Error).message).to.match(/teacher .* has a non-finite weight \(l0.ln1.g\[5\] = Infinity\)/);
    // `pouw train`: exit 2, one line naming the teacher
    await writeFile(join(dir, "mismatch.json"), JSON.stringify(studentManifest(cid)));
    const t = await runPouw(["train", "--manifest", join(dir, "mismatch.json"), "--out", join(dir, "mismatch-out"), "--data-store", join(dir, "mismatch-store")]);
    expect(t.code).to.equal(2);
    expect(t.stderr.trim().split("\n")).to.have.length(1);
    expect(t.stderr).to.match(new RegExp(`teacher ${cid} does not match`));
  });

  it("manifest checks: bitwise-v2, a char-transformer student, the teacher's vocabulary and context, alpha below 1, no adapter", () => {
    const bad = (over: Record<string, unknown>) => () => parseManifest(studentManifest(teacherCid, over));
    const d = (over: Record<string, unknown>) => ({ distill: { teacher: { cid: teacherCid, arch: TEACHER }, temperature: 2, alpha: 0.25, ...over } });
    expect(bad({ numerics: "bitwise" })).to.throw(ManifestError, /manifest field numerics: must be bitwise-v2 for a distillation job/);
    expect(bad(d({ alpha: 1 }))).to.throw(ManifestError, /distill.alpha: must be below 1/);
    expect(bad(d({ temperature: 0 }))).to.throw(ManifestError, /distill.temperature/);
    expect(bad(d({ teacher: { cid: teacherCid, arch: { ...TEACHER, context: 8 } } }))).to.throw(ManifestError, /distill.teacher.arch.context: 8 is shorter than the student's context \(16\)/);
    expect(bad(d({ teacher: { cid: teacherCid, arch: { ...TEACHER, vocab: 40 } } }))).to.throw(ManifestError, /distill.teacher.arch.vocab: the teacher's vocabulary \(40\) must be the student's \(96\)/);
    expect(bad(d({ teacher: { cid: "not-a-cid", arch: TEACHER } }))).to.throw(ManifestError, /distill.teacher.cid/);
    expect(bad({ init: { checkpointCid: teacherCid, optimizerState: "fresh" }, adapter: { kind: "lora", rank: 2, targets: ["wq"], alpha: 4, seed: 5 } })).to.throw(ManifestError, /cannot be combined with an adapter block/);
  });

  it("pouw quote prices a distillation job on the recompute column", async () => {
    const q = await runPouw(["quote", "--manifest", manifestPath, "--checks", "recompute", "--json"]);
    expect(q.code, q.stderr).to.equal(0);
    const quote = JSON.parse(q.stdout) as Record<string, unknown>;
    expect(JSON.stringify(quote)).to.match(/recompute/);
  });

  it("a teacher with a longer context reads the student's windows: its logits are those of its first positions' embeddings", () => {
    const long = { layers: 1, dModel: 16, heads: 2, context: 32, ffHidden: 32 };
    const params = new CharTransformer(long).init(4);
    const model = new DistilledTransformer({ layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 16 }, jsTransformerKernels, { shape: long, params }, { temperature: 2, alpha: 0.5 });
    const tokens = Uint8Array.from({ length: 2 * 17 }, (_, i) => (i * 37 + 5) % 96);
    // the expectation: the same teacher cut to context 16 (posEmb's first 16 rows), run as a plain char-transformer
    const cut = params.map((p, i) => (i === 1 ? p.slice(0, 16 * 16) : p));
    const expected = transformerPass(jsTransformerKernels, kernelOracle(jsTransformerKernels), cut, tokens, { B: 2, T: 16, d: 16, H: 2, F: 32, V: 96, L: 1 }).logits;
    const got = model.teacherLogits({ kind: "tokens", size: 2, tokens });
    expect(Buffer.from(got.buffer).equals(Buffer.from(expected.buffer))).to.equal(true);
    expect(Number.isFinite(model.lossAndGrads(model.init(1), { kind: "tokens", size: 2, tokens }).loss)).to.equal(true);
  });

  it("skip-teacher[:<step>]: parsed, printed, and its cheated steps are every step from s on", () => {
    const s = parseStrategy("skip-teacher:6");
    expect(s).to.deep.equal({ kind: "skip-teacher", step: 6 });
    expect(formatStrategy(s)).to.equal("skip-teacher:6");
    expect(formatStrategy(parseStrategy("skip-teacher"))).to.equal("skip-teacher");
    expect(cheatedSteps(s, 8)).to.deep.equal([6, 7, 8]);
    expect(firstAffectedStep(s, 8)).to.equal(6);
    expect(affectedSegments(s, 8, 4)).to.deep.equal([1]);
    expect(() => parseStrategy("skip-teacher:0")).to.throw(/skip-teacher\[:<step>\] needs a step >= 1/);
  });

  it("skip-teacher is refused for a job without a distill block", async () => {
    await writeFile(join(dir, "plain-job.json"), JSON.stringify({ ...studentManifest(teacherCid), distill: undefined }));
    const r = await runPouw(["train", "--manifest", join(dir, "plain-job.json"), "--out", join(dir, "plain-skip"), "--strategy", "skip-teacher"]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/skip-teacher leaves out a distillation job's teacher term; manifest 0x[0-9a-f]{64} \(char-transformer\) has no distill block/);
  });
});
