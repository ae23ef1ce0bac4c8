/**
 * The market's jobs, newest first: each job's record (getJob) for ids jobCount down to 1, at most `limit` of them,
 * optionally only those whose status is in `statuses`.
 *
 * @example
 *   const open = await getJobs(client, { jobMarket, statuses: ["Open"] });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { JobStatusName } from "./enums.ts";
import { getJob, type GetJobReturnType } from "./getJob.ts";
import { withRetry } from "./retry.ts";

export type GetJobsParameters = { jobMarket: Address; statuses?: readonly JobStatusName[]; limit?: number };
export type GetJobsReturnType = { jobCount: bigint; jobs: GetJobReturnType[] };

/** Reads per batch: keeps a long listing from opening hundreds of requests at once. */
const BATCH = 16;

export async function getJobs(client: PublicClient<Transport, Chain>, p: GetJobsParameters): Promise<GetJobsReturnType> {
  const jobCount = await withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "jobCount" }), { what: "jobCount" });
  const limit = p.limit ?? 100;
  const jobs: GetJobReturnType[] = [];
  for (let hi = jobCount; hi >= 1n && jobs.length < limit; hi -= BigInt(BATCH)) {
    const ids: bigint[] = [];
    for (let id = hi; id >= 1n && id > hi - BigInt(BATCH); id--) ids.push(id);
    const batch = await Promise.all(ids.map((jobId) => getJob(client, { jobMarket: p.jobMarket, jobId })));
    for (const j of batch) if (jobs.length < limit && (p.statuses === undefined || p.statuses.includes(j.status))) jobs.push(j);
  }
  return { jobCount, jobs };
}
