/**
 * The result of one check on one segment (CheckResult), and the one verdict over the checks run on a segment
 * (SegmentVerdict) that `pouw audit`, the challenger bot, the receipts and the report use.
 */
import { assertBaseUsable, noClaimReason, type AuditFailure, type AuditTarget, type ChallengeProof, type Opened } from "./segment.ts";

/**
 * Check names, as in `pouw audit --checks` and the AuditReceipt `checks` bits (receipts/types.ts;
 * `screen`, the state screen of screen-segment.ts, has no receipt bit yet).
 */
export const CHECK_NAMES = ["recompute", "tolerance", "freivalds", "progress", "magnitude", "screen"] as const;
export type AuditCheckName = (typeof CHECK_NAMES)[number];

export type CheckResult = {
  readonly segment: number;
  readonly check: AuditCheckName;
  readonly ok: boolean;
  /** Absent when ok. */
  readonly failure?: AuditFailure;
  /** First step the check found wrong (challengeable with `proof`), or null. */
  readonly firstBadStep: number | null;
  readonly proof: ChallengeProof | null;
  /** Why a failed result has no `proof` (noClaimReason, or the check's own); absent when ok or when it has one. */
  readonly noClaim?: string;
  /** The per-step training losses the check recomputed (recompute), for reports. */
  readonly losses?: readonly { step: number; loss: number }[];
  /** Steps of the segment the check covered (recompute: all K; freivalds: the sampled ones; screen: 0, it screens one state). */
  readonly stepsChecked: number;
  /** Wall-clock milliseconds of the check (the auditor's compute; provider-side serving excluded). */
  readonly costMs: number;
  /** Check-specific numbers (distances, losses, bounds) for reports and benches. */
  readonly details?: Readonly<Record<string, unknown>>;
};

export function passed(segment: number, check: AuditCheckName, stepsChecked: number, costMs: number, details?: Record<string, unknown>): CheckResult {
  return { segment, check, ok: true, firstBadStep: null, proof: null, stepsChecked, costMs, ...(details ? { details } : {}) };
}

export function failed(
  segment: number,
  check: AuditCheckName,
  failure: AuditFailure,
  costMs: number,
  extra: { firstBadStep?: number | null; proof?: ChallengeProof | null; noClaim?: string; stepsChecked?: number; losses?: { step: number; loss: number }[]; details?: Record<string, unknown> } = {},
): CheckResult {
  const proof = extra.proof ?? null;
  return {
    segment,
    check,
    ok: false,
    failure,
    firstBadStep: extra.firstBadStep ?? proof?.step ?? null,
    proof,
    ...(proof ? {} : { noClaim: extra.noClaim ?? noClaimReason(failure.kind) }),
    stepsChecked: extra.stepsChecked ?? 0,
    costMs,
    ...(extra.losses ? { losses: extra.losses } : {}),
    ...(extra.details ? { details: extra.details } : {}),
  };
}

/** The result of a check whose segment could not be opened (openSegment): with the first-step claim when the leaves verified. */
export function openFailed(segment: number, check: AuditCheckName, opened: Extract<Opened, { ok: false }>, costMs: number): CheckResult {
  return failed(segment, check, opened.failure, costMs, opened.claim ? { proof: opened.claim } : {});
}

/** A failure a verdict holds against the provider: a check's, or content withheld past its grace period (target.ts). */
export type VerdictFailure = AuditFailure | { readonly kind: "content-unavailable"; readonly message: string };

/**
 * One segment's verdict over the checks run on it: what `pouw audit` prints per segment, what the challenger bot turns
 * into a receipt (ok) or a finding (its `proof` is the challenge's claim), and what the report shows. Built only by
 * `segmentVerdict` (and the bot's withheld verdict, target.ts), so the rule below holds for every caller.
 */
export type SegmentVerdict = {
  readonly segment: number;
  readonly ok: boolean;
  /** First step found wrong by the first failing check, or null. */
  readonly firstBadStep: number | null;
  /** Name of the first failing check, or the checks run (comma-separated) when all passed. */
  readonly check: string;
  /** The checks run, in order (the AuditReceipt `checks` bits of a clean verdict). */
  readonly checks: readonly AuditCheckName[];
  readonly failure: VerdictFailure | null;
  /** The challenge claim: the provider's leaves h(s-1), h(s) with Merkle proofs, when the failure names step s. */
  readonly proof: ChallengeProof | null;
  /** Why the failure has no proof (the pipeline's reason), when it failed without one. */
  readonly noClaim?: string;
  /** Steps of the segment the checks covered (the most any one check covered). */
  readonly stepsChecked: number;
  /** Wall-clock milliseconds of all checks run. */
  readonly costMs: number;
  /** Nominal FLOPs of the recomputed steps. */
  readonly flops: number;
  /** The recomputed per-step training losses (for the report's committed-vs-recomputed curves). */
  readonly losses: readonly { step: number; loss: number }[];
  readonly results: readonly CheckResult[];
};

/**
 * INVARIANT: a failure counts against the provider only if the job's initial state h(0) is usable. A fine-tuning job
 * whose base checkpoint (the buyer's input) does not decode or is non-finite makes every step fail for an honest
 * provider too, so this throws BaseCheckpointError (CANNOT AUDIT: nothing reported as the provider's fault,
 * challenged or voted Fault). The one place this rule is applied: segmentVerdict, and decideStep before a Fault vote.
 */
export async function countAgainstProvider(target: AuditTarget, failure: boolean): Promise<void> {
  if (failure) await assertBaseUsable(target);
}

/** The verdict over `results` (the checks run on `segment`, in order); the first failing result decides. */
export async function segmentVerdict(target: AuditTarget, segment: number, results: readonly CheckResult[]): Promise<SegmentVerdict> {
  const bad = results.find((r) => !r.ok);
  await countAgainstProvider(target, bad !== undefined);
  const losses = results.flatMap((r) => r.losses ?? []);
  return {
    segment,
    ok: bad === undefined,
    firstBadStep: bad?.firstBadStep ?? null,
    check: bad ? bad.check : results.map((r) => r.check).join(","),
    checks: results.map((r) => r.check),
    failure: bad?.failure ?? null,
    proof: bad?.proof ?? null,
    ...(bad?.noClaim ? { noClaim: bad.noClaim } : {}),
    stepsChecked: results.reduce((m, r) => Math.max(m, r.stepsChecked), 0),
    costMs: results.reduce((s, r) => s + r.costMs, 0),
    flops: losses.length * target.run.model.flopsPerStep(target.run.batchSize),
    losses,
    results,
  };
}
