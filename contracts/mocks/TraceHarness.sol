// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Trace} from "../libraries/Trace.sol";

/// @notice Test-only: exposes the Trace library so TypeScript tests can compare it with verifier/src/trace.
contract TraceHarness {
    function stateHash(uint256 jobId, uint256 t, bytes32 weightsHash, bytes32 optimizerHash)
        external
        pure
        returns (bytes32)
    {
        return Trace.stateHash(jobId, t, weightsHash, optimizerHash);
    }

    function leaf(uint64 t, bytes32 h) external pure returns (bytes32) {
        return Trace.leaf(t, h);
    }

    function verifyState(bytes32 root, uint64 t, bytes32 h, bytes32[] calldata proof) external pure returns (bool) {
        return Trace.verifyState(root, t, h, proof);
    }

    function verifyStateCalldata(bytes32 root, uint64 t, bytes32 h, bytes32[] calldata proof)
        external
        pure
        returns (bool)
    {
        return Trace.verifyStateCalldata(root, t, h, proof);
    }

    function segmentStates(uint256 segment, uint256 stepsPerSegment) external pure returns (uint256, uint256) {
        return Trace.segmentStates(segment, stepsPerSegment);
    }

    function commitment(bytes32 traceRoot, bytes32 endStateHash) external pure returns (bytes32) {
        return Trace.commitment(traceRoot, endStateHash);
    }
}
