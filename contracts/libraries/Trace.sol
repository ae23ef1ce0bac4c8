// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title Trace: the training trace commitment, as verifier/src/trace/index.ts computes it
/// @notice Definitions (any change here must change the TypeScript module and test/trace/vectors.json):
///   h(t)      = keccak256(abi.encode(uint256 jobId, uint256 t, bytes32 weightsHash, bytes32 optimizerHash))
///   leaf(t)   = keccak256(abi.encodePacked(uint64 t, bytes32 h(t)))
///   traceRoot = OpenZeppelin Merkle root (sorted-pair keccak) over a segment's leaves in step order.
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

    /// @notice The one-slot on-chain commitment of a segment.
    function commitment(bytes32 traceRoot, bytes32 endStateHash) internal pure returns (bytes32 c) {
        // NOTE: same as keccak256(abi.encode(traceRoot, endStateHash)), without the memory expansion.
        assembly ("memory-safe") {
            mstore(0x00, traceRoot)
            mstore(0x20, endStateHash)
            c := keccak256(0x00, 0x40)
        }
    }
}
