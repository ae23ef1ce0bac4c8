/**
 * ProviderRegistry's device ledger: the devices a request declared (devicesOf) and, for each device id hash, the
 * provider it is bound to and until when (deviceBindingOf; a past expiry or the zero address: free).
 *
 * @example
 *   const { declared, bindings } = await getDeviceBindings(clients.public, { providerRegistry, requestId });
 */
import type { Address, Hex, PublicClient } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";

export type GetDeviceBindingsParameters = { providerRegistry: Address; requestId: bigint };

export type GetDeviceBindingsReturnType = {
  /** keccak256 of each declared device id, ascending. */
  declared: readonly Hex[];
  bindings: readonly { deviceId: Hex; provider: Address; expiresAt: bigint }[];
};

export async function getDeviceBindings(client: PublicClient, p: GetDeviceBindingsParameters): Promise<GetDeviceBindingsReturnType> {
  const base = { address: p.providerRegistry, abi: providerRegistryAbi } as const;
  const declared = await client.readContract({ ...base, functionName: "devicesOf", args: [p.requestId] });
  const bindings = await Promise.all(
    declared.map(async (deviceId) => {
      const [provider, expiresAt] = await client.readContract({ ...base, functionName: "deviceBindingOf", args: [deviceId] });
      return { deviceId, provider, expiresAt: BigInt(expiresAt) };
    }),
  );
  return { declared, bindings };
}
