/**
 * Fine-tuning jobs (init: { checkpointCid, optimizerState: "fresh" }) through the audit pipeline: h(0) is the base
 * checkpoint's weights with a fresh optimizer state, so an honest fine-tuning trace passes the state screen, recompute
 * and magnitude on every segment, with the screen's bounds unchanged. The attacker's side: a provider that keeps the
 * base's Adam state (the rule before the field), plants wrong bias-correction powers at a segment start, or poisons the
 * moments, loses at the check that names it.
 */
import { expect } from "chai";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../cli/in-process.ts";
import { calibrateProgress, heldOutBatch, heldOutLoss, magnitudeSegment, openTraceDir, ProgressCalibrationError, recomputeSegment, screenSegment, writeStepStates } from "../../verifier/src/checks/index.ts";
import { calibrationManifest } from "../../verifier/src/checks/progress.ts";
import { decodeCheckpoint } from "../../verifier/src/ml/checkpoint.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { exampleJson } from "../ml/helpers.ts";
import { Fixture, JOB_ID } from "./fixture.ts";

describe("checks: fine-tuning jobs", function () {
  this.timeout(600_000);
  const fx = new Fixture();
  let baseBytes: Uint8Array;
  let base: { params: Float32Array[]; opt: Float32Array[] };
  let manifest: ReturnType<typeof parseManifest>;
  let auditor: Run;
  const n = 4; // mnist-mlp tensors: W1, b1, W2, b2; Adam state m x4, v x4, beta1Power, beta2Power

  /** A fine-tuning trace of `provider` (a Run of `manifest`, possibly with the cheater's own code), the base published in its store. */
  async function fineTuneTrace(label: string, provider: Run, strategy = "honest"): Promise<string> {
    const dir = join(fx.dir, `ft-${label}`);
    const store = new LocalDirStore(join(dir, "store"));
    await store.put(baseBytes);
    const { stepStateCids } = await train(provider, { outDir: dir, strategy: parseStrategy(strategy), evaluate: false, keepStepStates: true });
    await writeStepStates(provider, dir, stepStateCids!);
    return dir;
  }

  before(async () => {
    await fx.setup();
    // the base: the final state of a short earlier honest Adam run of the same model (another job)
    const { dir, trace } = await fx.trace("honest");
    baseBytes = await new LocalDirStore(join(dir, "store")).get(trace.finalCheckpointCid);
    base = decodeCheckpoint(baseBytes, fx.run.paramSpecs, fx.run.optSpecs);
    const tiny = exampleJson("tiny.json");
    manifest = parseManifest({ ...tiny, init: { checkpointCid: trace.finalCheckpointCid, optimizerState: "fresh" } });
    auditor = await createRun(manifest, { jobId: JOB_ID + 1n, salt: offlineSalt(JOB_ID + 1n) });
  });
  after(async () => fx.teardown());

  const providerRun = () => createRun(manifest, { jobId: JOB_ID + 1n, salt: offlineSalt(JOB_ID + 1n) });

  it("h(0) is the base's weights with a fresh Adam state (m = v = 0, powers 1), not the base's optimizer state", async () => {
    const s0 = await auditor.initFromStore(new LocalDirStore(join(fx.dir, "honest", "store")));
    expect(s0.step).to.equal(0);
    expect(s0.params.map((p) => Array.from(p))).to.deep.equal(base.params.map((p) => Array.from(p)));
    for (let i = 0; i < 2 * n; i++) expect(s0.opt[i]!.every((x) => x === 0), `opt tensor ${i}`).to.equal(true);
    expect([s0.opt[2 * n]![0], s0.opt[2 * n + 1]![0]]).to.deep.equal([1, 1]);
    // the base itself carries 12 steps of Adam state: b1^12 = 0.2824..., and non-zero moments
    expect(base.opt[2 * n]![0]).to.be.lessThan(0.3);
    expect(base.opt[0]!.some((x) => x !== 0)).to.equal(true);
  });

  it("an honest fine-tuning trace passes the screen at every committed state, recompute and magnitude on every segment", async () => {
    const dir = await fineTuneTrace("honest", await providerRun());
    const ctx = await openTraceDir(auditor, dir);
    let previous: TrainState | null = null;
    for (let i = 0; i <= 3; i++) {
      const r = await screenSegment(ctx, i, { previous });
      expect(r.ok, `screen of state ${i * 4}: ${r.failure?.message}`).to.equal(true);
      previous = r.state;
    }
    for (let seg = 0; seg < 3; seg++) {
      expect((await recomputeSegment(ctx, seg)).ok, `recompute ${seg}`).to.equal(true);
      const m = await magnitudeSegment(ctx, seg, ctx.stepStates!);
      expect(m.ok, `magnitude ${seg}: ${m.failure?.message}`).to.equal(true);
    }
  });

  it("`pouw train` then `pouw audit --checks recompute,screen,magnitude` of an honest fine-tuning job: exit 0, every segment ok; the base from --base-store (missing: exit 2 naming it); the old manifest form exits 2 naming the field", async () => {
    const dir = join(fx.dir, "ft-cli");
    await new LocalDirStore(join(dir, "store")).put(baseBytes); // the buyer's base, in the default base store <out>/store
    const path = join(fx.dir, "ft-cli.json");
    await writeFile(path, JSON.stringify(manifest));
    const trained = await runPouw(["train", "--manifest", path, "--out", dir, "--job-id", "6", "--step-states", "--no-evaluate"]);
    expect(trained.code, trained.stderr).to.equal(0);
    const audited = await runPouw(["audit", "--manifest", path, "--trace", dir, "--job-id", "6", "--checks", "recompute,screen,magnitude", "--json"]);
    expect(audited.code, audited.stdout + audited.stderr).to.equal(0);
    const report = JSON.parse(audited.stdout) as { ok: boolean; segments: { segment: number; ok: boolean }[] };
    expect(report.segments.map((r) => [r.segment, r.ok])).to.deep.equal([[0, true], [1, true], [2, true]]);
    // trained with --base-store elsewhere: the audit needs the base too, and says so (bad input, not a segment's failure)
    const apart = join(fx.dir, "ft-cli-apart");
    const baseDir = join(fx.dir, "ft-cli-base");
    await new LocalDirStore(baseDir).put(baseBytes);
    expect((await runPouw(["train", "--manifest", path, "--out", apart, "--job-id", "6", "--base-store", baseDir, "--no-evaluate"])).code).to.equal(0);
    const missing = await runPouw(["audit", "--manifest", path, "--trace", apart, "--job-id", "6", "--checks", "screen"]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain("base checkpoint").and.to.contain("--base-store");
    const later = await runPouw(["audit", "--manifest", path, "--trace", apart, "--job-id", "6", "--segments", "1,2", "--checks", "recompute,screen"]);
    expect(later.code, later.stdout + later.stderr).to.equal(0);
    const withBase = await runPouw(["audit", "--manifest", path, "--trace", apart, "--job-id", "6", "--checks", "recompute,screen", "--base-store", baseDir]);
    expect(withBase.code, withBase.stderr).to.equal(0);
    const old = join(fx.dir, "ft-old.json");
    await writeFile(old, JSON.stringify({ ...manifest, init: { checkpointCid: (manifest.init as { checkpointCid: string }).checkpointCid } }));
    const refused = await runPouw(["train", "--manifest", old, "--out", join(fx.dir, "ft-old"), "--no-evaluate"]);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain("init.optimizerState");
  });

  it("a provider that carries the base's Adam state into h(0) (the rule before optimizerState) fails segment 0 as initial-state-mismatch, challengeable at step 1", async () => {
    const cheat = await providerRun();
    // the cheater's own trainer: h(0) = the base's whole state
    cheat.initFromStore = async () => ({ step: 0, params: base.params, opt: base.opt });
    const dir = await fineTuneTrace("legacy", cheat);
    const ctx = await openTraceDir(auditor, dir);
    const r = await recomputeSegment(ctx, 0);
    expect([r.failure?.kind, r.firstBadStep, r.proof?.step]).to.deep.equal(["initial-state-mismatch", 1, 1]);
    // and its later states carry the base's powers: the screen rejects them too
    const s1 = await screenSegment(ctx, 1);
    expect([s1.failure?.kind, s1.details?.tensor]).to.deep.equal(["optimizer-state-invalid", "opt.adam.beta1Power"]);
  });

  /** p advanced k steps as the engine does: k float32 multiplications by fl(b). */
  const advance = (p: number, b: number, k: number): number => {
    for (let i = 0; i < k; i++) p = Math.fround(p * Math.fround(b));
    return p;
  };
  const plants: [string, () => [number, number]][] = [
    ["the base's powers advanced 4 steps, what the old rule gave", () => [advance(base.opt[2 * n]![0]!, 0.9, 4), advance(base.opt[2 * n + 1]![0]!, 0.999, 4)]],
    ["powers reset to 1, a restart that lost its optimizer state", () => [1, 1]],
    ["the powers of step 5 at step 4, one step ahead", () => [advance(1, 0.9, 5), advance(1, 0.999, 5)]],
  ];
  for (const [k, [label, powers]] of plants.entries()) {
    it(`wrong bias-correction powers planted at a segment start (${label}): the screen of that state fails, recompute and magnitude name step 4`, async () => {
      const cheat = await providerRun();
      const step = cheat.step.bind(cheat);
      cheat.step = (s, t, o) => {
        const r = step(s, t, o);
        if (t !== 4) return r;
        const [p1, p2] = powers();
        const opt = r.state.opt.map((a, i) => (i === 2 * n ? Float32Array.of(p1) : i === 2 * n + 1 ? Float32Array.of(p2) : a));
        return { ...r, state: { ...r.state, opt } };
      };
      const dir = await fineTuneTrace(`powers-${k}`, cheat);
      const ctx = await openTraceDir(auditor, dir);
      expect((await screenSegment(ctx, 0)).ok).to.equal(true);
      const s1 = await screenSegment(ctx, 1);
      expect(s1.failure?.kind).to.equal("optimizer-state-invalid");
      expect(s1.details?.recompute).to.equal(0);
      const r = await recomputeSegment(ctx, 0);
      expect([r.failure?.kind, r.firstBadStep]).to.deep.equal(["state-divergence", 4]);
      const m = await magnitudeSegment(ctx, 0, ctx.stepStates!);
      expect([m.failure?.kind, m.firstBadStep, m.proof?.step]).to.deep.equal(["optimizer-state-invalid", 4, 4]);
    });
  }

  it("the progress check's calibration of a fine-tuning manifest starts every run from the base (and needs its store)", async () => {
    const err = await calibrateProgress(manifest, { runs: 2, auditorSeed: 7 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ProgressCalibrationError);
    expect((err as Error).message).to.contain("base checkpoint");
    const baseStore = new LocalDirStore(join(fx.dir, "honest", "store"));
    const c = await calibrateProgress(manifest, { runs: 2, auditorSeed: 7, baseStore });
    // the expected start loss, computed here: the base's weights on each calibration run's held-out batch
    let sum = 0;
    for (const r of [0, 1]) {
      const run = await createRun(calibrationManifest(manifest, r), { jobId: 0n, salt: offlineSalt(0n) });
      sum += heldOutLoss(run, { step: 0, params: base.params, opt: run.optimizer.initState(run.paramSpecs) }, heldOutBatch(run, 7));
    }
    expect(c.segments[0]!.meanStartLoss).to.equal(sum / 2);
  });

  it("state-poison:2 (huge moments, free steps after) in a fine-tuning job: the next committed state fails the screen, recompute and magnitude name step 2", async () => {
    const dir = await fineTuneTrace("poison", await providerRun(), "state-poison:2");
    const ctx = await openTraceDir(auditor, dir);
    expect((await screenSegment(ctx, 0)).ok).to.equal(true);
    for (const i of [1, 2, 3]) expect((await screenSegment(ctx, i)).failure?.kind, `state ${i * 4}`).to.equal("moment-bound-exceeded");
    const r = await recomputeSegment(ctx, 0);
    expect([r.failure?.kind, r.firstBadStep]).to.deep.equal(["state-divergence", 2]);
    const m = await magnitudeSegment(ctx, 0, ctx.stepStates!);
    expect([m.failure?.kind, m.firstBadStep]).to.deep.equal(["moment-bound-exceeded", 2]);
  });
});
