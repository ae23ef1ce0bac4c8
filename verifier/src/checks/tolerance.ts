/**
 * Tolerance mode, for providers whose backend is not bit-reproducible with the reference (a GPU, or
 * @tensorflow/tfjs-backend-wasm against the CPU reference): instead of comparing hashes, the auditor
 * takes each served state t-1 of the segment (step-states.ts; each bound to its committed leaf),
 * runs step t with the engine's step function on its reference backend, and measures how far the
 * provider's state t lies from that:
 *
 *   d(t) = || w_provider(t) - step_ref(w_provider(t-1)) ||_2  /  || w_provider(t) - w_provider(t-1) ||_2
 *
 * i.e. the disagreement as a fraction of the step the provider claims to have taken (scale-free, and
 * one step at a time, so honest drift does not accumulate over the segment). A step is flagged when
 * d(t) > threshold; the threshold comes from measured honest drift (calibrateThreshold) for a target
 * false-alarm rate per step, and is part of the job's verification policy.
 */
import type { Run, TrainState } from "../ml/run.ts";
import { failed, passed, type CheckResult } from "./result.ts";
import { challengeProof, openSegment, type AuditTarget } from "./segment.ts";
import { segmentStates, type StepStateSource } from "./step-states.ts";
import { meanSd, predictionMultiplier, quantiles } from "./stats.ts";
import { InputError } from "../errors/index.ts";

/** Relative distance of `claimed` from `reference`, per unit of the claimed step (before -> claimed). */
export function stepDistance(before: TrainState, claimed: TrainState, reference: TrainState): number {
  let diff = 0;
  let step = 0;
  for (let i = 0; i < claimed.params.length; i++) {
    const c = claimed.params[i]!;
    const r = reference.params[i]!;
    const b = before.params[i]!;
    for (let j = 0; j < c.length; j++) {
      diff += (c[j]! - r[j]!) ** 2;
      step += (c[j]! - b[j]!) ** 2;
    }
  }
  if (step === 0) return diff === 0 ? 0 : Infinity;
  return Math.sqrt(diff / step);
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
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  if (!(options.threshold >= 0)) throw new ToleranceCalibrationError(`tolerance threshold must be >= 0, got ${options.threshold}`);
  const opened = await openSegment(target, segment);
  if (!opened.ok) return failed(segment, "tolerance", opened.failure, elapsed());
  const { leaves, start } = opened.value;
  const states = await segmentStates(target, source, leaves, start);
  if (!states.ok) return failed(segment, "tolerance", states.failure, elapsed());
  const distances: number[] = [];
  for (let j = 1; j < states.value.length; j++) {
    const t = leaves.first + j;
    const before = states.value[j - 1]!;
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
  return passed(segment, "tolerance", leaves.last - leaves.first, elapsed(), { distances, threshold: options.threshold });
}
