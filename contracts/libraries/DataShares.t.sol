// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "../test/TestBase.sol";
import {DataShares} from "./DataShares.sol";

contract DataSharesTest is TestBase {
    /// contributor credits + provider pay + refund == payment to the wei, for any shape and weights.
    function testFuzz_split_conservesPaymentExactly(
        uint128 payment,
        uint16 bps,
        uint16 segments,
        uint16 start,
        uint96[4] memory tokens,
        uint32[4] memory weightsE6,
        uint8 n
    ) public pure {
        bps = uint16(bound(bps, 0, 10_000));
        segments = uint16(bound(segments, 1, type(uint16).max));
        start = uint16(bound(start, 0, segments - 1));
        n = uint8(bound(n, 0, 4));
        uint256[] memory w = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            w[i] = uint256(tokens[i]) * weightsE6[i];
        }
        (uint256[] memory credits, uint256 providerPay, uint256 refund) =
            DataShares.split(payment, bps, segments, start, w);
        uint256 sum = providerPay + refund;
        uint256 dataPaid;
        for (uint256 i; i < n; ++i) {
            dataPaid += credits[i];
        }
        assertEq(sum + dataPaid, payment, "credits + provider + refund == payment");
        uint256 pool = n == 0 ? 0 : (uint256(payment) * bps) / 10_000;
        assertLe(dataPaid, pool, "contributors never get more than the pool");
        // Each contributor's credit is its exact proportional share, rounded down by less than 1 wei.
        uint256 total;
        for (uint256 i; i < n; ++i) {
            total += w[i];
        }
        for (uint256 i; i < n; ++i) {
            if (total == 0) {
                assertEq(credits[i], 0, "no weight, no credit");
            } else {
                // credits[i] == floor(pool * w_i / total)
                assertLe(credits[i] * total, pool * w[i], "rounded down");
                assertGe(credits[i] * total + total, pool * w[i] + 1, "by less than one wei");
            }
        }
        // Dust from rounding is below n wei and goes to the provider.
        assertLe(pool - dataPaid, total == 0 ? pool : n, "dust bound");
    }

    function test_split_noCorpora_isTheOldRule() public pure {
        (uint256[] memory credits, uint256 providerPay, uint256 refund) =
            DataShares.split(100, 5_000, 3, 1, new uint256[](0));
        assertEq(credits.length, 0, "no credits");
        assertEq(providerPay, 66, "provider pro rata");
        assertEq(refund, 34, "buyer the rest");
    }

    function test_split_tokensAndWeights_knownValues() public pure {
        uint256[] memory w = new uint256[](3);
        w[0] = 1_000 * 1e6; // 1000 tokens, no recorded weight
        w[1] = 3_000 * 1e6; // 3000 tokens, no recorded weight
        w[2] = 1_000 * 2e6; // 1000 tokens, weight 2.0
        (uint256[] memory credits, uint256 providerPay, uint256 refund) = DataShares.split(1_000_003, 2_000, 4, 0, w);
        // pool = 200000; total = 6e9; shares 1/6, 3/6, 2/6
        assertEq(credits[0], 33_333, "c0");
        assertEq(credits[1], 100_000, "c1");
        assertEq(credits[2], 66_666, "c2");
        assertEq(refund, 0, "no refund");
        assertEq(providerPay, 800_003 + 1, "provider base + 1 wei dust");
    }

    function test_split_allWeightsZero_poolToProvider() public pure {
        uint256[] memory w = new uint256[](2);
        (uint256[] memory credits, uint256 providerPay, uint256 refund) = DataShares.split(1_000, 1_000, 1, 0, w);
        assertEq(credits[0] + credits[1], 0, "nothing to contributors");
        assertEq(providerPay, 1_000, "provider gets the pool");
        assertEq(refund, 0, "no refund");
    }
}
