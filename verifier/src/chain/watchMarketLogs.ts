/**
 * Calls `onLogs` whenever JobMarket emits events (a polling subscription: eth_getFilterChanges, or eth_getLogs where
 * the node has no filters); returns the unsubscribe function. The challenger bot uses it only to wake early: it reads
 * the events themselves with getMarketLogs from its persisted cursor, so a missed notification loses nothing.
 *
 * @example
 *   const unwatch = watchMarketLogs(clients.public, { jobMarket, pollingIntervalMs: 1000, onLogs: wake, onError: log });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";

export type WatchMarketLogsParameters = { jobMarket: Address; pollingIntervalMs: number; onLogs: () => void; onError: (err: Error) => void };

export function watchMarketLogs(client: PublicClient<Transport, Chain>, p: WatchMarketLogsParameters): () => void {
  return client.watchContractEvent({ address: p.jobMarket, abi: jobMarketAbi, poll: true, pollingInterval: p.pollingIntervalMs, onLogs: () => p.onLogs(), onError: p.onError });
}
