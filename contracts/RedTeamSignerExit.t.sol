// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice Red team finding, now a regression: one signer's free exit must not end an honest provider's tenure through
/// `retier`. effectiveTier counts a record only while a quorum of its signers is active (backingOf), so acceptJob takes no
/// new tenure on it once a signer asks to exit; a signer's `requestExit` costs it nothing and takes effect at once, so if
/// `retier` (anyone) re-priced a running tenure at effectiveTier, a buyer with one accomplice on the provider's
/// committee would end an honest on-schedule tenure as a missed deadline (the timeout slash to the buyer, the committed
/// segments paid to nobody). Fixed: retier counts a running tenure's record while a quorum of its signers still holds a
/// forfeitable bond (active, or exiting before its exit time), so an exit request alone re-prices nothing, and the
/// discount still ends once the exiting bond can leave (the safety reason backing exists).
contract RedTeamSignerExitTest is TestBase, TermsFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER2 = address(0xB3);
    address internal constant KEY = address(0x5E55);
    uint16 internal constant SEGMENTS = 3;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        _bondAuditors(token, registry, 8);
        address[2] memory who = [BUYER, PROVIDER2];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            vm.stopPrank();
        }
        vm.prank(PROVIDER2);
        vault.deposit(1e24);
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

    function _commit(address from, uint256 id, uint256 s) internal {
        vm.prank(from);
        market.commitSegment(id, s, Leaves.hashes(keccak256("t"), id, s, 4), 1, "bafy");
    }

    function _status(uint256 id) internal view returns (IJobMarket.JobStatus status) {
        (,, status) = market.jobParties(id);
    }

    function _attestedJob(uint8 minTier, uint64 expiresIn, uint24 segmentTimeout) internal returns (uint256 id) {
        _fundFee(providers, PROVIDER);
        vm.prank(PROVIDER);
        uint256 req = providers.requestAttestation(_evidence(PROVIDER), _challengeBlock(), new bytes32[](0), KEY);
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
        (uint8 lo,) = providers.bandRange(1);
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, req, 1, lo, uint64(block.timestamp) + expiresIn);
        providers.record(att, _committeeSigs(providers, req, providers.digestOf(att), 2));
        IJobMarket.Policy memory p = policy(SEGMENTS, 1e18);
        p.segmentTimeout = segmentTimeout;
        vm.prank(BUYER);
        id = market.createJobWithTerms(
            keccak256("manifest"), "ipfs://m", address(token), 1e18, p, _terms(minTier, 0, new uint64[](0), new uint96[](0))
        );
        vm.prank(PROVIDER);
        market.acceptJob(id);
    }

    /// @dev retier refused: the record still counts at tier 1 for the running tenure, whose lock covers tier 1's stake.
    function _expectNotNeeded(uint256 id, uint256 locked) internal {
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRetierNotNeeded.selector, id, 1, locked, 0.5e18));
        market.retier(id);
    }

    /// One signer's exit request leaves an honest tier-1 provider on schedule, two of three segments committed, in its
    /// tenure: the buyer's retier is refused, the provider finishes and is paid for all three segments.
    function test_signerExit_retierRefused_honestTenureFinishesAndIsPaid() public {
        vm.prank(PROVIDER);
        vault.deposit(0.5e18); // exactly the tier-1 lock: a provider running one job
        _attestWithKey(PROVIDER, 1, KEY);
        vm.prank(BUYER);
        uint256 id = market.createJobWithTerms(
            keccak256("manifest"),
            "ipfs://m",
            address(token),
            1e18,
            policy(SEGMENTS, 1e18),
            _terms(0, 0, new uint64[](0), new uint96[](0))
        );
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0.5e18, "tier-1 lock");
        _commit(KEY, id, 0);
        vm.warp(block.timestamp + 30 minutes);
        _commit(KEY, id, 1);

        // the accomplice: one of the two signers requests exit (free: the bond comes back after the exit delay)
        address[] memory signers = providers.signersOf(PROVIDER);
        assertEq(signers.length, 2, "a 2-of-3 record");
        vm.prank(signers[0]);
        registry.requestExit();
        assertEq(providers.effectiveTier(PROVIDER), 4, "no new tenure on the record");

        // the buyer's retier finds the exiting signer's bond still forfeitable: nothing to re-price
        vm.prank(BUYER);
        _expectNotNeeded(id, 0.5e18);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Active), "the honest tenure runs on");
        assertEq(vault.creditOf(BUYER), 0, "no timeout slash");

        _commit(KEY, id, 2);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        assertEq(market.creditOf(PROVIDER, address(token)), 1e18, "all three honest segments paid");
        assertEq(market.creditOf(BUYER, address(token)), 0, "nothing refunded to the buyer");
        assertEq(vault.accountOf(PROVIDER).free + vault.accountOf(PROVIDER).locked, 0.5e18, "the honest provider unslashed");
    }

    /// The same on a job that admits tier 1 only: one signer's exit request does not make the tier fall below minTier for
    /// the running tenure.
    function test_signerExit_minTierJob_retierRefused() public {
        vm.prank(PROVIDER);
        vault.deposit(1e24);
        uint256 id = _attestedJob(1, 1 days, 1 hours);
        _commit(KEY, id, 0);
        address[] memory signers = providers.signersOf(PROVIDER);
        vm.prank(signers[1]);
        registry.requestExit();
        vm.prank(BUYER);
        _expectNotNeeded(id, 0.5e18);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Active), "the tenure runs on");
        assertEq(vault.creditOf(BUYER), 0, "no timeout slash");
    }

    /// The safety side kept: once the exiting signer's exit time has come (its bond may leave, so no quorum of
    /// forfeitable bonds backs the statement), retier re-prices the running tenure: here it tops the lock up to tier 4's,
    /// and the commits move from the session key to the provider.
    function test_signerExit_afterExitDelay_retierRepricesTheTenure() public {
        vm.prank(PROVIDER);
        vault.deposit(1e18); // the tier-1 lock plus what tier 4 adds
        uint256 id = _attestedJob(0, 29 days, 9 days);
        _commit(KEY, id, 0);
        address[] memory signers = providers.signersOf(PROVIDER);
        vm.prank(signers[0]);
        registry.requestExit();
        uint64 exitableAt = registry.auditorOf(signers[0]).exitableAt;
        vm.warp(block.timestamp + 8 days);
        _commit(KEY, id, 1);
        vm.warp(exitableAt - 1);
        _expectNotNeeded(id, 0.5e18);
        vm.warp(exitableAt);
        market.retier(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Active), "re-priced, not ended");
        assertEq(vault.lockedFor(PROVIDER, id), 1e18, "tier 4's full lock");
        _commit(PROVIDER, id, 2);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Committed), "the provider itself commits");
    }
}
