/**
 * Tolerance mode, for providers whose backend is not bit-reproducible with the reference (a GPU, or
 * @tensorflow/tfjs-backend-wasm against the CPU reference): instead of comparing hashes, the auditor
 * takes each served state t-1 of the segment (step-states.ts; each bound to its committed leaf),
 * runs step t with the engine's step function on its reference backend, and measures how far the
 * provider's state t lies from that:
 *
 *   d_X(t) = || X_provider(t) - step_ref(state_provider(t-1)).X ||_2  /  || X_provider(t) - X_provider(t-1) ||_2
 *   d(t)   = max over X in { weights, Adam m, Adam v }
 *
 * i.e. the disagreement of each part of the state as a fraction of the step the provider claims that
 * part took (scale-free per part, so moments and weights of any size are comparable, and one step at
 * a time, so honest drift does not accumulate over the segment). A step is flagged when
 * d(t) > threshold; the threshold comes from measured honest drift of the whole state
 * (calibrateThreshold) for a target false-alarm rate per step, and is part of the job's verification
 * policy. The bias-correction powers are compared exactly (every IEEE float32 backend computes
 * fl(p * b1) the same), by the state screen.
 *
 * IMPORTANT: the distance covers the whole state because served moments steer the reference step: a
 * provider that serves huge v (gradients vanish) and a chosen m makes step_ref land on any weights
 * it likes (ml/steer.ts), so a distance over the weights alone passes a job trained with zero
 * gradients. Every served state also goes through the state screen (state-screen.ts), with the
 * previous step as its baseline, so moments no gradient sequence produces fail even when they are
 * consistent with the reference step (state-poison).
 */
import type { Run, TrainState } from "../ml/run.ts";
import { failed, openFailed, passed, type CheckResult } from "./result.ts";
import { challengeProof, nonFinite, openSegment, type AuditTarget } from "./segment.ts";
import { screenConfigOf, screenState } from "./state-screen.ts";
import { segmentStates, type StepStateSource } from "./step-states.ts";
import { meanSd, predictionMultiplier, quantiles } from "./stats.ts";
import { InputError } from "../errors/index.ts";

/** One part of the state's distance: ||claimed - reference|| / ||claimed - before|| over its tensors. */
function partDistance(before: readonly Float32Array[], claimed: readonly Float32Array[], reference: readonly Float32Array[]): number {
  let diff = 0;
  let step = 0;
  for (let i = 0; i < claimed.length; i++) {
    const c = claimed[i]!;
    const r = reference[i]!;
    const b = before[i]!;
    for (let j = 0; j < c.length; j++) {
      diff += (c[j]! - r[j]!) ** 2;
      step += (c[j]! - b[j]!) ** 2;
    }
  }
  if (!(diff === diff && step === step)) return Infinity; // a NaN anywhere is never within tolerance
  if (step === 0) return diff === 0 ? 0 : Infinity;
  return Math.sqrt(diff / step);
}

/**
 * The distance of each part of the state: weights, and for Adam the first and second moments
 * (optimizer state layout: m of every parameter, v of every parameter, then the two powers).
 */
export function stateDistances(before: TrainState, claimed: TrainState, reference: TrainState): { weights: number; m?: number; v?: number } {
  const weights = partDistance(before.params, claimed.params, reference.params);
  const n = claimed.params.length;
  if (claimed.opt.length < 2 * n) return { weights };
  const slice = (s: TrainState, a: number) => s.opt.slice(a, a + n);
  return { weights, m: partDistance(slice(before, 0), slice(claimed, 0), slice(reference, 0)), v: partDistance(slice(before, n), slice(claimed, n), slice(reference, n)) };
}

/** Relative distance of `claimed` from `reference` over the whole state: the largest part's, per unit of that part's claimed step. */
export function stepDistance(before: TrainState, claimed: TrainState, reference: TrainState): number {
  const d = stateDistances(before, claimed, reference);
  return Math.max(d.weights, d.m ?? 0, d.v ?? 0);
}

/** Per-step distances of a segment (the auditor's reference steps from the provider's states). */
export function segmentDistances(run: Run, states: readonly TrainState[]): number[] {
  const out: number[] = [];
  for (let j = 1; j < states.length; j++) {
    const before = states[j - 1]!;
    const reference = run.step(before, before.step + 1).state;
    out.push(stepDistance(before, states[j]!, reference));
  }
  return out;
}

export class ToleranceCalibrationError extends InputError {
  override name = "ToleranceCalibrationError";
  override readonly code: string = "TOLERANCE_CALIBRATION";
}

export type ToleranceCalibration = {
  /** Per-step false-alarm rate the threshold targets. */
  readonly targetFalseAlarmRate: number;
  readonly threshold: number;
  /** Honest drift samples used, and their distribution. */
  readonly samples: number;
  readonly max: number;
  readonly quantiles: { readonly p50: number; readonly p90: number; readonly p99: number };
  /** Fit of log10(d) over the non-zero samples (log-normal model of the drift). */
  readonly log10Mean: number;
  readonly log10Sd: number;
  readonly zeroSamples: number;
};

/**
 * Threshold for a per-step false-alarm rate `alpha` from honest drift samples: the one-sided (1 - alpha)
 * prediction bound of a log-normal fitted to the non-zero samples (Student t, stats.ts: the fit's
 * mean and sd are estimates), and never below the largest sample seen
 * (an empirical quantile beyond 1/n is not measurable; the fit extrapolates, the max guards it).
 */
export function calibrateThreshold(samples: readonly number[], alpha: number): ToleranceCalibration {
  if (!(alpha > 0 && alpha < 1)) throw new ToleranceCalibrationError(`target false-alarm rate must be in (0, 1), got ${alpha}`);
  if (samples.length < 10) throw new ToleranceCalibrationError(`need at least 10 honest drift samples, got ${samples.length}`);
  if (samples.some((x) => !(x >= 0) || !Number.isFinite(x))) throw new ToleranceCalibrationError("drift samples must be finite and non-negative");
  const nonZero = samples.filter((x) => x > 0);
  const max = Math.max(...samples);
  let log10Mean = -Infinity;
  let log10Sd = 0;
  let fitted = 0;
  if (nonZero.length >= 2) {
    const { mean, sd } = meanSd(nonZero.map(Math.log10));
    log10Mean = mean;
    log10Sd = sd;
    fitted = 10 ** (mean + predictionMultiplier(alpha, nonZero.length) * sd);
  }
  const [p50, p90, p99] = quantiles(samples, [0.5, 0.9, 0.99]);
  return {
    targetFalseAlarmRate: alpha,
    threshold: Math.max(fitted, max),
    samples: samples.length,
    max,
    quantiles: { p50: p50!, p90: p90!, p99: p99! },
    log10Mean,
    log10Sd,
    zeroSamples: samples.length - nonZero.length,
  };
}

export type ToleranceOptions = { readonly threshold: number };

export async function toleranceSegment(target: AuditTarget, segment: number, source: StepStateSource, options: ToleranceOptions): Promise<CheckResult> {
  const config = screenConfigOf(target.run);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  if (!(options.threshold >= 0)) throw new ToleranceCalibrationError(`tolerance threshold must be >= 0, got ${options.threshold}`);
  const opened = await openSegment(target, segment);
  if (!opened.ok) return openFailed(segment, "tolerance", opened, elapsed());
  const { leaves, start } = opened.value;
  const startScreen = screenState(config, start);
  if (!startScreen.ok && startScreen.failure.kind !== "state-non-finite") return failed(segment, "tolerance", startScreen.failure, elapsed(), { details: { screen: startScreen.details } });
  const states = await segmentStates(target, source, leaves, start);
  if (!states.ok) return failed(segment, "tolerance", states.failure, elapsed());
  const distances: number[] = [];
  let diverged = 0;
  for (let j = 1; j < states.value.length; j++) {
    const t = leaves.first + j;
    const before = states.value[j - 1]!;
    // INVARIANT: a non-finite state is a fault only where the rule does not produce it. No distance exists to a NaN,
    // so the reference step decides: the provider's state t is non-finite where the reference's is too (the rule's
    // trajectory diverged, followed), or a non-finite state t-1 (already accepted so) leads to it; a non-finite
    // state t where the reference from t-1 is finite is the provider's own: state-non-finite, claimed at step t
    const mine = nonFinite(target.run, states.value[j]!);
    if (mine !== null || nonFinite(target.run, before) !== null) {
      const reference = target.run.step(before, t).state;
      if (mine !== null && nonFinite(target.run, reference) === null) {
        return failed(segment, "tolerance", { kind: "state-non-finite", message: `step ${t}: the provider's state is non-finite (${mine}), the reference step from state ${t - 1} is finite` }, elapsed(), {
          firstBadStep: t,
          proof: challengeProof(leaves, t),
          stepsChecked: j,
          details: { distances },
        });
      }
      if (mine !== null) {
        diverged++;
        continue;
      }
    }
    const screen = screenState(config, states.value[j]!, before);
    if (!screen.ok) {
      return failed(segment, "tolerance", screen.failure, elapsed(), { firstBadStep: t, proof: challengeProof(leaves, t), stepsChecked: j, details: { distances, screen: screen.details, tensor: screen.tensor, index: screen.index } });
    }
    const reference = target.run.step(before, t).state;
    const d = stepDistance(before, states.value[j]!, reference);
    distances.push(d);
    if (!(d <= options.threshold)) {
      return failed(segment, "tolerance", { kind: "tolerance-exceeded", message: `step ${t}: distance ${d.toExponential(3)} from the reference step exceeds the threshold ${options.threshold.toExponential(3)}` }, elapsed(), {
        firstBadStep: t,
        proof: challengeProof(leaves, t),
        stepsChecked: j,
        details: { distances, threshold: options.threshold },
      });
    }
  }
  return passed(segment, "tolerance", leaves.last - leaves.first, elapsed(), { distances, threshold: options.threshold, ...(diverged > 0 ? { divergedSteps: diverged } : {}) });
}
