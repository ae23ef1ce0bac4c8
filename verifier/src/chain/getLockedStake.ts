/**
 * The stake `provider` has locked for job `jobId` in the StakeVault (StakeVault.lockedFor): what a fault on the job
 * slashes now (0 once the lock was slashed or released).
 *
 * @example
 *   const lock = await getLockedStake(clients.public, { stakeVault, provider, jobId: 1n });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import { withRetry } from "./retry.ts";

export type GetLockedStakeParameters = { stakeVault: Address; provider: Address; jobId: bigint };

export async function getLockedStake(client: PublicClient<Transport, Chain>, p: GetLockedStakeParameters): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [p.provider, p.jobId] }), { what: "StakeVault.lockedFor" });
}
