/**
 * The result of one check on one segment: what `pouw audit` prints per segment and what the
 * challenger bot acts on.
 */
import { noClaimReason, type AuditFailure, type ChallengeProof, type Opened } from "./segment.ts";

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
