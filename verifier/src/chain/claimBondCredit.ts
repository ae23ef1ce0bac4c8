/**
 * Claim the caller's AuditorRegistry credit (forfeited bonds won).
 *
 * @example
 *   const { hash, gasUsed } = await claimBondCredit(clients, { auditorRegistry });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimBondCreditParameters = SendOptions & {
  auditorRegistry: Address;
};

export type ClaimBondCreditReturnType = SendResult;

export async function claimBondCredit(clients: ChainClients, p: ClaimBondCreditParameters): Promise<ClaimBondCreditReturnType> {
  return sendContractTx(clients, { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "claim", args: [] }, p);
}
