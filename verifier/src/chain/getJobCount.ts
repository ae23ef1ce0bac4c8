/**
 * The number of jobs JobMarket has created (JobMarket.jobCount): the next createJob gets id jobCount + 1. What a buyer
 * of a circuit-class job predicts its job id (and so its salt and batch root) from before createJob.
 *
 * @example
 *   const next = (await getJobCount(clients.public, { jobMarket })) + 1n;
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetJobCountParameters = { jobMarket: Address };

export async function getJobCount(client: PublicClient<Transport, Chain>, p: GetJobCountParameters): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "jobCount" }), { what: "JobMarket.jobCount" });
}
