/**
 * Record an AttestationVerified statement in ProviderRegistry on the signatures of members of its request's drawn
 * committee (anyone may submit). The contract wants the signatures in ascending order of signer address; this
 * action sorts them by the `signer` each one comes with (a wrong pairing reverts on chain, with
 * ProviderRegistryNotCommitteeMember or ProviderRegistryUnsortedSigners).
 *
 * @example
 *   const sig = await signAttestationVerified(account, providerRegistryDomain(chainId, providerRegistry), att);
 *   await recordAttestation(clients, { providerRegistry, attestation: att, signatures: [{ signer: account.address, signature: sig }, ...] });
 */
import { getAddress, type Address, type Hex } from "viem";
import type { AttestationVerified } from "../receipts/index.ts";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RecordAttestationParameters = SendOptions & {
  providerRegistry: Address;
  attestation: AttestationVerified;
  /** At least `quorum` committee members' signatures over `attestation`, in any order. */
  signatures: readonly { signer: Address; signature: Hex }[];
};

export type RecordAttestationReturnType = SendResult;

export async function recordAttestation(clients: ChainClients, p: RecordAttestationParameters): Promise<RecordAttestationReturnType> {
  const sorted = [...p.signatures].sort((a, b) => {
    const x = BigInt(getAddress(a.signer));
    const y = BigInt(getAddress(b.signer));
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const a = p.attestation;
  const att = { provider: a.provider, requestId: a.requestId, tier: a.tier, band: a.band, evidenceHash: a.evidenceHash, expiresAt: a.expiresAt, issuedAt: a.issuedAt };
  return sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "record", args: [att, sorted.map((s) => s.signature)] }, p);
}
