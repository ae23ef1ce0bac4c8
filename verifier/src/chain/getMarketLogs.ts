/**
 * Every JobMarket event in a block range, decoded (strict), in log order: what the challenger bot scans from its
 * persisted cursor (JobCreated, JobAccepted, SegmentCommitted, ... ; IJobMarket).
 *
 * @example
 *   const logs = await getMarketLogs(clients.public, { jobMarket, fromBlock: cursor + 1n, toBlock: safeHead });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

function readLogs(client: PublicClient<Transport, Chain>, p: { jobMarket: Address; fromBlock: bigint; toBlock: bigint }) {
  return client.getContractEvents({ address: p.jobMarket, abi: jobMarketAbi, fromBlock: p.fromBlock, toBlock: p.toBlock, strict: true });
}

export type MarketLog = Awaited<ReturnType<typeof readLogs>>[number];

export async function getMarketLogs(client: PublicClient<Transport, Chain>, p: { jobMarket: Address; fromBlock: bigint; toBlock: bigint }): Promise<MarketLog[]> {
  return withRetry(() => readLogs(client, p), { what: "JobMarket logs" });
}
