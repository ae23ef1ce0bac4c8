// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {AttackFixture} from "./test/AttackFixture.sol";
import {IDisputeGameTypes} from "./interfaces/IDisputeGame.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";

/// @notice Appeals in a small drawable pool. An appeal round is capped at the drawable pool (the snapshot minus the job's
/// provider, buyer and challenger, rounded down to an odd number), so with 4 drawable auditors every round has 3 seats
/// and two attacker auditors hold a majority of each with probability 1/2. A split Fault in a last round that seats no
/// more members than the round before ends NoDecision, so those re-rolled same-size panels never slash an honest
/// provider (without the rule, 24 false disputes slashed it: each with probability 1/8).
contract AppealSmallPoolTest is TestBase, AttackFixture {
    function _isSybil(address a) private pure returns (bool) {
        return _isSybilAuditor(a);
    }

    function _vote(uint256 id) private {
        address[] memory panel = _draw(id);
        for (uint256 i; i < panel.length; ++i) {
            _commitVote(id, panel[i], _isSybil(panel[i]) ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid);
        }
        for (uint256 i; i < panel.length; ++i) {
            _reveal(id, panel[i], _isSybil(panel[i]) ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid);
        }
    }

    /// Pool of 4 at the snapshot (2 honest, 2 attacker): three honest auditors asked to exit before the challenges.
    function test_evenPool_twoOfFour_honestProviderNeverSlashed() public {
        for (uint256 i = 2; i < 5; ++i) {
            VM.prank(auditors[i]);
            registry.requestExit();
        }
        _playFalseDisputes();
    }

    /// Pool of 6, the attacker holding 2 (33%), the honest provider and buyer bonded too (excluded from every draw): 4
    /// drawable, 3 seats a round.
    function test_partiesInPool_twoOfSix_honestProviderNeverSlashed() public {
        for (uint256 i = 2; i < 5; ++i) {
            VM.prank(auditors[i]);
            registry.requestExit();
        }
        VM.prank(provider);
        registry.postBond(AUDITOR_BOND);
        VM.prank(buyer);
        registry.postBond(AUDITOR_BOND);
        _playFalseDisputes();
    }

    function _playFalseDisputes() private {
        for (uint256 i; i < 2; ++i) {
            VM.prank(sybilAuditors[i]);
            registry.postBond(5000e18);
        }
        VM.warp(block.timestamp + ACTIVATION_DELAY);
        uint256 undecided;
        for (uint256 tries; tries < 24; ++tries) {
            uint256 jobId = _job(2, 2, HONEST_STEP_NONE);
            uint256 id = _challenge(SYBIL_CHALLENGER_1, jobId, 3, HONEST_STEP_NONE);
            for (uint256 r; r < game.MAX_ROUNDS(); ++r) {
                _vote(id);
                assertEq(game.getDispute(id).panel.length, 3, "every round of 4 drawable auditors has 3 seats");
                game.resolve(id);
                if (game.getDispute(id).status != IDisputeGameTypes.Status.Open) break;
            }
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            assertTrue(d.outcome != IDisputeGameTypes.Outcome.PanelFault, "no Fault for a false dispute");
            assertTrue(market.getJob(jobId).status != IJobMarket.JobStatus.Refunded, "the honest job is not faulted");
            if (d.outcome == IDisputeGameTypes.Outcome.NoDecision) ++undecided;
        }
        // the attacker took the last round's majority in some disputes (1 in 8 each): those ended NoDecision
        assertTrue(undecided > 0, "a captured same-size last round ended NoDecision");
    }

    uint256 internal constant HONEST_STEP_NONE = type(uint256).max;
}
