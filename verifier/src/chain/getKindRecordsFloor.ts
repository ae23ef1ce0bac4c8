/**
 * KindRecords' floor on a kind job's stake: its `minStake`, and JobMarket's tier-1 lock share (`stakeMultiplierBps(1)`),
 * which KindRecords applies to a job's requiredStake to get the least lock a record needs (KindRecordsStakeTooLow).
 *
 * @example
 *   const { minStakeWei, leastLockBps } = await getKindRecordsFloor(clients.public, { kindRecords, jobMarket });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { kindRecordsAbi } from "./abi/KindRecords.ts";
import { withRetry } from "./retry.ts";

export type KindRecordsFloor = { minStakeWei: bigint; leastLockBps: number };

export async function getKindRecordsFloor(client: PublicClient<Transport, Chain>, p: { kindRecords: Address; jobMarket: Address }): Promise<KindRecordsFloor> {
  const [minStakeWei, bps] = await Promise.all([
    withRetry(() => client.readContract({ address: p.kindRecords, abi: kindRecordsAbi, functionName: "minStake" }), { what: "KindRecords.minStake" }),
    withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "stakeMultiplierBps", args: [1] }), { what: "JobMarket.stakeMultiplierBps" }),
  ]);
  return { minStakeWei, leastLockBps: Number(bps) };
}

/** JobMarket.kindOf: the kind code fixed at a job's creation (0: a training job, 1 evaluate, 2 generate). */
export async function getJobKind(client: PublicClient<Transport, Chain>, p: { jobMarket: Address; jobId: bigint }): Promise<number> {
  const [kind] = await withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "kindOf", args: [p.jobId] }), { what: "JobMarket.kindOf" });
  return kind;
}
