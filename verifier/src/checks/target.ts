/**
 * The audit target built from the chain alone, and the entry points the challenger bot reaches the engine through
 * (the bot imports nothing from ml/). The bot audits from the commitments of SegmentCommitted, each with its K+1 state
 * hashes (so a provider cannot withhold its leaves), and the provider's content store, with the same pipeline
 * `pouw audit` and a panel member's vote run:
 *   - `auditChainSegment` (sampled segments): audit.ts auditSegment, by default the recompute (recompute.ts);
 *   - `screenStart` (EVERY committed segment): screen-segment.ts screenSegment on the segment's start checkpoint;
 *   - `withheldVerdict` (content no source served for the provider's whole grace period).
 *
 * What is challengeable (a claim with proofs against the committed root) is what the pipeline says is: a recomputed
 * state that differs from its leaf (state-divergence at that step), and a segment whose start cannot be opened
 * (checkpoint missing, corrupt or not the committed state, segment 0 not from the manifest's initial state: its first
 * step, which a panel member votes Fault on for the same reason). Every other failure carries the pipeline's reason
 * why it names no step (`noClaim`).
 *
 * A source that cannot be reached now (SourceUnavailableError: the provider's `pouw serve` down, a timeout) is not a
 * verdict: the check throws it and the bot retries the segment on later ticks.
 */
import type { Address, Hex } from "viem";
import { checkpointSizeBound } from "../ml/checkpoint.ts";
import { LinearTile } from "../ml/models/linear-tile.ts";
import { createRun, type Run, type TrainState } from "../ml/run.ts";
import { deploymentSalt } from "../ml/salt.ts";
import type { Manifest } from "../ml/manifest.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentStore } from "../store/index.ts";
import { auditSegment } from "./audit.ts";
import { countAgainstProvider, type AuditCheckName, type SegmentVerdict } from "./result.ts";
import { screenSegment } from "./screen-segment.ts";
import { checkTarget, segmentLeaves, startClaim, type AuditTarget, type ChallengeProof, type SegmentCommitment } from "./segment.ts";
import type { ScreenConfig } from "./state-screen.ts";

export type { Run, TrainState };

/** One committed segment as the chain states it. */
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

/** The run of the job and the store its content is read from. */
export type ChainAuditContext = { run: Run; store: ContentStore };

/**
 * The job's run from its manifest, with the job's data order: salt(chainId, jobMarket, jobId) from the deployment the
 * auditor follows, never the provider's word.
 */
export function jobRun(manifest: Manifest, deployment: { chainId: number | bigint; jobMarket: Address }, jobId: bigint, store?: ContentStore): Promise<Run> {
  // the store: a data set by content id is fetched from it and checked against the manifest's CID
  return createRun(manifest, { jobId, salt: deploymentSalt(deployment, jobId), store });
}

/** Whether the job's model is the circuit-provable class (its challenges can be answered by a ZK proof). */
export function isCircuitClass(run: Run): boolean {
  return run.model instanceof LinearTile;
}

/** Whether `segment` (0-based) is the job's last: its end state is the final model. */
export function isLastSegment(run: Pick<Run, "manifest">, segment: number): boolean {
  const { steps, stepsPerSegment } = run.manifest.training;
  return segment === steps / stepsPerSegment - 1;
}

/** The pipeline's audit target for a segment from the chain: its commitments, the auditor's store. */
export function auditTargetOf(ctx: ChainAuditContext, t: SegmentToAudit): AuditTarget {
  const target: AuditTarget = { run: ctx.run, store: ctx.store, commitments: t.commitments };
  checkTarget(target);
  const c = t.commitments[t.segment];
  if (!c || c.traceRoot !== t.traceRoot) throw new Error(`segment ${t.segment} of job ${t.jobId}: the commitments do not include the audited segment's root`);
  return target;
}

/** The verdict of `checks` (default: the recompute) on a segment from the chain. */
export function auditChainSegment(ctx: ChainAuditContext, t: SegmentToAudit, checks: readonly AuditCheckName[] = ["recompute"]): Promise<SegmentVerdict> {
  return auditSegment(auditTargetOf(ctx, t), t.segment, { checks });
}

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
 * The cheap screen the bot runs on EVERY committed segment, sampled or not (docs/checks.md, "The state screen"): the
 * pipeline's screenSegment on the segment's start checkpoint, with `previous` (the previous segment's verified start)
 * as the continuity baseline. A cheat whose effect persists (poisoned moments, a NaN) is caught at the next segment's
 * start even when its own segment was not sampled. A SourceUnavailableError is thrown (not a verdict: retried later).
 */
export async function screenStart(ctx: ChainAuditContext, t: SegmentToAudit, previous: TrainState | null, config?: ScreenConfig): Promise<StartScreen> {
  const target = auditTargetOf(ctx, t);
  const r = await screenSegment(target, t.segment, { previous, ...(config ? { config } : {}) });
  await countAgainstProvider(target, !r.ok);
  if (r.ok) return { ok: true, state: r.state!, costMs: r.costMs };
  return { ok: false, at: r.details!.recompute as number, kind: r.failure!.kind, message: r.failure!.message, state: r.state, costMs: r.costMs };
}

/**
 * The verdict on a segment whose content no source served for the whole grace period: withheld. The claim is the
 * segment's first step (`startClaim`, from the on-chain leaves, which a provider cannot withhold): a panel member
 * decides it by opening the segment's start, and votes Fault when no source serves it (the data-availability rule),
 * so a provider that stops serving, announces dead addresses or never publishes loses the dispute; one that
 * publishes in time wins it. The caller checks first that the missing content is the provider's
 * (startCheckpointUnavailable).
 */
export function withheldVerdict(ctx: ChainAuditContext, t: SegmentToAudit, reason: string): SegmentVerdict {
  const leaves = segmentLeaves(auditTargetOf(ctx, t), t.segment);
  const none = { segment: t.segment, ok: false, check: "availability", checks: [], stepsChecked: 0, costMs: 0, flops: 0, losses: [], results: [] };
  if (!leaves.ok) return { ...none, failure: leaves.failure, firstBadStep: null, proof: null, noClaim: `the on-chain leaves of segment ${t.segment} do not verify` };
  const claim = startClaim(leaves.value);
  return { ...none, failure: { kind: "content-unavailable", message: reason }, firstBadStep: claim.step, proof: claim };
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
