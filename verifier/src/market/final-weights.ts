/**
 * The final weights of a job, rebuilt from the chain alone: the last segment's committed start checkpoint
 * re-run for its K steps by the audit pipeline's recompute; the result must reproduce every committed leaf,
 * so whoever calls this gets exactly the committed weights (and learns of a bad last segment).
 */
import type { SegmentCommit } from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import type { Run } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";
import { replaySegment } from "../checks/recompute.ts";
import type { SegmentCommitment } from "../checks/segment.ts";
import type { Bytes32 } from "../trace/index.ts";

export class FinalWeightsError extends PouwError {
  override name = "FinalWeightsError";
  override readonly code: string = "FINAL_WEIGHTS";
}

/**
 * Checkpoint bytes (final.safetensors) of the committed final state of `run`'s job: the audit pipeline's recompute of
 * the last segment (checks/recompute.ts) from the on-chain commitments, whose end state is the final state.
 */
export async function rebuildFinalWeights(run: Run, store: ContentStore, commits: readonly SegmentCommit[]): Promise<Uint8Array> {
  const K = run.manifest.training.stepsPerSegment;
  const S = run.manifest.training.steps / K;
  const commitments: SegmentCommitment[] = [];
  for (let i = 0; i < S; i++) {
    const c = commits.find((x) => x.segment === i);
    if (!c) throw new FinalWeightsError(`job ${run.jobId}: segment ${i} is not committed`);
    commitments.push({ index: i, traceRoot: c.traceRoot as Bytes32, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes as Bytes32[] });
  }
  const { result, end } = await replaySegment({ run, store, commitments }, S - 1);
  if (!end) {
    throw new FinalWeightsError(`job ${run.jobId}: re-running the last segment from its checkpoint does not reproduce the committed trace (the provider's last segment is wrong): ${result.failure?.kind}: ${result.failure?.message}`);
  }
  return run.checkpointBytes(end);
}
