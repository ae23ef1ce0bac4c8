/**
 * Report a provider that missed its segment deadline (anyone may call).
 *
 * @example
 *   const { hash, gasUsed } = await reportTimeout(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ReportTimeoutParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type ReportTimeoutReturnType = SendResult;

export async function reportTimeout(clients: ChainClients, p: ReportTimeoutParameters): Promise<ReportTimeoutReturnType> {
  return sendContractTx(clients, { address: p.jobMarket, abi: jobMarketAbi, functionName: "reportTimeout", args: [p.jobId] }, p);
}
