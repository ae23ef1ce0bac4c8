/**
 * The address job `jobId`'s segment commits must come from when it is not the provider (JobMarket.committerOf): the
 * session key its provider's attested tier bound at acceptJob. Undefined: the provider commits.
 *
 * @example
 *   const key = await getCommitter(clients.public, { jobMarket, jobId });
 */
import { zeroAddress, type Address, type PublicClient } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";

export type GetCommitterParameters = { jobMarket: Address; jobId: bigint };
export type GetCommitterReturnType = Address | undefined;

export async function getCommitter(client: PublicClient, p: GetCommitterParameters): Promise<GetCommitterReturnType> {
  const key = await client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "committerOf", args: [p.jobId] });
  return key === zeroAddress ? undefined : key;
}
