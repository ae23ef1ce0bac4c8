// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Trace} from "./libraries/Trace.sol";
import {Leaves} from "./test/Leaves.sol";

contract JobMarketTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER2 = address(0xB3);
    address internal constant CHALLENGER = address(0xC1);
    bytes32 internal constant TAG = keccak256("honest");

    function setUp() public {
        address[3] memory who = [BUYER, PROVIDER, PROVIDER2];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            vault.deposit(1e24);
            vm.stopPrank();
        }
    }

    function _create(uint16 segments, uint128 payment, uint128 stake) internal returns (uint256 id) {
        vm.prank(BUYER);
        id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), payment, policy(segments, stake));
    }

    function _commitAll(uint256 id, address provider, uint256 from, uint256 to) internal {
        for (uint256 s = from; s < to; ++s) {
            vm.prank(provider);
            market.commitSegment(id, s, Leaves.hashes(TAG, id, s, 4), 1, "bafy");
        }
    }

    /// A challenger share above half would let a provider that concedes to its own address keep most of its lock.
    function test_createJob_challengerShareAboveHalf_reverts() public {
        IJobMarket.Policy memory p = policy(2, 1e18);
        p.challengerBps = 5_001;
        p.buyerBps = 2_999;
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketChallengerShareTooHigh.selector, 5_001, 5_000));
        vm.prank(BUYER);
        market.createJob(keccak256("manifest"), "ipfs://m", address(token), 1e18, p);
    }

    /// Any payment and shape: the provider is paid exactly the payment, stake comes back, escrow empties.
    function testFuzz_lifecycle_paysProviderExactly(uint16 segments, uint128 payment, uint128 stake) public {
        segments = uint16(bound(segments, 1, 12));
        payment = uint128(bound(payment, 1, 1e27));
        stake = uint128(bound(stake, 1, 1e24));
        uint256 id = _create(segments, payment, stake);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, segments);
        for (uint256 s; s < segments; ++s) {
            assertTrue(
                market.verifySegment(id, s, Leaves.root(TAG, id, s, 4), Leaves.end(TAG, id, s, 4)), "segment anchored"
            );
        }
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        assertEq(market.creditOf(PROVIDER, address(token)), payment, "provider credited");
        assertEq(vault.accountOf(PROVIDER).locked, 0, "stake unlocked");
        assertEq(token.balanceOf(address(market)), payment, "market holds only the credit");
        vm.prank(PROVIDER);
        market.claim(address(token));
        assertEq(token.balanceOf(address(market)), 0, "market empty");
    }

    /// After a timeout at segment m, the new provider is paid for segments m.. only; the buyer gets the rest
    /// back plus the timeout slash.
    function testFuzz_timeout_reopensAndSplitsPayProRata(uint16 segments, uint16 done, uint128 payment) public {
        segments = uint16(bound(segments, 2, 12));
        done = uint16(bound(done, 0, segments - 1));
        payment = uint128(bound(payment, 1, 1e27));
        uint256 id = _create(segments, payment, 1e20);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, done);
        vm.warp(block.timestamp + 1 hours + 1);
        market.reportTimeout(id);
        if (done != 0) {
            // The tenure committed segments: they stay disputable, with the whole lock locked, for one window; the
            // timeout slash waits for reopenJob.
            assertTrue(market.getJob(id).status == IJobMarket.JobStatus.TimedOut, "timed out, not yet re-opened");
            assertEq(vault.accountOf(PROVIDER).locked, 1e20, "the whole lock held for the window");
            assertEq(vault.creditOf(BUYER), 0, "no timeout slash while the segments are disputable");
            vm.prank(PROVIDER2);
            vm.expectRevert(
                abi.encodeWithSelector(
                    IJobMarket.JobMarketWrongStatus.selector, id, IJobMarket.JobStatus.TimedOut, IJobMarket.JobStatus.Open
                )
            );
            market.acceptJob(id);
            uint256 until = market.getJob(id).deadline;
            vm.expectRevert(
                abi.encodeWithSelector(IJobMarket.JobMarketChallengeWindowOpen.selector, id, until, block.timestamp)
            );
            market.reopenJob(id);
            vm.warp(until + 1);
            market.reopenJob(id);
        }
        assertTrue(market.getJob(id).status == IJobMarket.JobStatus.Open, "re-opened");
        assertEq(vault.creditOf(BUYER), 1e19, "10% timeout slash to buyer");
        assertEq(vault.accountOf(PROVIDER).locked, 0, "old lock released");
        assertEq(vault.accountOf(PROVIDER).free, 1e24 - 1e19, "old provider keeps the rest");
        vm.prank(PROVIDER2);
        market.acceptJob(id);
        assertEq(market.getJob(id).startSegment, done, "continues at the next segment");
        _commitAll(id, PROVIDER2, done, segments);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        uint256 pay = (uint256(payment) * (segments - done)) / segments;
        assertEq(market.creditOf(PROVIDER2, address(token)), pay, "pro rata pay");
        assertEq(market.creditOf(BUYER, address(token)), payment - pay, "rest refunded");
    }

    function test_providerFault_slashesByShares_andRefundsBuyer() public {
        uint256 id = _create(3, 1e21, 1e20);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, 3);
        assertTrue(dispute.verifySegment(id, 1, Leaves.root(TAG, id, 1, 4), Leaves.end(TAG, id, 1, 4)), "view");
        assertEq(market.segmentCommitment(id, 1), Trace.commitment(Leaves.root(TAG, id, 1, 4), Leaves.end(TAG, id, 1, 4)), "commitment");
        dispute.freeze(id);
        dispute.settleProviderFault(id);
        assertEq(vault.creditOf(address(dispute)), 5e19, "challenger share 50% to the dispute role");
        assertEq(vault.creditOf(BUYER), 3e19, "buyer 30%");
        assertEq(token.balanceOf(vault.BURN_ADDRESS()), 2e19, "burn 20%");
        assertEq(market.creditOf(BUYER, address(token)), 1e21, "escrow refunded");
        assertTrue(market.getJob(id).status == IJobMarket.JobStatus.Refunded, "refunded");
    }

    /// A dispute contract may slash a lock directly (StakeVault.slash); finalize and reportTimeout must
    /// still work when the lock is partly or wholly gone.
    function testFuzz_directSlash_doesNotBlockFinalizeOrTimeout(uint128 slashed, bool timeout) public {
        uint256 id = _create(2, 1e21, 1e20);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        slashed = uint128(bound(slashed, 1, 1e20));
        address[] memory to = new address[](1);
        uint256[] memory amounts = new uint256[](1);
        to[0] = CHALLENGER;
        amounts[0] = slashed;
        dispute.slash(PROVIDER, id, slashed, to, amounts);
        if (timeout) {
            vm.warp(block.timestamp + 1 hours + 1);
            market.reportTimeout(id);
            assertEq(vault.creditOf(BUYER), ((1e20 - uint256(slashed)) * 1_000) / 10_000, "timeout share of what is left");
        } else {
            _commitAll(id, PROVIDER, 0, 2);
            vm.warp(block.timestamp + 1 days + 1);
            market.finalize(id);
            assertEq(market.creditOf(PROVIDER, address(token)), 1e21, "paid");
        }
        assertEq(vault.accountOf(PROVIDER).locked, 0, "nothing left locked");
        assertEq(vault.lockedFor(PROVIDER, id), 0, "job lock gone");
    }
}
