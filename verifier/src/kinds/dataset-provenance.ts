/**
 * The provenance chain of a generated dataset a training job names as its data: training job -> generated dataset (by
 * CID) -> the generate job whose KindRecords record names that CID -> the model CID and the prompts CID the dataset
 * names. Checked by the buyer before posting such a training job, by the provider before locking its stake, and by
 * `buyer fetch` of the training job, so nobody trains on, pays for or cites a dataset that is not what a finalized
 * generate job's committed leaves bind.
 *
 * @example
 *   const chains = await checkGeneratedCorpora({ client, deployment, store }, manifest); // [] when no corpus is generated
 *   for (const c of chains) console.log(`${c.datasetCid} <- generate job ${c.generateJobId} <- model ${c.modelCid}`);
 */
import { type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { getJob, getKindResultsForModel, hasKindResultCid, type KindResult } from "../chain/index.ts";
import { decodeGenerated, isGeneratedBytes, TABULAR_MAX_CANONICAL_BYTES, TEXT_MAX_CANONICAL_BYTES } from "../data/index.ts";
import { InputError } from "../errors/index.ts";
import type { ContentStore } from "../store/index.ts";
import { verifyDataset } from "./generate.ts";

/** One verified link of a training job to the generate job whose dataset it trains on. */
export type GeneratedProvenance = {
  /** The training manifest's corpus name. */
  corpus: string;
  datasetCid: string;
  generateJobId: bigint;
  /** The generate job's manifest hash: the one on JobMarket, on KindRecords and in the dataset file. */
  manifestHash: Hex;
  modelCid: string;
  promptsCid: string;
  samples: number;
  /** The chain of sample hashes the generate job's last leaf binds (KindRecords `chain`). */
  chain: Hex;
};

/** A generated dataset whose bytes, record or job do not form the chain; names the dataset CID and the broken link. */
export class GeneratedProvenanceError extends InputError {
  override name = "GeneratedProvenanceError";
  override readonly code: string = "GENERATED_PROVENANCE";
}

export type GeneratedProvenanceContext = { client: PublicClient<Transport, Chain>; deployment: { jobMarket: Address; kindRecords?: Address | undefined }; store: ContentStore };

/**
 * Verifies the chain of the generated dataset `datasetCid`: its bytes (the store checks their CID) are a pouw-generated-1
 * file, a KindRecords record of a generate job names this CID as its result and that model, the samples chain to the
 * record's `chain`, and the record's manifest hash is the dataset's and the (Finalized) job's on JobMarket.
 */
export async function verifyGeneratedProvenance(ctx: GeneratedProvenanceContext, datasetCid: string, corpus = datasetCid): Promise<GeneratedProvenance> {
  const what = `generated dataset ${datasetCid}`;
  const kindRecords = ctx.deployment.kindRecords;
  if (kindRecords === undefined) throw new GeneratedProvenanceError(`${what}: the deployment names no KindRecords contract, so the generate job behind it cannot be checked (set kindRecords in the deployment file)`);
  const bytes = await ctx.store.get(datasetCid, { maxBytes: TEXT_MAX_CANONICAL_BYTES });
  const file = decodeGenerated(bytes);
  const records: KindResult[] = [];
  for (const r of await getKindResultsForModel(ctx.client, { kindRecords, modelCid: file.model })) {
    if (r.kind === "generate" && (await hasKindResultCid(ctx.client, { kindRecords, jobId: r.jobId, resultCid: datasetCid }))) records.push(r);
  }
  if (records.length === 0) throw new GeneratedProvenanceError(`${what}: no generate job of model ${file.model} has it recorded on KindRecords ${kindRecords} (a dataset is data of a training job only once its generate job is finalized and recorded)`);
  // NOTE: recordResult does not check resultCid (anyone may name any CID for a recorded job), so a record naming this
  // CID proves nothing until the bytes chain to it
  const failures: string[] = [];
  for (const r of records) {
    try {
      verifyDataset(bytes, { chain: r.chain, modelCid: file.model });
    } catch (err) {
      failures.push(`generate job ${r.jobId}: ${(err as Error).message}`);
      continue;
    }
    if (r.manifestHash !== file.manifestHash) {
      failures.push(`generate job ${r.jobId}: its manifest hash is ${r.manifestHash}, the dataset names ${file.manifestHash}`);
      continue;
    }
    const job = await getJob(ctx.client, { jobMarket: ctx.deployment.jobMarket, jobId: r.jobId });
    if (job.status !== "Finalized" || job.manifestHash !== r.manifestHash) {
      failures.push(`generate job ${r.jobId} is ${job.status} with manifest hash ${job.manifestHash} on JobMarket ${ctx.deployment.jobMarket}`);
      continue;
    }
    return { corpus, datasetCid, generateJobId: r.jobId, manifestHash: r.manifestHash, modelCid: file.model, promptsCid: file.prompts, samples: file.samples.length, chain: r.chain };
  }
  throw new GeneratedProvenanceError(`${what}: its bytes do not match the recorded generate job: ${failures.join("; ")}`);
}

/**
 * The verified chains of every corpus of `manifest` that is a generated dataset (a corpus by content id whose bytes are a
 * pouw-generated-1 file); [] when none is. Throws GeneratedProvenanceError naming the first dataset that fails.
 */
export async function checkGeneratedCorpora(ctx: GeneratedProvenanceContext, manifest: { corpora: readonly { name: string; contentId: string; package?: string | undefined }[] }): Promise<GeneratedProvenance[]> {
  const out: GeneratedProvenance[] = [];
  for (const c of manifest.corpora) {
    if (c.package !== undefined) continue;
    // NOTE: the largest data set by content id a run loads (a tabular one may be larger than any text)
    const head = await ctx.store.get(c.contentId, { maxBytes: Math.max(TEXT_MAX_CANONICAL_BYTES, TABULAR_MAX_CANONICAL_BYTES) });
    if (!isGeneratedBytes(head)) continue;
    out.push(await verifyGeneratedProvenance(ctx, c.contentId, c.name));
  }
  return out;
}

/** One line per link: what `buyer fetch` prints for a training job on a generated dataset. */
export function provenanceLines(trainingJobId: bigint, chains: readonly GeneratedProvenance[]): string[] {
  return chains.map(
    (c) =>
      `job ${trainingJobId}: trained on generated dataset ${c.datasetCid} (corpus ${c.corpus}, ${c.samples} samples) <- generate job ${c.generateJobId} (manifest ${c.manifestHash}, finalized, recorded on KindRecords, samples chain ${c.chain}) <- model ${c.modelCid}, prompts ${c.promptsCid}`,
  );
}
