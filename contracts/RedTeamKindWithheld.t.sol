// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AttackFixture} from "./test/AttackFixture.sol";
import {IDisputeGameTypes} from "./interfaces/IDisputeGame.sol";

/// @notice Red team regression: withhold-then-publish bait on an inference (evaluate/generate) job's first segment.
/// The bot's kind audit claims a withheld states file of segment 0 at example 2 (kinds/job.ts fileDependentExample:
/// state 0 is the fixed initial state, so example 1 needs no file), which is not a segment start. A provider that
/// withholds segment 0's states file until a bot challenges example 2 and then publishes (the panel recomputes example
/// 2 Valid) must not collect the honest bot's bond: DisputeSettlement burns it (_atKindFileClaim), as it burns a wrong
/// challenge of a segment start. A griefer's wrong challenge of a correct example still loses its whole bond, there
/// (burned) and at any other example (paid to the provider).
contract RedTeamKindWithheldTest is TestBase, AttackFixture {
    uint256 internal constant HONEST = type(uint256).max;
    IDisputeGameTypes.Vote internal constant VALID_V = IDisputeGameTypes.Vote.Valid;
    uint8 internal constant EVALUATE = 1;

    /// @dev A job of `segments` segments of K = 3 examples posted with createKindJob (evaluate), accepted and committed.
    function _kindJob(uint16 segments, uint256 commits) internal returns (uint256 jobId) {
        vm.prank(buyer);
        jobId = market.createKindJob(
            keccak256("kind manifest"), "cid:m", address(token), PAYMENT, policy(segments), EVALUATE, keccak256("model")
        );
        vm.prank(provider);
        market.acceptJob(jobId);
        _commit(jobId, commits, HONEST);
    }

    /// @dev `who` challenges valid step `step` of `jobId`; the provider publishes; every member votes Valid.
    function _baited(address who, uint256 jobId, uint256 step) internal returns (uint256 bond) {
        bond = game.requiredBond(jobId);
        uint256 id = _challenge(who, jobId, step, HONEST);
        address[] memory p = _draw(id);
        for (uint256 i; i < p.length; ++i) _commitVote(id, p[i], VALID_V);
        for (uint256 i; i < p.length; ++i) _reveal(id, p[i], VALID_V);
        game.resolve(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelValid, "panel: Valid");
        assertGe(bond, 1, "bond");
    }

    function _assertBurned(uint256 burn0, uint256 credit0, uint256 bond) internal view {
        assertEq(game.creditOf(provider), credit0, "the provider gains nothing");
        assertEq(token.balanceOf(game.BURN_ADDRESS()) - burn0, bond, "the challenger's whole bond is burned");
    }

    /// The bait at example 2 of a kind job (segment 0, K = 3: not the segment start): the bond is burned, the
    /// withholding provider collects nothing.
    function test_kindWithheldClaimAtExample2_bondBurned() public {
        uint256 jobId = _kindJob(2, 2);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());
        uint256 credit0 = game.creditOf(provider);
        uint256 bond = _baited(HONEST_1, jobId, 2);
        _assertBurned(burn0, credit0, bond);
    }

    /// The claim of a later segment of a kind job is its segment start (example 4 with K = 3): burned as well.
    function test_kindWithheldClaimAtLaterSegmentStart_bondBurned() public {
        uint256 jobId = _kindJob(2, 2);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());
        uint256 credit0 = game.creditOf(provider);
        uint256 bond = _baited(HONEST_1, jobId, 4);
        _assertBurned(burn0, credit0, bond);
    }

    /// A griefer's wrong challenge of a served correct example that is no file claim (example 3) loses its bond to
    /// the provider, as on any training step: the burn rule gives nobody a free challenge.
    function test_kindGrieferAtExample3_bondToProvider() public {
        uint256 jobId = _kindJob(2, 2);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());
        uint256 credit0 = game.creditOf(provider);
        uint256 bond = _baited(stranger, jobId, 3);
        assertEq(game.creditOf(provider) - credit0, bond, "the griefer's bond goes to the provider");
        assertEq(token.balanceOf(game.BURN_ADDRESS()), burn0, "nothing burned");
        assertEq(game.creditOf(stranger), 0, "the griefer gets nothing back");
    }

    /// A griefer's wrong challenge of a served correct example 2 of a kind job still loses its whole bond (burned).
    function test_kindGrieferAtExample2_losesBond() public {
        uint256 jobId = _kindJob(2, 2);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());
        uint256 credit0 = game.creditOf(provider);
        uint256 bond = _baited(stranger, jobId, 2);
        _assertBurned(burn0, credit0, bond);
        assertEq(game.creditOf(stranger), 0, "the griefer gets nothing back");
    }

    /// A training job's step 2 is no file claim (a training bot claims a withheld checkpoint at the segment start):
    /// a wrong challenge there pays the provider, unchanged.
    function test_trainingStep2_bondToProvider() public {
        uint256 jobId = _job(2, 2, HONEST);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());
        uint256 credit0 = game.creditOf(provider);
        uint256 bond = _baited(HONEST_1, jobId, 2);
        assertEq(game.creditOf(provider) - credit0, bond, "bond to the provider");
        assertEq(token.balanceOf(game.BURN_ADDRESS()), burn0, "nothing burned");
    }

    /// The same bait on a training job's segment start (where a training bot claims a withheld checkpoint) leaves it
    /// nothing.
    function test_trainingWithheldClaimAtSegmentStart_bondBurned() public {
        uint256 jobId = _job(2, 2, HONEST);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());
        uint256 credit0 = game.creditOf(provider);
        uint256 bond = _baited(HONEST_1, jobId, 1);
        _assertBurned(burn0, credit0, bond);
    }
}
