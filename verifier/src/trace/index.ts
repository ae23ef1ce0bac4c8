/**
 * The trace commitment shared by the trainer, the auditor and the contracts (contracts/libraries/Trace.sol).
 *
 * Definitions (docs/contracts.md "Trace"; h(t) under each state digest: docs/engine.md "State digest"):
 *   h(t)      = keccak256(abi.encode(uint256 jobId, uint256 t, bytes32 keccak256(weightsBytes),
 *                                    bytes32 keccak256(optimizerStateBytes)))   (digest "keccak256"; see digest.ts)
 *   leaf(t)   = keccak256(abi.encodePacked(uint64 t, bytes32 h(t)))
 *   traceRoot = OpenZeppelin Merkle root (sorted-pair keccak, as MerkleProof.verify) over the
 *               segment's leaves in step order.
 *   salt(job) = keccak256(abi.encode(uint256 chainId, address jobMarket, uint256 jobId)): the job's salt,
 *               which the engine's data order derives from (ml/salt.ts), so no two jobs share a trajectory.
 *
 * Step numbering: h(0) is the initial state (before any update); step t turns h(t-1) into h(t).
 * Segment i (0-based) of K steps covers states t = i*K .. (i+1)*K inclusive, so it has K+1 leaves:
 * its first leaf repeats the previous segment's end state and both states of every step of the
 * segment are provable against one root. The segment's end state hash is its last leaf's h.
 *
 * IMPORTANT: leaves are 40-byte preimages and inner nodes 64-byte ones, so a leaf can never be
 * passed off as an inner node (second-preimage safety without double hashing).
 *
 * The state-digest scheme (how h(t) is computed from a state's tensors) is chosen by the manifest: digest.ts.
 * `stateHash` below is the original "keccak256" scheme's h(t) from its two inner digests, also the form the
 * circuit class uses (dispute/circuit.ts).
 *
 * Any change here must change Trace.sol and the fixed vectors in test/trace/vectors.json together.
 */
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { encodeAbiParameters, encodePacked, keccak256, type Address, type Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { keccakChunks } from "./keccak.ts";

export { innerDigest, SHA256_V1_TAG, SHA256_V2_TAG, sha256Chunks, STATE_DIGESTS, stateHashFromDigests, tensorStateHash, type StateDigest } from "./digest.ts";

export { CANONICAL_NAN_BITS, canonicalNaNArrays, canonicalNaNChunks } from "./nan.ts";

export type Bytes32 = Hex;

/**
 * keccak256 of raw bytes (weights or optimizer state serialised as little-endian float32). Several
 * chunks hash as their concatenation, so a state's tensors need not be copied into one buffer.
 */
export function hashBytes(...chunks: Uint8Array[]): Bytes32 {
  return keccakChunks(chunks);
}

/** h(t): the state hash of step t of job `jobId`. */
export function stateHash(jobId: bigint, step: bigint | number, weightsHash: Bytes32, optimizerHash: Bytes32): Bytes32 {
  return keccak256(
    encodeAbiParameters(
      [{ type: "uint256" }, { type: "uint256" }, { type: "bytes32" }, { type: "bytes32" }],
      [jobId, BigInt(step), weightsHash, optimizerHash],
    ),
  );
}

/**
 * The job's salt: keccak256(abi.encode(uint256 chainId, address jobMarket, uint256 jobId)) (Trace.sol jobSalt).
 * Everything in it is fixed by the chain when the job is created: job ids are a counter per market, so the
 * chain id and the market address make the salt unique across deployments too (job 7 of a testnet market and
 * job 7 of a mainnet one must not share a data order). See docs/engine.md "Job salt".
 */
export function jobSalt(p: { chainId: bigint | number; jobMarket: Address; jobId: bigint }): Bytes32 {
  return keccak256(encodeAbiParameters([{ type: "uint256" }, { type: "address" }, { type: "uint256" }], [BigInt(p.chainId), p.jobMarket, p.jobId]));
}

/** leaf(t) = keccak256(abi.encodePacked(uint64 t, bytes32 h)). */
export function traceLeaf(step: bigint | number, h: Bytes32): Bytes32 {
  const t = BigInt(step);
  if (t < 0n || t >= 1n << 64n) throw new InputError(`step ${t} does not fit in uint64`);
  return keccak256(encodePacked(["uint64", "bytes32"], [t, h]));
}

/** First and last state index (inclusive) of segment `segment` with K steps per segment. */
export function segmentStateRange(segment: number, stepsPerSegment: number): { first: number; last: number } {
  if (!Number.isInteger(segment) || segment < 0) throw new InputError(`segment must be a non-negative integer, got ${segment}`);
  if (!Number.isInteger(stepsPerSegment) || stepsPerSegment < 1) {
    throw new InputError(`stepsPerSegment must be a positive integer, got ${stepsPerSegment}`);
  }
  return { first: segment * stepsPerSegment, last: (segment + 1) * stepsPerSegment };
}

/**
 * The Merkle tree of one segment. `stateHashes[j]` is h(firstStep + j).
 * Leaves keep step order (no sorting) so that proof index j is state firstStep + j.
 */
export class SegmentTree {
  readonly firstStep: number;
  readonly stateHashes: readonly Bytes32[];
  readonly leaves: readonly Bytes32[];
  private readonly tree: SimpleMerkleTree;

  constructor(firstStep: number, stateHashes: readonly Bytes32[]) {
    if (stateHashes.length < 2) throw new InputError(`a segment needs at least 2 states, got ${stateHashes.length}`);
    this.firstStep = firstStep;
    this.stateHashes = [...stateHashes];
    this.leaves = stateHashes.map((h, j) => traceLeaf(firstStep + j, h));
    this.tree = SimpleMerkleTree.of([...this.leaves], { sortLeaves: false });
  }

  get root(): Bytes32 {
    return this.tree.root as Bytes32;
  }

  get endStateHash(): Bytes32 {
    return this.stateHashes[this.stateHashes.length - 1]!;
  }

  /** Merkle proof for state `step` (absolute step number). */
  proof(step: number): Bytes32[] {
    const j = step - this.firstStep;
    if (!Number.isInteger(j) || j < 0 || j >= this.leaves.length) {
      throw new InputError(`step ${step} is outside this segment (states ${this.firstStep}..${this.firstStep + this.leaves.length - 1})`);
    }
    // SimpleMerkleTree looks leaves up by value; two equal leaves are impossible (step is in the preimage).
    return this.tree.getProof(j) as Bytes32[];
  }
}

/** Verifies a leaf proof the way OpenZeppelin MerkleProof.verify does on chain. */
export function verifyTraceProof(root: Bytes32, step: number | bigint, h: Bytes32, proof: readonly Bytes32[]): boolean {
  return SimpleMerkleTree.verify(root, traceLeaf(step, h), [...proof]);
}

/** Root of a segment from its state hashes (convenience over SegmentTree). */
export function traceRoot(firstStep: number, stateHashes: readonly Bytes32[]): Bytes32 {
  return new SegmentTree(firstStep, stateHashes).root;
}
