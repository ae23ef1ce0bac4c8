// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice A job accepted at a tier whose evidence bound a session key takes its segment commits from that key only:
/// the provider's own address (and anyone else) is refused with JobMarketNotSessionKey, the key commits; a tier without
/// a declared key, and a later tenure by another provider, commit from the provider as before.
contract JobMarketSessionKeyTest is TestBase, TermsFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER2 = address(0xB3);
    address internal constant KEY = address(0x5E55);

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        _bondAuditors(token, registry, 3);
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

    /// @dev `provider` is recorded at `tier` from a request that declared `key` (none when zero).
    function _attestWithKey(address provider, uint8 tier, address key) internal {
        _fundFee(providers, provider);
        vm.prank(provider);
        uint256 id = key == address(0)
            ? providers.requestAttestation(_evidence(provider), _challengeBlock())
            : providers.requestAttestation(_evidence(provider), _challengeBlock(), new bytes32[](0), key);
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
        (uint8 lo,) = providers.bandRange(tier);
        Receipts.AttestationVerified memory att = _attestation(provider, id, tier, lo, uint64(block.timestamp + 1 days));
        providers.record(att, _committeeSigs(providers, id, providers.digestOf(att), 2));
    }

    function _job(uint16 segments) internal returns (uint256 id) {
        vm.prank(BUYER);
        id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 1e18, policy(segments, 1e18));
    }

    function _commit(address from, uint256 id, uint256 s) internal {
        vm.prank(from);
        market.commitSegment(id, s, Leaves.hashes(keccak256("t"), id, s, 4), 1, "bafy");
    }

    function _expectCommitRefused(address from, uint256 id, uint256 s, bytes memory err) internal {
        bytes32[] memory leaves = Leaves.hashes(keccak256("t"), id, s, 4);
        vm.expectRevert(err);
        vm.prank(from);
        market.commitSegment(id, s, leaves, 1, "bafy");
    }

    function test_attestedTierWithKey_onlyTheKeyCommits() public {
        _attestWithKey(PROVIDER, 1, KEY);
        (uint8 tier, address key) = providers.tierAndSessionKey(PROVIDER);
        assertEq(tier, 1, "tier 1");
        assertEq(key, KEY, "the record's session key");
        uint256 id = _job(2);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(market.committerOf(id), KEY, "the tenure's committer");
        // the provider's own address does not hold the attested key: refused by name
        _expectCommitRefused(PROVIDER, id, 0, abi.encodeWithSelector(IJobMarket.JobMarketNotSessionKey.selector, id, PROVIDER, KEY));
        _expectCommitRefused(PROVIDER2, id, 0, abi.encodeWithSelector(IJobMarket.JobMarketNotSessionKey.selector, id, PROVIDER2, KEY));
        // the honest attested machine commits every segment; the job completes as usual
        _commit(KEY, id, 0);
        _commit(KEY, id, 1);
        (,, IJobMarket.JobStatus status) = market.jobParties(id);
        assertEq(uint256(status), uint256(IJobMarket.JobStatus.Committed), "committed by the key");
        // the lock and the pay stay the provider's
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        assertEq(market.creditOf(PROVIDER, address(token)), 1e18, "the provider is paid");
        assertEq(market.creditOf(KEY, address(token)), 0, "the key is paid nothing");
    }

    /// The key binds the tenure, not the moment: a record that lapses after acceptJob leaves the tenure's lock
    /// discounted, so the commits still come from the key.
    function test_recordExpiredAfterAccept_keyStillRequired() public {
        _attestWithKey(PROVIDER, 2, KEY);
        uint256 id = _job(1);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        vm.warp(block.timestamp + 1 days);
        assertEq(providers.effectiveTier(PROVIDER), 4, "record expired");
        _expectCommitRefused(PROVIDER, id, 0, abi.encodeWithSelector(IJobMarket.JobMarketNotSessionKey.selector, id, PROVIDER, KEY));
    }

    function test_attestedTierWithoutKey_providerCommits() public {
        _attestWithKey(PROVIDER, 3, address(0));
        (uint8 tier, address key) = providers.tierAndSessionKey(PROVIDER);
        assertEq(tier, 3, "tier 3");
        assertEq(key, address(0), "no key declared");
        uint256 id = _job(1);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(market.committerOf(id), address(0), "the provider commits");
        _commit(PROVIDER, id, 0);
    }

    /// A tenure that times out idle re-opens the job; the next provider (tier 4) binds no key and commits itself.
    function test_nextTenure_clearsTheKey() public {
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(1);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        vm.warp(block.timestamp + 1 hours + 1);
        market.reportTimeout(id);
        vm.prank(PROVIDER2);
        market.acceptJob(id);
        assertEq(market.committerOf(id), address(0), "no key for the unattested tenure");
        _expectCommitRefused(KEY, id, 0, abi.encodeWithSelector(IJobMarket.JobMarketNotProvider.selector, id, KEY, PROVIDER2));
        _commit(PROVIDER2, id, 0);
    }

    /// A tier-4 statement names no key even when its request declared one.
    function test_tierFourRecord_namesNoKey() public {
        _attestWithKey(PROVIDER, 4, KEY);
        (uint8 tier, address key) = providers.tierAndSessionKey(PROVIDER);
        assertEq(tier, 4, "tier 4");
        assertEq(key, address(0), "no key with tier 4");
    }
}
