/**
 * Read inference-job results from KindRecords: one job's (`getKindResult`, undefined when none is recorded), the
 * jobs recorded for a model CID (`getKindResultsForModel`), so a model's independent scores can be cited by its CID,
 * and whether a result CID was named for a job (`hasKindResultCid`: anyone may name any CID, so a reader checks the
 * bytes against the result's `chain` before citing it).
 *
 * @example
 *   const r = await getKindResult(clients.public, { kindRecords, jobId });
 *   const jobs = await getKindResultsForModel(clients.public, { kindRecords, modelCid });
 *   const named = await hasKindResultCid(clients.public, { kindRecords, jobId, resultCid });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { kindRecordsAbi } from "./abi/KindRecords.ts";
import { withRetry } from "./retry.ts";

export type KindResult = { jobId: bigint; kind: "evaluate" | "generate"; examples: bigint; recordedAt: bigint; manifestHash: Hex; modelCidHash: Hex; total: bigint; hits: bigint; chain: Hex };

const KIND_NAMES = { 1: "evaluate", 2: "generate" } as const;

export async function getKindResult(client: PublicClient<Transport, Chain>, p: { kindRecords: Address; jobId: bigint }): Promise<KindResult | undefined> {
  const r = await withRetry(() => client.readContract({ address: p.kindRecords, abi: kindRecordsAbi, functionName: "resultOf", args: [p.jobId] }), { what: "KindRecords.resultOf" });
  if (r.kind !== 1 && r.kind !== 2) return undefined;
  return { jobId: p.jobId, kind: KIND_NAMES[r.kind], examples: r.examples, recordedAt: r.recordedAt, manifestHash: r.manifestHash, modelCidHash: r.modelCidHash, total: r.total, hits: r.hits, chain: r.chain };
}

export async function getKindResultsForModel(client: PublicClient<Transport, Chain>, p: { kindRecords: Address; modelCid: string }): Promise<KindResult[]> {
  const ids = await withRetry(() => client.readContract({ address: p.kindRecords, abi: kindRecordsAbi, functionName: "jobsForModel", args: [p.modelCid] }), { what: "KindRecords.jobsForModel" });
  const out: KindResult[] = [];
  for (const jobId of ids) {
    const r = await getKindResult(client, { kindRecords: p.kindRecords, jobId });
    if (r) out.push(r);
  }
  return out;
}

export async function hasKindResultCid(client: PublicClient<Transport, Chain>, p: { kindRecords: Address; jobId: bigint; resultCid: string }): Promise<boolean> {
  return withRetry(() => client.readContract({ address: p.kindRecords, abi: kindRecordsAbi, functionName: "hasResultCid", args: [p.jobId, p.resultCid] }), { what: "KindRecords.hasResultCid" });
}
