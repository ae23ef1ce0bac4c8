/**
 * Open an attestation request for the caller (the provider) in ProviderRegistry: fixes the AuditorRegistry snapshot
 * (asOf = the block's time), the seed block of the committee draw and the deadline, and returns the request id from
 * the AttestationRequested event. One open request per provider: a second one before the previous deadline reverts
 * with ProviderRegistryRequestOpen (docs/panels.md, "Attestation committee"). Each request burns the registry's
 * `requestFee()` of its `feeToken()` (the auditor token) from the caller, who approves it first; without that
 * allowance it reverts with ProviderRegistryFeeNotApproved.
 *
 * @example
 *   await approveToken(clients, { token: auditorToken, spender: providerRegistry, amount: requestFee });
 *   const { requestId, seedBlock, deadline } = await requestAttestation(clients, { providerRegistry, evidenceHash: keccak256(evidence) });
 */
import { parseEventLogs, type Address, type Hex } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { ChainError } from "./errors.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RequestAttestationParameters = SendOptions & {
  providerRegistry: Address;
  /** keccak256 of the evidence token the committee is to verify (non-zero). */
  evidenceHash: Hex;
};

export type RequestAttestationReturnType = SendResult & { requestId: bigint; asOf: bigint; seedBlock: bigint; deadline: bigint };

export async function requestAttestation(clients: ChainClients, p: RequestAttestationParameters): Promise<RequestAttestationReturnType> {
  const r = await sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "requestAttestation", args: [p.evidenceHash] }, p);
  const [ev] = parseEventLogs({ abi: providerRegistryAbi, logs: r.receipt.logs, eventName: "AttestationRequested" });
  if (!ev) throw new ChainError(`requestAttestation ${r.hash}: no AttestationRequested event in the receipt`);
  return { ...r, requestId: ev.args.requestId, asOf: ev.args.asOf, seedBlock: ev.args.seedBlock, deadline: ev.args.deadline };
}
