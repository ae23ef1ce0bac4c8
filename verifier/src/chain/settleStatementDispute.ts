/**
 * Settle a statement dispute that lapsed undecided (anyone; ProviderRegistry.settleDispute): no panel quorum by its
 * deadline, or its seed left blockhash range with no panel drawn. Half the challenger's bond is burned, half credited
 * back (claimAttestationCredit pays it). Reverts with ProviderRegistryDisputeOpen before it lapsed and
 * ProviderRegistryDisputeSettled once settled.
 *
 * @example
 *   await settleStatementDispute(clients, { providerRegistry, disputeId });
 */
import type { Address } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type SettleStatementDisputeParameters = SendOptions & { providerRegistry: Address; disputeId: bigint };

export type SettleStatementDisputeReturnType = SendResult;

export async function settleStatementDispute(clients: ChainClients, p: SettleStatementDisputeParameters): Promise<SettleStatementDisputeReturnType> {
  return sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "settleDispute", args: [p.disputeId] }, p);
}
