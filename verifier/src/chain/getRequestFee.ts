/**
 * The fee ProviderRegistry burns per attestation request (ProviderRegistry.requestFee; docs/panels.md sizes it).
 *
 * @example
 *   const fee = await getRequestFee(clients.public, { providerRegistry });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import { withRetry } from "./retry.ts";

export async function getRequestFee(client: PublicClient<Transport, Chain>, p: { providerRegistry: Address }): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "requestFee" }), { what: "ProviderRegistry.requestFee" });
}
