/**
 * The challenger bot's audit of an inference job (evaluate, generate): what checks/ is for a training segment, for a
 * segment of examples. The bot calls kindSegmentVerdict once per committed segment with the examples its private
 * draw picked (bot/sampler.ts sampledExamples) and concludes the verdict exactly as a training one: a receipt when
 * clean, a challenge of the named example when not (docs/bot.md "Inference jobs").
 *
 *   every segment  the states file must be served and hash to the committed leaves; h(0) must be the job's initial
 *                  state; every example's running totals (total, hits, chain) must be its predecessor's plus the
 *                  example's (hashing only: free, so done for all K examples, sampled or not)
 *   sampled        the drawn examples are recomputed with the provider's pinned forward pass (kinds/job.ts results)
 *                  and must give the committed item and score
 *
 * An inflated aggregate (the last leaf's total or hits above the sum of its examples) fails the running-total check at
 * that leaf in every audit; a changed or skipped example fails only where it is drawn, at the job's rate.
 */
import type { AuditFailure, SegmentVerdict } from "../checks/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentSource } from "../store/index.ts";
import { segmentStateRange } from "../trace/index.ts";
import { auditKindSegment, fileDependentExample, kindChallengeProof, KindJobError, type ExampleJob, type KindCommit, type KindFailure } from "./job.ts";

/** The failure kinds of the training pipeline's vocabulary (checks/ FAILURE_KINDS) each kind failure reports as. */
const FAILURE_KIND: Record<KindFailure, AuditFailure["kind"]> = {
  "initial-state": "initial-state-mismatch",
  "states-not-served": "checkpoint-missing",
  "states-mismatch": "checkpoint-state-mismatch",
  aggregate: "state-divergence",
  output: "state-divergence",
};

/**
 * The least per-example rate a bot audits an inference job at, whatever its payment (BotOptions.kindAuditRate raises
 * it). kindAuditRate prices only the forward passes a forger saves (at most P); a job's result is also a record others
 * cite (KindRecords), which a self-dealt job paying itself 1 wei would get at rate 0. At 5% per bot, m fabricated
 * examples escape one bot with probability 0.95^m (50 examples: 7.7%, 4 bots: 0.003%), for 5% of the provider's
 * forward passes per bot.
 */
export const DEFAULT_KIND_AUDIT_RATE = 0.05;

/**
 * The per-example audit rate that deters a provider of an inference job: forging m of N examples saves it at most m/N
 * of the payment P (the forward passes it was paid for), and one auditor drawing each example at rate r catches it
 * with probability 1 - (1 - r)^m, which costs it the lock S. Deterred for every m when (1 - (1 - r)^m) S >= m P / N;
 * the left side is concave in m and the right linear, so it holds for all m in 1..N iff it holds at m = 1 and m = N,
 * and the m = N bound is the larger: r = 1 - (1 - P/S)^(1/N), and 1 when P >= S (no rate deters it). The auditor's
 * cost is r N forward passes (evaluate: one per example; generate: `tokens` per sample).
 */
export function kindAuditRate(p: { payment: bigint; stake: bigint; examples: number }): number {
  if (!Number.isInteger(p.examples) || p.examples < 1) throw new KindJobError(`examples must be a positive integer, got ${p.examples}`);
  if (p.payment < 0n) throw new KindJobError(`payment must not be negative, got ${p.payment} wei`);
  if (p.stake <= 0n || p.payment >= p.stake) return 1;
  // NOTE: the ratio in float64 from integers scaled to 1e-12 (wei amounts exceed 2^53)
  const ratio = Number((p.payment * 10n ** 12n) / p.stake) / 1e12;
  return Math.min(1, 1 - (1 - ratio) ** (1 / p.examples));
}

/**
 * The verdict of committed segment `c` of inference job `job` with the examples `sample` recomputed (1-based steps of
 * this segment). Throws SourceUnavailableError when no source serves the states file now (the bot's grace period
 * applies, as for a training checkpoint); a states file that is gone for good is a failure at the first example whose
 * decision reads it (fileDependentExample).
 */
export async function kindSegmentVerdict(job: ExampleJob, store: ContentSource, c: KindCommit, sample: readonly number[]): Promise<SegmentVerdict> {
  const t0 = performance.now();
  // INVARIANT: an outage of the provider's content source is not yet a fault: surfaced for the grace period
  await store.get(c.checkpointCid, { maxBytes: 1 << 26 }).catch((err: unknown) => {
    if (err instanceof SourceUnavailableError) throw err;
  });
  const a = await auditKindSegment(job, store, c, sample);
  const costMs = performance.now() - t0;
  const checked = a.ok ? a.checked.length : 0;
  // NOTE: the receipt's recompute bit only when an example was recomputed; the states-file and running-total checks
  // have no bit of their own (a receipt with no bits and sampledSteps 0 states that only they ran)
  const base = { segment: c.segment, checks: checked > 0 || !a.ok ? (["recompute"] as const) : ([] as const), stepsChecked: checked, costMs, flops: 0, losses: [], results: [] };
  if (a.ok) return { ...base, ok: true, firstBadStep: null, check: "recompute", failure: null, proof: null };
  return { ...base, ok: false, firstBadStep: a.proof.step, check: "recompute", failure: { kind: FAILURE_KIND[a.failure], message: a.reason }, proof: a.proof };
}

/**
 * The verdict of a segment whose states file no source served for the grace period: the first example whose decision
 * reads the file is claimed (fileDependentExample: example 2 in the first segment, whose example 1 a panel decides
 * from the fixed initial state). A first segment of one example needs no file: no claim.
 */
export function kindWithheldVerdict(job: ExampleJob, c: KindCommit, reason: string): SegmentVerdict {
  const s = fileDependentExample(job, c.segment);
  const failure = { kind: "content-unavailable" as const, message: `segment ${c.segment}'s states file ${c.checkpointCid} is ${reason}` };
  const base = { segment: c.segment, ok: false, check: "availability", checks: [], failure, stepsChecked: 0, costMs: 0, flops: 0, losses: [], results: [] };
  if (s === undefined) return { ...base, firstBadStep: null, proof: null, noClaim: "a first segment of one example is decided from its leaves alone: its states file is not needed" };
  return { ...base, firstBadStep: s, proof: kindChallengeProof(job, c, s) };
}

/** The examples a segment's audit covers, for logs and receipts: first+1 .. last. */
export function exampleRange(job: Pick<ExampleJob, "examplesPerSegment">, segment: number): { from: number; to: number } {
  const { first, last } = segmentStateRange(segment, job.examplesPerSegment);
  return { from: first + 1, to: last };
}
