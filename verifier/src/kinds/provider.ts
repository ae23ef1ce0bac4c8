/**
 * The provider's side of an inference job: publish each segment's states file to the content store (its CID is the
 * segment's checkpointCid, what auditors and panels read state s-1 from) and commit the segment's K+1 leaves through
 * the same JobMarket.commitSegment a training job uses.
 *
 * @example
 *   const job = await evaluateJob(manifest, weights, { jobId, examplesPerSegment: 50 });
 *   const segments = kindSegments(job, await job.results(0, job.examples));
 *   await commitKindSegments(clients, { jobMarket, jobId, store, segments });
 */
import type { Address } from "viem";
import { commitSegment, type ChainClients } from "../chain/index.ts";
import { logger } from "../log/index.ts";
import type { ContentStore } from "../store/index.ts";
import type { KindSegment } from "./job.ts";

const log = logger("kinds");

export type CommitKindSegmentsParameters = { jobMarket: Address; jobId: bigint; store: ContentStore; segments: readonly KindSegment[]; fromSegment?: number };

/** Publishes and commits segments fromSegment.. in order; returns each segment's checkpoint CID. */
export async function commitKindSegments(clients: ChainClients, p: CommitKindSegmentsParameters): Promise<string[]> {
  const cids: string[] = [];
  for (const s of p.segments.slice(p.fromSegment ?? 0)) {
    // INVARIANT: the states file is published before its commitment, so a committed segment is always servable
    const checkpointCid = await p.store.put(s.file);
    await commitSegment(clients, { jobMarket: p.jobMarket, jobId: p.jobId, segment: s.index, stateHashes: [...s.stateHashes], lossE6: s.lossE6, checkpointCid });
    log.info({ jobId: p.jobId, segment: s.index, root: s.traceRoot, checkpointCid }, "segment committed");
    cids.push(checkpointCid);
  }
  return cids;
}
