/**
 * Claim the caller's ProviderRegistry credit (a dispute bond credited back; ProviderRegistry.claimCredit). The
 * challenger's share of forfeited signer bonds is an AuditorRegistry credit instead (claimBondCredit). Reverts with
 * ProviderRegistryNothingToClaim when there is none.
 *
 * @example
 *   await claimAttestationCredit(clients, { providerRegistry });
 */
import type { Address } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimAttestationCreditParameters = SendOptions & { providerRegistry: Address };

export type ClaimAttestationCreditReturnType = SendResult;

export async function claimAttestationCredit(clients: ChainClients, p: ClaimAttestationCreditParameters): Promise<ClaimAttestationCreditReturnType> {
  return sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "claimCredit", args: [] }, p);
}
