/**
 * A provider's recorded attestation in ProviderRegistry (attestationOf), its effective tier (effectiveTier: 4 when
 * expired, revoked or unbacked), the bond a statement dispute locks (disputeBond) and the dispute of its statement
 * (disputeOfRequest; 0n: none).
 *
 * @example
 *   const a = await getProviderAttestation(clients.public, { providerRegistry, provider });
 *   // a.tier, a.band, a.issuedAt, a.requestId, a.effectiveTier, a.disputeBond, a.disputeId
 */
import type { Address, PublicClient } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";

export type GetProviderAttestationParameters = { providerRegistry: Address; provider: Address };

export type GetProviderAttestationReturnType = {
  provider: Address;
  /** 0: never recorded. */
  tier: number;
  band: number;
  expiresAt: bigint;
  recordedAt: bigint;
  issuedAt: bigint;
  evidenceHash: `0x${string}`;
  requestId: bigint;
  effectiveTier: number;
  disputeBond: bigint;
  /** The dispute of the recorded statement (0n: none). */
  disputeId: bigint;
};

export async function getProviderAttestation(client: PublicClient, p: GetProviderAttestationParameters): Promise<GetProviderAttestationReturnType> {
  const base = { address: p.providerRegistry, abi: providerRegistryAbi } as const;
  const [a, effectiveTier, disputeBond] = await Promise.all([
    client.readContract({ ...base, functionName: "attestationOf", args: [p.provider] }),
    client.readContract({ ...base, functionName: "effectiveTier", args: [p.provider] }),
    client.readContract({ ...base, functionName: "disputeBond" }),
  ]);
  const disputeId = a.tier === 0 ? 0n : await client.readContract({ ...base, functionName: "disputeOfRequest", args: [a.requestId] });
  return { provider: p.provider, tier: a.tier, band: a.band, expiresAt: a.expiresAt, recordedAt: a.recordedAt, issuedAt: a.issuedAt, evidenceHash: a.evidenceHash, requestId: a.requestId, effectiveTier, disputeBond, disputeId };
}
