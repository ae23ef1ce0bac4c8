// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {JobMarketExtension} from "./JobMarketExtension.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice A tier proven false (statement dispute upheld) or revoked ("revoked since") mid-job loses its discount and
/// its session key: `retier` (anyone) locks the stake the provider's current tier requires from its free stake, or,
/// when that stake is not there (or the tier no longer meets the job's minimum), ends the tenure as a missed deadline
/// would; a tenure whose tier still holds is refused by name.
contract JobMarketRetierTest is TestBase, TermsFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER2 = address(0xB3);
    address internal constant CHALLENGER = address(0xC4);
    address internal constant STRANGER = address(0x57);
    address internal constant KEY = address(0x5E55);

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        // a committee of 3 signs, and a statement panel of 3 is drawn from the 5 that did not
        _bondAuditors(token, registry, 8);
        address[3] memory who = [BUYER, PROVIDER2, CHALLENGER];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            token.approve(address(providers), type(uint256).max);
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

    // ---------------------------------------------------------------- helpers

    function _deposit(address provider, uint256 amount) internal {
        vm.prank(provider);
        vault.deposit(amount);
    }

    /// @dev `provider` is recorded at `tier` for a day from a request that declared `key`.
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

    /// @dev PROVIDER's statement is disputed and two panel members decide it: "false" (upheld: its signers forfeit) or
    /// "revoked since" (it held when signed). Either way PROVIDER's tier is 4 afterwards.
    function _downgrade(bool upheld) internal {
        vm.prank(CHALLENGER);
        uint256 id = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
        address[] memory panel = providers.drawDisputePanel(id);
        for (uint256 i; i < 2; ++i) {
            vm.prank(panel[i]);
            if (upheld) providers.voteDispute(id, true);
            else providers.voteRevoked(id);
        }
        assertEq(providers.effectiveTier(PROVIDER), 4, "downgraded to tier 4");
    }

    function _job(uint16 segments, uint8 minTier) internal returns (uint256 id) {
        vm.prank(BUYER);
        id = market.createJobWithTerms(
            keccak256("manifest"),
            "ipfs://m",
            address(token),
            1e18,
            policy(segments, 1e18),
            _terms(minTier, 0, new uint64[](0), new uint96[](0))
        );
    }

    function _accept(address provider, uint256 id) internal {
        vm.prank(provider);
        market.acceptJob(id);
    }

    function _commit(address from, uint256 id, uint256 s) internal {
        vm.prank(from);
        market.commitSegment(id, s, Leaves.hashes(keccak256("t"), id, s, 4), 1, "bafy");
    }

    function _status(uint256 id) internal view returns (IJobMarket.JobStatus status) {
        (,, status) = market.jobParties(id);
    }

    // ---------------------------------------------------------------- the stake is there: top up

    /// Tier 1 (half the stake, a session key) revoked mid-job: a stranger's retier locks the other half from the
    /// provider's free stake and the tenure commits from the provider (the key no longer holds a tier). Without retier
    /// the tenure kept the half lock and the key to the end.
    function test_revokedMidJob_freeStake_topsUpToFullLock_andUnbindsKey() public {
        _deposit(PROVIDER, 1e24);
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(2, 0);
        _accept(PROVIDER, id);
        assertEq(vault.lockedFor(PROVIDER, id), 0.5e18, "tier-1 lock");
        _commit(KEY, id, 0);
        _downgrade(false);
        (uint8 tier, uint256 stake) = market.requiredStakeFor(id, PROVIDER);
        assertEq(tier, 4, "current tier");
        assertEq(stake, 1e18, "the stake tier 4 requires");
        uint256 freeBefore = vault.accountOf(PROVIDER).free;
        vm.expectEmit(true, true, true, true, address(market));
        emit IJobMarket.TenureRetiered(id, PROVIDER, 4, 0.5e18, false);
        vm.expectEmit(true, true, true, true, address(vault));
        emit IStakeVault.StakeToppedUp(PROVIDER, id, 0.5e18, 1e18);
        vm.prank(STRANGER);
        market.retier(id);
        assertEq(vault.lockedFor(PROVIDER, id), 1e18, "the full stake is locked");
        assertEq(vault.accountOf(PROVIDER).free, freeBefore - 0.5e18, "from the free stake");
        assertEq(market.committerOf(id), address(0), "no session key any more");
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Active), "the tenure goes on");
        // the key's commits are refused; the provider commits and is paid as usual
        bytes32[] memory leaves = Leaves.hashes(keccak256("t"), id, 1, 4);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketNotProvider.selector, id, KEY, PROVIDER));
        vm.prank(KEY);
        market.commitSegment(id, 1, leaves, 1, "bafy");
        // a second retier has nothing to do
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRetierNotNeeded.selector, id, 4, 1e18, 1e18));
        market.retier(id);
        _commit(PROVIDER, id, 1);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0, "unlocked at finalize");
        assertEq(vault.accountOf(PROVIDER).free, freeBefore + 0.5e18, "the whole lock comes back");
    }

    // ---------------------------------------------------------------- the stake is not there: end the tenure

    /// A statement proven false (upheld) whose provider holds no more free stake than the discounted lock: the tenure
    /// ends as a timeout ends it. It committed nothing, so the job re-opens at once, the timeout slash (10% of the lock)
    /// goes to the buyer and the rest of the lock comes back; another provider takes the job.
    function test_upheldMidJob_noFreeStake_idleTenure_endsAndReopens() public {
        _deposit(PROVIDER, 0.5e18);
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(2, 0);
        _accept(PROVIDER, id);
        assertEq(vault.accountOf(PROVIDER).free, 0, "everything locked");
        _downgrade(true);
        vm.expectEmit(true, true, true, true, address(market));
        emit IJobMarket.TenureRetiered(id, PROVIDER, 4, 0, true);
        vm.expectEmit(true, true, true, true, address(market));
        emit IJobMarket.JobTimedOut(id, PROVIDER, 0, 0.05e18, 0);
        vm.prank(STRANGER);
        market.retier(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Open), "re-opened");
        assertEq(vault.lockedFor(PROVIDER, id), 0, "lock released");
        assertEq(vault.accountOf(PROVIDER).free, 0.45e18, "no slash beyond the timeout slash");
        assertEq(vault.creditOf(BUYER), 0.05e18, "the timeout slash goes to the buyer");
        _accept(PROVIDER2, id);
        assertEq(vault.lockedFor(PROVIDER2, id), 1e18, "the next provider's lock");
    }

    /// The same with a committed segment: the job goes TimedOut (its segment stays disputable for one window), then
    /// reopenJob re-opens it after the window, as after a missed deadline.
    function test_revokedMidJob_noFreeStake_committedTenure_timesOutThenReopens() public {
        _deposit(PROVIDER, 0.7e18);
        _attestWithKey(PROVIDER, 2, KEY);
        uint256 id = _job(3, 0);
        _accept(PROVIDER, id);
        assertEq(vault.lockedFor(PROVIDER, id), 0.625e18, "tier-2 lock");
        _commit(KEY, id, 0);
        _downgrade(false);
        // 0.075e18 free: short of the 0.375e18 tier 4 adds
        vm.prank(STRANGER);
        market.retier(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.TimedOut), "timed out");
        IJobMarket.JobView memory v = market.getJob(id);
        assertEq(v.deadline, block.timestamp + 1 days, "segment 0 disputable for one window");
        assertEq(vault.lockedFor(PROVIDER, id), 0.625e18, "the whole lock stays behind the segment");
        assertEq(vault.creditOf(BUYER), 0, "the timeout slash waits for the window");
        vm.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketChallengeWindowOpen.selector, id, v.deadline, block.timestamp)
        );
        market.reopenJob(id);
        vm.warp(block.timestamp + 1 days + 1);
        market.reopenJob(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Open), "re-opened");
        assertEq(vault.lockedFor(PROVIDER, id), 0, "released after the window");
        assertEq(vault.creditOf(BUYER), 0.0625e18, "less the timeout slash, to the buyer");
    }

    /// A job that admits tier 1 only: a provider whose tier fell no longer qualifies, whatever stake it holds, so its
    /// tenure ends.
    function test_minTierJob_tierFell_endsTenureEvenWithFreeStake() public {
        _deposit(PROVIDER, 1e24);
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(2, 1);
        _accept(PROVIDER, id);
        _downgrade(true);
        vm.expectEmit(true, true, true, true, address(market));
        emit IJobMarket.TenureRetiered(id, PROVIDER, 4, 0, true);
        market.retier(id);
        assertEq(uint256(_status(id)), uint256(IJobMarket.JobStatus.Open), "re-opened");
        assertEq(vault.lockedFor(PROVIDER, id), 0, "released");
    }

    /// A tenure that must end while a dispute holds the job waits for the dispute (the lock stays as it is).
    function test_frozenJob_endingRetier_reverts() public {
        _deposit(PROVIDER, 0.5e18);
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(2, 0);
        _accept(PROVIDER, id);
        _commit(KEY, id, 0);
        dispute.freeze(id);
        _downgrade(true);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketFrozen.selector, id, 1));
        market.retier(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0.5e18, "lock untouched");
    }

    // ---------------------------------------------------------------- nothing to do, wrong state, access

    /// A tier that still holds, and a tier-4 tenure (full lock), are refused by name; so is a job that is not Active.
    function test_tierHolds_orNotActive_reverts() public {
        _deposit(PROVIDER, 1e24);
        _attestWithKey(PROVIDER, 1, KEY);
        uint256 id = _job(2, 0);
        vm.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketWrongStatus.selector, id, IJobMarket.JobStatus.Open, IJobMarket.JobStatus.Active)
        );
        market.retier(id);
        _accept(PROVIDER, id);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRetierNotNeeded.selector, id, 1, 0.5e18, 0.5e18));
        market.retier(id);
        uint256 id2 = _job(2, 0);
        _accept(PROVIDER2, id2);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRetierNotNeeded.selector, id2, 4, 1e18, 1e18));
        market.retier(id2);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketUnknownJob.selector, 99));
        market.retier(99);
    }

    /// JobMarketExtension runs on JobMarket's storage only; the vault's top-up is the market's.
    function test_extensionDirectCall_andVaultTopUp_access() public {
        address ext = market.extension();
        vm.expectRevert(abi.encodeWithSelector(JobMarketExtension.JobMarketExtensionDirectCall.selector, ext));
        JobMarketExtension(ext).retier(1);
        vm.expectRevert(abi.encodeWithSelector(JobMarketExtension.JobMarketExtensionDirectCall.selector, ext));
        JobMarketExtension(ext).createJob(keccak256("m"), "ipfs://m", address(token), 1e18, policy(1, 1e18));
        vm.expectRevert(
            abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, STRANGER, vault.MARKET_ROLE())
        );
        vm.prank(STRANGER);
        vault.topUp(PROVIDER, 1, 1);
        vm.expectRevert(abi.encodeWithSelector(IStakeVault.StakeVaultNotLocked.selector, PROVIDER, 1));
        vm.prank(address(market));
        vault.topUp(PROVIDER, 1, 1);
        vm.expectRevert(abi.encodeWithSelector(IStakeVault.StakeVaultZeroAmount.selector));
        vm.prank(address(market));
        vault.topUp(PROVIDER, 1, 0);
    }
}
