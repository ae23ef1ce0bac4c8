/**
 * Cancel an Open job (buyer only); the escrow becomes the buyer's credit.
 *
 * @example
 *   const { hash, gasUsed } = await cancelJob(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type CancelJobParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type CancelJobReturnType = SendResult;

/** The call `cancelJob` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function cancelJobCall(p: CallParameters<CancelJobParameters>): ContractCall<typeof jobMarketAbi, "cancelJob"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "cancelJob", args: [p.jobId] };
}

export async function cancelJob(clients: ChainClients, p: CancelJobParameters): Promise<CancelJobReturnType> {
  return sendContractTx(clients, cancelJobCall(p), p);
}
