// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {JobMarket} from "./JobMarket.sol";
import {StakeVault} from "./StakeVault.sol";
import {IFixedRoles} from "./interfaces/IFixedRoles.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IJobRecords} from "./interfaces/IJobRecords.sol";
import {JobRecords} from "./JobRecords.sol";
import {IDataRegistry} from "./interfaces/IDataRegistry.sol";
import {Receipts} from "./libraries/Receipts.sol";
import {Leaves} from "./test/Leaves.sol";

/// @notice JobMarket terms: tier-gated acceptance with tier-scaled stake, data shares at finalize,
/// improvement weights, audit receipts and provenance anchoring.
contract JobMarketTermsTest is TestBase, TermsFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER2 = address(0xB3);
    address internal constant CONTRIBUTOR = address(0xC0);
    address[4] internal PAYOUTS = [address(0xD1), address(0xD2), address(0xD3), address(0xD4)];

    function setUp() public {
        vm.warp(1_700_000_000);
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

    function _create(uint16 segments, uint128 payment, uint128 stake, IJobMarket.Terms memory t)
        internal
        returns (uint256 id)
    {
        vm.prank(BUYER);
        id = market.createJobWithTerms(keccak256("manifest"), "ipfs://m", address(token), payment, policy(segments, stake), t);
    }

    function _noCorpora(uint8 minTier) internal pure returns (IJobMarket.Terms memory t) {
        t.minTier = minTier;
    }

    function _commitAll(uint256 id, address provider, uint256 from, uint256 to) internal {
        for (uint256 s = from; s < to; ++s) {
            vm.prank(provider);
            market.commitSegment(id, s, Leaves.hashes(keccak256("t"), id, s, 4), 1, "bafy");
        }
    }

    // ------------------------------------------------------------ tiers and stake

    /// The lock is ceil(requiredStake * multiplier[tier] / 10,000); tier 4 (none) pays the most.
    function testFuzz_acceptJob_stakeScalesWithTier(uint8 tier, uint128 stake) public {
        tier = uint8(bound(tier, 1, 4));
        stake = uint128(bound(stake, 1, 1e24));
        if (tier != 4) _attest(providers, PROVIDER, tier, uint64(block.timestamp + 1 days), 2);
        uint256 id = _create(2, 1e18, stake, _noCorpora(tier));
        (uint8 t, uint256 expected) = market.requiredStakeFor(id, PROVIDER);
        assertEq(t, tier, "effective tier");
        uint256 m = market.stakeMultiplierBps(tier);
        assertEq(expected, (uint256(stake) * m + 9_999) / 10_000, "ceil rule");
        assertGe(expected, 1, "never zero");
        assertLe(expected, stake, "never above the policy stake");
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), expected, "locked the scaled stake");
    }

    function test_stakeMultiplier_isMonotoneInTier() public view {
        assertEq(market.stakeMultiplierBps(1), 5_000, "tier 1");
        assertEq(market.stakeMultiplierBps(2), 6_250, "tier 2");
        assertEq(market.stakeMultiplierBps(3), 7_500, "tier 3");
        assertEq(market.stakeMultiplierBps(4), 10_000, "tier 4");
    }

    function test_stakeMultiplier_invalidTier_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidTier.selector, 0));
        market.stakeMultiplierBps(0);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidTier.selector, 5));
        market.stakeMultiplierBps(5);
    }

    function testFuzz_acceptJob_weakerThanMinTier_reverts(uint8 minTier, uint8 tier) public {
        minTier = uint8(bound(minTier, 1, 3));
        tier = uint8(bound(tier, minTier + 1, 4));
        if (tier != 4) _attest(providers, PROVIDER, tier, uint64(block.timestamp + 1 days), 2);
        uint256 id = _create(1, 1e18, 1e18, _noCorpora(minTier));
        uint256 free = vault.accountOf(PROVIDER).free;
        vm.prank(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketTierTooLow.selector, id, PROVIDER, tier, minTier));
        market.acceptJob(id);
        assertEq(vault.accountOf(PROVIDER).free, free, "nothing locked");
    }

    function test_acceptJob_expiredAttestation_isTierFour() public {
        _attest(providers, PROVIDER, 1, uint64(block.timestamp + 1 hours), 2);
        uint256 id = _create(1, 1e18, 1e18, _noCorpora(1));
        vm.warp(block.timestamp + 1 hours);
        vm.prank(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketTierTooLow.selector, id, PROVIDER, 4, 1));
        market.acceptJob(id);
    }

    function test_createJobWithTerms_invalidMinTier_reverts() public {
        vm.prank(BUYER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidTier.selector, 5));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _noCorpora(5));
    }

    // ------------------------------------------------------------ corpora and data shares

    /// contributor credits + provider credits + refunds == escrowed payment, to the wei, through the real
    /// market: any payment, share, token counts, recorded weights, and an optional timeout re-open.
    function testFuzz_finalize_dataShares_conservePaymentExactly(
        uint128 payment,
        uint16 bps,
        uint96[4] memory tokens,
        uint32[4] memory weights,
        uint8 weightedMask,
        uint8 n,
        uint16 done
    ) public {
        payment = uint128(bound(payment, 1, 1e27));
        bps = uint16(bound(bps, 1, 10_000));
        n = uint8(bound(n, 1, 4));
        uint256 id = _dataJob(payment, bps, tokens, weights, weightedMask, n);
        address last = _runToFinal(id, 4, uint16(bound(done, 0, 4))); // done == 4: no re-open
        _checkConservation(id, payment, bps, n, last);
    }

    function _dataJob(
        uint128 payment,
        uint16 bps,
        uint96[4] memory tokens,
        uint32[4] memory weights,
        uint8 weightedMask,
        uint8 n
    ) internal returns (uint256 id) {
        uint64[] memory ids = new uint64[](n);
        uint96[] memory toks = new uint96[](n);
        for (uint256 i; i < n; ++i) {
            ids[i] = _corpus(CONTRIBUTOR, PAYOUTS[i], i + 100 * uint256(n));
            toks[i] = uint96(bound(tokens[i], 1, 1e27));
        }
        id = _create(4, payment, 1e20, _terms(0, bps, ids, toks));
        for (uint256 i; i < n; ++i) {
            if (weightedMask & (1 << i) != 0) market.recordImprovement(id, ids[i], uint32(bound(weights[i], 0, 10_000_000)));
        }
    }

    /// @dev Accept, commit `done` segments, time out and re-open with PROVIDER2 if done < segments, finish, finalize.
    function _runToFinal(uint256 id, uint16 segments, uint16 done) internal returns (address last) {
        vm.prank(PROVIDER);
        market.acceptJob(id);
        last = PROVIDER;
        uint16 from;
        if (done < segments) {
            _commitAll(id, PROVIDER, 0, done);
            vm.warp(block.timestamp + 1 hours + 1);
            market.reportTimeout(id);
            if (done != 0) {
                // the tenure's segments stay disputable for a window before the job re-opens
                vm.warp(market.getJob(id).deadline + 1);
                market.reopenJob(id);
            }
            vm.prank(PROVIDER2);
            market.acceptJob(id);
            last = PROVIDER2;
            from = done;
        }
        _commitAll(id, last, from, segments);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        if (last == PROVIDER2) assertEq(market.creditOf(PROVIDER, address(token)), 0, "timed-out provider unpaid");
    }

    function _checkConservation(uint256, uint128 payment, uint16 bps, uint8 n, address last) internal view {
        uint256 contributors;
        for (uint256 i; i < n; ++i) {
            contributors += market.creditOf(PAYOUTS[i], address(token));
        }
        uint256 paid = contributors + market.creditOf(last, address(token)) + market.creditOf(BUYER, address(token));
        assertEq(paid, payment, "credits + provider + refund == payment");
        assertLe(contributors, (uint256(payment) * bps) / 10_000, "contributors get at most the pool");
        assertEq(token.balanceOf(address(market)), payment, "market holds exactly what it owes");
    }

    function test_finalize_weightsAndTokens_knownSplit() public {
        uint64 a = _corpus(CONTRIBUTOR, PAYOUTS[0], 1);
        uint64 b = _corpus(CONTRIBUTOR, PAYOUTS[1], 2);
        uint64[] memory ids = new uint64[](2);
        uint96[] memory toks = new uint96[](2);
        (ids[0], ids[1], toks[0], toks[1]) = (a, b, 1_000, 3_000);
        uint256 id = _create(1, 1_000_001, 1e18, _terms(0, 1_000, ids, toks));
        market.recordImprovement(id, b, 0); // corpus b measured no improvement
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, 1);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        // pool = 100000; a weighs 1000 * 1.0, b weighs 3000 * 0 -> a gets the whole pool.
        assertEq(market.creditOf(PAYOUTS[0], address(token)), 100_000, "a");
        assertEq(market.creditOf(PAYOUTS[1], address(token)), 0, "b");
        assertEq(market.creditOf(PROVIDER, address(token)), 900_001, "provider");
        (uint8 minTier, uint16 share, IJobMarket.JobCorpus[] memory corpora) = market.termsOf(id);
        assertEq(minTier, 0, "minTier");
        assertEq(share, 1_000, "share");
        assertEq(corpora.length, 2, "corpora");
        assertTrue(corpora[1].weighted && corpora[1].weightE6 == 0, "b weighted 0");
        assertTrue(!corpora[0].weighted, "a unweighted");
        vm.prank(PAYOUTS[0]);
        market.claim(address(token));
        assertEq(token.balanceOf(PAYOUTS[0]), 100_000, "contributor claimed");
    }

    /// Retirement rule: a corpus retired after the job was created is still paid, to its current payout.
    function test_finalize_retiredCorpus_paysCurrentPayout() public {
        uint64 a = _corpus(CONTRIBUTOR, PAYOUTS[0], 1);
        uint64[] memory ids = new uint64[](1);
        uint96[] memory toks = new uint96[](1);
        (ids[0], toks[0]) = (a, 5);
        uint256 id = _create(1, 1e18, 1e18, _terms(0, 2_500, ids, toks));
        vm.prank(CONTRIBUTOR);
        data.retire(a);
        // Only the payout address itself moves the payout (IDataRegistry: payout rule).
        vm.prank(PAYOUTS[0]);
        data.setPayout(a, PAYOUTS[3]);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, 1);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        assertEq(market.creditOf(PAYOUTS[3], address(token)), 0.25e18, "retired corpus paid at its current payout");
        assertEq(market.creditOf(PAYOUTS[0], address(token)), 0, "old payout gets nothing");
        // ... but no new job may reference it.
        vm.prank(BUYER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryRetired.selector, a));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, ids, toks));
    }

    function test_createJobWithTerms_badCorpora_revert() public {
        uint64 a = _corpus(CONTRIBUTOR, PAYOUTS[0], 1);
        uint64[] memory ids = new uint64[](2);
        uint96[] memory toks = new uint96[](2);
        (ids[0], ids[1], toks[0], toks[1]) = (a, a, 1, 1);
        vm.startPrank(BUYER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketCorporaNotAscending.selector, a, a));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, ids, toks));
        (ids[0], ids[1], toks[1]) = (a, 7, 1);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryUnknownCorpus.selector, 7));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, ids, toks));
        (ids[1], toks[0]) = (a + 1, 0);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketZeroTokens.selector, a));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, ids, toks));
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidDataShare.selector, 100, 0));
        market.createJobWithTerms(
            keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, new uint64[](0), new uint96[](0))
        );
        toks[0] = 1;
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidDataShare.selector, 10_001, 2));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 10_001, ids, toks));
        uint64[] memory many = new uint64[](17);
        uint96[] memory manyToks = new uint96[](17);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketTooManyCorpora.selector, 17, 16));
        market.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, many, manyToks));
        vm.stopPrank();
        assertEq(token.balanceOf(address(market)), 0, "no escrow taken");
    }

    function test_recordImprovement_guards() public {
        uint64 a = _corpus(CONTRIBUTOR, PAYOUTS[0], 1);
        uint64[] memory ids = new uint64[](1);
        uint96[] memory toks = new uint96[](1);
        (ids[0], toks[0]) = (a, 5);
        uint256 id = _create(1, 1e18, 1e18, _terms(0, 100, ids, toks));
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidWeight.selector, 10_000_001, 10_000_000));
        market.recordImprovement(id, a, 10_000_001);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketCorpusNotInJob.selector, id, a + 1));
        market.recordImprovement(id, a + 1, 1);
        market.recordImprovement(id, a, 2_000_000);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketImprovementAlreadyRecorded.selector, id, a));
        market.recordImprovement(id, a, 1);
        vm.prank(BUYER);
        market.cancelJob(id);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketJobClosed.selector, id, IJobMarket.JobStatus.Cancelled));
        market.recordImprovement(id, a, 1);
    }

    // ------------------------------------------------------------ wiring

    function test_setRegistries_onceAndNonZero() public {
        // The fixture's market is wired: its wirer is gone, so nobody can set the registries again.
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        market.setRegistries(registry, providers, data);
        JobMarket fresh = new JobMarket(vault, address(this));
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketZeroRegistry.selector));
        fresh.setRegistries(registry, providers, IDataRegistry(address(0)));
        fresh.setRegistries(registry, providers, data);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRegistriesAlreadySet.selector));
        fresh.setRegistries(registry, providers, data);
        vm.prank(CONTRIBUTOR);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, CONTRIBUTOR, address(this)));
        fresh.setRegistries(registry, providers, data);
        (address au, address pr, address da) = market.registries();
        assertEq(au, address(registry), "auditors");
        assertEq(pr, address(providers), "providers");
        assertEq(da, address(data), "data");
    }

    function test_unwiredMarket_refusesCorporaAndReceipts_tierFourForAll() public {
        JobMarket fresh = new JobMarket(vault, address(this));
        uint64 a = _corpus(CONTRIBUTOR, PAYOUTS[0], 1);
        uint64[] memory ids = new uint64[](1);
        uint96[] memory toks = new uint96[](1);
        (ids[0], toks[0]) = (a, 5);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketRegistriesNotSet.selector));
        fresh.createJobWithTerms(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18), _terms(0, 100, ids, toks));
        _attest(providers, PROVIDER, 1, uint64(block.timestamp + 1 days), 2);
        (uint8 tier,) = fresh.requiredStakeFor(1, PROVIDER);
        assertEq(tier, 4, "no registry: tier 4");
        // A receipt for a committed segment of the market without registries: refused for lack of an auditor
        // registry. Roles are fixed, so this market needs its own vault (wired to it, once).
        StakeVault freshVault = new StakeVault(token, UNBONDING, address(this));
        fresh = new JobMarket(freshVault, address(this));
        freshVault.wire(address(fresh), address(0));
        fresh.wire(address(dispute), address(0));
        vm.startPrank(PROVIDER);
        token.approve(address(freshVault), 1e18);
        freshVault.deposit(1e18);
        vm.stopPrank();
        token.approve(address(fresh), 1e18);
        token.mint(address(this), 1e18);
        uint256 id = fresh.createJob(keccak256("m"), "u", address(token), 1e18, policy(1, 1e18));
        vm.prank(PROVIDER);
        fresh.acceptJob(id);
        vm.prank(PROVIDER);
        fresh.commitSegment(id, 0, Leaves.hashes(keccak256("t"), id, 0, 4), 1, "bafy");
        JobRecords freshRecords = new JobRecords(fresh);
        Receipts.AuditReceipt memory r = _receipt(id, 0);
        bytes memory sig = _sig(_auditorKeys[0], freshRecords.receiptDigest(r));
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsRegistriesNotSet.selector));
        freshRecords.recordReceipt(r, Leaves.end(keccak256("t"), id, 0, 4), sig);
    }

    // ------------------------------------------------------------ receipts

    function _receipt(uint256 id, uint32 segment) internal pure returns (Receipts.AuditReceipt memory) {
        return Receipts.AuditReceipt({
            jobId: id,
            segment: segment,
            traceRoot: Leaves.root(keccak256("t"), id, segment, 4),
            checks: 1 | 4,
            sampledSteps: 3,
            verdict: 0
        });
    }

    function _committedJob() internal returns (uint256 id) {
        id = _create(2, 1e18, 1e18, _noCorpora(0));
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, 1);
    }

    function test_recordReceipt_anchorsDigestOnce() public {
        uint256 id = _committedJob();
        Receipts.AuditReceipt memory r = _receipt(id, 0);
        bytes32 digest = records.receiptDigest(r);
        bytes memory sig = _sig(_auditorKeys[1], digest);
        address auditor = records.recordReceipt(r, Leaves.end(keccak256("t"), id, 0, 4), sig);
        assertEq(auditor, vm.addr(_auditorKeys[1]), "signer");
        assertEq(records.receiptOf(id, 0, auditor), digest, "digest stored");
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsDuplicateReceipt.selector, id, 0, auditor));
        records.recordReceipt(r, Leaves.end(keccak256("t"), id, 0, 4), sig);
        // A second auditor's receipt for the same segment is its own record.
        records.recordReceipt(r, Leaves.end(keccak256("t"), id, 0, 4), _sig(_auditorKeys[2], digest));
    }

    function test_recordReceipt_badReceipts_revert() public {
        uint256 id = _committedJob();
        bytes32 end0 = Leaves.end(keccak256("t"), id, 0, 4);
        Receipts.AuditReceipt memory r = _receipt(id, 0);
        r.checks = 64;
        bytes memory sig = _sig(_auditorKeys[0], records.receiptDigest(r));
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsMalformedReceipt.selector, 64, 0));
        records.recordReceipt(r, end0, sig);
        r.checks = 1;
        r.verdict = 2;
        sig = _sig(_auditorKeys[0], records.receiptDigest(r));
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsMalformedReceipt.selector, 1, 2));
        records.recordReceipt(r, end0, sig);
        // Uncommitted segment 1, and a wrong end state hash for segment 0.
        r = _receipt(id, 1);
        sig = _sig(_auditorKeys[0], records.receiptDigest(r));
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsReceiptMismatch.selector, id, 1));
        records.recordReceipt(r, keccak256(abi.encode(uint256(1), 1)), sig);
        r = _receipt(id, 0);
        sig = _sig(_auditorKeys[0], records.receiptDigest(r));
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsReceiptMismatch.selector, id, 0));
        records.recordReceipt(r, keccak256("wrong end"), sig);
        // Signed by a non-auditor, or for other fields.
        sig = _sig(0xBAD, records.receiptDigest(r));
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsNotAuditor.selector, vm.addr(0xBAD)));
        records.recordReceipt(r, end0, sig);
        sig = _sig(_auditorKeys[0], records.receiptDigest(r));
        r.sampledSteps = 4;
        vm.expectPartialRevert(IJobRecords.JobRecordsNotAuditor.selector);
        records.recordReceipt(r, end0, sig);
        r = _receipt(99, 0);
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsUnknownJob.selector, 99));
        records.recordReceipt(r, end0, sig);
    }

    // ------------------------------------------------------------ provenance

    function test_anchorProvenance_providerOnceAfterFinalize() public {
        uint256 id = _create(1, 1e18, 1e18, _noCorpora(0));
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commitAll(id, PROVIDER, 0, 1);
        vm.prank(PROVIDER);
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobRecords.JobRecordsWrongStatus.selector, id, IJobMarket.JobStatus.Committed, IJobMarket.JobStatus.Finalized
            )
        );
        records.anchorProvenance(id, keccak256("record"), "bafy-weights");
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        vm.prank(BUYER);
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsNotProvider.selector, id, BUYER, PROVIDER));
        records.anchorProvenance(id, keccak256("record"), "bafy-weights");
        vm.prank(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsZeroProvenance.selector));
        records.anchorProvenance(id, bytes32(0), "bafy-weights");
        vm.prank(PROVIDER);
        records.anchorProvenance(id, keccak256("record"), "bafy-weights");
        (bytes32 recordHash, bytes32 cidHash, uint64 at) = records.provenanceOf(id);
        assertEq(recordHash, keccak256("record"), "record hash");
        assertEq(cidHash, keccak256("bafy-weights"), "weights cid hash");
        assertEq(at, block.timestamp, "anchored at");
        vm.prank(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsProvenanceAlreadyAnchored.selector, id));
        records.anchorProvenance(id, keccak256("other"), "bafy-weights");
    }

    function test_anchorProvenance_unknownJob_reverts() public {
        vm.prank(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsUnknownJob.selector, 99));
        records.anchorProvenance(99, keccak256("record"), "bafy-weights");
    }

    function test_jobRecords_zeroMarket_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobRecords.JobRecordsZeroMarket.selector));
        new JobRecords(IJobMarket(address(0)));
    }

    /// Receipts are signed under the records contract's own domain: a signature for the market's address (the domain
    /// before the records moved out of JobMarket) does not verify.
    function test_receiptDigest_boundToRecordsAddress() public view {
        assertEq(records.market(), address(market), "market");
        Receipts.AuditReceipt memory r = _receipt(1, 0);
        bytes32 structHash = Receipts.hash(r);
        bytes32 sep = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256(bytes(Receipts.JOB_MARKET_DOMAIN_NAME)),
                keccak256(bytes(Receipts.DOMAIN_VERSION)),
                block.chainid,
                address(records)
            )
        );
        assertEq(records.domainSeparator(), sep, "domain of the records contract");
        assertEq(records.receiptDigest(r), keccak256(abi.encodePacked("\x19\x01", sep, structHash)), "digest");
    }
}
