/**
 * The check step of the challenger bot: a function from a committed segment to a verdict. The default,
 * `recomputeCheck`, re-runs the segment's K steps from its committed start checkpoint with the engine's
 * step function and compares every state hash with the provider's leaves, which are on chain (the K+1 state
 * hashes of SegmentCommitted), so a provider cannot withhold them.
 *
 * What is challengeable (a StepClaim with proofs against the committed root):
 *   - a recomputed state that differs from the committed leaf (step first+j, state-divergence);
 *   - segment 0 whose first leaf is not the manifest's initial state (step 1, initial-state-mismatch);
 *   - a start checkpoint that is absent everywhere, does not match its CID, does not decode or does not hash to
 *     the committed first leaf (step first+1, checkpoint-*): the panel votes Fault when a member cannot obtain
 *     bytes matching the commitment from any source (docs/disputes.md, data availability), so withholding is
 *     slashable and the provider's defence is to publish.
 *
 * A source that cannot be reached now (SourceUnavailableError: the provider's `pouw serve` down, a timeout)
 * is not a verdict: the check throws it and the bot retries the segment on a later tick.
 *
 * NOTE: the auditor checks of verifier/src/checks (recompute with typed failures, Freivalds, progress,
 * magnitude) plug in here as other SegmentCheck functions.
 */
import type { Address, Hex } from "viem";
import { screenConfigOf, screenState, type ScreenConfig } from "../checks/state-screen.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import type { Run, TrainState } from "../ml/run.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentStore } from "../store/index.ts";
import { SegmentTree } from "../trace/index.ts";

export type SegmentToAudit = {
  market: Address;
  jobId: bigint;
  segment: number;
  traceRoot: Hex;
  endStateHash: Hex;
  /** The K+1 committed state hashes h(first) .. h(first+K) (SegmentCommitted). */
  stateHashes: readonly Hex[];
  checkpointCid: string;
  /** Committed end state of the previous segment (undefined for segment 0). */
  prevEndStateHash: Hex | undefined;
};

/** Proofs of the provider's own leaves h(s-1), h(s) against the committed root: what a challenge takes. */
export type StepClaim = {
  step: number;
  prevStateHash: Hex;
  prevProof: Hex[];
  stateHash: Hex;
  proof: Hex[];
  /** h(s) the auditor recomputed; absent when the claim is that the provider's data is unavailable or inconsistent. */
  expectedStateHash?: Hex;
};

export type AuditVerdict = {
  ok: boolean;
  /** What failed (kind), when not ok. */
  failure?: { kind: string; message: string };
  firstBadStep: number | null;
  claim: StepClaim | null;
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

/** The claim that step `step` is wrong, with proofs of the committed leaves h(step-1), h(step). */
export function stepClaim(tree: SegmentTree, step: number, expectedStateHash?: Hex): StepClaim {
  const j = step - tree.firstStep;
  return {
    step,
    prevStateHash: tree.stateHashes[j - 1]!,
    prevProof: tree.proof(step - 1),
    stateHash: tree.stateHashes[j]!,
    proof: tree.proof(step),
    ...(expectedStateHash ? { expectedStateHash } : {}),
  };
}

export const recomputeCheck: SegmentCheck = async ({ run, store }, t) => {
  const started = performance.now();
  const K = run.manifest.training.stepsPerSegment;
  const first = t.segment * K;
  const base = { losses: [] as { step: number; loss: number }[], checks: ["recompute" as const] };
  const theirs = t.stateHashes;
  if (theirs.length !== K + 1) {
    // The market refuses such a commit; a bot reading another contract or a corrupt db lands here.
    throw new Error(`segment ${t.segment} of job ${t.jobId}: ${theirs.length} committed state hashes, expected ${K + 1}`);
  }
  const tree = new SegmentTree(first, theirs);
  if (tree.root !== t.traceRoot || tree.endStateHash !== t.endStateHash) {
    throw new Error(`segment ${t.segment} of job ${t.jobId}: the committed leaves do not give the committed root and end state`);
  }
  const fail = (kind: string, message: string, claimStep: number, extra: Partial<AuditVerdict> = {}): AuditVerdict => ({
    ...base,
    ok: false,
    failure: { kind, message },
    firstBadStep: claimStep,
    claim: stepClaim(tree, claimStep, extra.claim?.expectedStateHash),
    stepsChecked: 0,
    flops: 0,
    costMs: performance.now() - started,
    ...extra,
  });
  if (t.segment === 0) {
    const init = run.stateHashOf(await run.initFromStore(store));
    if (theirs[0] !== init) return fail("initial-state-mismatch", `segment 0 starts from h(0) = ${theirs[0]}, the manifest's initial state is ${init}`, 1);
  }
  let state: TrainState;
  try {
    state = run.loadCheckpoint(await store.get(t.checkpointCid), { step: first });
  } catch (err) {
    if (err instanceof SourceUnavailableError) throw err;
    return fail("checkpoint-unusable", `start checkpoint ${t.checkpointCid}: ${(err as Error).message}`, first + 1);
  }
  const startHash = run.stateHashOf(state);
  if (startHash !== theirs[0]) {
    return fail("checkpoint-state-mismatch", `start checkpoint hashes to ${startHash}, the committed start state is ${theirs[0]}`, first + 1);
  }
  const mine: Hex[] = [startHash];
  const losses: { step: number; loss: number }[] = [];
  for (let t2 = first + 1; t2 <= first + K; t2++) {
    const r = run.step(state, t2);
    state = r.state;
    mine.push(run.stateHashOf(state));
    losses.push({ step: t2, loss: r.loss });
  }
  const flops = K * run.model.flopsPerStep(run.batchSize);
  const costMs = performance.now() - started;
  const j = mine.findIndex((h, i) => h !== theirs[i]);
  if (j === -1) return { ...base, ok: true, claim: null, firstBadStep: null, losses, stepsChecked: K, costMs, flops };
  const step = first + j;
  return {
    ...base,
    ok: false,
    failure: { kind: "state-divergence", message: `step ${step}: recomputed h(${step}) = ${mine[j]}, committed ${theirs[j]}` },
    firstBadStep: step,
    claim: stepClaim(tree, step, mine[j]),
    losses,
    stepsChecked: K,
    costMs,
    flops,
  };
};

/** The screen of one committed segment's start checkpoint (`screenStart`). */
export type StartScreen =
  /** The checkpoint verified against the first leaf and passed the screen. */
  | { ok: true; state: TrainState; costMs: number }
  /**
   * `at`: the segment to recompute for a challenge. A checkpoint that is unusable or does not hash to the committed
   * first leaf is this segment's own fault (recomputeCheck challenges step first+1); a state that fails the screen was
   * produced by the previous segment's steps (recomputing that one names the step), or is the initial state (segment 0).
   */
  | { ok: false; at: number; kind: string; message: string; state: TrainState | null; costMs: number };

/**
 * The cheap screen the bot runs on EVERY committed segment, sampled or not (issue 13, state screen): load the start
 * checkpoint, check it against the on-chain first leaf, and run `screenState` (finiteness, exact Adam powers, the
 * moment bounds, continuity with `previous`, the previous segment's verified start) on it. A cheat whose effect
 * persists (poisoned moments, a NaN) is caught at the next segment's start even when its own segment was not sampled.
 * A SourceUnavailableError is thrown (not a verdict: retried later).
 */
export async function screenStart(ctx: CheckContext, t: SegmentToAudit, previous: TrainState | null, config: ScreenConfig = screenConfigOf(ctx.run)): Promise<StartScreen> {
  const started = performance.now();
  const K = ctx.run.manifest.training.stepsPerSegment;
  const first = t.segment * K;
  const bad = (at: number, kind: string, message: string, state: TrainState | null): StartScreen => ({ ok: false, at, kind, message, state, costMs: performance.now() - started });
  let state: TrainState;
  try {
    state = ctx.run.loadCheckpoint(await ctx.store.get(t.checkpointCid), { step: first });
  } catch (err) {
    if (err instanceof SourceUnavailableError) throw err;
    return bad(t.segment, "checkpoint-unusable", `start checkpoint ${t.checkpointCid}: ${(err as Error).message}`, null);
  }
  const h = ctx.run.stateHashOf(state);
  if (h !== t.stateHashes[0]) return bad(t.segment, "checkpoint-state-mismatch", `start checkpoint hashes to ${h}, the committed start state is ${t.stateHashes[0]}`, null);
  const v = screenState(config, state, previous ?? undefined);
  if (!v.ok) return bad(t.segment > 0 ? t.segment - 1 : 0, v.failure.kind, v.failure.message, state);
  return { ok: true, state, costMs: performance.now() - started };
}
