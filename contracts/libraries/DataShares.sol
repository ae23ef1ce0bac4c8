// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @title DataShares: how JobMarket.finalize splits a job's escrowed payment
/// @notice Rule (docs/contracts.md, "Data shares"):
///   pool         = payment * dataShareBps / 10,000          (0 when the job references no corpora)
///   credit_i     = floor(pool * w_i / sum(w))               w_i = tokens_i * weightE6_i
///   providerBase = (payment - pool) * (segments - startSegment) / segments
///   refund       = payment - pool - providerBase             (the buyer; > 0 only after a re-open)
///   providerPay  = providerBase + (pool - sum(credit_i))     (rounding dust goes to the provider)
/// where weightE6_i is the improvement weight recorded for corpus i, or WEIGHT_ONE (1.0) when none was
/// recorded. If every w_i is 0 (all recorded weights 0), the whole pool goes to the provider.
/// So sum(credit_i) + providerPay + refund == payment exactly, for every input.
library DataShares {
    /// @notice The neutral improvement weight (1.0 in millionths).
    uint256 internal constant WEIGHT_ONE = 1e6;
    uint256 internal constant BPS = 10_000;

    /// @notice Split `payment` (see the library notice). `weights[i]` = tokens_i * weightE6_i.
    /// @dev Requires dataShareBps <= BPS and startSegment < segments (JobMarket guarantees both).
    function split(
        uint256 payment,
        uint256 dataShareBps,
        uint256 segments,
        uint256 startSegment,
        uint256[] memory weights
    ) internal pure returns (uint256[] memory credits, uint256 providerPay, uint256 refund) {
        uint256 n = weights.length;
        credits = new uint256[](n);
        uint256 pool = n == 0 ? 0 : (payment * dataShareBps) / BPS;
        uint256 total;
        for (uint256 i; i < n; ++i) {
            total += weights[i];
        }
        uint256 distributed;
        if (total != 0) {
            for (uint256 i; i < n; ++i) {
                // mulDiv: pool * w_i can exceed 2^256 (pool < 2^128, w_i < 2^128).
                uint256 c = Math.mulDiv(pool, weights[i], total);
                credits[i] = c;
                distributed += c;
            }
        }
        uint256 rest = payment - pool;
        uint256 providerBase = (rest * (segments - startSegment)) / segments;
        refund = rest - providerBase;
        providerPay = providerBase + (pool - distributed);
    }
}
