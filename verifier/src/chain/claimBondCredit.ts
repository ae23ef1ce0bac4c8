/**
 * Claim the caller's AuditorRegistry credit (forfeited bonds won).
 *
 * @example
 *   const { hash, gasUsed } = await claimBondCredit(clients, { auditorRegistry });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimBondCreditParameters = SendOptions & {
  auditorRegistry: Address;
};

export type ClaimBondCreditReturnType = SendResult;

/** The call `claimBondCredit` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function claimBondCreditCall(p: CallParameters<ClaimBondCreditParameters>): ContractCall<typeof auditorRegistryAbi, "claim"> {
  return { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "claim", args: [] };
}

export async function claimBondCredit(clients: ChainClients, p: ClaimBondCreditParameters): Promise<ClaimBondCreditReturnType> {
  return sendContractTx(clients, claimBondCreditCall(p), p);
}
