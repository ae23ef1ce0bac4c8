/**
 * The challenger bot's entry points for inference jobs (evaluate, generate): what a panel member decides on a disputed
 * example (decideExample: one example recomputed from state s-1). The bot's own dispatch calls these for a job whose
 * manifest is a kind manifest and keeps its training pipeline for every other job.
 */
import type { Hex } from "viem";
import type { SegmentCommitment } from "../checks/segment.ts";
import type { ContentStore } from "../store/index.ts";
import { decideExample, type ExampleJob, type KindDecision } from "./job.ts";
import { fetchKindManifest, openKindJob } from "./market.ts";

/** A job as the bot's database holds it. */
export type KindBotJob = { jobId: bigint; manifestUri: string; manifestHash: Hex; stepsPerSegment: number };

/**
 * The job's kind job (the model fetched by its CID), or undefined when its manifest is a training manifest. Cached per
 * job: a kind job is built once (its weights and harness), a training job is asked once.
 */
export class KindJobs {
  private readonly jobs = new Map<string, Promise<ExampleJob | undefined>>();
  private readonly store: ContentStore;
  constructor(store: ContentStore) {
    this.store = store;
  }

  jobFor(job: KindBotJob): Promise<ExampleJob | undefined> {
    const key = job.jobId.toString();
    let p = this.jobs.get(key);
    if (!p) {
      p = (async () => {
        const km = await fetchKindManifest(this.store, job.manifestUri, job.manifestHash);
        return km && openKindJob(km, await this.store.get(km.manifest.weightsCid), { jobId: job.jobId, examplesPerSegment: job.stepsPerSegment });
      })();
      // NOTE: a failure (content not served yet) is not cached: the next call asks again
      p.catch(() => this.jobs.delete(key));
      this.jobs.set(key, p);
    }
    return p;
  }
}

/** A panel member's vote on a disputed example of a kind job: decideExample over the segment's committed leaves. */
export function decideKindDispute(job: ExampleJob, store: ContentStore, c: SegmentCommitment, f: { segment: number; step: number; hPrev: Hex; hStep: Hex }): Promise<KindDecision> {
  const stateHashes = [...(c.stateHashes ?? [])] as Hex[];
  const commit = { segment: c.index, traceRoot: c.traceRoot as Hex, endStateHash: stateHashes[stateHashes.length - 1]!, checkpointCid: c.checkpointCid, stateHashes };
  return decideExample(job, store, commit, { step: f.step, hPrev: f.hPrev, hStep: f.hStep });
}
