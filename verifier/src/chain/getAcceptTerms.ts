/**
 * What `acceptJob` would lock for `provider` on job `jobId` now, and the floor it checks the lock against:
 * JobMarket.requiredStakeFor (effective tier and tier-scaled stake) and JobMarket.panelFees() (the DisputeGame's
 * panelSize * panelFee, read by JobMarket at wiring). acceptJob reverts JobMarketLockCannotPayPanel unless
 * stake * challengerBps / 10,000 >= panelFees (policy/challenge.ts lockPaysPanel). `dataShareBps` is the job's data
 * terms' share of the payment (JobMarket.termsOf), credited to its corpora at finalize and so not paid to the provider.
 *
 * @example
 *   const { tier, stakeWei, panelFeesWei, dataShareBps } = await getAcceptTerms(clients.public, { jobMarket, jobId: 1n, provider });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetAcceptTermsParameters = { jobMarket: Address; jobId: bigint; provider: Address };

export type GetAcceptTermsReturnType = { tier: number; stakeWei: bigint; panelFeesWei: bigint; dataShareBps: number };

export async function getAcceptTerms(client: PublicClient<Transport, Chain>, p: GetAcceptTermsParameters): Promise<GetAcceptTermsReturnType> {
  const [[tier, stakeWei], panelFeesWei, [, dataShareBps]] = await Promise.all([
    withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "requiredStakeFor", args: [p.jobId, p.provider] }), { what: "JobMarket.requiredStakeFor" }),
    withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "panelFees" }), { what: "JobMarket.panelFees" }),
    withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "termsOf", args: [p.jobId] }), { what: "JobMarket.termsOf" }),
  ]);
  return { tier: Number(tier), stakeWei, panelFeesWei, dataShareBps: Number(dataShareBps) };
}
