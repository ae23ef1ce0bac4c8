/**
 * Rebind the running tenure of an Active job to the session key of the provider's current attested record
 * (JobMarket.rebindCommitter; provider only): after a restart the machine re-attests with a new key and the old one is
 * gone. Reverts JobMarketRebindTierTooLow when the current record is weaker than the tier the tenure was accepted at,
 * JobMarketRecordExpiresFirst when it lapses before the tenure's last possible commit, and JobMarketNoCommitter for a
 * tenure that commits from the provider's own address.
 *
 * @example
 *   const { hash } = await rebindCommitter(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RebindCommitterParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type RebindCommitterReturnType = SendResult;

/** The call `rebindCommitter` sends, as data. */
export function rebindCommitterCall(p: CallParameters<RebindCommitterParameters>): ContractCall<typeof jobMarketAbi, "rebindCommitter"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "rebindCommitter", args: [p.jobId] };
}

export async function rebindCommitter(clients: ChainClients, p: RebindCommitterParameters): Promise<RebindCommitterReturnType> {
  return sendContractTx(clients, rebindCommitterCall(p), p);
}
