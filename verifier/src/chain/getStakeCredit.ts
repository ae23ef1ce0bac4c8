/**
 * An account's unclaimed StakeVault credit (a provider's released stake, a timeout reporter's reward:
 * StakeVault.creditOf), what StakeVault.claim would pay out now.
 *
 * @example
 *   const credit = await getStakeCredit(clients.public, { stakeVault, account });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import { withRetry } from "./retry.ts";

export type GetStakeCreditParameters = { stakeVault: Address; account: Address };

export async function getStakeCredit(client: PublicClient<Transport, Chain>, p: GetStakeCreditParameters): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [p.account] }), { what: "StakeVault.creditOf" });
}
