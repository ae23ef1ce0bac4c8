/**
 * Open an attestation request for the caller (the provider) in ProviderRegistry: fixes the AuditorRegistry snapshot
 * (asOf = the block's time), the seed block of the committee draw and the deadline, and returns the request id from
 * the AttestationRequested event. One open request per provider: a second one before the previous deadline reverts
 * with ProviderRegistryRequestOpen (docs/panels.md, "Attestation committee"). Each request burns the registry's
 * `requestFee()` of its `feeToken()` (the auditor token) from the caller, who approves it first; without that
 * allowance it reverts with ProviderRegistryFeeNotApproved. The evidence's nonce must be the returned `binding`,
 * keccak256(abi.encode(provider, chainId, registry, blockhash(challengeBlock))) (checks/attestation
 * `attestationBinding`): produce the evidence for `challengeBlock` first, then request. `challengeBlock` defaults to
 * the latest block (its hash is known to the next one); it must be at most CHALLENGE_MAX_AGE_BLOCKS (64) old, and a
 * (provider, challenge) binding opens one request (ProviderRegistryChallengeUsed).
 *
 * @example
 *   await approveToken(clients, { token: auditorToken, spender: providerRegistry, amount: requestFee });
 *   const challengeBlock = await clients.public.getBlockNumber();
 *   // ... evidence with nonce attestationBinding({ provider, chainId, registry, challenge: blockhash(challengeBlock) }) ...
 *   const { requestId, binding } = await requestAttestation(clients, { providerRegistry, evidenceHash: keccak256(evidence), challengeBlock });
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
  /** The block whose hash is the challenge the evidence answers (default: the latest block). */
  challengeBlock?: bigint;
  /**
   * The devices the evidence attests, as keccak256 of each verdict device id (attest `deviceIdHash`); sorted here.
   * Committees sign tier 4 (`device-undeclared`) unless they are exactly the evidence's; a device bound to another
   * provider by an unexpired statement reverts with ProviderRegistryDeviceBound. Absent: the request declares none.
   */
  deviceIds?: readonly Hex[];
  /**
   * The session key the evidence binds (the bundle's `sessionKey`); the registry keeps it with the request
   * (sessionKeyOf) and committees sign tier 4 (`session-key-undeclared`) when the bundle names another. Absent: none.
   */
  sessionKey?: Address;
};

export type RequestAttestationReturnType = SendResult & { requestId: bigint; asOf: bigint; seedBlock: bigint; deadline: bigint; binding: Hex };

export async function requestAttestation(clients: ChainClients, p: RequestAttestationParameters): Promise<RequestAttestationReturnType> {
  // cacheTime 0: viem caches the block number for a polling interval, and a stale one is an older challenge
  const challengeBlock = p.challengeBlock ?? (await clients.public.getBlockNumber({ cacheTime: 0 }));
  const devices = p.deviceIds === undefined ? undefined : [...p.deviceIds].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  const r = p.sessionKey
    ? await sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "requestAttestation", args: [p.evidenceHash, challengeBlock, devices ?? [], p.sessionKey] }, p)
    : devices
    ? await sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "requestAttestation", args: [p.evidenceHash, challengeBlock, devices] }, p)
    : await sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "requestAttestation", args: [p.evidenceHash, challengeBlock] }, p);
  const [ev] = parseEventLogs({ abi: providerRegistryAbi, logs: r.receipt.logs, eventName: "AttestationRequested" });
  if (!ev) throw new ChainError(`requestAttestation ${r.hash}: no AttestationRequested event in the receipt`);
  return { ...r, requestId: ev.args.requestId, asOf: ev.args.asOf, seedBlock: ev.args.seedBlock, deadline: ev.args.deadline, binding: ev.args.binding };
}
