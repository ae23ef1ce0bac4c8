/**
 * Report a provider that missed its segment deadline (anyone may call), and re-open a TimedOut job after its window.
 *
 * A timeout of a tenure that committed segments leaves the job TimedOut for one challenge window (those segments
 * stay disputable, the rest of the provider's lock stays locked); `reopenJob` then offers it again.
 *
 * @example
 *   const { hash, gasUsed } = await reportTimeout(clients, { jobMarket, jobId: 1n });
 *   // ... one challenge window later
 *   await reopenJob(clients, { jobMarket, jobId: 1n });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ReportTimeoutParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
};

export type ReportTimeoutReturnType = SendResult;

/** The call `reportTimeout` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function reportTimeoutCall(p: CallParameters<ReportTimeoutParameters>): ContractCall<typeof jobMarketAbi, "reportTimeout"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "reportTimeout", args: [p.jobId] };
}

export async function reportTimeout(clients: ChainClients, p: ReportTimeoutParameters): Promise<ReportTimeoutReturnType> {
  return sendContractTx(clients, reportTimeoutCall(p), p);
}

export type ReopenJobParameters = ReportTimeoutParameters;

/** The call `reopenJob` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function reopenJobCall(p: CallParameters<ReopenJobParameters>): ContractCall<typeof jobMarketAbi, "reopenJob"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "reopenJob", args: [p.jobId] };
}

export async function reopenJob(clients: ChainClients, p: ReopenJobParameters): Promise<SendResult> {
  return sendContractTx(clients, reopenJobCall(p), p);
}
