/**
 * keccak256 over large byte buffers (weights and optimizer state, ~1.2 MB per mnist-mlp state).
 *
 * The state hash h(t) is computed once per training step by the provider and once per verified step by
 * every auditor, so it is on the hot path of both. viem's keccak256 (@noble/hashes, pure JavaScript)
 * runs at ~9 MB/s here; hash-wasm's WebAssembly keccak at ~200 MB/s (bench/stepwitness.ts reports the
 * per-state cost). Both are keccak256: the digest is the same bits, checked by test/trace/keccak.test.ts
 * against viem and by the fixed vectors against Trace.sol.
 *
 * The hasher is instantiated once at module load (top-level await); after that every call is synchronous.
 * Chunks are absorbed in order without concatenating them, so a state's float32 arrays are hashed in place.
 */
import { createKeccak } from "hash-wasm";
import type { Hex } from "viem";

const hasher = await createKeccak(256);

/** keccak256 of the concatenation of `chunks`, as 0x-prefixed hex. */
export function keccakChunks(chunks: Iterable<Uint8Array>): Hex {
  hasher.init();
  for (const c of chunks) hasher.update(c);
  return `0x${hasher.digest("hex")}`;
}
