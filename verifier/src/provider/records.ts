/**
 * The provider's context and its local records of a job (under the state directory): the end checkpoint pointer of
 * each committed segment (resuming after a restart, finalize) and, when it keeps them, the per-state checkpoint CIDs
 * of each segment (state openings answered without a replay). The training run (run-job.ts), the openings watcher
 * (openings.ts) and finalize (finalize-anchor.ts) all read and write them here, so none of them imports another.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChainClients, Deployment } from "../chain/index.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import type { ContentStore } from "../store/index.ts";

export type ProviderContext = {
  clients: ChainClients;
  deployment: Deployment;
  store: ContentStore;
  board: SegmentBoard;
  stateDir: string;
  /** The clients of the session key an attested tier bound (made inside the attested machine): a job whose committer
   * (getCommitter) is that key has its segments committed from it; the provider's own key is refused there. */
  sessionClients?: ChainClients;
};

type RecordRoot = Pick<ProviderContext, "stateDir" | "deployment">;

/** The provider's directory for a job: end checkpoint pointers, and after finalize the weights and provenance record. */
export function providerJobDir(ctx: RecordRoot, jobId: bigint): string {
  return join(ctx.stateDir, "provider", ctx.deployment.jobMarket.toLowerCase(), jobId.toString());
}

export function endRecordPath(ctx: RecordRoot, jobId: bigint, segment: number): string {
  return join(providerJobDir(ctx, jobId), `end-${segment}.cid`);
}

/** Where `runProviderJob(..., { keepStepStates: true })` records a segment's per-state CIDs (states first .. first+K-1). */
export function stateCidsPath(ctx: RecordRoot, jobId: bigint, segment: number): string {
  return join(providerJobDir(ctx, jobId), `states-${segment}.json`);
}

export async function writeStateCids(ctx: RecordRoot, jobId: bigint, segment: number, cids: readonly string[]): Promise<void> {
  await writeFile(stateCidsPath(ctx, jobId, segment), JSON.stringify(cids));
}

/** The segment's recorded per-state CIDs, or null when none is recorded (or the record does not parse): replay then. */
export async function readStateCids(ctx: RecordRoot, jobId: bigint, segment: number): Promise<string[] | null> {
  try {
    const v: unknown = JSON.parse(await readFile(stateCidsPath(ctx, jobId, segment), "utf8"));
    return Array.isArray(v) && v.every((c) => typeof c === "string") ? v : null;
  } catch {
    return null;
  }
}

/** Where `provider run` of a generate job records the CID of the dataset it published (what claim names on KindRecords). */
export function datasetCidPath(ctx: RecordRoot, jobId: bigint): string {
  return join(providerJobDir(ctx, jobId), "dataset.cid");
}
