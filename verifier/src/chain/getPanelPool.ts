/**
 * Who a dispute opened now could draw its panel from: the AuditorRegistry's auditors eligible one second ago (bonded
 * and past the activation delay: AuditorRegistry.eligibleAuditors; a snapshot must be in the past), with DisputeGame's
 * panel size and the registry's activation delay and minimum bond.
 *
 * @example
 *   const pool = await getPanelPool(client, { deployment });
 *   if (pool.eligible.length - 1 < pool.panelSize) console.warn("a challenge would end NoDecision");
 */
import type { Address, PublicClient } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { Deployment } from "./deployment.ts";
import { withRetry } from "./retry.ts";

export type GetPanelPoolParameters = { deployment: Pick<Deployment, "auditorRegistry"> & { disputeGame: Address } };
export type GetPanelPoolReturnType = { panelSize: number; activationDelaySeconds: bigint; minBond: bigint; asOf: bigint; eligible: readonly Address[] };

export async function getPanelPool(client: PublicClient, p: GetPanelPoolParameters): Promise<GetPanelPoolReturnType> {
  const { auditorRegistry, disputeGame } = p.deployment;
  const [params, block, activationDelaySeconds, minBond] = await Promise.all([
    withRetry(() => client.readContract({ address: disputeGame, abi: disputeGameAbi, functionName: "params" }), { what: "params" }),
    withRetry(() => client.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    withRetry(() => client.readContract({ address: auditorRegistry, abi: auditorRegistryAbi, functionName: "activationDelaySeconds" }), { what: "activationDelaySeconds" }),
    withRetry(() => client.readContract({ address: auditorRegistry, abi: auditorRegistryAbi, functionName: "minBond" }), { what: "minBond" }),
  ]);
  const asOf = block.timestamp - 1n;
  const eligible = await withRetry(() => client.readContract({ address: auditorRegistry, abi: auditorRegistryAbi, functionName: "eligibleAuditors", args: [asOf] }), { what: "eligibleAuditors" });
  return { panelSize: Number(params.panelSize), activationDelaySeconds, minBond, asOf, eligible };
}
