/**
 * One training step under a strategy (honest or one of the cheats of strategies.ts): the one place
 * each strategy's step is written. The whole-run trainer (train.ts, `pouw train`) and the provider that
 * commits segment by segment and resumes after a restart (provider/run-job.ts, `pouw provider run`)
 * both drive it; test/provider/stepper.test.ts checks that they give identical segment roots.
 * copy:<dir>, full-copy:<dir> and steer:<dir> train nothing and are handled by train.ts alone.
 */
import { Rng } from "./prng.ts";
import type { Run, TrainState } from "./run.ts";
import type { Recycled } from "./optimizer.ts";
import type { Batch } from "./models/types.ts";
import { StrategyError } from "./errors.ts";
import { ENGINE_NAN_BITS, isSkipped, NEAR_ZERO_SCALE, PLANT_COUNT, PLANT_DELTA, plantSpreadSteps, POISON_M, POISON_V, type Strategy } from "./strategies.ts";
import { adamPowers, adamScalars } from "./kernels/index.ts";
import { adamDriftBound } from "../checks/state-screen.ts";
import { sizeOf } from "./tensors.ts";
import { roundToHalf } from "./tensors.ts";
import { DistilledTransformer } from "./distill/model.ts";

/**
 * `flops`: nominal FLOPs this step spent (0 when it computed no gradient); `skipped`: skip:<f> left the
 * weights untouched; `planted`: plant:<step> added its delta to this step's weights.
 */
export type StepOutcome = {
  state: TrainState;
  loss: number;
  flops: number;
  skipped?: true;
  planted?: { step: number; tensor: string; count: number; delta: number };
};

/**
 * `step(state, t, into)`: with `into` (a state the caller hands back and no longer references) a stepper that
 * `recycles` may write step t's state into its arrays; one that does not ignores it. Only the honest strategy recycles:
 * the others share a state's arrays between steps (skip, skip-powers) or keep them (stale, plant-bounded).
 */
export type Stepper = { readonly recycles: boolean; step(state: TrainState, t: number, into?: Recycled): StepOutcome };

/** The first n examples of a batch (quarter-batch). */
function sliceBatch(batch: Batch, n: number): Batch {
  if (batch.kind === "images") return { kind: "images", size: n, x: batch.x.subarray(0, (batch.x.length / batch.size) * n), y: batch.y.subarray(0, n) };
  return { kind: "tokens", size: n, tokens: batch.tokens.subarray(0, (batch.tokens.length / batch.size) * n) };
}

/**
 * A stepper for `strategy`. `resumeAt` is the first step it will be asked for (a segment start after a
 * restart); stale:<k> can resume only where a fresh gradient is due.
 */
export function createStepper(run: Run, strategy: Strategy, resumeAt = 1): Stepper {
  const B = run.batchSize;
  const flopsPerStep = run.model.flopsPerStep(B);
  if (strategy.kind === "copy" || strategy.kind === "full-copy" || strategy.kind === "steer") throw new StrategyError(`${strategy.kind}:<dir> cannot train segment by segment; use \`pouw train\``);
  // linear-tile's step is one fused update (Run.step): the cheats that recombine gradients and optimizer updates do not
  // exist for it; honest, plant and skip do
  if (run.model.exactStep && !["honest", "plant", "skip"].includes(strategy.kind)) {
    throw new StrategyError(`${strategy.kind} is not defined for ${run.model.arch} (its step is the circuit's fused update): use honest, plant:<step> or skip:<f>`);
  }
  // skip-teacher: the student's own pass on the hard labels, the step of the job without its distill block
  const student = run.model instanceof DistilledTransformer ? run.model.student : undefined;
  if (strategy.kind === "skip-teacher" && !student) throw new StrategyError(`skip-teacher leaves out a distillation job's teacher term; manifest ${run.manifestHash} (${run.model.arch}) has no distill block`);
  if (strategy.kind === "state-poison" && run.optimizer.name !== "adam") throw new StrategyError(`state-poison needs Adam moments to poison; the manifest's optimizer is ${run.optimizer.name}`);
  // the Adam configuration skip-powers and plant-bounded read (both refuse any other optimizer)
  const adam = run.manifest.optimizer.name === "adam" ? run.manifest.optimizer : undefined;
  if (strategy.kind === "skip-powers" && !adam) throw new StrategyError(`skip-powers advances Adam's bias-correction powers; the manifest's optimizer is ${run.optimizer.name} (use skip:<f>)`);
  if (strategy.kind === "plant-bounded" && !adam) throw new StrategyError(`plant-bounded plants inside Adam's weight-continuity bound; the manifest's optimizer is ${run.optimizer.name}`);
  const K = run.manifest.training.stepsPerSegment;
  // plant-bounded: the plant's entries at the segment's start (the state the segment's first step is given)
  let segmentStart: Float32Array | undefined;
  const doses = strategy.kind === "plant-spread" ? new Set(plantSpreadSteps(strategy.doses, run.manifest.training.steps)) : undefined;
  // the gradients a poisoned (or NaN) state gets without computing them: all zero (they vanish) or all -NaN
  const freeGradients = (fill: "zero" | "nan"): Float32Array[] =>
    run.paramSpecs.map((p) => {
      const a = new Float32Array(sizeOf(p.shape));
      if (fill === "nan") new Uint32Array(a.buffer).fill(ENGINE_NAN_BITS);
      return a;
    });
  if (strategy.kind === "stale" && (resumeAt - 1) % strategy.k !== 0) {
    throw new StrategyError(`stale:${strategy.k} cannot resume at step ${resumeAt} (its stale gradient is from step ${resumeAt - ((resumeAt - 1) % strategy.k)})`);
  }
  let lastLoss = NaN;
  let stale: { grads: Float32Array[]; loss: number } | undefined;
  let nearZeroLoss: number | undefined;
  return {
    recycles: strategy.kind === "honest",
    step(state, t, into) {
      let out: StepOutcome;
      switch (strategy.kind) {
        case "honest":
        case "plant": {
          const r = run.step(state, t, strategy.kind === "honest" && into ? { into } : {});
          out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          if (strategy.kind === "plant" && t === strategy.step) {
            const first = Float32Array.from(r.state.params[0]!);
            const count = Math.min(PLANT_COUNT, first.length);
            for (let i = 0; i < count; i++) first[i] = Math.fround(first[i]! + PLANT_DELTA);
            out.state = { ...r.state, params: [first, ...r.state.params.slice(1)] };
            out.planted = { step: t, tensor: run.paramSpecs[0]!.name, count, delta: PLANT_DELTA };
          }
          break;
        }
        case "skip-powers": {
          if (isSkipped(strategy.fraction, t)) {
            const n = run.paramSpecs.length;
            // the engine's power update (kernels/reference.ts adamPowers): p' = fround(p * fround(beta)); nothing else moves
            const { p1, p2 } = adamPowers(adamScalars(adam!), state.opt[2 * n]![0]!, state.opt[2 * n + 1]![0]!);
            const opt = [...state.opt.slice(0, 2 * n), Float32Array.of(p1), Float32Array.of(p2)];
            let flops = 0;
            let loss = lastLoss;
            if (Number.isNaN(loss)) {
              loss = run.gradients(state.params, run.batchFor(t)).loss;
              flops = flopsPerStep;
            }
            out = { state: { step: t, params: state.params, opt }, loss, flops, skipped: true };
          } else {
            const r = run.step(state, t);
            out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          }
          break;
        }
        case "plant-spread": {
          const r = run.step(state, t);
          out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          if (doses!.has(t)) {
            const delta = Math.fround(PLANT_DELTA / strategy.doses);
            const first = Float32Array.from(r.state.params[0]!);
            const count = Math.min(PLANT_COUNT, first.length);
            for (let i = 0; i < count; i++) first[i] = Math.fround(first[i]! + delta);
            out.state = { ...r.state, params: [first, ...r.state.params.slice(1)] };
            out.planted = { step: t, tensor: run.paramSpecs[0]!.name, count, delta };
          }
          break;
        }
        case "plant-bounded": {
          if ((t - 1) % K === 0) segmentStart = state.params[0]!.slice(0, PLANT_COUNT);
          const r = run.step(state, t);
          out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          if (t % K === 0 && segmentStart) {
            const room = adamDriftBound(adam!, t - K, t) * (1 - 2 ** -10);
            const first = Float32Array.from(r.state.params[0]!);
            const count = Math.min(PLANT_COUNT, first.length);
            let total = 0;
            for (let i = 0; i < count; i++) {
              // end the segment `room` above its start: the honest move is replaced by the largest one the screen allows
              const target = Math.fround(segmentStart[i]! + room);
              if (target > first[i]!) {
                total += target - first[i]!;
                first[i] = target;
              }
            }
            out.state = { ...r.state, params: [first, ...r.state.params.slice(1)] };
            out.planted = { step: t, tensor: run.paramSpecs[0]!.name, count, delta: total / count };
          }
          break;
        }
        case "skip": {
          if (isSkipped(strategy.fraction, t)) {
            const loss = Number.isNaN(lastLoss) ? run.gradients(state.params, run.batchFor(t)).loss : lastLoss;
            out = { state: { ...state, step: t }, loss, flops: 0, skipped: true };
          } else {
            const r = run.step(state, t);
            out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          }
          break;
        }
        case "quarter-batch": {
          const n = Math.ceil(B / 4);
          const g = run.gradients(state.params, sliceBatch(run.batchFor(t), n));
          out = { state: run.applyUpdate(state, g.grads), loss: g.loss, flops: (flopsPerStep * n) / B };
          break;
        }
        case "stale": {
          let flops = 0;
          if (stale === undefined || (t - 1) % strategy.k === 0) {
            stale = run.gradients(state.params, run.batchFor(t));
            flops = flopsPerStep;
          }
          out = { state: run.applyUpdate(state, stale.grads), loss: stale.loss, flops };
          break;
        }
        case "fp16": {
          const r = run.step(state, t);
          const params = r.state.params.map((next, i) => {
            const prev = state.params[i]!;
            const o = new Float32Array(next.length);
            for (let j = 0; j < next.length; j++) o[j] = Math.fround(prev[j]! + roundToHalf(Math.fround(next[j]! - prev[j]!)));
            return o;
          });
          out = { state: { ...r.state, params }, loss: r.loss, flops: flopsPerStep / 2 };
          break;
        }
        case "state-poison":
        case "nan-plant": {
          if (t < strategy.step) {
            const r = run.step(state, t);
            out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          } else if (t === strategy.step) {
            const r = run.step(state, t);
            out = { state: r.state, loss: r.loss, flops: flopsPerStep };
            if (strategy.kind === "state-poison") {
              const n = run.paramSpecs.length;
              const opt = r.state.opt.map((a, i) => (i < n ? new Float32Array(a.length).fill(POISON_M) : i < 2 * n ? new Float32Array(a.length).fill(POISON_V) : a));
              out.state = { ...r.state, opt };
            } else {
              const first = Float32Array.from(r.state.params[0]!);
              first[0] = NaN;
              out.state = { ...r.state, params: [first, ...r.state.params.slice(1)] };
            }
          } else {
            // no forward or backward pass: the gradients are known without computing them
            const poisoned = strategy.kind === "state-poison";
            out = { state: run.applyUpdate(state, freeGradients(poisoned ? "zero" : "nan")), loss: poisoned ? lastLoss : NaN, flops: 0 };
          }
          break;
        }
        case "skip-teacher": {
          if (t < strategy.step) {
            const r = run.step(state, t);
            out = { state: r.state, loss: r.loss, flops: flopsPerStep };
          } else {
            const g = student!.lossAndGrads(state.params, run.batchFor(t));
            out = { state: run.applyUpdate(state, g.grads), loss: g.loss, flops: student!.flopsPerStep(B) };
          }
          break;
        }
        case "near-zero": {
          let flops = 0;
          if (nearZeroLoss === undefined) {
            nearZeroLoss = run.gradients(state.params, run.batchFor(t)).loss;
            flops = flopsPerStep;
          }
          const rng = new Rng(Number(run.jobId & 0xffffffffn), "near-zero", t);
          const params = state.params.map((p) => {
            const noise = rng.uniform(p.length, NEAR_ZERO_SCALE);
            const o = new Float32Array(p.length);
            for (let j = 0; j < p.length; j++) o[j] = Math.fround(p[j]! + noise[j]!);
            return o;
          });
          out = { state: { step: t, params, opt: state.opt }, loss: nearZeroLoss, flops };
          break;
        }
      }
      lastLoss = out.loss;
      return out;
    },
  };
}
