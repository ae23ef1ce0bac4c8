/**
 * Everything one account holds in a deployment, in the payment/stake/bond token: its token balance, its JobMarket
 * credit (pay, refunds, data shares), its StakeVault stake (free, locked in jobs, pending withdrawal) and credit (slash
 * shares), its DisputeGame credit (bonds, fees, rewards) and its AuditorRegistry bond and credit (forfeits won).
 * `total` is their sum: a transfer between two of these places (a claim, a deposit, a lock) leaves it unchanged, so
 * the difference of two readings is what the account won or lost in between (gas, paid in ETH, is not included).
 * Deposits held by open disputes belong to nobody's total until the dispute resolves.
 *
 * @example
 *   const before = await getHoldings(clients.public, { deployment, account });
 *   // ... the account plays ...
 *   const after = await getHoldings(clients.public, { deployment, account });
 *   const net = after.total - before.total;
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import { testTokenAbi } from "./abi/TestToken.ts";
import type { Deployment } from "./deployment.ts";
import { withRetry } from "./retry.ts";

export type GetHoldingsParameters = {
  deployment: Pick<Deployment, "token" | "jobMarket" | "stakeVault" | "auditorRegistry" | "disputeGame">;
  account: Address;
  blockNumber?: bigint;
};

export type GetHoldingsReturnType = {
  account: Address;
  tokenBalance: bigint;
  /** JobMarket.creditOf(account, token): pay, refunds, data shares not yet claimed. */
  jobMarketCredit: bigint;
  stakeFree: bigint;
  stakeLocked: bigint;
  stakePendingWithdrawal: bigint;
  /** StakeVault.creditOf: slash shares not yet claimed. */
  stakeCredit: bigint;
  /** DisputeGame.creditOf: bonds, fees and rewards not yet claimed (0 without a DisputeGame). */
  disputeCredit: bigint;
  auditorBond: bigint;
  /** AuditorRegistry.creditOf: forfeits won, not yet claimed. */
  auditorCredit: bigint;
  total: bigint;
};

export async function getHoldings(client: PublicClient<Transport, Chain>, p: GetHoldingsParameters): Promise<GetHoldingsReturnType> {
  const d = p.deployment;
  const at = p.blockNumber === undefined ? {} : { blockNumber: p.blockNumber };
  const read = <T>(what: string, f: () => Promise<T>) => withRetry(f, { what });
  const [tokenBalance, jobMarketCredit, stake, stakeCredit, disputeCredit, auditor, auditorCredit] = await Promise.all([
    read("balanceOf", () => client.readContract({ address: d.token, abi: testTokenAbi, functionName: "balanceOf", args: [p.account], ...at })),
    read("JobMarket.creditOf", () => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [p.account, d.token], ...at })),
    read("StakeVault.accountOf", () => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "accountOf", args: [p.account], ...at })),
    read("StakeVault.creditOf", () => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [p.account], ...at })),
    d.disputeGame
      ? read("DisputeGame.creditOf", () => client.readContract({ address: d.disputeGame!, abi: disputeGameAbi, functionName: "creditOf", args: [p.account], ...at }))
      : Promise.resolve(0n),
    read("AuditorRegistry.auditorOf", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "auditorOf", args: [p.account], ...at })),
    read("AuditorRegistry.creditOf", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "creditOf", args: [p.account], ...at })),
  ]);
  const h = {
    account: p.account,
    tokenBalance,
    jobMarketCredit,
    stakeFree: BigInt(stake.free),
    stakeLocked: BigInt(stake.locked),
    stakePendingWithdrawal: BigInt(stake.pendingWithdrawal),
    stakeCredit,
    disputeCredit,
    auditorBond: BigInt(auditor.bond),
    auditorCredit,
  };
  const total = h.tokenBalance + h.jobMarketCredit + h.stakeFree + h.stakeLocked + h.stakePendingWithdrawal + h.stakeCredit + h.disputeCredit + h.auditorBond + h.auditorCredit;
  return { ...h, total };
}
