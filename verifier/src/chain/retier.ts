/**
 * Re-price an Active job's tenure at its provider's current tier (JobMarket.retier; anyone may call): a tier proven
 * false or revoked mid-job loses its stake discount and its session key. The missing stake is locked from the
 * provider's free stake, or, when it is not there (or the tier no longer meets the job's minimum), the tenure ends as
 * a missed deadline ends it. Reverts with JobMarketRetierNotNeeded when the lock already covers the current tier.
 *
 * @example
 *   const { stakeWei } = await getAcceptTerms(clients.public, { jobMarket, jobId: 1n, provider }); // the current tier's stake
 *   if (stakeWei > (await getLockedStake(clients.public, { stakeVault, provider, jobId: 1n }))) await retier(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RetierParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type RetierReturnType = SendResult;

/** The call `retier` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function retierCall(p: CallParameters<RetierParameters>): ContractCall<typeof jobMarketAbi, "retier"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "retier", args: [p.jobId] };
}

export async function retier(clients: ChainClients, p: RetierParameters): Promise<RetierReturnType> {
  return sendContractTx(clients, retierCall(p), p);
}
