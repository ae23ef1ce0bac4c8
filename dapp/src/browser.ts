/**
 * Browser-side pieces the CLI has as disk code: a content store that only computes CIDs (the manifest's URI is
 * `cid:<CID>` of its canonical bytes, exactly what LocalDirStore.put returns) and a read client over the wallet.
 */
import { createPublicClient, custom, type Chain, type EIP1193Provider, type PublicClient, type Transport } from "viem";
import { hardhat } from "viem/chains";
import { CID } from "multiformats/cid";
import * as raw from "multiformats/codecs/raw";
import { sha256 } from "multiformats/hashes/sha2";

/** CIDv1 (raw, sha2-256) of `bytes` with WebCrypto: the same string as the store's cidOf. */
export async function cidOfBytes(bytes: Uint8Array): Promise<string> {
  return CID.createV1(raw.code, await sha256.digest(bytes)).toString();
}

/** A `put`-only store that keeps what it was given in memory (the page offers the bytes for download). */
export function memoryManifestStore(): { put(bytes: Uint8Array): Promise<string>; held: Map<string, Uint8Array> } {
  const held = new Map<string, Uint8Array>();
  return {
    held,
    async put(bytes) {
      const cid = await cidOfBytes(bytes);
      held.set(cid, bytes);
      return cid;
    },
  };
}

/** A read-only client over the wallet before an account is connected (undefined without a wallet). */
export function browserPublicClients(ethereum: EIP1193Provider | undefined, chainId: number): PublicClient<Transport, Chain> | undefined {
  if (!ethereum) return undefined;
  const chain: Chain = chainId === hardhat.id ? hardhat : { id: chainId, name: `chain-${chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [] } } };
  return createPublicClient({ transport: custom(ethereum), chain, pollingInterval: 250 }) as PublicClient<Transport, Chain>;
}
