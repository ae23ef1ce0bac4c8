/**
 * Ground truth for measuring the checks: which steps of a strategy's trace are cheated, i.e. where
 * the committed state t is NOT the engine's honest step applied to the committed state t-1. A
 * segment is affected by a cheat iff it contains a cheated step (its start state may already differ
 * from the honest run's: recompute starts from the committed start checkpoint, so an earlier cheat
 * that carried over is not this segment's fault). Mirrors ml/strategies.ts and ml/train.ts.
 */
import { isSkipped, plantSpreadSteps, type Strategy } from "../ml/strategies.ts";

export function cheatedSteps(s: Strategy, steps: number, stepsPerSegment?: number): number[] {
  const all = Array.from({ length: steps }, (_, i) => i + 1);
  switch (s.kind) {
    case "honest":
      return [];
    case "skip":
    case "skip-powers":
      return all.filter((t) => isSkipped(s.fraction, t));
    case "plant-spread":
      return plantSpreadSteps(s.doses, steps);
    case "plant-bounded":
      // the last step of every segment
      if (stepsPerSegment === undefined) throw new RangeError("cheatedSteps: plant-bounded needs the segment length");
      return all.filter((t) => t % stepsPerSegment === 0);
    case "stale":
      // a fresh gradient at t = 1, 1+k, ... is an honest step; the k-1 steps after it reuse it
      return all.filter((t) => (t - 1) % s.k !== 0);
    case "skip-teacher":
      // every step from s on leaves the teacher term out
      return all.filter((t) => t >= s.step);
    case "plant":
    case "state-poison":
    case "nan-plant":
      // only the injection step: every later step is the engine's step from the committed (poisoned
      // or NaN) state, bit for bit, which is what makes these cheats free (test/ml/strategies.test.ts)
      return s.step <= steps ? [s.step] : [];
    default:
      // quarter-batch, fp16, near-zero change every step; copy commits a peer's h(t) (its jobId) for every
      // step; steer's served moments differ from the engine's at every step
      return all;
  }
}

/** Segments (0-based) that contain a cheated step. */
export function affectedSegments(s: Strategy, steps: number, stepsPerSegment: number): number[] {
  return [...new Set(cheatedSteps(s, steps, stepsPerSegment).map((t) => Math.ceil(t / stepsPerSegment) - 1))].sort((a, b) => a - b);
}

/**
 * How a cheat scales, for the quote (policy/contract.ts): "all" for a cheat applied per segment (its saving grows
 * with the segments it touches), or the number of segments a one-shot injection touches (a plant, state-poison,
 * nan-plant: one cheated step, every later step free from the committed state; plant-spread: the segments of its doses).
 */
export function segmentsTouched(s: Strategy, steps: number, stepsPerSegment: number): number | "all" {
  switch (s.kind) {
    case "plant":
    case "plant-spread":
    case "state-poison":
    case "nan-plant":
      return Math.max(1, affectedSegments(s, steps, stepsPerSegment).length);
    default:
      return "all";
  }
}
