// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice A job accepted at a tier whose evidence bound a session key takes its segment commits from that key only:
/// the provider's own address (and anyone else) is refused with JobMarketNotSessionKey, the key commits; a tier-3 record
/// without a declared key, and a later tenure by another provider, commit from the provider as before. Tiers 1-2 need a
/// declared key; a tier counts for a tenure only if its record outlives the tenure's last possible commit; a tenure
/// rebinds to a re-attested key at the same or a better tier (rebindCommitter).
contract JobMarketSessionKeyTest is TestBase, TermsFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER2 = address(0xB3);
    address internal constant KEY = address(0x5E55);
    address internal constant KEY2 = address(0x5E56);

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

    /// @dev `provider` is recorded at `tier` from a request that declared `key` (none when zero), for a day.
    function _attestWithKey(address provider, uint8 tier, address key) internal {
        _attestWithKey(provider, tier, key, 1 days);
    }

    /// @dev `provider` is recorded at `tier` from a request that declared `key` (none when zero), for `validity`.
    function _attestWithKey(address provider, uint8 tier, address key, uint64 validity) internal {
        _fundFee(providers, provider);
        vm.prank(provider);
        uint256 id = key == address(0)
            ? providers.requestAttestation(_evidence(provider), _challengeBlock())
            : providers.requestAttestation(_evidence(provider), _challengeBlock(), new bytes32[](0), key);
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
        (uint8 lo,) = providers.bandRange(tier);
        Receipts.AttestationVerified memory att = _attestation(provider, id, tier, lo, uint64(block.timestamp) + validity);
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
        (uint8 tier, address key,) = providers.tierAndSessionKey(PROVIDER);
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

    /// The key binds the tenure, not the moment: the record stands through the tenure's last possible commit (checked
    /// at acceptJob), and the commits come from the key until the tenure ends.
    function test_recordCoversTenure_keyRequiredToTheEnd() public {
        _attestWithKey(PROVIDER, 2, KEY);
        uint256 id = _job(2);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0.625e18, "tier-2 lock");
        vm.warp(block.timestamp + 1 hours);
        _commit(KEY, id, 0);
        vm.warp(block.timestamp + 1 hours);
        _expectCommitRefused(PROVIDER, id, 1, abi.encodeWithSelector(IJobMarket.JobMarketNotSessionKey.selector, id, PROVIDER, KEY));
        _commit(KEY, id, 1);
    }

    /// A record that would lapse before the tenure's last possible commit (30 segments of 1 hour against a 1-day
    /// record) gives the tenure no discount and no key: the full lock, commits from the provider. Without the rule the
    /// tenure kept the halved lock after its record lapsed mid-job.
    function test_recordExpiresBeforeLastCommit_tenureAtTierFour() public {
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(30);
        (uint8 tier, uint256 stake) = market.requiredStakeFor(id, PROVIDER);
        assertEq(tier, 4, "quoted at tier 4");
        assertEq(stake, 1e18, "quoted undiscounted");
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 1e18, "the full lock");
        assertEq(market.committerOf(id), address(0), "no key bound");
        _commit(PROVIDER, id, 0);
        // 24 one-hour segments fit the day: the same record covers a 24-segment job, which gets the halved lock
        (tier, stake) = market.requiredStakeFor(_job(24), PROVIDER);
        assertEq(tier, 1, "a 24-hour job is covered by the 1-day record");
        assertEq(stake, 0.5e18, "halved");
    }

    /// A job with a minimum tier refuses a record that lapses before the tenure's last possible commit, by name.
    function test_minTierJob_recordExpiresFirst_reverts() public {
        _attestWithKey(PROVIDER, 1, KEY);
        IJobMarket.Policy memory p = policy(30, 1e18);
        vm.prank(BUYER);
        uint256 id = market.createJobWithTerms(keccak256("manifest"), "ipfs://m", address(token), 1e18, p, _terms(1, 0, new uint64[](0), new uint96[](0)));
        (, , uint64 expiresAt) = providers.tierAndSessionKey(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRecordExpiresFirst.selector, id, PROVIDER, expiresAt, block.timestamp + 30 hours));
        vm.prank(PROVIDER);
        market.acceptJob(id);
    }

    function test_attestedTierWithoutKey_providerCommits() public {
        _attestWithKey(PROVIDER, 3, address(0));
        (uint8 tier, address key,) = providers.tierAndSessionKey(PROVIDER);
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

    /// Tiers 1 and 2 need a declared session key; tier 3 may have none.
    function test_recordTierOneOrTwoWithoutKey_reverts() public {
        for (uint8 tier = 1; tier <= 2; ++tier) {
            address p = tier == 1 ? PROVIDER : PROVIDER2;
            _fundFee(providers, p);
            vm.prank(p);
            uint256 id = providers.requestAttestation(_evidence(p), _challengeBlock());
            vm.roll(block.number + providers.seedDelayBlocks() + 1);
            vm.warp(block.timestamp + 1);
            (uint8 lo,) = providers.bandRange(tier);
            Receipts.AttestationVerified memory att = _attestation(p, id, tier, lo, uint64(block.timestamp + 1 days));
            bytes[] memory sigs = _committeeSigs(providers, id, providers.digestOf(att), 2);
            vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryTierNeedsSessionKey.selector, id, tier));
            providers.record(att, sigs);
        }
    }

    /// A restarted machine re-attests with a new key; the provider rebinds its running tenure to it (same tier) and
    /// the new key commits; the old key is refused.
    function test_rebind_sameTier_newKeyCommits() public {
        _attestWithKey(PROVIDER, 1, KEY, 7 days);
        uint256 id = _longJob();
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commit(KEY, id, 0);
        vm.warp(block.timestamp + 2 days);
        _attestWithKey(PROVIDER, 1, KEY2, 7 days);
        assertEq(market.committerOf(id), KEY, "still the lost key");
        vm.prank(PROVIDER);
        market.rebindCommitter(id);
        assertEq(market.committerOf(id), KEY2, "rebound");
        _expectCommitRefused(KEY, id, 1, abi.encodeWithSelector(IJobMarket.JobMarketNotSessionKey.selector, id, KEY, KEY2));
        _commit(KEY2, id, 1);
    }

    /// A rebind to a weaker record (tier 2 after a tier-1 tenure) or to none is refused by name; only the provider
    /// rebinds; a keyless tenure has nothing to rebind.
    function test_rebind_weakerTier_orStranger_orKeyless_reverts() public {
        _attestWithKey(PROVIDER, 1, KEY, 7 days);
        uint256 id = _longJob();
        vm.prank(PROVIDER);
        market.acceptJob(id);
        vm.prank(PROVIDER2);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketNotProvider.selector, id, PROVIDER2, PROVIDER));
        market.rebindCommitter(id);
        vm.warp(block.timestamp + 2 days);
        _attestWithKey(PROVIDER, 2, KEY2, 7 days);
        vm.prank(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRebindTierTooLow.selector, id, PROVIDER, 2, 1));
        market.rebindCommitter(id);
        // a tenure that commits from the provider's own address
        uint256 free = _job(1);
        vm.prank(PROVIDER2);
        market.acceptJob(free);
        vm.prank(PROVIDER2);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketNoCommitter.selector, free));
        market.rebindCommitter(free);
    }

    /// A rebind onto a record that lapses before the tenure's last possible commit is refused by name.
    function test_rebind_recordExpiresFirst_reverts() public {
        _attestWithKey(PROVIDER, 1, KEY, 7 days);
        uint256 id = _longJob();
        vm.prank(PROVIDER);
        market.acceptJob(id);
        uint256 due = block.timestamp + 3 days; // segment 0's deadline
        vm.warp(block.timestamp + 2 days);
        _attestWithKey(PROVIDER, 1, KEY2, 1 days);
        (, , uint64 expiresAt) = providers.tierAndSessionKey(PROVIDER);
        vm.prank(PROVIDER);
        // the last possible commit: segment 0 at its deadline, segment 1 one segmentTimeout later
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRecordExpiresFirst.selector, id, PROVIDER, expiresAt, due + 3 days));
        market.rebindCommitter(id);
    }

    /// Regression (red team "tier 1 without a key"): a request that declared no key no longer yields tier 1, so the
    /// provider gets no discounted lock and its commits, from its own address, are at tier 4.
    function test_regression_tierOneWithoutKey_noDiscount() public {
        _fundFee(providers, PROVIDER);
        vm.prank(PROVIDER);
        uint256 rid = providers.requestAttestation(_evidence(PROVIDER), _challengeBlock());
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, rid, 1, 90, uint64(block.timestamp + 1 days));
        bytes[] memory sigs = _committeeSigs(providers, rid, providers.digestOf(att), 2);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryTierNeedsSessionKey.selector, rid, 1));
        providers.record(att, sigs);
        uint256 id = _job(2);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 1e18, "no tier-1 discount");
    }

    /// Regression (red team "re-attested key, running job stuck on the lost key"): the machine restarts two days into
    /// a 2-segment job of 3-day segments; the provider re-attests with a new key, rebinds, commits from it, and the
    /// job completes instead of timing out with a slash.
    function test_regression_reattestedKey_rebindAvoidsTimeoutSlash() public {
        _attestWithKey(PROVIDER, 1, KEY, 7 days);
        uint256 id = _longJob();
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commit(KEY, id, 0);
        vm.warp(block.timestamp + 2 days);
        _attestWithKey(PROVIDER, 1, KEY2, 7 days);
        vm.prank(PROVIDER);
        market.rebindCommitter(id);
        uint256 stakeBefore = uint256(vault.accountOf(PROVIDER).free) + uint256(vault.accountOf(PROVIDER).locked);
        _commit(KEY2, id, 1);
        (,, IJobMarket.JobStatus status) = market.jobParties(id);
        assertEq(uint256(status), uint256(IJobMarket.JobStatus.Committed), "committed by the new key");
        vm.warp(block.timestamp + 3 days + 1);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketWrongStatus.selector, id, IJobMarket.JobStatus.Committed, IJobMarket.JobStatus.Active));
        market.reportTimeout(id);
        assertEq(uint256(vault.accountOf(PROVIDER).free) + uint256(vault.accountOf(PROVIDER).locked), stakeBefore, "no slash");
    }

    /// @dev A 2-segment job with 3-day segments (long enough to outlive the one-request-per-window rule).
    function _longJob() internal returns (uint256 id) {
        IJobMarket.Policy memory p = policy(2, 1e18);
        p.segmentTimeout = 3 days;
        vm.prank(BUYER);
        id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 1e18, p);
    }

    /// A tier-4 statement names no key even when its request declared one.
    function test_tierFourRecord_namesNoKey() public {
        _attestWithKey(PROVIDER, 4, KEY);
        (uint8 tier, address key,) = providers.tierAndSessionKey(PROVIDER);
        assertEq(tier, 4, "tier 4");
        assertEq(key, address(0), "no key with tier 4");
    }
}
