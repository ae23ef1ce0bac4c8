/**
 * The state screen on a committed checkpoint (state-screen.ts), for EVERY committed segment: segment
 * i's start checkpoint (state i*K, which the steps of segment i-1 produced), or with i = the number
 * of segments the final checkpoint. The checkpoint is fetched by its committed CID and verified
 * against its leaf first (segment.ts); the previous segment's start is the screen's previous state
 * (continuity over K steps) unless the caller passes the one it already holds, or null for none.
 *
 * A failure names no step: the state was produced somewhere in segment i-1's window (its screen passed
 * at the previous start), so the auditor's next move is a recompute of segment i-1, which names the
 * step for a challenge (`details.producedBy`; `details.recompute` is the segment to recompute, which
 * is i itself when its checkpoint could not be fetched or verified).
 *
 * @example
 *   let previous: TrainState | null = null;
 *   for (let i = 0; i <= segments; i++) {            // as each segment is committed
 *     const r = await screenSegment(ctx, i, { previous });
 *     if (!r.ok && i > 0) await recomputeSegment(ctx, i - 1);   // names the step to challenge
 *     previous = r.state;                             // the verified state, or null
 *   }
 */
import type { TrainState } from "../ml/run.ts";
import { ContentNotFoundError } from "../store/index.ts";
import { failed, passed, type CheckResult } from "./result.ts";
import { AuditInputError, commitmentsOf, fetchState, openSegment, segmentLeaves, type AuditTarget, type Outcome } from "./segment.ts";
import { screenConfigOf, screenState, type ScreenConfig } from "./state-screen.ts";

export type ScreenSegmentOptions = {
  /** The verified state of the previous segment's start, null for none; default: fetched. */
  readonly previous?: TrainState | null;
  /** Default: screenConfigOf(target.run). */
  readonly config?: ScreenConfig;
};

/** The committed, verified state at the start of segment i (i = segments: the final checkpoint). */
export async function committedState(target: AuditTarget, i: number): Promise<Outcome<TrainState>> {
  const S = commitmentsOf(target).length;
  if (!Number.isInteger(i) || i < 0 || i > S) throw new AuditInputError(`state of segment ${i} does not exist (${S} segments and the final state)`);
  if (i < S) {
    const opened = await openSegment(target, i);
    return opened.ok ? { ok: true, value: opened.value.start } : opened;
  }
  const last = segmentLeaves(target, S - 1);
  if (!last.ok) return last;
  const cid = target.finalCheckpointCid ?? target.trace?.finalCheckpointCid;
  if (!cid) throw new AuditInputError("the final state's screen needs the final checkpoint's CID (trace.json, or the provenance record)");
  return fetchState(target, cid, last.value.last, last.value.hashes[last.value.hashes.length - 1]!, "final checkpoint");
}

/**
 * The segment whose recompute names the step behind a failed screen of state i: a state that was fetched and verified
 * but is wrong (non-finite, a moment no gradient makes) was produced by segment i-1's steps; a checkpoint that cannot
 * be fetched or verified is segment i's own fault (its recompute claims its first step); for the initial state
 * (i = 0), segment 0.
 */
export function recomputeAfterScreen(i: number, segments: number, kind: string, verified: boolean): number {
  // NOTE: a non-finite state is a verified one now (fetchState returns it, the screen finds it); the kind test is kept
  // for a caller that reports one unverified
  const produced = verified || kind === "state-non-finite";
  if (i === 0) return 0;
  return produced || i >= segments ? i - 1 : i;
}

/** The screen's result, and the verified state it screened (null when it could not be fetched or verified), for the next call's `previous`. */
export type ScreenSegmentResult = CheckResult & { readonly state: TrainState | null };

export async function screenSegment(target: AuditTarget, i: number, options: ScreenSegmentOptions = {}): Promise<ScreenSegmentResult> {
  const config = options.config ?? screenConfigOf(target.run);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const producedBy = i > 0 ? i - 1 : null;
  const S = commitmentsOf(target).length;
  const state = await committedState(target, i);
  if (!state.ok) {
    const recompute = recomputeAfterScreen(i, S, state.failure.kind, false);
    return { ...failed(i, "screen", state.failure, elapsed(), { details: { producedBy, recompute } }), state: null };
  }
  let previous = options.previous;
  if (previous === undefined) {
    // the previous state's own faults are its own screen's; here it is only the window's baseline. A fine-tuning
    // manifest's base checkpoint (the buyer's content, needed to open segment 0) that is absent only loses the
    // baseline of state K: it is no fault of this state's
    const prev = i > 0 ? await committedState(target, i - 1).catch((err: unknown) => {
      if (i === 1 && err instanceof ContentNotFoundError && "checkpointCid" in target.run.manifest.init) return null;
      throw err;
    }) : null;
    previous = prev?.ok ? prev.value : null;
  }
  const verdict = screenState(config, state.value, previous ?? undefined);
  const details = { ...verdict.details, producedBy };
  if (!verdict.ok) {
    const recompute = recomputeAfterScreen(i, S, verdict.failure.kind, true);
    return { ...failed(i, "screen", verdict.failure, elapsed(), { details: { ...details, recompute, tensor: verdict.tensor, index: verdict.index } }), state: state.value };
  }
  return { ...passed(i, "screen", 0, elapsed(), details), state: state.value };
}

/**
 * The screen of the final state (the delivered model) from the checkpoint the provider opened on chain for it
 * (StateOpenings opens the last segment's end state; provider/openings.ts answers it). `openedCid` must serve a state
 * hashing to the last segment's committed end leaf, else the failure is the last segment's own (its recompute claims
 * its first step, as for any unusable checkpoint). A pass means no persistent cheat (poisoned moments, a NaN, a skipped
 * run of steps that shows in the moments) reached the final state, so the last segment needs no mandatory recompute:
 * it is sampled at the job's rate like any other, and a sparse plant in it is caught at that rate.
 *
 * @example
 *   const r = await screenFinalState(ctx, answer.checkpointCid, { previous: lastStart });
 *   if (!r.ok) queueRecompute(r.details.recompute);
 */
export async function screenFinalState(target: AuditTarget, openedCid: string, options: ScreenSegmentOptions = {}): Promise<ScreenSegmentResult> {
  if (!openedCid) throw new AuditInputError("the final state's screen needs the CID its opening was answered with");
  const K = target.run.manifest.training.stepsPerSegment;
  const S = target.run.manifest.training.steps / K;
  const committed = commitmentsOf(target).length;
  if (committed !== S) throw new AuditInputError(`the final state is the end of segment ${S - 1}; ${committed} of the job's ${S} segments are committed`);
  return screenSegment({ ...target, finalCheckpointCid: openedCid }, commitmentsOf(target).length, options);
}
