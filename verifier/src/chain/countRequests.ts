/**
 * The same clients with every JSON-RPC request counted by method (eth_call, eth_getLogs, eth_blockNumber...): what the
 * challenger bot's /metrics reports as `pouw_auditor_rpc_requests_total{method}`. The counting transport forwards each
 * request to the original transport's own request function, with its retry settings (timeouts live in that function).
 *
 * @example
 *   const { clients, counts } = countRequests(httpClients(rpc, chainId, { account }));
 *   await getJob(clients.public, { jobMarket, jobId }); // counts.get("eth_call") === 1
 */
import { createPublicClient, createWalletClient, custom, type Chain, type PublicClient, type Transport } from "viem";
import type { ChainClients } from "./clients.ts";

export type CountedClients = { clients: ChainClients; counts: ReadonlyMap<string, number> };

export function countRequests(c: ChainClients): CountedClients {
  const counts = new Map<string, number>();
  // the transport's own request (below viem's retry and error mapping), wrapped with the same retry settings
  const t = c.public.transport as unknown as { request: (args: { method: string; params?: unknown }) => Promise<unknown>; retryCount?: number; retryDelay?: number };
  const transport = custom(
    {
      request: ({ method, params }: { method: string; params?: unknown }) => {
        counts.set(method, (counts.get(method) ?? 0) + 1);
        return t.request({ method, params });
      },
    },
    { retryCount: t.retryCount ?? 0, ...(t.retryDelay === undefined ? {} : { retryDelay: t.retryDelay }) },
  );
  const chain = c.public.chain as Chain;
  return {
    clients: {
      public: createPublicClient({ transport, chain, pollingInterval: c.pollingIntervalMs }) as PublicClient<Transport, Chain>,
      wallet: createWalletClient({ transport, chain, account: c.account, pollingInterval: c.pollingIntervalMs }),
      account: c.account,
      confirmations: c.confirmations,
      pollingIntervalMs: c.pollingIntervalMs,
    },
    counts,
  };
}
