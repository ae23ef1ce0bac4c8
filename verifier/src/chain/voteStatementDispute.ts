/**
 * Vote on a statement dispute as a member of its drawn panel (ProviderRegistry.voteDispute), before its deadline:
 * `statementFalse` true when the evidence, re-verified under the trust configuration at the statement's issuedAt, does
 * not support the recorded tier. The vote that makes a quorum settles the dispute (revocation and forfeiture, or the
 * challenger's bond burned). The first vote draws the panel if nobody did. Reverts with ProviderRegistryNotPanelMember,
 * ProviderRegistryAlreadyVoted, ProviderRegistryVoterNotAuditor, ProviderRegistryDisputeClosed or
 * ProviderRegistryDisputeSettled.
 *
 * @example
 *   await voteStatementDispute(clients, { providerRegistry, disputeId, statementFalse: true });
 */
import type { Address } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type VoteStatementDisputeParameters = SendOptions & { providerRegistry: Address; disputeId: bigint; statementFalse: boolean };

export type VoteStatementDisputeReturnType = SendResult;

export async function voteStatementDispute(clients: ChainClients, p: VoteStatementDisputeParameters): Promise<VoteStatementDisputeReturnType> {
  return sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "voteDispute", args: [p.disputeId, p.statementFalse] }, p);
}
