/**
 * Cancel an Open job (buyer only); the escrow becomes the buyer's credit.
 *
 * @example
 *   const { hash, gasUsed } = await cancelJob(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type CancelJobParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type CancelJobReturnType = SendResult;

export async function cancelJob(clients: ChainClients, p: CancelJobParameters): Promise<CancelJobReturnType> {
  return sendContractTx(clients, { address: p.jobMarket, abi: jobMarketAbi, functionName: "cancelJob", args: [p.jobId] }, p);
}
