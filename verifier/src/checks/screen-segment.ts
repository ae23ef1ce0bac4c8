/**
 * The state screen on a committed checkpoint (state-screen.ts), for EVERY committed segment: segment
 * i's start checkpoint (state i*K, which the steps of segment i-1 produced), or with i = the number
 * of segments the final checkpoint. The checkpoint is fetched by its committed CID and verified
 * against its leaf first (segment.ts); the previous segment's start is the screen's previous state
 * (continuity over K steps) unless the caller passes the one it already holds, or null for none.
 *
 * A failure names no step: the state was produced somewhere in segment i-1's window (its screen passed
 * at the previous start), so the auditor's next move is a recompute of segment i-1, which names the
 * step for a challenge (`details.producedBy`).
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
  return fetchState(target, target.trace.finalCheckpointCid, last.value.last, last.value.hashes[last.value.hashes.length - 1]!, "final checkpoint");
}

/** The screen's result, and the verified state it screened (null when it could not be fetched or verified), for the next call's `previous`. */
export type ScreenSegmentResult = CheckResult & { readonly state: TrainState | null };

export async function screenSegment(target: AuditTarget, i: number, options: ScreenSegmentOptions = {}): Promise<ScreenSegmentResult> {
  const config = options.config ?? screenConfigOf(target.run);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const producedBy = i > 0 ? i - 1 : null;
  const state = await committedState(target, i);
  if (!state.ok) return { ...failed(i, "screen", state.failure, elapsed(), { details: { producedBy } }), state: null };
  let previous = options.previous;
  if (previous === undefined) {
    // the previous state's own faults are its own screen's; here it is only the window's baseline
    const prev = i > 0 ? await committedState(target, i - 1) : null;
    previous = prev?.ok ? prev.value : null;
  }
  const verdict = screenState(config, state.value, previous ?? undefined);
  const details = { ...verdict.details, producedBy };
  if (!verdict.ok) return { ...failed(i, "screen", verdict.failure, elapsed(), { details: { ...details, tensor: verdict.tensor, index: verdict.index } }), state: state.value };
  return { ...passed(i, "screen", 0, elapsed(), details), state: state.value };
}
