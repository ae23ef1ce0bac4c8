/**
 * Bit-exact segment recompute: from the segment's start checkpoint (fetched by CID, CID-checked,
 * its state hash checked against the previous segment's committed end state, or the manifest's
 * initial state for segment 0), re-run the segment's K steps with the engine's step function (the
 * same `Run.step` the provider's trainer calls) and compare every state hash with the provider's
 * committed leaves. The first divergent step s comes with Merkle proofs of the provider's leaves
 * for s-1 and s, ready for a challenge.
 *
 * @example
 *   const r = await recomputeSegment({ run, trace, store }, 2);
 *   if (!r.ok && r.proof) await challenge(r.proof);
 */
import { logger } from "../log/index.ts";
import { failed, passed, type CheckResult } from "./result.ts";
import { challengeProof, openSegment, type AuditTarget } from "./segment.ts";

const log = logger("checks.recompute");

export async function recomputeSegment(target: AuditTarget, segment: number): Promise<CheckResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const opened = await openSegment(target, segment);
  if (!opened.ok) return failed(segment, "recompute", opened.failure, elapsed());
  const { leaves, start } = opened.value;
  const { run } = target;
  let state = start;
  for (let t = leaves.first + 1; t <= leaves.last; t++) {
    state = run.step(state, t).state;
    const h = run.stateHashOf(state);
    const committed = leaves.hashes[t - leaves.first]!;
    if (h !== committed) {
      log.info({ segment, step: t, committed, recomputed: h }, "recompute diverged");
      return failed(
        segment,
        "recompute",
        { kind: "state-divergence", message: `step ${t}: recomputed h(${t}) = ${h}, committed ${committed}` },
        elapsed(),
        { firstBadStep: t, proof: challengeProof(leaves, t, h), stepsChecked: t - leaves.first },
      );
    }
  }
  return passed(segment, "recompute", leaves.last - leaves.first, elapsed());
}
