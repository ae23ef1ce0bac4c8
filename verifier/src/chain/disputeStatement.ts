/**
 * Dispute a provider's standing attestation statement in ProviderRegistry (anyone) with its evidence bundle (its
 * keccak256 must be the record's evidenceHash, else ProviderRegistryWrongEvidence; StatementEvidence carries the bytes
 * to the panel): locks the registry's
 * `disputeBond()` (the AuditorRegistry's minimum bond, in the auditor token; approve it to the registry first, else
 * ProviderRegistryBondNotApproved) and returns the dispute id from the StatementDisputed event. A fresh panel, drawn
 * from the auditor snapshot at the dispute's time with the statement's signers, the provider and the challenger
 * excluded, re-verifies that bundle and votes (voteStatementDispute). Reverts with
 * ProviderRegistryNothingToDispute when the provider has no unexpired tier-1..3 record, and
 * ProviderRegistryAlreadyDisputed when its statement already has a dispute (docs/panels.md, "Statement disputes").
 *
 * @example
 *   await approveToken(clients, { token: auditorToken, spender: providerRegistry, amount: bond });
 *   const { disputeId, deadline } = await disputeStatement(clients, { providerRegistry, provider, bundle });
 */
import { parseEventLogs, toHex, type Address, type Hex } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { ChainError } from "./errors.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type DisputeStatementParameters = SendOptions & {
  providerRegistry: Address;
  /** Whose standing statement is disputed. */
  provider: Address;
  /** The statement's evidence bundle (keccak256 must be the record's evidenceHash). */
  bundle: Uint8Array | Hex;
};

export type DisputeStatementReturnType = SendResult & { disputeId: bigint; requestId: bigint; bond: bigint; seedBlock: bigint; deadline: bigint };

export async function disputeStatement(clients: ChainClients, p: DisputeStatementParameters): Promise<DisputeStatementReturnType> {
  const r = await sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "disputeStatement", args: [p.provider, typeof p.bundle === "string" ? p.bundle : toHex(p.bundle)] }, p);
  const [ev] = parseEventLogs({ abi: providerRegistryAbi, logs: r.receipt.logs, eventName: "StatementDisputed" });
  if (!ev) throw new ChainError(`disputeStatement ${r.hash}: no StatementDisputed event in the receipt`);
  return { ...r, disputeId: ev.args.disputeId, requestId: ev.args.requestId, bond: ev.args.bond, seedBlock: ev.args.seedBlock, deadline: ev.args.deadline };
}
