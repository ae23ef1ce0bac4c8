/**
 * The session key an attestation request declared (ProviderRegistry.sessionKeyOf): the key its evidence must bind,
 * and, once recorded, the key of the provider's statement. Undefined when the request declared none.
 *
 * @example
 *   const key = await getRequestSessionKey(clients.public, { providerRegistry, requestId });
 */
import { zeroAddress, type Address, type PublicClient } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";

export type GetRequestSessionKeyParameters = { providerRegistry: Address; requestId: bigint };
export type GetRequestSessionKeyReturnType = Address | undefined;

export async function getRequestSessionKey(client: PublicClient, p: GetRequestSessionKeyParameters): Promise<GetRequestSessionKeyReturnType> {
  const key = await client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "sessionKeyOf", args: [p.requestId] });
  return key === zeroAddress ? undefined : key;
}
