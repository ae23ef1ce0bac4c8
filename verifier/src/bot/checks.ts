/**
 * The check step of the challenger bot, as thin adapters over the one audit pipeline (verifier/src/checks): the bot
 * audits from the chain alone (the commitments of SegmentCommitted, each with its K+1 state hashes, so a provider
 * cannot withhold its leaves) and the provider's content store, with the same functions `pouw audit` and a panel
 * member's vote run:
 *   - `recomputeCheck` (sampled segments): checks/recompute.ts recomputeSegment;
 *   - `screenStart` (EVERY committed segment): checks/screen-segment.ts screenSegment on the segment's start checkpoint.
 *
 * What is challengeable (a claim with proofs against the committed root) is what the pipeline says is: a recomputed
 * state that differs from its leaf (state-divergence at that step), and a segment whose start cannot be opened
 * (checkpoint missing, corrupt or not the committed state, segment 0 not from the manifest's initial state: its first
 * step, which a panel member votes Fault on for the same reason). Every other failure carries the pipeline's reason
 * why it names no step (`noClaim`).
 *
 * A source that cannot be reached now (SourceUnavailableError: the provider's `pouw serve` down, a timeout) is not a
 * verdict at first: the check throws it and the bot retries the segment on later ticks. Content that stays
 * unavailable past the provider's grace period is withheld (`unavailableVerdict`): challengeable at the segment's
 * first step, the step a panel member votes Fault on when it cannot fetch the content either (docs/disputes.md, data
 * availability).
 */
import type { Address, Hex } from "viem";
import { recomputeSegment } from "../checks/recompute.ts";
import { screenSegment } from "../checks/screen-segment.ts";
import { assertBaseUsable, checkTarget, segmentLeaves, startClaim, type AuditTarget, type ChallengeProof, type SegmentCommitment } from "../checks/segment.ts";
import type { ScreenConfig } from "../checks/state-screen.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import { checkpointSizeBound } from "../ml/checkpoint.ts";
import type { Run, TrainState } from "../ml/run.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentStore } from "../store/index.ts";

export type SegmentToAudit = {
  market: Address;
  jobId: bigint;
  segment: number;
  traceRoot: Hex;
  endStateHash: Hex;
  /** The on-chain commitments of segments 0..segment (SegmentCommitted, each with its K+1 state hashes). */
  commitments: readonly SegmentCommitment[];
};

/** Proofs of the provider's own leaves h(s-1), h(s) against the committed root: what a challenge takes. */
export type StepClaim = Pick<ChallengeProof, "step" | "prevStateHash" | "prevProof" | "stateHash" | "proof" | "expectedStateHash">;

export type AuditVerdict = {
  ok: boolean;
  /** What failed (a FailureKind of the pipeline), when not ok. */
  failure?: { kind: string; message: string };
  firstBadStep: number | null;
  claim: StepClaim | null;
  /** Why a failed verdict has no claim (the pipeline's noClaim). */
  noClaim?: string;
  /** Recomputed per-step losses (for the report's committed-vs-recomputed curves). */
  losses: { step: number; loss: number }[];
  stepsChecked: number;
  costMs: number;
  /** Nominal FLOPs of the recompute. */
  flops: number;
  /** Checks run, as AuditReceipt check names. */
  checks: ("recompute")[];
};

export type CheckContext = { run: Run; store: ContentStore; board: SegmentBoard };

export type SegmentCheck = (ctx: CheckContext, target: SegmentToAudit) => Promise<AuditVerdict>;

/** The pipeline's audit target for a segment the bot follows: the chain's commitments, the bot's store. */
export function auditTargetOf(ctx: CheckContext, t: SegmentToAudit): AuditTarget {
  const target: AuditTarget = { run: ctx.run, store: ctx.store, commitments: t.commitments };
  checkTarget(target);
  const c = t.commitments[t.segment];
  if (!c || c.traceRoot !== t.traceRoot) throw new Error(`segment ${t.segment} of job ${t.jobId}: the commitments do not include the audited segment's root`);
  return target;
}

export const recomputeCheck: SegmentCheck = async (ctx, t) => {
  const target = auditTargetOf(ctx, t);
  const r = await recomputeSegment(target, t.segment);
  // a failure is held against the provider only if the job's h(0) is usable (else BaseCheckpointError: CANNOT AUDIT)
  if (!r.ok) await assertBaseUsable(target);
  const steps = r.losses?.length ?? 0;
  return {
    ok: r.ok,
    ...(r.failure ? { failure: r.failure } : {}),
    firstBadStep: r.firstBadStep,
    claim: r.proof,
    ...(r.noClaim ? { noClaim: r.noClaim } : {}),
    losses: [...(r.losses ?? [])],
    stepsChecked: r.stepsChecked,
    costMs: r.costMs,
    flops: steps * ctx.run.model.flopsPerStep(ctx.run.batchSize),
    checks: ["recompute"],
  };
};

/** The screen of one committed segment's start checkpoint (`screenStart`). */
export type StartScreen =
  /** The checkpoint verified against the first leaf and passed the screen. */
  | { ok: true; state: TrainState; costMs: number }
  /**
   * `at`: the segment to recompute for a challenge (screen-segment.ts recomputeAfterScreen): the segment itself when
   * its checkpoint cannot be fetched or verified, the previous one when the verified state fails the screen.
   */
  | { ok: false; at: number; kind: string; message: string; state: TrainState | null; costMs: number };

/**
 * The cheap screen the bot runs on EVERY committed segment, sampled or not (docs/checks.md, "The state screen"): the pipeline's
 * screenSegment on the segment's start checkpoint, with `previous` (the previous segment's verified start) as the
 * continuity baseline. A cheat whose effect persists (poisoned moments, a NaN) is caught at the next segment's start
 * even when its own segment was not sampled. A SourceUnavailableError is thrown (not a verdict: retried later).
 */
export async function screenStart(ctx: CheckContext, t: SegmentToAudit, previous: TrainState | null, config?: ScreenConfig): Promise<StartScreen> {
  const target = auditTargetOf(ctx, t);
  const r = await screenSegment(target, t.segment, { previous, ...(config ? { config } : {}) });
  if (!r.ok) await assertBaseUsable(target);
  if (r.ok) return { ok: true, state: r.state!, costMs: r.costMs };
  return { ok: false, at: r.details!.recompute as number, kind: r.failure!.kind, message: r.failure!.message, state: r.state, costMs: r.costMs };
}

/**
 * The verdict on a segment whose content no source served for the whole grace period: withheld. The claim is the
 * segment's first step (`startClaim`, from the on-chain leaves, which a provider cannot withhold): a panel member
 * decides it by opening the segment's start, and votes Fault when no source serves it (the data-availability rule),
 * so a provider that stops serving, announces dead addresses or never publishes loses the dispute; one that
 * publishes in time wins it.
 */
export function unavailableVerdict(ctx: CheckContext, t: SegmentToAudit, reason: string): AuditVerdict {
  const leaves = segmentLeaves(auditTargetOf(ctx, t), t.segment);
  const none = { ok: false, losses: [], stepsChecked: 0, costMs: 0, flops: 0, checks: [] };
  if (!leaves.ok) return { ...none, failure: leaves.failure, firstBadStep: null, claim: null, noClaim: `the on-chain leaves of segment ${t.segment} do not verify` };
  const claim = startClaim(leaves.value);
  return { ...none, failure: { kind: "content-unavailable", message: reason }, firstBadStep: claim.step, claim };
}

/**
 * Whether the segment's own committed start checkpoint, the provider's content, is what no source serves: the probe
 * before content that stays unavailable is held against the provider (the bot's withheld finding, a panel member's
 * Fault vote). Content that is someone else's to publish (the buyer's base checkpoint of a fine-tuning manifest, its
 * manifest) can be unavailable while the provider's is served; then no provider fault is claimed, or a buyer that
 * withholds its own base after acceptance would get an honest provider slashed. Any other answer (bytes, not found,
 * wrong bytes) is false: a fetched or refused checkpoint is the audit's own verdict to name.
 */
export async function startCheckpointUnavailable(store: ContentStore, run: Run, c: SegmentCommitment): Promise<boolean> {
  try {
    await store.get(c.checkpointCid, { maxBytes: checkpointSizeBound(run.paramSpecs, run.optSpecs) });
    return false;
  } catch (err) {
    return err instanceof SourceUnavailableError;
  }
}
