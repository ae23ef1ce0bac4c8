/**
 * Vote on a statement dispute as a member of its drawn panel (ProviderRegistry.voteDispute), before its deadline:
 * `statementFalse` true when the evidence, re-verified under the trust configuration at the statement's issuedAt, does
 * not support the recorded tier. The vote that makes a quorum settles the dispute (revocation and forfeiture, or the
 * challenger's bond burned). The first vote draws the panel if nobody did. Reverts with ProviderRegistryNotPanelMember,
 * ProviderRegistryAlreadyVoted, ProviderRegistryVoterNotAuditor, ProviderRegistryDisputeClosed or
 * ProviderRegistryDisputeSettled.
 *
 * `revokedSince` (ProviderRegistry.voteRevoked) instead: the statement held at its issuedAt, but its evidence does not
 * support the tier under today's public revocation or TCB data; a quorum of such votes revokes the record with no
 * forfeit and credits the challenger's bond back.
 *
 * @example
 *   await voteStatementDispute(clients, { providerRegistry, disputeId, statementFalse: true });
 *   await voteStatementDispute(clients, { providerRegistry, disputeId, statementFalse: false, revokedSince: true });
 */
import type { Address } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type VoteStatementDisputeParameters = SendOptions & { providerRegistry: Address; disputeId: bigint; statementFalse: boolean; revokedSince?: boolean };

export type VoteStatementDisputeReturnType = SendResult;

export async function voteStatementDispute(clients: ChainClients, p: VoteStatementDisputeParameters): Promise<VoteStatementDisputeReturnType> {
  // INVARIANT: a statement false at its time is voted false (its signers forfeit), never "revoked since"
  if (p.revokedSince && !p.statementFalse) return sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "voteRevoked", args: [p.disputeId] }, p);
  return sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "voteDispute", args: [p.disputeId, p.statementFalse] }, p);
}
