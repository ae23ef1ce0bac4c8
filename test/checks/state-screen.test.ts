/**
 * The state screen (checks/state-screen.ts, screen-segment.ts) and the channels it closes: huge Adam
 * moments that make every later gradient vanish (state-poison), a planted NaN (nan-plant), and
 * moments that steer the tolerance reference step onto a peer's weights (steer).
 */
import { expect } from "chai";
import { join } from "node:path";
import {
  adamPowers,
  magnitudeSegment,
  openTraceDir,
  recomputeSegment,
  screenConfigOf,
  screenSegment,
  screenState,
  stepDistance,
  toleranceSegment,
  writeStepStates,
  type ScreenConfig,
} from "../../verifier/src/checks/index.ts";
import { stateDistances } from "../../verifier/src/checks/tolerance.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { createStepper } from "../../verifier/src/ml/stepper.ts";
import { MlpGradientBound } from "../../verifier/src/ml/models/mlp-bounds.ts";
import { exampleJson } from "../ml/helpers.ts";
import { Fixture, JOB_ID, tinyVariant } from "./fixture.ts";

/** States 0..steps of `strategy` on `run`, stepped in memory. */
function statesOf(run: Run, strategy = "honest", steps = run.manifest.training.steps): TrainState[] {
  const stepper = createStepper(run, parseStrategy(strategy));
  const out = [run.initState()];
  for (let t = 1; t <= steps; t++) out.push(stepper.step(out[t - 1]!, t).state);
  return out;
}

const withOpt = (s: TrainState, edit: (opt: Float32Array[]) => void): TrainState => {
  const opt = s.opt.map((a) => Float32Array.from(a));
  edit(opt);
  return { ...s, opt };
};

describe("checks: the state screen", function () {
  this.timeout(600_000);
  const fx = new Fixture();
  let config: ScreenConfig;
  let honest: TrainState[];
  before(async () => {
    await fx.setup();
    config = screenConfigOf(fx.run);
    honest = statesOf(fx.run);
  });
  after(async () => fx.teardown());

  describe("honest runs never fail it", () => {
    const variants: { label: string; json: Record<string, unknown> }[] = [];
    const tiny = exampleJson("tiny.json") as { data: object; training: object };
    for (const seed of [11, 12, 13, 14]) variants.push({ label: `Adam, data seed ${seed}, 24 steps`, json: { ...tiny, data: { ...tiny.data, seed }, training: { ...tiny.training, steps: 24 } } });
    variants.push({ label: "Adam, batch of 1 (the gradient bounds' tightest case)", json: { ...tiny, training: { ...tiny.training, batchSize: 1 } } });
    variants.push({ label: "Adam, lr 0.1, betas 0.5 / 0.9", json: { ...tiny, optimizer: { name: "adam", lr: 0.1, beta1: 0.5, beta2: 0.9 } } });
    variants.push({ label: "SGD", json: { ...tiny, optimizer: { name: "sgd", lr: 0.1 } } });
    for (const v of variants) {
      it(`${v.label}: every state passes, alone, after the step before, and after the segment before`, async () => {
        const run = await createRun(parseManifest(v.json), { jobId: JOB_ID, salt: offlineSalt(JOB_ID) });
        const cfg = screenConfigOf(run);
        const states = statesOf(run);
        const K = run.manifest.training.stepsPerSegment;
        let worst = { relation: 0, firstMoment: 0, secondMoment: 0, weights: 0 };
        for (let t = 0; t < states.length; t++) {
          for (const prev of [undefined, states[t - 1], states[t - K]].filter((p, i) => i === 0 || p !== undefined)) {
            const r = screenState(cfg, states[t]!, prev);
            expect(r.ok, `state ${t} after ${prev?.step ?? "none"}: ${r.ok ? "" : r.failure.message}`).to.equal(true);
            for (const k of ["relation", "firstMoment", "secondMoment", "weights"] as const) worst = { ...worst, [k]: Math.max(worst[k], r.details[k] ?? 0) };
          }
        }
        for (const x of Object.values(worst)) expect(x).to.be.within(0, 1);
        if (run.manifest.optimizer.name === "adam") expect(worst.relation).to.be.greaterThan(0.99); // step 1 meets m^2 = C_1 v with equality
      });
    }
  });

  describe("what it rejects", () => {
    const W2 = 2;
    const n = 4;

    it("Adam's powers are the engine's float32 products (fixed vector), and step 1 meets m^2 <= (1-b1)^2/(1-b2) v with equality", () => {
      const cfg = { name: "adam" as const, lr: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };
      expect(adamPowers(cfg, 0)).to.deep.equal([1, 1]);
      expect(adamPowers(cfg, 1)).to.deep.equal([0.8999999761581421, 0.9990000128746033]);
      expect(adamPowers(cfg, 2)).to.deep.equal([0.809999942779541, 0.9980010390281677]); // numpy.float32 products
      // an honest step-1 state with m = (1-b1) g and v = (1-b2) g^2 sits on the relation's boundary ...
      const s1 = honest[1]!;
      const g = 0.3;
      const onBoundary = withOpt(s1, (o) => {
        o[W2]![0] = Math.fround(Math.fround(0.1) * g);
        o[n + W2]![0] = Math.fround(Math.fround(0.001) * Math.fround(g * g));
      });
      expect(screenState({ ...config, gradients: { kind: "none" } }, onBoundary).ok).to.equal(true);
      // ... and 1 % more first moment is outside it: m^2 <= 10 v at step 1 for any gradient
      const outside = withOpt(onBoundary, (o) => {
        o[W2]![0] = Math.fround(Math.fround(0.1) * g * 1.01);
      });
      const r = screenState({ ...config, gradients: { kind: "none" } }, outside);
      expect(r.ok).to.equal(false);
      if (!r.ok) {
        expect(r.failure.kind).to.equal("moment-bound-exceeded");
        expect([r.tensor, r.index]).to.deep.equal(["opt.adam.m.W2", 0]);
      }
    });

    it("a hand-made poisoned state: a huge m with honest v fails m^2 <= C_t v, with no gradient bound at all", () => {
      const poisoned = withOpt(honest[5]!, (o) => {
        o[W2]![7] = 1e12;
      });
      const r = screenState({ ...config, gradients: { kind: "none" } }, poisoned);
      expect(r.ok).to.equal(false);
      if (!r.ok) {
        expect(r.failure.kind).to.equal("moment-bound-exceeded");
        expect(r.failure.message).to.contain("C_t");
        expect([r.tensor, r.index]).to.deep.equal(["opt.adam.m.W2", 7]);
      }
    });

    it("state-poison's moments (m = 1e12, v = 1e34) satisfy the relation but not the gradient bound, alone or after the state before", () => {
      const poisoned = withOpt(honest[5]!, (o) => {
        for (let i = 0; i < n; i++) {
          o[i]!.fill(1e12);
          o[n + i]!.fill(1e34);
        }
      });
      expect(screenState({ ...config, gradients: { kind: "none" } }, poisoned).ok).to.equal(true);
      for (const prev of [undefined, honest[4], honest[1]]) {
        const r = screenState(config, poisoned, prev);
        expect(r.ok).to.equal(false);
        if (!r.ok) {
          expect(r.failure.kind).to.equal("moment-bound-exceeded");
          expect(r.failure.message).to.contain("gradient bound");
        }
      }
      // a calibrated ceiling works the same way for models without an analytic bound
      expect(screenState({ ...config, gradients: { kind: "ceiling", perTensor: [10, 10, 10, 10] } }, poisoned).ok).to.equal(false);
    });

    it("moments in always-blank pixels' rows must stay exactly zero (their gradient is 0)", () => {
      const blank = Array.from(config.gradients instanceof MlpGradientBound ? config.gradients.pixelMax : []).indexOf(0);
      expect(blank).to.be.at.least(0);
      const H = 16;
      const planted = withOpt(honest[5]!, (o) => {
        o[0]![blank * H] = 1e-3;
        o[n]![blank * H] = 1e-5;
      });
      const r = screenState(config, planted, honest[4]);
      expect(r.ok).to.equal(false);
      if (!r.ok) expect([r.failure.kind, r.tensor, r.index]).to.deep.equal(["moment-bound-exceeded", "opt.adam.m.W1", blank * H]);
    });

    it("a second moment that went negative, or fell faster than b2 per step, fails", () => {
      const negative = withOpt(honest[5]!, (o) => {
        o[n + 1]![3] = -1e-9;
      });
      const r1 = screenState(config, negative);
      expect(r1.ok ? [] : [r1.failure.kind, r1.tensor, r1.index]).to.deep.equal(["moment-bound-exceeded", "opt.adam.v.b1", 3]);
      // a reset optimizer state (m = v = 0, as after a restart that lost it) is not a continuation of step 4
      const reset = withOpt(honest[5]!, (o) => {
        for (let i = 0; i < 2 * n; i++) o[i]!.fill(0);
      });
      expect(screenState(config, reset).ok).to.equal(true); // alone, zero moments are possible
      const r2 = screenState(config, reset, honest[4]);
      expect(r2.ok).to.equal(false);
      if (!r2.ok) expect(r2.failure.message).to.contain("fell below");
    });

    it("bias-correction powers must be the step's exact value, not only advance", () => {
      const stale = withOpt(honest[5]!, (o) => {
        o[2 * n]![0] = honest[4]!.opt[2 * n]![0]!;
      });
      const r = screenState(config, stale);
      expect(r.ok ? [] : [r.failure.kind, r.tensor]).to.deep.equal(["optimizer-state-invalid", "opt.adam.beta1Power"]);
      const early = { ...honest[5]!, step: 6 };
      expect((screenState(config, early) as { failure?: { kind: string } }).failure?.kind).to.equal("optimizer-state-invalid");
    });

    it("a NaN or an infinity anywhere is state-non-finite, checked before anything else", () => {
      for (const [tensor, value] of [[0, NaN], [1, Infinity], [n + 3, -Infinity], [2 * n, NaN]] as const) {
        const bad = tensor < n ? { ...honest[5]!, params: honest[5]!.params.map((a, i) => (i === tensor ? Float32Array.from(a).fill(value, 2, 3) : a)) } : withOpt(honest[5]!, (o) => o[tensor - n]!.fill(value, 0, 1));
        const r = screenState(config, bad);
        expect(r.ok ? "" : r.failure.kind, `tensor ${tensor} = ${value}`).to.equal("state-non-finite");
      }
      const nanPrev = { ...honest[4]!, params: [Float32Array.from(honest[4]!.params[0]!).fill(NaN, 0, 1), ...honest[4]!.params.slice(1)] };
      const r = screenState(config, honest[5]!, nanPrev);
      expect(r.ok ? "" : r.failure.message).to.contain("previous state 4");
    });

    it("weights that moved more than Adam can move them in the window fail as magnitude-exceeded", () => {
      const moved = { ...honest[8]!, params: honest[8]!.params.map((a, i) => (i === 2 ? Float32Array.from(a).map((x, j) => (j === 5 ? x + 0.2 : x)) : a)) };
      const r = screenState(config, moved, honest[4]);
      expect(r.ok ? "" : r.failure.kind).to.equal("magnitude-exceeded");
      expect(screenState(config, moved).ok).to.equal(true); // without a baseline, weights are free
    });
  });

  describe("the channels: every cheat whose effect persists fails the screen of the following committed state", () => {
    // the injection steps cover the first, a middle and the last step of a segment, and the job's last step
    const cases = ["state-poison", "state-poison:4", "state-poison:6", "state-poison:12", "nan-plant", "nan-plant:4", "nan-plant:7", "nan-plant:12"];
    for (const name of cases) {
      it(`${name}: the states before pass, the next committed state fails, for every data seed`, async () => {
        const step = parseStrategy(name).kind === "state-poison" || parseStrategy(name).kind === "nan-plant" ? (parseStrategy(name) as { step: number }).step : 0;
        const K = 4;
        const producedIn = Math.ceil(step / K) - 1;
        for (const seed of [21, 22]) {
          const run = await createRun(tinyVariant({ dataSeed: seed }), { jobId: JOB_ID, salt: offlineSalt(JOB_ID) });
          const dir = join(fx.dir, `${name.replace(":", "-")}-${seed}`);
          await train(run, { outDir: dir, strategy: parseStrategy(name), evaluate: false });
          const ctx = await openTraceDir(run, dir);
          let previous: TrainState | null = null;
          for (let i = 0; i <= 3; i++) {
            const r = await screenSegment(ctx, i, { previous });
            if (i <= producedIn) expect(r.ok, `state ${i * K}: ${r.failure?.message}`).to.equal(true);
            else {
              expect(r.ok, `state ${i * K}`).to.equal(false);
              expect(r.failure!.kind).to.equal(name.startsWith("nan") ? "state-non-finite" : "moment-bound-exceeded");
              if (i === producedIn + 1) expect(r.details!.producedBy).to.equal(producedIn);
            }
            previous = r.state;
          }
          // the channel: every step after the injection is the engine's own step from the committed state,
          // so recompute flags only the injection segment (a verified NaN start is no fault by itself: the steps after
          // it are the engine's own; the injection step is the one a claim names, test/checks/diverging.test.ts)
          for (let seg = 0; seg < 3; seg++) {
            const r = await recomputeSegment(ctx, seg);
            if (seg < producedIn) expect(r.ok).to.equal(true);
            else if (seg === producedIn) expect([r.failure?.kind, r.firstBadStep]).to.deep.equal(["state-divergence", step]);
            else expect(r.ok ? "ok" : r.failure!.kind).to.equal("ok");
          }
        }
      });
    }

    it("magnitude now names the injection step of state-poison and nan-plant, with a challenge proof", async () => {
      // a non-finite state is decided by the exact recompute of its step (segment.ts exactStep): the plant diverges
      for (const [name, kind] of [["state-poison:6", "moment-bound-exceeded"], ["nan-plant:6", "state-divergence"]] as const) {
        const { dir } = await fx.trace(name, { stepStates: true });
        const ctx = await openTraceDir(fx.run, dir);
        const r = await magnitudeSegment(ctx, 1, ctx.stepStates!);
        expect([r.failure?.kind, r.firstBadStep, r.proof?.step], name).to.deep.equal([kind, 6, 6]);
      }
    });
  });

  describe("tolerance mode: the distance covers the whole state", () => {
    it("moment steering passes a weights-only distance at every step, and fails the full-state distance and the check on every segment", async () => {
      const peerRun = await createRun(tinyVariant(), { jobId: JOB_ID + 1n, salt: offlineSalt(JOB_ID + 1n) });
      const peerDir = join(fx.dir, "steer-peer");
      const peer = await train(peerRun, { outDir: peerDir, strategy: { kind: "honest" }, evaluate: false, keepStepStates: true });
      await writeStepStates(peerRun, peerDir, peer.stepStateCids!);
      const dir = join(fx.dir, "steer");
      const steered = await train(fx.run, { outDir: dir, strategy: parseStrategy(`steer:${peerDir}`), evaluate: false });
      expect(steered.trace.compute.savedFraction).to.equal(1);
      await writeStepStates(fx.run, dir, steered.stepStateCids!);
      const ctx = await openTraceDir(fx.run, dir);
      const states: TrainState[] = [];
      for (let t = 0; t <= 12; t++) states.push(fx.run.loadCheckpoint(await ctx.store.get(steered.stepStateCids![t]!), { step: t }));
      for (let t = 2; t <= 12; t++) {
        const reference = fx.run.step(states[t - 1]!, t).state;
        const d = stateDistances(states[t - 1]!, states[t]!, reference);
        // the weights land on the peer's to within float32 rounding: the old check saw an honest step
        expect(d.weights, `step ${t} weights`).to.be.lessThan(1e-5);
        expect(stepDistance(states[t - 1]!, states[t]!, reference), `step ${t}`).to.be.greaterThan(0.1);
      }
      for (let seg = 0; seg < 3; seg++) {
        const r = await toleranceSegment(ctx, seg, ctx.stepStates!, { threshold: 1e-3 });
        expect(r.ok, `segment ${seg}`).to.equal(false);
        expect(["tolerance-exceeded", "moment-bound-exceeded"]).to.include(r.failure!.kind);
        // segment 0 starts from the initial state and fails at its first step; the later ones already
        // start from a steered state, which the start screen rejects
        expect(r.firstBadStep).to.equal(seg === 0 ? 1 : null);
      }
      // and with the screen alone (its moments are no optimizer's), segment by segment
      for (let i = 1; i <= 3; i++) expect((await screenSegment(ctx, i)).ok, `state ${i * 4}`).to.equal(false);
    });
  });
});
