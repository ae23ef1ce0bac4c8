/**
 * A provider's attestation request from its evidence bundle (`pouw auditor attest-request`): the registry's fee is
 * funded (minted on a dev chain with `mint`) and approved, then ProviderRegistry.requestAttestation records the
 * bundle's keccak256, the challenge block, the declared devices and the bundle's session key.
 *
 * @example
 *   const r = await requestBundleAttestation(clients, deployment, { providerRegistry, bundle, challengeBlock, deviceIds: [], mint: true });
 */
import { keccak256, type Address, type Hex } from "viem";
import { getAttestationTerms, requestAttestation, txRef, type ChainClients, type Deployment, type TxRef } from "../chain/index.ts";
import { parseEvidenceBundle } from "../checks/attestation/index.ts";
import { ensureTokenFunds } from "../market/funding.ts";

/**
 * The session key a request declares: the bundle's (the registry keeps it with the request). A file that is not a
 * bundle declares none: the request still opens, and its committee signs tier 4 with the reason.
 */
function bundleSessionKey(bytes: Uint8Array): { sessionKey?: Address } {
  try {
    return { sessionKey: parseEvidenceBundle(bytes).sessionKey as Address };
  } catch {
    return {};
  }
}

export type RequestBundleAttestationParameters = {
  providerRegistry: Address;
  /** The evidence bundle's bytes (their keccak256 is the request's evidence hash). */
  bundle: Uint8Array;
  challengeBlock: bigint;
  /** keccak256 of each declared device id (attest `deviceIdHash`); empty: none declared. */
  deviceIds: readonly Hex[];
  mint: boolean;
};

export type RequestBundleAttestationReturnType = { requestId: bigint; binding: Hex; evidenceHash: Hex; seedBlock: bigint; deadline: bigint; txs: TxRef[] };

export async function requestBundleAttestation(clients: ChainClients, d: Deployment, p: RequestBundleAttestationParameters): Promise<RequestBundleAttestationReturnType> {
  const terms = await getAttestationTerms(clients.public, { providerRegistry: p.providerRegistry });
  const txs = await ensureTokenFunds(clients, d, p.providerRegistry, terms.requestFee, { mint: p.mint });
  const evidenceHash = keccak256(p.bundle);
  const r = await requestAttestation(clients, {
    providerRegistry: p.providerRegistry,
    evidenceHash,
    challengeBlock: p.challengeBlock,
    ...(p.deviceIds.length > 0 ? { deviceIds: p.deviceIds } : {}),
    // the registry keeps the bundle's session key with the request (sessionKeyOf): what commitments can be held to
    ...bundleSessionKey(p.bundle),
  });
  txs.push(txRef("requestAttestation", r));
  return { requestId: r.requestId, binding: r.binding, evidenceHash, seedBlock: r.seedBlock, deadline: r.deadline, txs };
}
