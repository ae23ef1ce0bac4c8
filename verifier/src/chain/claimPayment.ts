/**
 * Claim the caller's whole JobMarket credit in `token` (payments, refunds).
 *
 * @example
 *   const { hash, gasUsed } = await claimPayment(clients, { jobMarket, token });
 */
import type { Address } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimPaymentParameters = SendOptions & {
  jobMarket: Address;
  token: Address;
};

export type ClaimPaymentReturnType = SendResult;

/** The call `claimPayment` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function claimPaymentCall(p: CallParameters<ClaimPaymentParameters>): ContractCall<typeof jobMarketAbi, "claim"> {
  return { address: p.jobMarket, abi: jobMarketAbi, functionName: "claim", args: [p.token] };
}

export async function claimPayment(clients: ChainClients, p: ClaimPaymentParameters): Promise<ClaimPaymentReturnType> {
  return sendContractTx(clients, claimPaymentCall(p), p);
}
