// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {AttackFixture} from "./test/AttackFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {IDisputeGameTypes} from "./interfaces/IDisputeGame.sol";

/// @notice Laundering a faulty segment by abandonment. An Active job past its segment deadline takes no new dispute
/// (JobMarket.freeze), anyone (the provider included) may report the timeout the second the deadline passes, and a
/// re-opened job continues from the last committed end state (JobMarket._anchor). If the timeout released the lock
/// and re-opened the job at once, a provider that commits a faulty segment and stops would be exposed for one segment
/// timeout (1 hour here) instead of a challenge window (1 day), lose only timeoutSlashBps (10%) of its lock, take the
/// job back and be paid for every later segment built on a state nobody could dispute any more.
///
/// The rule that stops it: a timeout of a tenure that committed segments leaves the job TimedOut for one challenge
/// window; those segments stay disputable, the rest of the lock stays locked, and only `reopenJob` after the window
/// (no dispute open) offers the job again.
contract DisputeGameAbandonTest is TestBase, AttackFixture {
    uint256 internal constant BAD_STEP = 2; // segment 0 (steps 1..4) holds the faulty step
    uint256 internal constant HONEST = type(uint256).max; // a trace with no faulty step

    function _sideWealth() internal view returns (uint256 w) {
        address[3] memory side = [provider, SYBIL_CHALLENGER_1, SYBIL_CHALLENGER_2];
        for (uint256 i; i < side.length; ++i) {
            address a = side[i];
            IStakeVault.Account memory acc = vault.accountOf(a);
            w += token.balanceOf(a) + game.creditOf(a) + vault.creditOf(a) + acc.free + acc.locked + acc.pendingWithdrawal
                + market.creditOf(a, address(token));
        }
    }

    /// The provider reports its own timeout at deadline + 1 and tries to take the job back and continue: it cannot, and
    /// an honest challenger disputes the faulty step well inside a window of its commit; the provider side loses at
    /// least the non-challenger share of the lock.
    function test_abandonment_faultySegmentStaysDisputableForAChallengeWindow() public {
        uint256 jobId = _job(2, 1, BAD_STEP); // segment 0 committed (faulty), segment 1 never comes
        uint256 committedAt = block.timestamp;
        uint256 side0 = _sideWealth();
        uint256 deadline = market.getJob(jobId).deadline;
        VM.warp(deadline + 1);
        VM.prank(provider);
        market.reportTimeout(jobId);
        IJobMarket.JobView memory j = market.getJob(jobId);
        assertTrue(j.status == IJobMarket.JobStatus.TimedOut, "timed out, not re-opened");
        assertEq(j.deadline, block.timestamp + policy(2).challengeWindow, "disputable for a window from the timeout");
        assertEq(vault.lockedFor(provider, jobId), STAKE, "the whole lock still locked: the timeout slash waits");
        // the provider can neither take the job back nor continue
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.TimedOut, IJobMarket.JobStatus.Open
            )
        );
        market.acceptJob(jobId);
        (, bytes32[4] memory hs) = leaves(jobId, 1, BAD_STEP);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.TimedOut, IJobMarket.JobStatus.Active
            )
        );
        market.commitSegment(jobId, 1, dyn(hs), 1, "cid");
        // an honest auditor disputes the faulty step inside one challenge window of its commit
        VM.warp(committedAt + policy(2).challengeWindow - 1);
        uint256 id = _challenge(HONEST_1, jobId, BAD_STEP, BAD_STEP);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketFrozen.selector, jobId, 1));
        market.reopenJob(jobId);
        VM.prank(provider);
        game.concede(id);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "job refunded");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "escrow back to the buyer");
        assertGe(side0 - _sideWealth(), STAKE / 2, "provider side lost at least the non-challenger share");
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.Conceded, "conceded");
    }

    /// Fuzzed timing: whenever the timeout is reported (by the provider or the buyer, any time after the deadline) and
    /// whenever the honest challenge comes until one window after the timeout, the challenge opens and the fault
    /// costs the provider side at least the non-challenger share of its lock.
    function testFuzz_abandonment_anyTiming_faultStaysReachable(uint32 reportDelay, uint32 challengeAt, bool byProvider)
        public
    {
        uint256 jobId = _job(3, 2, BAD_STEP + 4); // the faulty step is in segment 1 (steps 5..8)
        uint256 committedAt = block.timestamp;
        uint256 side0 = _sideWealth();
        uint256 window = policy(3).challengeWindow;
        uint256 deadline = market.getJob(jobId).deadline;
        uint256 reportedAt = deadline + 1 + bound(reportDelay, 0, window);
        // any time until a full window after the timeout, which is after every commit of the tenure
        uint256 challengedAt = bound(challengeAt, reportedAt, reportedAt + window);
        assertGe(reportedAt + window, committedAt + window, "the TimedOut window covers a window after the commit");
        VM.warp(reportedAt);
        VM.prank(byProvider ? provider : buyer);
        market.reportTimeout(jobId);
        VM.warp(challengedAt);
        uint256 id = _challenge(HONEST_2, jobId, BAD_STEP + 4, BAD_STEP + 4);
        VM.prank(provider);
        game.concede(id);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "job refunded");
        assertGe(side0 - _sideWealth(), STAKE / 2, "provider side lost at least the non-challenger share");
    }

    /// After the window with no dispute the job re-opens: the timed-out provider's lock is released (less the timeout
    /// slash), the job continues at the next segment, and the old tenure's segments are no longer disputable (they had
    /// a full window).
    function test_reopenJob_afterWindow_releasesLockAndOffersTheJob() public {
        uint256 jobId = _job(2, 1, HONEST);
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reportTimeout(jobId);
        uint256 until = market.getJob(jobId).deadline;
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketChallengeWindowOpen.selector, jobId, until, block.timestamp)
        );
        market.reopenJob(jobId);
        VM.warp(until + 1);
        // a dispute after the window is refused
        _commitChallenge(HONEST_1, jobId, 2);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketChallengeWindowClosed.selector, jobId, until, until + 2));
        VM.warp(until + 2);
        _challengeCommitted(HONEST_1, jobId, 2, HONEST);
        VM.prank(stranger);
        market.reopenJob(jobId);
        IJobMarket.JobView memory j = market.getJob(jobId);
        assertTrue(j.status == IJobMarket.JobStatus.Open, "re-opened");
        assertEq(j.provider, address(0), "no provider");
        assertEq(vault.lockedFor(provider, jobId), 0, "lock released");
        assertEq(vault.creditOf(buyer), STAKE / 10, "the timeout slash (10%) taken at the re-open");
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.Open, IJobMarket.JobStatus.TimedOut
            )
        );
        market.reopenJob(jobId);
        VM.prank(provider);
        market.acceptJob(jobId);
        assertEq(market.getJob(jobId).startSegment, 1, "continues at segment 1");
    }

    /// A tenure that committed nothing has nothing to dispute: its timeout re-opens the job at once.
    function test_reportTimeout_noCommitInTenure_reopensAtOnce() public {
        uint256 jobId = _job(2, 0, HONEST);
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reportTimeout(jobId);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Open, "re-opened");
        assertEq(vault.lockedFor(provider, jobId), 0, "lock released");
        assertEq(vault.creditOf(buyer), STAKE / 10, "timeout slash to the buyer");
    }

    /// Holding the escrow with tenures that commit nothing. reportTimeout of an idle tenure re-opens the job at once,
    /// and anyone may accept an Open job: a provider that reports its own timeout and re-accepts in the same block (or
    /// the same transaction) keeps the job from ever being Open at a block boundary, so the buyer's cancelJob never
    /// gets in. A zero timeout slash is refused at createJob, so each round costs it MIN_TIMEOUT_SLASH_BPS of its lock
    /// (to the buyer). The idle-timeout cap ends the loop: the MAX_IDLE_TIMEOUTS-th idle timeout cancels the job and
    /// credits the buyer the whole escrow.
    function test_idleTenureLoop_cannotHoldEscrow_endsCancelledAtCap() public {
        IJobMarket.Policy memory pol = policy(2);
        uint256 minBps = market.MIN_TIMEOUT_SLASH_BPS();
        pol.timeoutSlashBps = 0;
        VM.prank(buyer);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketTimeoutSlashTooLow.selector, 0, minBps));
        market.createJob(keccak256("idle"), "ipfs://m", address(token), PAYMENT, pol);
        pol.timeoutSlashBps = uint16(minBps); // the cheapest the attacker can get
        VM.prank(buyer);
        uint256 jobId = market.createJob(keccak256("idle"), "ipfs://m", address(token), PAYMENT, pol);
        uint256 free0 = vault.accountOf(provider).free;
        uint256 buyerStake0 = vault.creditOf(buyer);
        (, uint256 lock) = market.requiredStakeFor(jobId, provider);
        uint256 cap = market.MAX_IDLE_TIMEOUTS();
        VM.prank(provider);
        market.acceptJob(jobId);
        for (uint256 i = 1; i <= cap; ++i) {
            VM.warp(market.getJob(jobId).deadline + 1);
            VM.prank(provider);
            market.reportTimeout(jobId);
            if (i == cap) break;
            // same block: the provider takes the job back before the buyer's cancel lands
            VM.prank(provider);
            market.acceptJob(jobId);
            VM.prank(buyer);
            VM.expectRevert(
                abi.encodeWithSelector(
                    IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.Active, IJobMarket.JobStatus.Open
                )
            );
            market.cancelJob(jobId);
        }
        uint256 perRound = (lock * minBps) / 10_000;
        assertTrue(perRound > 0, "a round costs something");
        assertEq(free0 - vault.accountOf(provider).free, cap * perRound, "each idle round cost MIN_TIMEOUT_SLASH_BPS of the lock");
        assertEq(vault.creditOf(buyer) - buyerStake0, cap * perRound, "paid to the buyer");
        IJobMarket.JobView memory j = market.getJob(jobId);
        assertTrue(j.status == IJobMarket.JobStatus.Cancelled, "the cap ends the job");
        assertEq(j.provider, address(0), "no provider");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "whole escrow back to the buyer");
        assertEq(vault.lockedFor(provider, jobId), 0, "lock released");
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.Cancelled, IJobMarket.JobStatus.Open
            )
        );
        market.acceptJob(jobId);
    }

    /// Timing the timeout against an honest challenge in the same block, both orders. Past the deadline an Active job
    /// takes no dispute, and only reportTimeout (anyone's) makes it TimedOut, which does: a challenge that lands first
    /// reverts with nothing consumed (its commitment survives the revert) and succeeds right after the report, in the
    /// same block; one that lands after the report succeeds. At the deadline second itself the challenge opens and the
    /// report is refused, and then blocked until the dispute settles. The provider gains nothing from either order.
    function test_timeoutVsChallenge_sameBlock_eitherOrder_faultReachable() public {
        // order 1: challenge, then reportTimeout (the provider's), then the same challenge again
        uint256 jobA = _job(2, 1, BAD_STEP);
        uint256 deadline = market.getJob(jobA).deadline;
        _commitChallenge(HONEST_1, jobA, BAD_STEP);
        VM.warp(deadline + 1);
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketSegmentDeadlinePassed.selector, jobA, deadline, deadline + 1)
        );
        _challengeCommitted(HONEST_1, jobA, BAD_STEP, BAD_STEP);
        VM.prank(provider);
        market.reportTimeout(jobA);
        uint256 idA = _challengeCommitted(HONEST_1, jobA, BAD_STEP, BAD_STEP);
        assertTrue(game.getDispute(idA).status == IDisputeGameTypes.Status.Open, "challenge opens after the report");

        // order 2: reportTimeout first, then the challenge, same block
        uint256 jobB = _job(2, 1, BAD_STEP);
        _commitChallenge(HONEST_2, jobB, BAD_STEP);
        VM.warp(market.getJob(jobB).deadline + 1);
        VM.prank(provider);
        market.reportTimeout(jobB);
        uint256 idB = _challengeCommitted(HONEST_2, jobB, BAD_STEP, BAD_STEP);
        assertTrue(game.getDispute(idB).status == IDisputeGameTypes.Status.Open, "challenge opens on the TimedOut job");

        // the deadline second: the challenge opens, the report is refused then, and frozen after
        uint256 jobC = _job(2, 1, BAD_STEP);
        uint256 deadlineC = market.getJob(jobC).deadline;
        _commitChallenge(challenger, jobC, BAD_STEP);
        VM.warp(deadlineC);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketDeadlineNotPassed.selector, jobC, deadlineC, deadlineC)
        );
        market.reportTimeout(jobC);
        uint256 idC = _challengeCommitted(challenger, jobC, BAD_STEP, BAD_STEP);
        VM.warp(deadlineC + 1);
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketFrozen.selector, jobC, 1));
        market.reportTimeout(jobC);

        uint256[3] memory ids = [idA, idB, idC];
        for (uint256 i; i < 3; ++i) {
            VM.prank(provider);
            game.concede(ids[i]);
            assertTrue(market.getJob(game.getDispute(ids[i]).jobId).status == IJobMarket.JobStatus.Refunded, "refunded");
        }
    }

    /// The same provider times out, waits out the TimedOut window and re-accepts: acceptJob moves startSegment past
    /// the earlier tenure's segments, which are then no longer disputable. By construction that happens only after a
    /// full window from the timeout, which is after every commit of that tenure: the faulty segment was in reach for
    /// at least one challenge window after its commit.
    function test_reaccept_sameProvider_earlierSegmentsUndisputableOnlyAfterFullWindow() public {
        uint256 jobId = _job(3, 1, BAD_STEP);
        uint256 committedAt = block.timestamp;
        uint256 window = policy(3).challengeWindow;
        VM.warp(market.getJob(jobId).deadline + 1);
        VM.prank(provider);
        market.reportTimeout(jobId);
        uint256 until = market.getJob(jobId).deadline;
        _commitChallenge(HONEST_1, jobId, BAD_STEP);
        VM.warp(until + 1);
        VM.prank(provider);
        market.reopenJob(jobId);
        VM.prank(provider);
        market.acceptJob(jobId);
        assertGe(block.timestamp, committedAt + window + 1, "undisputable only after a full window from its commit");
        IJobMarket.JobView memory j = market.getJob(jobId);
        assertEq(j.startSegment, 1, "the new tenure starts after segment 0");
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSegmentNotDisputable.selector, jobId, 0, 1, 1)
        );
        _challengeCommitted(HONEST_1, jobId, BAD_STEP, BAD_STEP);
    }

    /// A NoDecision on a TimedOut job re-opens its window like a Committed one's (MAX_REOPENS is per tenure, shared by
    /// its TimedOut and Committed windows): a sybil dispute at the window's last second with silent
    /// panels does not launder the faulty segment; an honest challenge in the re-opened window still slashes.
    function test_timedOut_noDecisionAtWindowEnd_reopensWindow_faultStillReachable() public {
        uint256 jobId = _job(2, 1, BAD_STEP);
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reportTimeout(jobId);
        uint256 until = market.getJob(jobId).deadline;
        VM.warp(until);
        uint256 sybil = _challenge(SYBIL_CHALLENGER_1, jobId, 1, BAD_STEP); // step 1 is valid
        _resolveSilent(sybil); // silent panels: each round appealed, the last ends NoDecision
        assertTrue(game.getDispute(sybil).outcome == IDisputeGameTypes.Outcome.NoDecision, "no decision");
        assertEq(market.getJob(jobId).deadline, block.timestamp + policy(2).challengeWindow, "window re-opened");
        assertTrue(block.timestamp > until, "past the original TimedOut window");
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketChallengeWindowOpen.selector, jobId, market.getJob(jobId).deadline, block.timestamp
            )
        );
        market.reopenJob(jobId);
        uint256 honest = _challenge(HONEST_1, jobId, BAD_STEP, BAD_STEP);
        VM.prank(provider);
        game.concede(honest);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "refunded");
    }
}
