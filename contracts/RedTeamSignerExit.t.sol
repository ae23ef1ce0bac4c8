// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice Red team: one signer's free exit ends an honest provider's tenure through `retier`.
/// effectiveTier counts a record only while a quorum of its signers is active (backingOf), and `retier` (anyone)
/// re-prices a running tenure at effectiveTier. A signer's `requestExit` costs it nothing (its bond comes back after the
/// exit delay) and takes effect at once: with the usual 2-of-3 record, one exit drops the provider to tier 4. A provider
/// that locked the tier-1 stake (half) and holds no more free stake cannot top up, so the next `retier` ends the tenure
/// as a missed deadline: the timeout slash goes to the buyer, and the segments it committed are paid to nobody (finalize
/// pays only the tenure that finishes the job; the rest is refunded to the buyer). A buyer with one accomplice on the
/// provider's committee gets the committed segments trained for free and pockets the timeout slash.
/// docs/checks.md still says "a record ... left without a backing quorum still leaves running tenures at their lock"
/// and docs/panels.md calls a signer's exit "a liveness cost, not a safety one": retier made it a safety one.
/// Fix: re-price a running tenure only on a record that ended by a statement dispute (revoked or upheld), not on lost
/// backing, e.g. `retier` reads a registry view that ignores backingOf (expiry is already covered by acceptJob's
/// lastCommitBy rule); or refuse a signer's requestExit while its statement backs a running discounted tenure.
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

    /// The exploit: an honest tier-1 provider on schedule, two of three segments committed, is ended by the buyer's
    /// retier one block after one signer requested exit; it is slashed and paid nothing for its two segments.
    function test_signerExit_thenRetier_endsHonestTenure_buyerKeepsTheWork() public {
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
        // the record is not expired, not disputed, not revoked: its evidence still holds
        (,, uint64 expiresAt) = providers.tierAndSessionKey(PROVIDER);
        assertTrue(expiresAt > block.timestamp + 1 hours, "the record outlives the tenure");

        // the accomplice: one of the two signers requests exit (free: the bond comes back after the exit delay)
        address[] memory signers = providers.signersOf(PROVIDER);
        assertEq(signers.length, 2, "a 2-of-3 record");
        vm.prank(signers[0]);
        registry.requestExit();
        assertEq(providers.effectiveTier(PROVIDER), 4, "one exit and the record no longer counts");

        // the buyer's retier, with the provider on schedule and honest
        assertLe(block.timestamp, market.getJob(id).deadline, "on schedule");
        vm.prank(BUYER);
        market.retier(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.TimedOut), "the honest tenure is ended");

        // after the window the job re-opens (the timeout slash is taken then); another provider finishes the last segment
        vm.warp(block.timestamp + 1 days + 1);
        market.reopenJob(id);
        assertEq(vault.creditOf(BUYER), 0.05e18, "the timeout slash is the buyer's");
        assertEq(vault.accountOf(PROVIDER).free + vault.accountOf(PROVIDER).locked, 0.45e18, "the honest provider slashed");
        vm.prank(PROVIDER2);
        market.acceptJob(id);
        _commit(PROVIDER2, id, 2);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        assertEq(market.creditOf(PROVIDER, address(token)), 0, "nothing for the two honest segments");
        assertEq(market.creditOf(PROVIDER2, address(token)), uint256(1e18) / 3, "the finisher: one segment's pay");
        assertEq(market.creditOf(BUYER, address(token)), 1e18 - uint256(1e18) / 3, "the buyer: two segments refunded");
    }

    /// The same on a job that admits tier 1 only: the provider holds plenty of free stake, yet one signer's exit makes
    /// anyone's retier end its tenure (the tier no longer meets minTier), whatever it could top up.
    function test_signerExit_minTierJob_endsTenureWhateverTheFreeStake() public {
        vm.prank(PROVIDER);
        vault.deposit(1e24);
        _attestWithKey(PROVIDER, 1, KEY);
        vm.prank(BUYER);
        uint256 id = market.createJobWithTerms(
            keccak256("manifest"),
            "ipfs://m",
            address(token),
            1e18,
            policy(SEGMENTS, 1e18),
            _terms(1, 0, new uint64[](0), new uint96[](0))
        );
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commit(KEY, id, 0);
        address[] memory signers = providers.signersOf(PROVIDER);
        vm.prank(signers[1]);
        registry.requestExit();
        vm.prank(BUYER);
        market.retier(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.TimedOut), "ended despite 1e24 free stake");
        vm.warp(block.timestamp + 1 days + 1);
        market.reopenJob(id);
        assertEq(vault.creditOf(BUYER), 0.05e18, "the timeout slash is the buyer's");
    }
}
