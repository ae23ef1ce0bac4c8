/**
 * The final weights of a job, rebuilt from the chain alone: load the last segment's committed start
 * checkpoint and re-run its K honest steps; the result must reproduce the committed trace root and end
 * state hash, so whoever calls this gets exactly the committed weights (and learns of a bad last segment).
 */
import type { Hex } from "viem";
import type { SegmentCommit } from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import type { Run } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";
import { traceRoot } from "../trace/index.ts";

export class FinalWeightsError extends PouwError {
  override name = "FinalWeightsError";
  override readonly code: string = "FINAL_WEIGHTS";
}

/** Checkpoint bytes (final.safetensors) of the committed final state of `run`'s job. */
export async function rebuildFinalWeights(run: Run, store: ContentStore, commits: readonly SegmentCommit[]): Promise<Uint8Array> {
  const K = run.manifest.training.stepsPerSegment;
  const S = run.manifest.training.steps / K;
  const last = commits.find((c) => c.segment === S - 1);
  if (!last) throw new FinalWeightsError(`job ${run.jobId}: segment ${S - 1} is not committed`);
  let state = run.loadCheckpoint(await store.get(last.checkpointCid), { step: (S - 1) * K });
  const hashes: Hex[] = [run.stateHashOf(state)];
  for (let t = (S - 1) * K + 1; t <= S * K; t++) {
    state = run.step(state, t).state;
    hashes.push(run.stateHashOf(state));
  }
  if (traceRoot((S - 1) * K, hashes) !== last.traceRoot || hashes[K] !== last.endStateHash) {
    throw new FinalWeightsError(`job ${run.jobId}: re-running the last segment from its checkpoint does not reproduce the committed trace (the provider's last segment is wrong)`);
  }
  return run.checkpointBytes(state);
}
