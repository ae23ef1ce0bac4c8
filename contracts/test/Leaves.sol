// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Trace} from "../libraries/Trace.sol";

/// @notice Made-up segment leaves for market tests: h(t) depends only on (tag, jobId, t), so consecutive segments
/// always join (segment s's last leaf is segment s+1's first) and a test changes `tag` to make a divergent trace.
library Leaves {
    /// @notice h(t) of the made-up trace `tag` of job `jobId`.
    function h(bytes32 tag, uint256 jobId, uint256 t) internal pure returns (bytes32) {
        return keccak256(abi.encode(tag, jobId, t));
    }

    /// @notice The K+1 state hashes of segment `segment` (states segment*K .. (segment+1)*K).
    function hashes(bytes32 tag, uint256 jobId, uint256 segment, uint256 k) internal pure returns (bytes32[] memory hs) {
        hs = new bytes32[](k + 1);
        for (uint256 j; j <= k; ++j) {
            hs[j] = h(tag, jobId, segment * k + j);
        }
    }

    /// @notice The trace root the market computes for those leaves.
    function root(bytes32 tag, uint256 jobId, uint256 segment, uint256 k) internal pure returns (bytes32) {
        return Trace.segmentRoot(segment * k, hashes(tag, jobId, segment, k));
    }

    /// @notice The segment's end state hash (its last leaf).
    function end(bytes32 tag, uint256 jobId, uint256 segment, uint256 k) internal pure returns (bytes32) {
        return h(tag, jobId, (segment + 1) * k);
    }
}
