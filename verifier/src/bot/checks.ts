/**
 * The check step of the challenger bot: a function from a committed segment to a verdict. The default,
 * `recomputeCheck`, re-runs the segment's K steps from its committed start checkpoint with the engine's
 * step function and compares every state hash with the provider's published leaves (or, if the provider
 * published none, the recomputed root with the committed root).
 *
 * A source that cannot be reached now (SourceUnavailableError: the provider's `pouw serve` down, a timeout)
 * is not a verdict: the check throws it and the bot retries the segment on a later tick. Content that is
 * absent everywhere, or served with the wrong bytes, is a failed audit as before.
 *
 * NOTE: the auditor checks of verifier/src/checks (recompute with typed failures, Freivalds, progress,
 * magnitude) plug in here as other SegmentCheck functions.
 */
import type { Address, Hex } from "viem";
import type { SegmentBoard } from "../market/segment-traces.ts";
import type { Run, TrainState } from "../ml/run.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentStore } from "../store/index.ts";
import { SegmentTree, traceRoot } from "../trace/index.ts";

export type SegmentToAudit = {
  market: Address;
  jobId: bigint;
  segment: number;
  traceRoot: Hex;
  endStateHash: Hex;
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
  expectedStateHash: Hex;
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

export const recomputeCheck: SegmentCheck = async ({ run, store, board }, t) => {
  const started = performance.now();
  const K = run.manifest.training.stepsPerSegment;
  const first = t.segment * K;
  const base = { claim: null, losses: [] as { step: number; loss: number }[], checks: ["recompute" as const] };
  const fail = (kind: string, message: string, extra: Partial<AuditVerdict> = {}): AuditVerdict => ({
    ...base,
    ok: false,
    failure: { kind, message },
    firstBadStep: null,
    stepsChecked: 0,
    flops: 0,
    costMs: performance.now() - started,
    ...extra,
  });
  let state: TrainState;
  try {
    state = run.loadCheckpoint(await store.get(t.checkpointCid), { step: first });
  } catch (err) {
    if (err instanceof SourceUnavailableError) throw err;
    return fail("checkpoint-unusable", `start checkpoint ${t.checkpointCid}: ${(err as Error).message}`);
  }
  const startHash = run.stateHashOf(state);
  const expectedStart = t.segment === 0 ? run.stateHashOf(await run.initFromStore(store)) : t.prevEndStateHash;
  if (startHash !== expectedStart) return fail("checkpoint-state-mismatch", `start checkpoint hashes to ${startHash}, the committed start state is ${expectedStart}`);
  const mine: Hex[] = [startHash];
  const losses: { step: number; loss: number }[] = [];
  for (let t2 = first + 1; t2 <= first + K; t2++) {
    const r = run.step(state, t2);
    state = r.state;
    mine.push(run.stateHashOf(state));
    losses.push({ step: t2, loss: r.loss });
  }
  const flops = K * run.model.flopsPerStep(run.batchSize);
  const root = traceRoot(first, mine);
  const costMs = performance.now() - started;
  if (root === t.traceRoot && mine[K] === t.endStateHash) {
    return { ...base, ok: true, firstBadStep: null, losses, stepsChecked: K, costMs, flops };
  }
  const published = await board.lookup(t.market, t.jobId, t.segment, t.traceRoot);
  if (!published) {
    return fail("root-mismatch", `recomputed root ${root} differs from the committed ${t.traceRoot}; the provider published no leaves for it`, { losses, stepsChecked: K, flops, costMs });
  }
  const theirs = published.stateHashes as Hex[];
  const j = mine.findIndex((h, i) => h !== theirs[i]);
  if (j <= 0) {
    // j === 0 cannot happen (start checked); -1 means leaves equal but the end hash differs
    return fail("end-state-mismatch", `leaves match but the committed end state ${t.endStateHash} is not h(${first + K})`, { losses, stepsChecked: K, flops, costMs });
  }
  const tree = new SegmentTree(first, theirs);
  const step = first + j;
  return {
    ...base,
    ok: false,
    failure: { kind: "state-divergence", message: `step ${step}: recomputed h(${step}) = ${mine[j]}, committed ${theirs[j]}` },
    firstBadStep: step,
    claim: { step, prevStateHash: theirs[j - 1]!, prevProof: tree.proof(step - 1), stateHash: theirs[j]!, proof: tree.proof(step), expectedStateHash: mine[j]! },
    losses,
    stepsChecked: K,
    costMs,
    flops,
  };
};
