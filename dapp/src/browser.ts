/**
 * Browser-side pieces the CLI has as disk code: a content store held in memory (CIDs from the store's own cidOf,
 * the same function the CLI runs, on trace/sha256.ts's JavaScript back end here), the result sources (a content
 * server's `/ipfs/<cid>` and `/board/...` over HTTP, layered over that memory store exactly as the CLI layers its
 * store directory over remote sources), and a read client over the wallet.
 */
import { createPublicClient, custom, type Chain, type EIP1193Provider, type PublicClient, type Transport } from "viem";
import { hardhat } from "viem/chains";
import { HttpBoard } from "../../verifier/src/board/http.ts";
import { LayeredBoard, type BoardKey, type LocalDirBoard } from "../../verifier/src/board/index.ts";
import type { ProvenanceBoard } from "../../verifier/src/market/provenance-board.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { cidOf, ContentNotFoundError, parseCid, type ContentStore } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";

/** A content store in the page's memory (put keeps the bytes; get returns them; nothing persists). */
export function memoryStore(): ContentStore & { held: Map<string, Uint8Array> } {
  const held = new Map<string, Uint8Array>();
  return {
    held,
    async put(bytes) {
      const cid = cidOf(bytes);
      held.set(cid, bytes);
      return cid;
    },
    async get(cid) {
      const bytes = held.get(parseCid(cid).toString());
      if (!bytes) throw new ContentNotFoundError(`no content for ${cid} in the page's memory`);
      return bytes;
    },
    async has(cid) {
      return held.has(parseCid(cid).toString());
    },
  };
}

/**
 * The page keeps no board directory: the local layer LayeredBoard reads first holds nothing (and refuses writes,
 * which only a provider publishing a record makes).
 */
const noLocalBoard: LocalDirBoard = {
  dir: "",
  pathOf: (key: BoardKey) => `(page memory)/${key.entry}`,
  write: async () => {
    throw new Error("the page keeps no board: publishing is the provider's (pouw provider claim)");
  },
  read: async () => undefined,
  toString: () => "(no local board)",
};

/** The content store and board the page fetches a result from: `source` over HTTP (a `pouw serve` URL). */
export function resultSources(source: string): { store: ContentStore; board: ProvenanceBoard } {
  const store = new LayeredStore(memoryStore(), [new HttpContentStore(source, { retries: 1 })]);
  return { store, board: { pointers: new LayeredBoard(noLocalBoard, [new HttpBoard(source, { retries: 1 })]), store } };
}

/** A read-only client over the wallet before an account is connected (undefined without a wallet). */
export function browserPublicClients(ethereum: EIP1193Provider | undefined, chainId: number): PublicClient<Transport, Chain> | undefined {
  if (!ethereum) return undefined;
  const chain: Chain = chainId === hardhat.id ? hardhat : { id: chainId, name: `chain-${chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [] } } };
  return createPublicClient({ transport: custom(ethereum), chain, pollingInterval: 250 }) as PublicClient<Transport, Chain>;
}
