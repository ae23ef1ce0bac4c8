/**
 * Accept an Open job; locks the caller's tier-scaled stake (JobMarket.requiredStakeFor: policy.requiredStake
 * for an unattested provider, less for attested tiers) and reverts JobMarketTierTooLow below the job's minimum tier.
 *
 * @example
 *   const { hash, gasUsed } = await acceptJob(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type AcceptJobParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type AcceptJobReturnType = SendResult;

/** The call `acceptJob` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function acceptJobCall(p: CallParameters<AcceptJobParameters>): ContractCall<typeof jobMarketAbi, "acceptJob"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "acceptJob", args: [p.jobId] };
}

export async function acceptJob(clients: ChainClients, p: AcceptJobParameters): Promise<AcceptJobReturnType> {
  return sendContractTx(clients, acceptJobCall(p), p);
}
