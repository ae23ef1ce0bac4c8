/**
 * Step sampling: the audit of ONE step of a committed segment from a state the provider opened on chain
 * (StateOpenings). Cheats that touch every step (copy, stale gradient, quarter batch, low precision, skipped steps)
 * make every step's recompute differ from its leaf, so one step recomputed from the opened state before it catches them
 * at the cost of one training step plus one checkpoint fetch, instead of K steps for a segment recompute. Sparse cheats
 * (one planted step in a segment) are left to the segment recompute at the rate the quote asks for.
 *
 * The verdict is the one pipeline's SegmentVerdict (check "recompute", one step checked), so the bot concludes it like
 * any audit: a mismatch is state-divergence at step s with the provider's own leaves h(s-1), h(s) as the claim.
 *   - the opened CID serves state s-1 (it hashes to the committed h(s-1)): step s is recomputed once (`exactStep`) and
 *     compared with h(s);
 *   - the opened CID serves nothing, or a state that is not h(s-1): the opening is withheld (the same failure kinds as a
 *     segment's start checkpoint), claimed at step s;
 *   - the opening was left unanswered past its deadline (`withheld`): the claim is step s, kind content-unavailable.
 * A panel member decides such a claim with decideStep and the opening's record (`preStateOpening`): a withheld or
 * unserved opened state is a Fault, as a withheld start checkpoint is.
 */
import { countAgainstProvider, failed, passed, segmentVerdict, type SegmentVerdict } from "./result.ts";
import { challengeProof, exactStep, fetchState, segmentLeaves } from "./segment.ts";
import { auditTargetOf, type ChainAuditContext, type SegmentToAudit } from "./target.ts";

/** What the provider did with an opening of state s-1: answered with a checkpoint CID, or withheld it past the deadline. */
export type OpenedPreState = { readonly checkpointCid: string } | { readonly withheld: string };

/**
 * The verdict on step `step` (first+1 .. last of segment `t.segment`) recomputed from the opened state `step - 1`.
 * A SourceUnavailableError of the store is thrown (not a verdict: the caller retries).
 */
export async function auditSampledStep(ctx: ChainAuditContext, t: SegmentToAudit, step: number, opened: OpenedPreState): Promise<SegmentVerdict> {
  const target = auditTargetOf(ctx, t);
  const t0 = performance.now();
  const leaves = segmentLeaves(target, t.segment);
  if (!leaves.ok) return segmentVerdict(target, t.segment, [failed(t.segment, "recompute", leaves.failure, performance.now() - t0)]);
  const { first, last, hashes } = leaves.value;
  if (!Number.isInteger(step) || step <= first || step > last) {
    throw new RangeError(`step ${step} is not a step of segment ${t.segment} (${first + 1}..${last})`);
  }
  const claim = challengeProof(leaves.value, step);
  if ("withheld" in opened) {
    // built as withheldVerdict is: the claim is the provider's own leaves, the failure its withholding
    await countAgainstProvider(target, true);
    return {
      segment: t.segment,
      ok: false,
      firstBadStep: step,
      check: "availability",
      checks: [],
      failure: { kind: "content-unavailable", message: `state ${step - 1} was asked by a state opening and not opened: ${opened.withheld}` },
      proof: claim,
      stepsChecked: 0,
      costMs: performance.now() - t0,
      flops: 0,
      losses: [],
      results: [],
    };
  }
  const before = await fetchState(target, opened.checkpointCid, step - 1, hashes[step - 1 - first]!, `opened state ${step - 1}`);
  if (!before.ok) return segmentVerdict(target, t.segment, [failed(t.segment, "recompute", before.failure, performance.now() - t0, { proof: claim })]);
  const after = exactStep(target.run, before.value, step, hashes[step - first]!, "sampled step");
  const costMs = performance.now() - t0;
  const details = { sampledStep: step, openedCid: opened.checkpointCid };
  const result = after.ok
    ? passed(t.segment, "recompute", 1, costMs, details)
    : failed(t.segment, "recompute", after.failure, costMs, { proof: challengeProof(leaves.value, step, after.stateHash), stepsChecked: 1, details });
  const verdict = await segmentVerdict(target, t.segment, [result]);
  // one recomputed step: its FLOPs (segmentVerdict counts them from recomputed losses, which a single step does not keep)
  return { ...verdict, flops: target.run.model.flopsPerStep(target.run.batchSize) };
}
