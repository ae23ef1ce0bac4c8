// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice Red team: `retier` ends an honest provider's tenure whose tier record still covers every possible commit.
/// _tenureTier counts a tier only if its record outlives `now + (segments - nextSegment) * segmentTimeout`. The real
/// last possible commit is `deadline + (segments - nextSegment - 1) * segmentTimeout` (deadline = last commit +
/// segmentTimeout): the formula overstates it by the time since the last commit. acceptJob admits a record that expires
/// exactly at `accept + segments * segmentTimeout`; one segment-timeout later, with the provider on schedule, anyone's
/// retier sees the tier as lapsed, asks the full (tier-4) stake, and when the free stake is not there ends the tenure as
/// a missed deadline: the timeout slash, and the job goes to someone else.
contract RedTeamRetierTest is TestBase, TermsFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant GRIEFER = address(0x57);
    address internal constant KEY = address(0x5E55);
    uint16 internal constant SEGMENTS = 20;
    uint256 internal constant T = 1 hours; // MarketFixture.policy segmentTimeout

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        _bondAuditors(token, registry, 8);
        token.mint(BUYER, 1e30);
        vm.startPrank(BUYER);
        token.approve(address(market), type(uint256).max);
        vm.stopPrank();
        token.mint(PROVIDER, 1e30);
        vm.startPrank(PROVIDER);
        token.approve(address(market), type(uint256).max);
        token.approve(address(vault), type(uint256).max);
        vm.stopPrank();
    }

    function _attestWithKey(address provider, uint8 tier, address key) internal {
        _fundFee(providers, provider);
        vm.prank(provider);
        uint256 id = providers.requestAttestation(_evidence(provider), _challengeBlock(), new bytes32[](0), key);
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
        (uint8 lo,) = providers.bandRange(tier);
        Receipts.AttestationVerified memory att = _attestation(provider, id, tier, lo, uint64(block.timestamp) + 1 days);
        providers.record(att, _committeeSigs(providers, id, providers.digestOf(att), 2));
    }

    function test_regression_retierOnSchedule_recordStillCovers_nothingToDo() public {
        vm.prank(PROVIDER);
        vault.deposit(0.5e18); // exactly the tier-1 lock: a provider running one job
        _attestWithKey(PROVIDER, 1, KEY);
        (,, uint64 expiresAt) = providers.tierAndSessionKey(PROVIDER);
        vm.prank(BUYER);
        uint256 id = market.createJobWithTerms(
            keccak256("manifest"), "ipfs://m", address(token), 1e18, policy(SEGMENTS, 1e18), _terms(0, 0, new uint64[](0), new uint96[](0))
        );
        uint256 a = uint256(expiresAt) - SEGMENTS * T; // the latest acceptJob still grants tier 1
        vm.warp(a);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0.5e18, "tier-1 lock");
        // segment 0 committed 30 min in: every later commit is due by a + 30 min + 19 h = expiresAt - 30 min
        vm.warp(a + 30 minutes);
        vm.prank(KEY);
        market.commitSegment(id, 0, Leaves.hashes(keccak256("t"), id, 0, 4), 1, "bafy");
        uint256 lastPossibleCommit = a + 30 minutes + (SEGMENTS - 1) * T;
        assertLe(lastPossibleCommit, expiresAt, "the record outlives every possible commit of this tenure");
        // one second past a + T: segment 1 is not due for another 29 min 59 s
        vm.warp(a + T + 1);
        assertEq(providers.effectiveTier(PROVIDER), 1, "the tier stands");
        assertLe(block.timestamp + 1, market.getJob(id).deadline, "the provider is on schedule");
        uint256 stake0 = vault.accountOf(PROVIDER).free + vault.accountOf(PROVIDER).locked;
        // Regression: the last possible commit counts from the tenure's deadline, so the record covers the tenure and
        // retier has nothing to do (it ended this tenure with the timeout slash when it counted from now).
        vm.prank(GRIEFER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRetierNotNeeded.selector, id, 1, 0.5e18, 0.5e18));
        market.retier(id);
        (,, IJobMarket.JobStatus status) = market.jobParties(id);
        assertEq(uint256(status), uint256(IJobMarket.JobStatus.Active), "the on-schedule tenure runs on");
        assertEq(vault.accountOf(PROVIDER).free + vault.accountOf(PROVIDER).locked, stake0, "nothing slashed");
        assertEq(vault.lockedFor(PROVIDER, id), 0.5e18, "the tier-1 lock stands");
    }
}
