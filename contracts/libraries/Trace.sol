// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title Trace: the training trace commitment, as verifier/src/trace/index.ts computes it
/// @notice Definitions (any change here must change the TypeScript module and test/trace/vectors.json):
///   h(t)      = keccak256(abi.encode(uint256 jobId, uint256 t, bytes32 weightsHash, bytes32 optimizerHash))
///   leaf(t)   = keccak256(abi.encodePacked(uint64 t, bytes32 h(t)))
///   traceRoot = OpenZeppelin Merkle root (sorted-pair keccak) over a segment's leaves in step order.
///   salt(job) = keccak256(abi.encode(uint256 chainId, address jobMarket, uint256 jobId)), the job's salt the
///               off-chain engine derives the data order from (docs/engine.md "Job salt").
/// Segment i of K steps covers states i*K .. (i+1)*K inclusive (K+1 leaves); its end state hash is the
/// last leaf's h. A segment is anchored on chain as commitment(traceRoot, endStateHash).
/// IMPORTANT: leaves are 40-byte preimages and inner nodes 64-byte ones, so a leaf can never pass for an
/// inner node.
library Trace {
    /// @notice h(t), the state hash of step `t` of job `jobId`.
    function stateHash(uint256 jobId, uint256 t, bytes32 weightsHash, bytes32 optimizerHash)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(jobId, t, weightsHash, optimizerHash));
    }

    /// @notice The salt of job `jobId` of market `jobMarket` on chain `chainId`: everything in it is fixed when the job
    /// is created, and the engine's data order derives from it, so no two jobs (of any deployment) share a trajectory.
    /// A contract computes its own jobs' salt as jobSalt(block.chainid, address(this), jobId).
    function jobSalt(uint256 chainId, address jobMarket, uint256 jobId) internal pure returns (bytes32) {
        return keccak256(abi.encode(chainId, jobMarket, jobId));
    }

    /// @notice leaf(t) = keccak256(abi.encodePacked(uint64 t, bytes32 h)).
    function leaf(uint64 t, bytes32 h) internal pure returns (bytes32) {
        return keccak256(abi.encodePacked(t, h));
    }

    /// @notice Whether `proof` shows that state `t` with hash `h` is a leaf of the tree with root `root`.
    function verifyState(bytes32 root, uint64 t, bytes32 h, bytes32[] memory proof) internal pure returns (bool) {
        return MerkleProof.verify(proof, root, leaf(t, h));
    }

    /// @notice Calldata variant of verifyState (cheaper for external callers passing proofs through).
    function verifyStateCalldata(bytes32 root, uint64 t, bytes32 h, bytes32[] calldata proof)
        internal
        pure
        returns (bool)
    {
        return MerkleProof.verifyCalldata(proof, root, leaf(t, h));
    }

    /// @notice First and last state (inclusive) of segment `segment` with `stepsPerSegment` steps.
    function segmentStates(uint256 segment, uint256 stepsPerSegment) internal pure returns (uint256 first, uint256 last) {
        first = segment * stepsPerSegment;
        last = first + stepsPerSegment;
    }

    /// @notice Whether state `t` is one of segment `segment`'s K+1 leaves.
    function inSegment(uint256 segment, uint256 stepsPerSegment, uint256 t) internal pure returns (bool) {
        (uint256 first, uint256 last) = segmentStates(segment, stepsPerSegment);
        return t >= first && t <= last;
    }

    /// @notice Root of the segment whose states first, first+1, ... have hashes `stateHashes`, laid out exactly as
    /// OpenZeppelin's SimpleMerkleTree.of(leaves, { sortLeaves: false }) lays it out (verifier/src/trace): the tree is
    /// an array of 2n-1 nodes, leaf j at index 2n-2-j, node i = commutativeKeccak256(node 2i+1, node 2i+2). So the
    /// proofs the TypeScript side builds verify against this root with MerkleProof.verify.
    /// @dev Gas: one keccak per leaf and per inner node over a memory array of 2n-1 words (~70 gas per state).
    function segmentRoot(uint256 first, bytes32[] memory stateHashes) internal pure returns (bytes32 root) {
        uint256 n = stateHashes.length;
        bytes32[] memory tree = new bytes32[](2 * n - 1);
        uint256 base = 2 * n - 2;
        for (uint256 j; j < n; ++j) {
            // INVARIANT: the leaf binds the step number, so leaves of different steps never collide.
            tree[base - j] = leaf(uint64(first + j), stateHashes[j]);
        }
        for (uint256 i = n - 1; i > 0;) {
            unchecked {
                // bound: i >= 1 here, so i - 1 >= 0; children 2i-1, 2i <= 2n-2
                --i;
            }
            bytes32 a = tree[2 * i + 1];
            bytes32 b = tree[2 * i + 2];
            tree[i] = a < b ? _hashPair(a, b) : _hashPair(b, a);
        }
        root = tree[0];
    }

    /// @notice segmentRoot over calldata leaves, in assembly, and whether any state hash is zero (one pass; the caller
    /// reverts on it). Same tree, same root as segmentRoot (Trace.t.sol checks both against the fixed vectors).
    /// @dev Gas: per state one 40-byte keccak (leaf) and one 64-byte keccak (inner node) hashed in scratch space, the
    /// 2n-1 nodes in memory past the free pointer (never allocated: the tree is dropped on return), no bounds checks.
    /// Requires stateHashes.length >= 1 and first + length <= 2^64 (JobMarket: K + 1 <= 4,097 leaves, and first <
    /// 2^16 segments * 4,096 steps).
    function segmentRootCalldata(uint256 first, bytes32[] calldata stateHashes)
        internal
        pure
        returns (bytes32 root, bool anyZero)
    {
        assembly ("memory-safe") {
            let n := stateHashes.length
            let tree := mload(0x40)
            // leaf j at word 2n-2-j: walk j up from the leaf slot of step `first` down the array
            let slot := add(tree, shl(5, sub(shl(1, n), 2)))
            let src := stateHashes.offset
            let end := add(src, shl(5, n))
            let t := first
            for {} lt(src, end) {} {
                let h := calldataload(src)
                anyZero := or(anyZero, iszero(h))
                // abi.encodePacked(uint64 t, bytes32 h): 8 bytes of t, then h, 40 bytes from 0x00
                mstore(0x00, shl(192, t))
                mstore(0x08, h)
                mstore(slot, keccak256(0x00, 0x28))
                src := add(src, 0x20)
                slot := sub(slot, 0x20)
                t := add(t, 1)
            }
            // inner nodes n-2 .. 0: node i = commutativeKeccak256(node 2i+1, node 2i+2)
            for { let i := sub(n, 1) } gt(i, 0) {} {
                i := sub(i, 1)
                let child := add(tree, shl(6, i))
                let a := mload(add(child, 0x20))
                let b := mload(add(child, 0x40))
                switch lt(a, b)
                case 1 {
                    mstore(0x00, a)
                    mstore(0x20, b)
                }
                default {
                    mstore(0x00, b)
                    mstore(0x20, a)
                }
                mstore(add(tree, shl(5, i)), keccak256(0x00, 0x40))
            }
            root := mload(tree)
        }
    }

    /// @notice The one-slot on-chain commitment of a segment.
    function commitment(bytes32 traceRoot, bytes32 endStateHash) internal pure returns (bytes32 c) {
        // NOTE: same as keccak256(abi.encode(traceRoot, endStateHash)), without the memory expansion.
        assembly ("memory-safe") {
            mstore(0x00, traceRoot)
            mstore(0x20, endStateHash)
            c := keccak256(0x00, 0x40)
        }
    }

    function _hashPair(bytes32 a, bytes32 b) private pure returns (bytes32 h) {
        assembly ("memory-safe") {
            mstore(0x00, a)
            mstore(0x20, b)
            h := keccak256(0x00, 0x40)
        }
    }
}
