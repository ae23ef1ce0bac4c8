/**
 * Read a job's full record (IJobMarket.JobView) with its status as a name.
 *
 * @example
 *   const job = await getJob(clients.public, { jobMarket, jobId: 1n });
 *   if (job.status === "Committed" && job.deadline < now) ...
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { ChainError, UnknownJobError } from "./errors.ts";
import { withRetry } from "./retry.ts";

import { JOB_STATUS, type JobStatusName } from "./enums.ts";

export { JOB_STATUS, type JobStatusName };

export type GetJobParameters = { jobMarket: Address; jobId: bigint; blockNumber?: bigint };

type RawJob = Awaited<ReturnType<typeof readRaw>>;
async function readRaw(client: PublicClient<Transport, Chain>, p: GetJobParameters) {
  return client.readContract({
    address: p.jobMarket,
    abi: jobMarketAbi,
    functionName: "getJob",
    args: [p.jobId],
    ...(p.blockNumber === undefined ? {} : { blockNumber: p.blockNumber }),
  });
}

export type GetJobReturnType = Omit<RawJob, "status"> & { jobId: bigint; status: JobStatusName };

export async function getJob(client: PublicClient<Transport, Chain>, p: GetJobParameters): Promise<GetJobReturnType> {
  const raw = await withRetry(() => readRaw(client, p), { what: "getJob" });
  const status = JOB_STATUS[raw.status];
  if (!status) throw new ChainError(`job ${p.jobId}: unknown status ${raw.status}`);
  return { ...raw, jobId: p.jobId, status };
}

/** getJob, but a job that does not exist (status None) is an UnknownJobError: what every command reports for a bad id. */
export async function requireJob(client: PublicClient<Transport, Chain>, p: GetJobParameters): Promise<GetJobReturnType> {
  const job = await getJob(client, p);
  if (job.status === "None") throw new UnknownJobError(p.jobId);
  return job;
}
