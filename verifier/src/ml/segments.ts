/**
 * The one segment loop: trains a run segment by segment under a strategy and yields each finished segment
 * (its K+1 state hashes, leaves' root, per-step losses, start checkpoint CID, end state). `pouw train`
 * (train.ts: a whole run into a trace directory) and `pouw provider run` (provider/run-job.ts: one commit
 * per segment, resumable) both consume it, so a trace directory and an on-chain commitment of the same
 * manifest, job and strategy hold the same hashes bit for bit.
 *
 * Per segment: store the start checkpoint, run K steps with the strategy's stepper (stepper.ts), hash every
 * state (on a worker while the next step runs when the hash pipeline is on: hash-pipeline.ts, the same bits),
 * then yield. h(first) of a segment is h(last) of the one before; only the loop's start state is hashed
 * separately. Closing the generator early (break, throw) closes the hash worker.
 *
 * State hand-back: a state is 4 bytes per weight and 8 per weight of Adam moments (130 MB for the 10.8M-parameter
 * GPT-class model), and writing each step's state into fresh memory cost ~440 ms of page faults per GPT-class step.
 * So step t writes into the arrays of state t-2 when the loop alone holds it. INVARIANTS: a handed-back state (1) was
 * made by this loop's stepper, which recycles (honest: no later state shares its arrays); (2) is not the caller's
 * start state and was never yielded (a consumer may keep SegmentResult.state); (3) has been hashed (inline, or
 * submit() copied it into the hash worker's buffer) and, where stored, encoded into a checkpoint whose put has
 * returned; (4) is not state t-1, the step's input. Allocation only decides where a value is stored: the same bits.
 */
import type { Hex } from "viem";
import type { ContentStore } from "../store/index.ts";
import { traceRoot } from "../trace/index.ts";
import { HashPipeline } from "./hash-pipeline.ts";
import type { Run, TrainState } from "./run.ts";
import { createStepper, type StepOutcome } from "./stepper.ts";
import type { Strategy } from "./strategies.ts";

/** A loss in micro-units as committed on chain and in trace.json; a non-finite loss commits as 2^31 - 1. */
export const lossE6 = (loss: number): number => (Number.isFinite(loss) ? Math.round(loss * 1e6) : 2 ** 31 - 1);

/** Mean of a segment's per-step losses in micro-units (what commitSegment and a trace entry carry). */
export const segmentLossE6 = (losses: readonly number[]): number => lossE6(losses.reduce((a, b) => a + b, 0) / losses.length);

export type SegmentResult = {
  index: number;
  firstStep: number;
  lastStep: number;
  /** h(firstStep) .. h(lastStep): the segment's K+1 state hashes (the leaves are of the last K). */
  stateHashes: Hex[];
  /** Training loss of steps firstStep+1 .. lastStep. */
  losses: number[];
  traceRoot: Hex;
  lossE6: number;
  /** CID of the start state's checkpoint (state firstStep) in the loop's store. */
  checkpointCid: string;
  /** With keepStepStates: CIDs of states firstStep .. lastStep-1 (index 0 is checkpointCid). */
  stateCids?: string[];
  /** The end state (state lastStep). */
  state: TrainState;
  /** Nominal FLOPs of the segment's forward and backward passes actually computed. */
  flops: number;
  gradientsComputed: number;
  stepsSkipped: number;
  planted?: NonNullable<StepOutcome["planted"]>;
  /** Steps of the segment whose state was written into a handed-back state's arrays (see the header). */
  recycled: number;
};

export type SegmentLoopOptions = {
  strategy: Strategy;
  /** Where each segment's start checkpoint (and with keepStepStates every state) is stored. */
  store: ContentStore;
  /** The state at step startSegment * K (h(0)'s state for a fresh run, a committed end state on resume). */
  start: TrainState;
  /** First segment to train (default 0). */
  startSegment?: number;
  /** One past the last segment to train. */
  endSegment: number;
  /** Hash on a worker thread while the next step runs (default: when the run has more than one matmul thread). */
  hashWorker?: boolean;
  /** Also store the checkpoint of every state inside a segment (SegmentResult.stateCids). */
  keepStepStates?: boolean;
  /** Write each step's state into the arrays of state t-2 when the loop alone holds it (default true; the same bits). */
  recycleStates?: boolean;
  onStep?: (p: { step: number; loss: number; segment: number }) => void;
};

export async function* trainSegments(run: Run, options: SegmentLoopOptions): AsyncGenerator<SegmentResult, void, undefined> {
  const K = run.manifest.training.stepsPerSegment;
  const first = options.startSegment ?? 0;
  if (options.start.step !== first * K) throw new RangeError(`trainSegments: segment ${first} starts at state ${first * K}, got state ${options.start.step}`);
  const stepper = createStepper(run, options.strategy, first * K + 1);
  let state = options.start;
  let startHash = run.stateHashOf(state);
  const pipe = (options.hashWorker ?? run.threads > 1) ? new HashPipeline(run.stateDigest, run.jobId) : null;
  const recycle = (options.recycleStates ?? true) && stepper.recycles;
  // the two latest states this loop may hand back (null: the caller's, a yielded one, or none)
  let older: TrainState | null = null;
  let newer: TrainState | null = null;
  try {
    for (let seg = first; seg < options.endSegment; seg++) {
      const firstStep = seg * K;
      const checkpointCid = await options.store.put(run.checkpointBytes(state));
      const stateCids = options.keepStepStates ? [checkpointCid] : undefined;
      const hashes: Hex[] = [startHash];
      const losses: number[] = [];
      let flops = 0;
      let gradientsComputed = 0;
      let stepsSkipped = 0;
      let planted: SegmentResult["planted"];
      let recycled = 0;
      for (let t = firstStep + 1; t <= firstStep + K; t++) {
        // `older` is state t-2 (INVARIANT 4: never `state`, the input), hashed and stored by the iteration that made it
        const into = recycle && older ? older : undefined;
        const out = stepper.step(state, t, into);
        if (into && out.state.params[0] === into.params[0]) recycled++;
        state = out.state;
        older = newer;
        newer = recycle && t < firstStep + K ? state : null;
        flops += out.flops;
        if (out.flops > 0) gradientsComputed++;
        if (out.skipped) stepsSkipped++;
        if (out.planted) planted = out.planted;
        losses.push(out.loss);
        if (pipe) {
          if (pipe.pending > 0) hashes.push(pipe.next());
          pipe.submit(state);
        } else hashes.push(run.stateHashOf(state));
        if (stateCids && t < firstStep + K) stateCids.push(await options.store.put(run.checkpointBytes(state)));
        options.onStep?.({ step: t, loss: out.loss, segment: seg });
      }
      if (pipe) hashes.push(pipe.next());
      startHash = hashes[K]!;
      yield {
        index: seg,
        firstStep,
        lastStep: firstStep + K,
        stateHashes: hashes,
        losses,
        traceRoot: traceRoot(firstStep, hashes),
        lossE6: segmentLossE6(losses),
        checkpointCid,
        ...(stateCids ? { stateCids } : {}),
        state,
        flops,
        gradientsComputed,
        stepsSkipped,
        ...(planted ? { planted } : {}),
        recycled,
      };
    }
  } finally {
    await pipe?.close();
  }
}

/**
 * Re-runs steps from+1 .. to from `state` (state `from`) without hashing or storing anything: a provider
 * rebuilding a committed end state it no longer holds. The caller checks the result against the commitment.
 */
export function replayStrategySteps(run: Run, strategy: Strategy, state: TrainState, to: number): { state: TrainState; flops: number } {
  const stepper = createStepper(run, strategy, state.step + 1);
  let flops = 0;
  // the hand-back of trainSegments: nothing here is hashed or kept, so state t-2 is free unless it is the caller's
  let older: TrainState | null = null;
  let newer: TrainState | null = null;
  for (let t = state.step + 1; t <= to; t++) {
    const o = stepper.step(state, t, stepper.recycles && older ? older : undefined);
    state = o.state;
    older = newer;
    newer = stepper.recycles ? state : null;
    flops += o.flops;
  }
  return { state, flops };
}
