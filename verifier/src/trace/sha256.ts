/**
 * THE sha256 of the project: the sha256-v1 state digest (digest.ts) and every content id (store/ cidOf) hash
 * through `sha256Chunks`. Two back ends, one function, the same bits (sha256 is a fixed standard, FIPS 180-4):
 *
 *   node:crypto (OpenSSL; SHA-NI / ARMv8 SHA2): in Node, the hot path of training and audits (~1 GB/s here).
 *   @noble/hashes via viem's `sha256` (pure JavaScript, synchronous): where node:crypto is absent, i.e. the
 *   dApp bundle (dapp/build.ts maps `node:*` to stand-ins that throw), so the page computes h(t) and CIDs
 *   without tfjs, node built-ins or an async WebCrypto call.
 *
 * The back end is picked once at load by trying node:crypto; test/dapp/browser-hash.test.ts checks both
 * against each other on a trained checkpoint, and runs the browser bundle's path against the CLI's hash.
 */
import * as nodeCrypto from "node:crypto";
import { sha256 as nobleSha256 } from "viem";

export type Sha256Backend = "node:crypto" | "javascript";

function nodeBackend(): ((chunks: Iterable<Uint8Array>) => Uint8Array) | undefined {
  try {
    // NOTE: the dApp's stand-in createHash throws, so the bundle falls through to the JavaScript back end
    nodeCrypto.createHash("sha256");
  } catch {
    return undefined;
  }
  return (chunks) => {
    const h = nodeCrypto.createHash("sha256");
    for (const c of chunks) h.update(c);
    return new Uint8Array(h.digest());
  };
}

/** sha256 of the concatenation of `chunks` in plain JavaScript (what the browser runs). */
export function sha256ChunksPortable(chunks: Iterable<Uint8Array>): Uint8Array {
  const list = [...chunks];
  if (list.length === 1) return nobleSha256(list[0]!, "bytes");
  const all = new Uint8Array(list.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of list) {
    all.set(c, at);
    at += c.byteLength;
  }
  return nobleSha256(all, "bytes");
}

const native = nodeBackend();

/** Which back end `sha256Chunks` runs here. */
export const SHA256_BACKEND: Sha256Backend = native ? "node:crypto" : "javascript";

/** The raw 32-byte sha256 of the concatenation of `chunks` (absorbed in place under node:crypto). */
export function sha256Chunks(chunks: Iterable<Uint8Array>): Uint8Array {
  return native ? native(chunks) : sha256ChunksPortable(chunks);
}
