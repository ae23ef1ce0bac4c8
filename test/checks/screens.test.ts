import { expect } from "chai";
import { join } from "node:path";
import {
  adamRatioBound,
  calibrateProgress,
  calibrateThreshold,
  magnitudeSegment,
  openTraceDir,
  progressSegment,
  publishStepStates,
  stepDistance,
  toleranceSegment,
  ToleranceCalibrationError,
  type ProgressCalibration,
} from "../../verifier/src/checks/index.ts";
import { normalQuantile, predictionMultiplier, studentTCdf, studentTQuantile } from "../../verifier/src/checks/stats.ts";
import { createRun, offlineSalt, train, useBackend } from "../../verifier/src/ml/index.ts";
import { Fixture, JOB_ID, tinyVariant } from "./fixture.ts";

describe("checks: magnitude, progress and tolerance", () => {
  const fx = new Fixture();
  before(async () => fx.setup());
  after(async () => fx.teardown());

  describe("magnitude", () => {
    it("Adam's per-coordinate bound is 1 at step 1 for b1^2 = b2 and grows to (1-b1)/sqrt((1-b2)(1-b1^2/b2))", () => {
      expect(adamRatioBound(0.9, 0.81, 0.9, 0.81, 1)).to.be.closeTo(Math.sqrt(1), 1e-12 + 0); // rho = 1: S = t = 1
      const limit = (0.1 / Math.sqrt(0.001 * (1 - 0.81 / 0.999)));
      expect(adamRatioBound(0.9, 0.999, 1e-30, 1e-30, 1e6)).to.be.closeTo(limit, 1e-9);
      expect(adamRatioBound(0.9, 0.999, 1, 1, 0)).to.equal(0);
    });

    it("passes an honest run whose provider serves its per-step states", async () => {
      const { dir, trace } = await fx.trace("honest");
      await publishStepStates(fx.run, trace, dir);
      const ctx = await openTraceDir(fx.run, dir);
      for (let seg = 0; seg < 3; seg++) {
        const r = await magnitudeSegment(ctx, seg, ctx.stepStates!);
        expect(r.ok, `segment ${seg}: ${r.failure?.message}`).to.equal(true);
        expect(r.details!.worstRatio as number).to.be.within(0, 1);
      }
    });

    it("catches a planted weight delta at the planted step, with a challenge proof", async () => {
      const { dir } = await fx.trace("plant:6", { stepStates: true });
      const ctx = await openTraceDir(fx.run, dir);
      const r = await magnitudeSegment(ctx, 1, ctx.stepStates!);
      expect(r.ok).to.equal(false);
      expect(r.failure!.kind).to.equal("magnitude-exceeded");
      expect(r.firstBadStep).to.equal(6);
      expect(r.proof!.step).to.equal(6);
      expect((await magnitudeSegment(ctx, 0, ctx.stepStates!)).ok).to.equal(true);
    });

    it("reports an optimizer state that did not advance (a skipped step) as optimizer-state-invalid", async () => {
      const { dir } = await fx.trace("skip:0.25", { stepStates: true });
      const ctx = await openTraceDir(fx.run, dir);
      const r = await magnitudeSegment(ctx, 0, ctx.stepStates!);
      expect(r.failure?.kind).to.equal("optimizer-state-invalid");
      expect(r.firstBadStep).to.equal(4);
    });

    it("reports a provider that serves no per-step states as step-states-missing", async () => {
      const { dir } = await fx.trace("fp16");
      const ctx = await openTraceDir(fx.run, dir);
      const r = await magnitudeSegment(ctx, 0, ctx.stepStates!);
      expect(r.failure?.kind).to.equal("step-states-missing");
    });
  });

  describe("progress", () => {
    let calibration: ProgressCalibration;
    before(async () => {
      calibration = await calibrateProgress(tinyVariant(), { runs: 20, auditorSeed: 4242 });
      await useBackend("cpu");
    });

    it("calibrates one drop distribution per segment from honest runs", () => {
      expect(calibration.segments.length).to.equal(3);
      expect(calibration.runs).to.equal(20);
      for (const s of calibration.segments) expect(s.sdDrop).to.be.greaterThan(0);
      expect(calibration.segments[2]!.meanEndLoss).to.be.lessThan(calibration.segments[0]!.meanStartLoss);
    });

    it("passes every segment of the honest run, flags stale:4 on the curve and near-zero on its state", async () => {
      const honest = await openTraceDir(fx.run, (await fx.trace("honest")).dir);
      for (let seg = 0; seg < 3; seg++) {
        const r = await progressSegment(honest, seg, { calibration });
        expect(r.ok, `segment ${seg}: ${r.failure?.message}`).to.equal(true);
      }
      const stale = await openTraceDir(fx.run, (await fx.trace("stale:4")).dir);
      const behind = [];
      for (let seg = 0; seg < 3; seg++) {
        const r = await progressSegment(stale, seg, { calibration });
        if (!r.ok) {
          expect(r.failure!.kind).to.equal("progress-below-curve");
          behind.push(seg);
        }
      }
      expect(behind.length).to.be.greaterThan(0);
      // near-zero's optimizer state never advances: the state screen of the checkpoints fails every segment
      const nearZero = await openTraceDir(fx.run, (await fx.trace("near-zero")).dir);
      for (let seg = 0; seg < 3; seg++) {
        const r = await progressSegment(nearZero, seg, { calibration });
        expect(r.failure?.kind, `segment ${seg}`).to.equal("optimizer-state-invalid");
      }
    });
  });

  describe("tolerance", () => {
    it("normalQuantile matches known values", () => {
      expect(normalQuantile(0.975)).to.be.closeTo(1.959964, 1e-6);
      expect(normalQuantile(1 - 1e-6)).to.be.closeTo(4.753424, 1e-5);
      expect(normalQuantile(0.5)).to.be.closeTo(0, 1e-12);
    });

    it("studentTQuantile matches reference values (scipy.stats.t.ppf) and tends to the normal", () => {
      // [p, dof, t.ppf(p, dof)]
      const table: [number, number, number][] = [
        [0.975, 1, 12.706204736174698], [0.975, 4, 2.7764451051977934], [0.95, 2, 2.919985580355516],
        [0.995, 19, 2.8609346064649799], [0.9975, 19, 3.1737245307923256], [0.995, 30, 2.7499956535672254],
        [1 - 1e-6, 5, 24.771029720372493], [0.025, 10, -2.2281388519649385],
      ];
      for (const [p, dof, want] of table) expect(studentTQuantile(p, dof), `t(${p}, ${dof})`).to.be.closeTo(want, 1e-8 * Math.abs(want));
      expect(studentTQuantile(0.975, 1e6)).to.be.closeTo(normalQuantile(0.975), 1e-5);
      expect(studentTCdf(0, 7)).to.equal(0.5);
      for (const bad of [0, 1, Number.NaN]) expect(() => studentTQuantile(bad, 3)).to.throw(RangeError);
      expect(() => studentTQuantile(0.9, 0)).to.throw(RangeError);
    });

    it("predictionMultiplier widens the normal quantile for small calibration samples", () => {
      expect(predictionMultiplier(0.005, 20)).to.be.closeTo(2.8609346064649799 * Math.sqrt(1.05), 1e-9);
      expect(predictionMultiplier(0.005, 20)).to.be.greaterThan(normalQuantile(0.995) + 0.3);
      expect(predictionMultiplier(0.005, 100_000)).to.be.closeTo(normalQuantile(0.995), 1e-3);
      expect(() => predictionMultiplier(0.01, 1)).to.throw(RangeError);
    });

    it("calibrates a threshold no lower than the largest honest sample and rejects bad input", () => {
      const samples = Array.from({ length: 50 }, (_, i) => 1e-7 * (1 + (i % 7)));
      const c = calibrateThreshold(samples, 1e-4);
      expect(c.threshold).to.be.at.least(c.max);
      expect(c.samples).to.equal(50);
      expect(() => calibrateThreshold(samples.slice(0, 5), 1e-3)).to.throw(ToleranceCalibrationError);
      expect(() => calibrateThreshold(samples, 0)).to.throw(ToleranceCalibrationError);
      expect(() => calibrateThreshold([...samples, NaN], 1e-3)).to.throw(ToleranceCalibrationError);
    });

    it("passes an honest wasm-backend provider against the cpu reference and flags a plant", async () => {
      const manifest = tinyVariant({ numerics: "tolerance" });
      const wasm = await createRun(manifest, { jobId: JOB_ID, salt: offlineSalt(JOB_ID), backend: "wasm" });
      const dir = join(fx.dir, "wasm-honest");
      const { trace } = await train(wasm, { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
      await publishStepStates(wasm, trace, dir);
      const cpu = await createRun(manifest, { jobId: JOB_ID, salt: offlineSalt(JOB_ID), backend: "cpu" });
      const ctx = await openTraceDir(cpu, dir);
      const distances: number[] = [];
      for (let seg = 0; seg < 3; seg++) {
        const r = await toleranceSegment(ctx, seg, ctx.stepStates!, { threshold: 1e-3 });
        expect(r.ok, `segment ${seg}: ${r.failure?.message}`).to.equal(true);
        distances.push(...(r.details!.distances as number[]));
      }
      expect(Math.max(...distances)).to.be.lessThan(1e-3);
      const plant = await openTraceDir(fx.run, (await fx.trace("plant:6", { stepStates: true })).dir);
      const r = await toleranceSegment(plant, 1, plant.stepStates!, { threshold: 1e-3 });
      // the state screen of step 6 (weights moved more than Adam can) fires before the distance
      expect(r.failure?.kind).to.equal("magnitude-exceeded");
      expect(r.firstBadStep).to.equal(6);
      const states = [];
      for (const t of [5, 6]) states.push(fx.run.loadCheckpoint(await plant.store.get((plant.stepStates!.file as { cids: string[] }).cids[t]!), { step: t }));
      expect(stepDistance(states[0]!, states[1]!, fx.run.step(states[0]!, 6).state)).to.be.greaterThan(1e-3);
    });
  });
});
