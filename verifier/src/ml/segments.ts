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
      for (let t = firstStep + 1; t <= firstStep + K; t++) {
        const out = stepper.step(state, t);
        state = out.state;
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
  for (let t = state.step + 1; t <= to; t++) {
    const o = stepper.step(state, t);
    state = o.state;
    flops += o.flops;
  }
  return { state, flops };
}
