/**
 * The fixed terms of a ProviderRegistry (all immutable at deployment): committee size and quorum, the longest validity a
 * statement may carry, and the request fee in the fee token. What an attesting auditor needs to build a statement the
 * registry accepts and to know when enough signatures are in.
 *
 * @example
 *   const t = await getAttestationTerms(clients.public, { providerRegistry });
 *   if (signatures.length >= t.quorum) await recordAttestation(clients, { providerRegistry, attestation, signatures });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import { withRetry } from "./retry.ts";

export type GetAttestationTermsParameters = { providerRegistry: Address };

export type GetAttestationTermsReturnType = { committeeSize: number; quorum: number; maxValiditySeconds: bigint; requestFee: bigint; feeToken: Address };

export async function getAttestationTerms(client: PublicClient<Transport, Chain>, p: GetAttestationTermsParameters): Promise<GetAttestationTermsReturnType> {
  const read = <F extends "committeeSize" | "quorum" | "maxValiditySeconds" | "requestFee" | "feeToken">(functionName: F) =>
    withRetry(() => client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName }), { what: `ProviderRegistry.${functionName}` });
  const [committeeSize, quorum, maxValiditySeconds, requestFee, feeToken] = await Promise.all([read("committeeSize"), read("quorum"), read("maxValiditySeconds"), read("requestFee"), read("feeToken")]);
  return { committeeSize: Number(committeeSize), quorum: Number(quorum), maxValiditySeconds: BigInt(maxValiditySeconds), requestFee: BigInt(requestFee), feeToken: feeToken as Address };
}
