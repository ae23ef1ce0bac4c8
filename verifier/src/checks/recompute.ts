/**
 * Bit-exact segment recompute: from the segment's start checkpoint (fetched by CID, CID-checked,
 * its state hash checked against the previous segment's committed end state, or the manifest's
 * initial state for segment 0), re-run the segment's K steps with the engine's step function (the
 * same `Run.step` the provider's trainer calls) and compare every state hash with the provider's
 * committed leaves. The first divergent step s comes with Merkle proofs of the provider's leaves
 * for s-1 and s, ready for a challenge. A segment whose start cannot be opened (checkpoint withheld,
 * corrupt or not the committed state; segment 0 not from the manifest's initial state) fails with the
 * claim on its first step, which a panel member decides the same way (openSegment).
 *
 * @example
 *   const r = await recomputeSegment({ run, trace, store }, 2);
 *   if (!r.ok && r.proof) await challenge(r.proof);
 */
import { logger } from "../log/index.ts";
import type { Run, TrainState } from "../ml/run.ts";
import { failed, openFailed, passed, type CheckResult } from "./result.ts";
import { challengeProof, openSegment, type AuditTarget } from "./segment.ts";

const log = logger("checks.recompute");

export async function recomputeSegment(target: AuditTarget, segment: number): Promise<CheckResult> {
  return (await replaySegment(target, segment)).result;
}

/**
 * recomputeSegment, with the recomputed end state when every step matched (what the buyer's and the provider's
 * rebuild of the final weights takes: market/final-weights.ts).
 */
export async function replaySegment(target: AuditTarget, segment: number): Promise<{ result: CheckResult; end: TrainState | null }> {
  const result = await recomputeOrEnd(target, segment);
  return "end" in result ? result : { result, end: null };
}

async function recomputeOrEnd(target: AuditTarget, segment: number): Promise<CheckResult | { result: CheckResult; end: TrainState }> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const opened = await openSegment(target, segment);
  if (!opened.ok) return openFailed(segment, "recompute", opened, elapsed());
  const { leaves, start } = opened.value;
  const { run } = target;
  let state = start;
  const losses: { step: number; loss: number }[] = [];
  for (let t = leaves.first + 1; t <= leaves.last; t++) {
    const r = run.step(state, t);
    state = r.state;
    losses.push({ step: t, loss: r.loss });
    const h = run.stateHashOf(state);
    const committed = leaves.hashes[t - leaves.first]!;
    if (h !== committed) {
      log.info({ segment, step: t, committed, recomputed: h }, "recompute diverged");
      return failed(
        segment,
        "recompute",
        { kind: "state-divergence", message: `step ${t}: recomputed h(${t}) = ${h}, committed ${committed}` },
        elapsed(),
        { firstBadStep: t, proof: challengeProof(leaves, t, h), stepsChecked: t - leaves.first, losses },
      );
    }
  }
  return { result: { ...passed(segment, "recompute", leaves.last - leaves.first, elapsed()), losses }, end: state };
}

/** The state `to` replayed from `from` (a verified state) with the engine's step function: to = from.step for none. */
export function replaySteps(run: Run, from: TrainState, to: number): TrainState {
  let state = from;
  for (let t = from.step + 1; t <= to; t++) state = run.step(state, t).state;
  return state;
}
