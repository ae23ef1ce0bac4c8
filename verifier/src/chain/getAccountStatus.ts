/**
 * One account's standing as a provider and as an auditor: its StakeVault account (free, locked, unbonding and when it
 * is withdrawable), its AuditorRegistry record (bond, status by name, when it counts for panels, when it may exit),
 * and what it holds everywhere (getHoldings: token balance and every credit).
 *
 * @example
 *   const s = await getAccountStatus(client, { deployment, account });
 *   if (s.auditor.status !== "Active") ...
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { Deployment } from "./deployment.ts";
import { AUDITOR_STATUS, enumName } from "./enums.ts";
import { getHoldings, type GetHoldingsReturnType } from "./getHoldings.ts";
import { withRetry } from "./retry.ts";

export type GetAccountStatusParameters = {
  deployment: Pick<Deployment, "token" | "jobMarket" | "stakeVault" | "auditorRegistry" | "disputeGame">;
  account: Address;
};

export type GetAccountStatusReturnType = {
  holdings: GetHoldingsReturnType;
  stake: { free: bigint; locked: bigint; pendingWithdrawal: bigint; withdrawableAt: bigint };
  auditor: { bond: bigint; status: string; eligibleFrom: bigint; eligibleUntil: bigint; exitableAt: bigint };
};

export async function getAccountStatus(client: PublicClient<Transport, Chain>, p: GetAccountStatusParameters): Promise<GetAccountStatusReturnType> {
  const d = p.deployment;
  const [holdings, stake, auditor] = await Promise.all([
    getHoldings(client, { deployment: d, account: p.account }),
    withRetry(() => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "accountOf", args: [p.account] }), { what: "StakeVault.accountOf" }),
    withRetry(() => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "auditorOf", args: [p.account] }), { what: "AuditorRegistry.auditorOf" }),
  ]);
  return {
    holdings,
    stake: { free: BigInt(stake.free), locked: BigInt(stake.locked), pendingWithdrawal: BigInt(stake.pendingWithdrawal), withdrawableAt: BigInt(stake.withdrawableAt) },
    auditor: {
      bond: BigInt(auditor.bond),
      status: enumName(AUDITOR_STATUS, auditor.status),
      eligibleFrom: BigInt(auditor.eligibleFrom),
      eligibleUntil: BigInt(auditor.eligibleUntil),
      exitableAt: BigInt(auditor.exitableAt),
    },
  };
}
