/**
 * Buyer operations the CLI and the demo share: post a job (publish the manifest, approve, createJob or
 * createJobWithTerms) and fetch its result: the final weights and the provenance record the final
 * provider published and anchored, verified against the chain (provenance/verify.ts) before anything is
 * written.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Hex } from "viem";
import { getJobCreated, getSegmentCommits, type JobStatusName } from "../chain/index.ts";
import { createRun, deploymentSalt, parseManifest } from "../ml/index.ts";
import { PROVENANCE_FILE, ProvenanceMismatchError, type ProvenanceReport } from "../provenance/index.ts";
import { fetchResult, FetchResultError, type FetchResultContext, type FetchResultOptions } from "./fetch-result.ts";
import { rebuildFinalWeights } from "./final-weights.ts";
import type { GeneratedProvenance } from "../kinds/dataset-provenance.ts";
import { checkGeneratedData } from "./create-job.ts";
import { fetchManifest } from "./manifest-store.ts";

export { postJob, type PostJobResult } from "./post-job.ts";

export { FetchResultError };

export type FetchVerifiedContext = FetchResultContext;

export type FetchVerifiedOptions = Pick<FetchResultOptions, "corpusBytes">;

export type FetchVerifiedResult = {
  jobId: bigint;
  status: JobStatusName;
  weightsPath: string;
  recordPath: string;
  recordHash: Hex;
  /** Where the weights came from: the content store by the record's CID, or rebuilt from the last committed checkpoint. */
  weightsFrom: "store" | "rebuilt";
  report: ProvenanceReport;
  /** The verified chain of each generated dataset the job trained on (kinds/dataset-provenance.ts); [] when none. */
  generated: GeneratedProvenance[];
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
  // fetch-result.ts does the fetching and checking (the dApp runs the same); here: the rebuild fallback and the files
  const rebuild: FetchResultOptions["rebuild"] = async (job) => {
    const fromBlock = BigInt(d.startBlock);
    const created = await getJobCreated(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
    const manifest = await fetchManifest(store, created.manifestUri, job.manifestHash);
    const commits = await getSegmentCommits(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
    return rebuildFinalWeights(await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId), store }), store, commits);
  };
  const { status, recordBytes, weightsBytes, weightsFrom, report } = await fetchResult(ctx, jobId, { ...options, rebuild });
  if (!report.ok) throw new ProvenanceMismatchError(report.failures);
  // the record's manifest (hash-checked against the job above) names the data; a generated dataset's chain is checked
  // back to its generate job and model before anything is written
  const generated = await checkGeneratedData(ctx, parseManifest((JSON.parse(new TextDecoder().decode(recordBytes)) as { manifest: unknown }).manifest), `job ${jobId}: provenance of its data not verified (nothing written)`);

  await mkdir(outDir, { recursive: true });
  const weightsPath = join(outDir, "final.safetensors");
  const recordPath = join(outDir, PROVENANCE_FILE);
  await writeFile(weightsPath, weightsBytes);
  await writeFile(recordPath, recordBytes);
  return { jobId, status, weightsPath, recordPath, recordHash: report.recordHash, weightsFrom, report, generated };
}
