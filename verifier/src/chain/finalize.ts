/**
 * Finalize a Committed job after its challenge window: credits the provider, unlocks its stake (anyone may call).
 *
 * @example
 *   const { hash, gasUsed } = await finalize(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type FinalizeParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type FinalizeReturnType = SendResult;

/** The call `finalize` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function finalizeCall(p: CallParameters<FinalizeParameters>): ContractCall<typeof jobMarketAbi, "finalize"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "finalize", args: [p.jobId] };
}

export async function finalize(clients: ChainClients, p: FinalizeParameters): Promise<FinalizeReturnType> {
  return sendContractTx(clients, finalizeCall(p), p);
}
