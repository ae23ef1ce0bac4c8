/**
 * The viem clients every action takes: a public client, a wallet client bound to one local account, and
 * how many confirmations a write waits for. Built from the parsed config (an RPC URL) or from an EIP-1193
 * provider (the in-process Hardhat network of the demo and tests).
 */
import {
  createPublicClient,
  createWalletClient,
  custom,
  http,
  type Account,
  type Chain,
  type EIP1193Provider,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import { hardhat } from "viem/chains";
import { withRetry } from "./retry.ts";

export type ChainClients = {
  readonly public: PublicClient<Transport, Chain>;
  readonly wallet: WalletClient<Transport, Chain, Account>;
  readonly account: Account;
  /** Blocks a write waits for after inclusion (1 = included). */
  readonly confirmations: number;
  /** Poll interval of receipt waits and event polling (ms). */
  readonly pollingIntervalMs: number;
};

export type ClientOptions = { account: Account; confirmations?: number; pollingIntervalMs?: number };

/** Chain description for a chain id we only know by number. */
function chainFor(id: number, rpcUrl: string): Chain {
  if (id === hardhat.id) return { ...hardhat, rpcUrls: { default: { http: [rpcUrl] } } };
  return { id, name: `chain-${id}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } };
}

/** Reads the chain id over `rpcUrl` (with retries): the config needs it to decide which key sources are allowed. */
export async function fetchChainId(rpcUrl: string): Promise<number> {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) });
  // the first read of every command: its failure is reported as one line ("cannot reach the RPC"), not as retry warnings
  return withRetry(() => client.getChainId(), { what: "eth_chainId", attempts: 5, retryLogLevel: "debug" });
}

export function httpClients(rpcUrl: string, chainId: number, options: ClientOptions): ChainClients {
  // NOTE: viem's own retry is off; withRetry (chain/retry.ts) retries around whole operations, so a
  // signed transaction is rebroadcast byte for byte rather than re-signed.
  const transport = http(rpcUrl, { retryCount: 2, retryDelay: 100, timeout: 15_000 });
  return build(transport, chainFor(chainId, rpcUrl), options);
}

/** A read-only client over `rpcUrl` (no account): what the read-only commands use, so that they need no key. */
export function httpPublicClient(rpcUrl: string, chainId: number, options: { pollingIntervalMs?: number } = {}): PublicClient<Transport, Chain> {
  const transport = http(rpcUrl, { retryCount: 2, retryDelay: 100, timeout: 15_000 });
  return createPublicClient({ transport, chain: chainFor(chainId, rpcUrl), pollingInterval: options.pollingIntervalMs ?? 1_000 }) as PublicClient<Transport, Chain>;
}

export function providerClients(provider: EIP1193Provider | { request: (...args: never[]) => Promise<unknown> }, chainId: number, options: ClientOptions): ChainClients {
  // NOTE: viem's own retry is off here too. An EIP-1193 provider's revert is an error object viem does not map (Hardhat's
  // in-process SolidityError, code 3), so viem wraps it as UnknownRpcError (code -1), which it retries 3 times with
  // 150/300/600 ms backoff: 1.05 s of sleeping before every revert surfaced (a dApp wallet's -32603 reverts likewise).
  // A revert never changes on retry; what can (an unreachable RPC) is retried by withRetry around whole operations.
  return build(custom(provider as EIP1193Provider, { retryCount: 0 }), chainFor(chainId, "in-process"), options);
}

function build(transport: Transport, chain: Chain, options: ClientOptions): ChainClients {
  const pollingIntervalMs = options.pollingIntervalMs ?? 1_000;
  return {
    public: createPublicClient({ transport, chain, pollingInterval: pollingIntervalMs }) as PublicClient<Transport, Chain>,
    wallet: createWalletClient({ transport, chain, account: options.account, pollingInterval: pollingIntervalMs }),
    account: options.account,
    confirmations: Math.max(1, options.confirmations ?? 1),
    pollingIntervalMs,
  };
}
