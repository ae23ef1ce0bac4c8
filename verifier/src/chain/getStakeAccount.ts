/**
 * A provider's StakeVault account (StakeVault.accountOf): free stake, stake locked in jobs, pending withdrawal and
 * when it unlocks.
 *
 * @example
 *   const { free } = await getStakeAccount(clients.public, { stakeVault, provider });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import { withRetry } from "./retry.ts";

export type StakeAccount = Awaited<ReturnType<typeof readAccount>>;

function readAccount(client: PublicClient<Transport, Chain>, p: { stakeVault: Address; provider: Address }) {
  return client.readContract({ address: p.stakeVault, abi: stakeVaultAbi, functionName: "accountOf", args: [p.provider] });
}

export async function getStakeAccount(client: PublicClient<Transport, Chain>, p: { stakeVault: Address; provider: Address }): Promise<StakeAccount> {
  return withRetry(() => readAccount(client, p), { what: "StakeVault.accountOf" });
}
