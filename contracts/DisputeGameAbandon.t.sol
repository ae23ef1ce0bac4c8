// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {AttackFixture} from "./test/AttackFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";

/// @notice KNOWN FAILING (bug report, see the wt-e report): a faulty segment can be laundered by abandonment.
///
/// Since 828af70 an Active job past its segment deadline takes no new dispute (JobMarket.freeze), and reportTimeout
/// may be called by anyone, the provider included, the second the deadline passes with no dispute open. After it, the
/// timed-out tenure's segments are no longer disputable (DisputeGame._checkSegment: segment >= startSegment), and the
/// next tenure must continue from the last committed end state (JobMarket._anchor: boundary rule). So a provider that
/// commits a faulty segment and then stops is exposed only for segmentTimeout (1 hour in the fixture) instead of a
/// challenge window (1 day), loses only timeoutSlashBps (10%) of its lock instead of at least (1 - challengerBps) of it,
/// may take the job back at once (acceptJob does not bar the provider that just timed out) and is paid for every later
/// segment, all built on the faulty state that nobody can dispute any more.
contract DisputeGameAbandonTest is TestBase, AttackFixture {
    function _sideWealth() internal view returns (uint256 w) {
        IStakeVault.Account memory acc = vault.accountOf(provider);
        w = token.balanceOf(provider) + game.creditOf(provider) + vault.creditOf(provider) + acc.free + acc.locked
            + acc.pendingWithdrawal + market.creditOf(provider, address(token));
    }

    /// A faulty step found within one challenge window of its commit must still be disputable and cost the provider side
    /// at least the non-challenger share of a lock, whatever the provider did in between (self-reported timeout,
    /// re-acceptance, more segments). Fails today with DisputeGameSegmentNotDisputable(jobId, 0, 1, 2).
    function test_abandonment_faultySegmentStaysDisputableForAChallengeWindow() public {
        uint256 jobId = _job(2, 1, 2); // segment 0 (steps 1..3) holds the faulty step 2; the job stays Active
        uint256 committedAt = block.timestamp;
        uint256 side0 = _sideWealth();
        VM.warp(market.getJob(jobId).deadline + 1);
        // the provider launders the segment: it reports its own timeout (no dispute is open yet), takes the job back
        // and continues from its own (faulty) end state
        VM.prank(provider);
        try market.reportTimeout(jobId) {
            VM.prank(provider);
            market.acceptJob(jobId);
            (, bytes32[4] memory hs) = leaves(jobId, 1, 2);
            VM.prank(provider);
            market.commitSegment(jobId, 1, dyn(hs), 1, "cid");
        } catch {}
        // an honest auditor disputes the faulty step well inside one challenge window of its commit
        assertLe(block.timestamp, committedAt + policy(2).challengeWindow, "inside a challenge window of the commit");
        _commitChallenge(HONEST_1, jobId, 2);
        uint256 id = _challengeCommitted(HONEST_1, jobId, 2, 2);
        VM.prank(provider);
        game.concede(id);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "job refunded");
        assertGe(side0 - _sideWealth(), STAKE / 2, "provider side lost at least the non-challenger share");
    }
}
