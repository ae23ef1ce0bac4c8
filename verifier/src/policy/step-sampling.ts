/**
 * The price of per-step detection (state openings, checks/step-sample.ts): the step rate r that catches a cheat of
 * every step with the detection the buyer asks for, and what it costs the auditors and the provider, as shares of the
 * provider's training.
 *
 * The model. An auditor step-samples each committed segment independently with probability r (its private draw,
 * bot/sampler.ts sampledStep), one step s uniform in the segment: it asks for state s-1 (one opening), recomputes step
 * s, and compares with h(s). A cheat class that leaves a share q of its steps wrong (q = 1 for a cheat that touches
 * every step: copy, quarter batch, low precision; stale gradients and skipped steps measured lower,
 * bench/results/audit-cost.json) is caught in one sampled segment with r q, so a cheat of n segments is caught with
 *
 *     1 - (1 - r q)^n,     and the rate for detection d over all S segments is  r = (1 - (1 - d)^(1/S)) / q.
 *
 * The last segment counts like any other because the final state is opened and screened (StateOpenings opens the
 * last segment's end state; checks/ screenFinalState): one more opening per auditor and one screen.
 *
 * Costs, in training steps of the provider (the caller measures them: bench/audit-cost.ts):
 *   auditor    S r (stepAudit) + finalScreen                          (stepAudit: fetch + verify a state, one step)
 *   provider   S r (opening)   + finalOpening                         (opening: replay to the state, or read it kept)
 * each divided by the job's S K training steps.
 *
 * Pure: data in, numbers out.
 */
import { PolicyParamError } from "./params.ts";

export type StepSamplingJob = {
  /** Committed segments of the job (S). */
  readonly segments: number;
  /** Steps per segment (K). */
  readonly stepsPerSegment: number;
};

/** Measured costs, in the provider's training steps (e.g. a 17.6 ms sampled step at 9.5 ms a step is 1.86). */
export type StepSamplingCosts = {
  /** One sampled step's audit: fetch and verify the opened state, recompute one step. */
  readonly stepAudit: number;
  /** The provider's CPU for one opening of a uniformly drawn state (replay, or read a kept state). */
  readonly opening: number;
  /** The screen of the final state (fetch, verify, screen), once per job. */
  readonly finalScreen: number;
  /** The provider's CPU to open the final state (it holds it: read and hash, or replay the last segment). */
  readonly finalOpening: number;
};

export type StepSamplingQuote = {
  /** Per-segment step rate r. */
  readonly stepRate: number;
  /** Expected sampled steps (openings) per auditor and job, S r, plus the final state's one opening. */
  readonly openingsPerJob: number;
  /** Detection of the class over every segment (>= the asked detection unless r is capped at 1). */
  readonly detectAllSegments: number;
  /** Detection of the class confined to ONE segment: r q. */
  readonly detectOneSegment: number;
  /** Auditor's expected work, share of the provider's training (null without costs). */
  readonly auditorShare: number | null;
  /** Provider's expected opening work per auditor, share of its training (null without costs). */
  readonly providerShare: number | null;
};

function unitInterval(name: string, x: number, open = true): void {
  if (!(Number.isFinite(x) && (open ? x > 0 && x < 1 : x > 0 && x <= 1))) throw new PolicyParamError(`${name} must be in ${open ? "(0, 1)" : "(0, 1]"}, got ${x}`);
}

/** r = (1 - (1 - d)^(1/S)) / q, capped at 1: the per-segment rate that catches a class of per-step detection q over S segments with d. */
export function stepRateForDetection(segments: number, detection: number, perStepDetection = 1): number {
  if (!(Number.isInteger(segments) && segments >= 1)) throw new PolicyParamError(`segments must be a positive integer, got ${segments}`);
  unitInterval("detection", detection);
  unitInterval("perStepDetection", perStepDetection, false);
  return Math.min(1, (1 - (1 - detection) ** (1 / segments)) / perStepDetection);
}

/** Detection of a class with per-step detection q that touches n segments, at step rate r and segment recompute rate p. */
export function detectionOver(n: number, stepRate: number, perStepDetection = 1, segmentRate = 0): number {
  return 1 - ((1 - segmentRate) * (1 - stepRate * perStepDetection)) ** n;
}

/**
 * The step rate for `detection` of a class of per-step detection q over the job's S segments, and with `costs` the
 * auditors' and the provider's shares of the training it costs.
 *
 * @example
 *   quoteStepSampling({ segments: 8, stepsPerSegment: 50 }, 0.99, 1, { stepAudit: 1.9, opening: 8.3, finalScreen: 0.5, finalOpening: 0.4 })
 *   // { stepRate: 0.438, openingsPerJob: 4.5, detectAllSegments: 0.99, auditorShare: 0.0179, providerShare: 0.074, ... }
 */
export function quoteStepSampling(job: StepSamplingJob, detection: number, perStepDetection = 1, costs?: StepSamplingCosts): StepSamplingQuote {
  const { segments: S, stepsPerSegment: K } = job;
  if (!(Number.isInteger(K) && K >= 1)) throw new PolicyParamError(`stepsPerSegment must be a positive integer, got ${K}`);
  const r = stepRateForDetection(S, detection, perStepDetection);
  if (costs) {
    for (const [k, v] of Object.entries(costs)) if (!(Number.isFinite(v) && v >= 0)) throw new PolicyParamError(`cost ${k} must be a non-negative number of training steps, got ${v}`);
  }
  const steps = S * K;
  return {
    stepRate: r,
    openingsPerJob: S * r + 1,
    detectAllSegments: detectionOver(S, r, perStepDetection),
    detectOneSegment: r * perStepDetection,
    auditorShare: costs ? (S * r * costs.stepAudit + costs.finalScreen) / steps : null,
    providerShare: costs ? (S * r * costs.opening + costs.finalOpening) / steps : null,
  };
}
