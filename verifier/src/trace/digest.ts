/**
 * State-digest schemes: how h(t) is computed from a state's tensors. The manifest selects one
 * (`stateDigest`, ml/manifest.ts: absent = "keccak256"); everything after h(t) (leaf, Merkle root,
 * on-chain commitment) is the same for every scheme, so the contracts never see which one ran.
 *
 *   "keccak256" (the original, every manifest without the field):
 *     h(t) = keccak256(abi.encode(uint256 jobId, uint256 t, bytes32 keccak256(weightsBytes),
 *                                 bytes32 keccak256(optimizerStateBytes)))                  (128-byte preimage)
 *   "sha256-v1":
 *     h(t) = keccak256(abi.encode(bytes32 SHA256_V1_TAG, uint256 jobId, uint256 t,
 *                                 bytes32 sha256(weightsBytes), bytes32 sha256(optimizerStateBytes)))  (160 bytes)
 *     SHA256_V1_TAG = keccak256("pouw/state-digest/sha256-v1")
 *   "sha256-v2" (NaN-canonical; what new manifests use):
 *     h(t) = keccak256(abi.encode(bytes32 SHA256_V2_TAG, uint256 jobId, uint256 t,
 *                                 bytes32 sha256(canon(weightsBytes)), bytes32 sha256(canon(optimizerStateBytes))))
 *     SHA256_V2_TAG = keccak256("pouw/state-digest/sha256-v2"); canon writes every NaN as 0x7FC00000 and leaves
 *     every other value's bits (finite, +-Inf, -0, +0) as they are (trace/nan.ts). So machines that differ only
 *     in the NaN bits they generate (x86-64 0xFFC00000, arm64 0x7FC00000) agree on every state of a diverged run,
 *     and a finite state's inner digests equal its sha256-v1 ones (only the tag differs).
 *
 * Why sha256 for the inner digests: they are off-chain only (no contract recomputes an mnist-mlp or
 * char-transformer state hash; DisputeGame recomputes only the circuit class's h with a Poseidon weight
 * commitment, verifier/src/dispute/circuit.ts, which stays on the keccak form), so the hash is free to be
 * the fastest collision-resistant one the hardware runs. node:crypto's sha256 (OpenSSL, SHA-NI on x86-64,
 * the ARMv8 SHA2 instructions on arm64) hashes a 1.2 MB mnist-mlp state at ~1.0-1.5 GB/s here against
 * ~150 MB/s for hash-wasm's keccak (bench/digest.ts; docs/engine.md "State digest"). sha256 is a fixed
 * standard, so every host gives the same bits whatever instructions it uses.
 *
 * IMPORTANT: the tag and the preimage length separate the schemes: a sha256-v1 or sha256-v2 preimage is 160
 * bytes (with different tags) and a keccak256 one 128, so no h value is a valid state hash under two schemes
 * without a keccak collision, and a trace trained under one scheme never verifies under another.
 *
 * Any change here must change test/trace/vectors.json (scripts/trace-vectors.ts) and Trace.t.sol's check
 * of the sha256-v1 vector together (the sha256-v2 vectors are checked off-chain only: test/trace/digest.test.ts).
 */
import { bytesToHex, encodeAbiParameters, hexToBytes, keccak256, toBytes, type Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { keccakChunks } from "./keccak.ts";
import { canonicalNaNChunks } from "./nan.ts";
import { sha256Chunks as sha256Raw } from "./sha256.ts";

/** The schemes, oldest first. "keccak256" is what a manifest without `stateDigest` means. */
export const STATE_DIGESTS = ["keccak256", "sha256-v1", "sha256-v2"] as const;
export type StateDigest = (typeof STATE_DIGESTS)[number];

/** bytes32 domain tag of the sha256-v1 state hash. */
export const SHA256_V1_TAG: Hex = keccak256(toBytes("pouw/state-digest/sha256-v1"));
/** bytes32 domain tag of the sha256-v2 (NaN-canonical) state hash. */
export const SHA256_V2_TAG: Hex = keccak256(toBytes("pouw/state-digest/sha256-v2"));

/** sha256 of the concatenation of `chunks` (trace/sha256.ts: node:crypto in Node, absorbed in place; JavaScript in the dApp). */
export function sha256Chunks(chunks: Iterable<Uint8Array>): Hex {
  return bytesToHex(sha256Raw(chunks));
}

/** The raw 32-byte inner digest of one tensor group under `scheme`. */
function innerDigestBytes(scheme: StateDigest, chunks: Iterable<Uint8Array>): Uint8Array {
  if (scheme === "sha256-v1") return sha256Raw(chunks);
  if (scheme === "sha256-v2") return sha256Raw(canonicalNaNChunks(chunks));
  return hexToBytes(innerDigest(scheme, chunks));
}

/** Writes `x` (0 <= x < 2^256) as a big-endian 32-byte word at `offset` (an abi.encode uint256). */
function putUint256(out: Uint8Array, offset: number, x: bigint): void {
  if (x < 0n || x >= 1n << 256n) throw new InputError(`${x} does not fit in uint256`);
  for (let i = 31; i >= 0; i--) {
    out[offset + i] = Number(x & 0xffn);
    x >>= 8n;
  }
}

const SHA256_V1_TAG_BYTES = hexToBytes(SHA256_V1_TAG);
const SHA256_V2_TAG_BYTES = hexToBytes(SHA256_V2_TAG);

/** The tag word a scheme's preimage starts with (none for the original keccak256 scheme). */
function tagOf(scheme: StateDigest): Hex | undefined {
  return scheme === "sha256-v1" ? SHA256_V1_TAG : scheme === "sha256-v2" ? SHA256_V2_TAG : undefined;
}

/** The inner digest of one tensor group's little-endian bytes (given as chunks) under `scheme`. */
export function innerDigest(scheme: StateDigest, chunks: Iterable<Uint8Array>): Hex {
  switch (scheme) {
    case "keccak256":
      return keccakChunks(chunks);
    case "sha256-v1":
      return sha256Chunks(chunks);
    case "sha256-v2":
      return sha256Chunks(canonicalNaNChunks(chunks));
    default:
      throw new InputError(`unknown state digest ${JSON.stringify(scheme)} (known: ${STATE_DIGESTS.join(", ")})`);
  }
}

/** h(t) from the two inner digests under `scheme` (definitions in the header). */
export function stateHashFromDigests(scheme: StateDigest, jobId: bigint, step: bigint | number, weightsDigest: Hex, optimizerDigest: Hex): Hex {
  const t = BigInt(step);
  switch (scheme) {
    case "keccak256":
      return keccak256(
        encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }, { type: "bytes32" }, { type: "bytes32" }], [jobId, t, weightsDigest, optimizerDigest]),
      );
    case "sha256-v1":
    case "sha256-v2":
      return keccak256(
        encodeAbiParameters(
          [{ type: "bytes32" }, { type: "uint256" }, { type: "uint256" }, { type: "bytes32" }, { type: "bytes32" }],
          [tagOf(scheme)!, jobId, t, weightsDigest, optimizerDigest],
        ),
      );
    default:
      throw new InputError(`unknown state digest ${JSON.stringify(scheme)} (known: ${STATE_DIGESTS.join(", ")})`);
  }
}

/**
 * THE state hash of a state given as its two tensor groups' little-endian byte chunks (weights in model
 * order, optimizer state in optimizer order; ml/tensors.ts float32Chunks). Every caller that hashes a
 * state (the trainer, recompute, the step and update checks, the bot, the panel vote, weights provenance)
 * goes through this one function, via ml/run.ts `stateHashOf` or provenance/weights.ts.
 */
export function tensorStateHash(scheme: StateDigest, jobId: bigint, step: bigint | number, weights: Iterable<Uint8Array>, optimizerState: Iterable<Uint8Array>): Hex {
  // NOTE: the same bytes as stateHashFromDigests (test/trace/digest.test.ts checks both against hand-written
  // encodings), built by hand and hashed with the wasm keccak: viem's encodeAbiParameters + JS keccak256 took
  // ~0.28 ms per state, a quarter of the sha256-v1 state hash of a mnist-mlp step.
  const t = BigInt(step);
  if (!STATE_DIGESTS.includes(scheme)) throw new InputError(`unknown state digest ${JSON.stringify(scheme)} (known: ${STATE_DIGESTS.join(", ")})`);
  const tag = scheme === "sha256-v1" ? SHA256_V1_TAG_BYTES : scheme === "sha256-v2" ? SHA256_V2_TAG_BYTES : undefined;
  const pre = new Uint8Array(32 * (tag ? 5 : 4));
  let at = 0;
  if (tag) {
    pre.set(tag, 0);
    at = 32;
  }
  putUint256(pre, at, jobId);
  putUint256(pre, at + 32, t);
  pre.set(innerDigestBytes(scheme, weights), at + 64);
  pre.set(innerDigestBytes(scheme, optimizerState), at + 96);
  return keccakChunks([pre]);
}
