/**
 * An account's unclaimed credits in each contract that pays by pull: DisputeGame (challenge deposits back, challenger
 * rewards, panel fees; 0 without a DisputeGame), StakeVault (slash shares, released stake), AuditorRegistry (forfeited
 * bonds won) and JobMarket (pay, refunds, data shares, in the payment token).
 *
 * @example
 *   const c = await getCredits(clients.public, { deployment, account });
 *   if (c.disputeGame > 0n) await claimDisputeCredit(clients, { disputeGame: deployment.disputeGame! });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { Deployment } from "./deployment.ts";
import { withRetry } from "./retry.ts";

export type GetCreditsParameters = {
  deployment: Pick<Deployment, "token" | "jobMarket" | "stakeVault" | "auditorRegistry" | "disputeGame">;
  account: Address;
};
export type Credits = { disputeGame: bigint; stakeVault: bigint; auditorRegistry: bigint; jobMarket: bigint };

/** DisputeGame.creditOf alone (the bot checks it before and after a claim intent). */
export async function getDisputeCredit(client: PublicClient<Transport, Chain>, p: { disputeGame: Address; account: Address }): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "creditOf", args: [p.account] }), { what: "DisputeGame.creditOf" });
}

/** AuditorRegistry.creditOf alone. */
export async function getBondCredit(client: PublicClient<Transport, Chain>, p: { auditorRegistry: Address; account: Address }): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "creditOf", args: [p.account] }), { what: "AuditorRegistry.creditOf" });
}

export async function getCredits(client: PublicClient<Transport, Chain>, p: GetCreditsParameters): Promise<Credits> {
  const d = p.deployment;
  const [disputeGame, stakeVault, auditorRegistry, jobMarket] = await Promise.all([
    d.disputeGame ? getDisputeCredit(client, { disputeGame: d.disputeGame, account: p.account }) : Promise.resolve(0n),
    withRetry(() => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [p.account] }), { what: "StakeVault.creditOf" }),
    getBondCredit(client, { auditorRegistry: d.auditorRegistry, account: p.account }),
    withRetry(() => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [p.account, d.token] }), { what: "JobMarket.creditOf" }),
  ]);
  return { disputeGame, stakeVault, auditorRegistry, jobMarket };
}
