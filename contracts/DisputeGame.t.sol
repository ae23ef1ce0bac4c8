// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {DisputeFixture} from "./test/DisputeFixture.sol";
import {DisputeGame} from "./DisputeGame.sol";
import {DisputeSettlement} from "./DisputeSettlement.sol";
import {IDisputeGameTypes, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {Seconds} from "./libraries/Seconds.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Trace} from "./libraries/Trace.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @notice Unit and fuzz tests of DisputeGame: every path, every deadline and every custom error. Real Groth16
/// proofs are tested in test/dispute/ (Mocha, proved with verifier/src/zk); here the generated verifier rejects
/// forged ones.
/// @dev Foundry's mockCall cheatcode (supported by Hardhat's Solidity test runner).
// solhint-disable-next-line interface-starts-with-i
interface VmMock {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
}

contract DisputeGameTest is TestBase, DisputeFixture {
    VmMock internal constant VMM = VmMock(address(uint160(uint256(keccak256("hevm cheat code")))));
    uint256 internal constant HONEST = type(uint256).max;
    IDisputeGameTypes.Vote internal constant VALID = IDisputeGameTypes.Vote.Valid;
    IDisputeGameTypes.Vote internal constant FAULT = IDisputeGameTypes.Vote.Fault;

    // ---------------------------------------------------------------- helpers

    function _cheatingDispute() internal returns (uint256 jobId, uint256 id) {
        jobId = _job(2, 2, 2); // leaves diverge from state 2: step 2 is the bad step
        id = _challenge(challenger, jobId, 2, 2);
    }

    function _vote(uint256 id, address[] memory panel, IDisputeGameTypes.Vote[3] memory votes) internal {
        for (uint256 i; i < 3; ++i) {
            if (votes[i] != IDisputeGameTypes.Vote.None) _commitVote(id, panel[i], votes[i]);
        }
        VM.warp(block.timestamp + 1 days + 1);
        for (uint256 i; i < 3; ++i) {
            if (votes[i] != IDisputeGameTypes.Vote.None) _reveal(id, panel[i], votes[i]);
        }
    }

    function _bondOf(address a) internal view returns (uint256) {
        return registry.auditorOf(a).bond;
    }

    /// @dev panelSize * panelFee of the fixture: what every challenge deposits besides its bond.
    /// @dev The challenger share of a fault on the fixture's jobs: 50% of STAKE.
    uint256 internal constant REWARD = 5e18;

    function _fees() internal pure returns (uint256) {
        return uint256(defaultParams().panelFee) * defaultParams().panelSize;
    }

    /// @dev The game holds exactly its open bonds, open fees and the credits of everyone who could have one.
    function _assertSolvent() internal view {
        uint256 owed = game.openBonds() + game.openFees() + game.pooled() + game.creditOf(challenger) + game.creditOf(stranger)
            + game.creditOf(provider) + game.creditOf(buyer);
        for (uint256 i; i < auditors.length; ++i) {
            owed += game.creditOf(auditors[i]);
        }
        assertEq(token.balanceOf(address(game)), owed, "game = open bonds + open fees + pools + credits");
    }

    // ---------------------------------------------------------------- challenge

    function test_challenge_postsBondFreezesJobAndRecordsDispute() public {
        uint256 jobId = _job(2, 1, HONEST);
        uint256 bond = game.requiredBond(jobId);
        // 1e18 + 10e18 * 0.5 * 0.1 / 0.9 = 1.5556e18 (rounded up)
        assertEq(bond, 1e18 + 555555555555555556, "bond formula");
        assertEq(game.requiredDeposit(jobId), bond + 15e16, "deposit = bond + 3 * 0.05e18");
        uint256 before = token.balanceOf(challenger);
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        assertEq(id, 1, "first id");
        assertEq(token.balanceOf(challenger), before - bond - 15e16, "bond and fees pulled");
        assertEq(token.balanceOf(address(game)), bond + 15e16, "bond and fees held");
        assertEq(game.openBonds(), bond, "open bonds");
        assertEq(game.openFees(), 15e16, "open fees");
        assertEq(game.getDispute(id).fees, 15e16, "dispute fees");
        assertEq(market.getJob(jobId).openDisputes, 1, "job frozen");
        assertEq(game.openDisputeOf(jobId, 2), id, "open per step");
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertEq(d.provider, provider, "provider");
        assertEq(d.step, 2, "step");
        assertEq(d.seedBlock, block.number + 2, "seed block");
        assertEq(d.revealDeadline, d.challengedAt + 2 days, "reveal deadline");
        assertTrue(d.status == IDisputeGameTypes.Status.Open, "open");
    }

    function test_challenge_approvedOnlyBond_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        uint256 bond = game.requiredBond(jobId);
        vm_prank(stranger);
        token.approve(address(game), bond);
        _commitChallenge(stranger, jobId, 2);
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameDepositNotApproved.selector, stranger, bond, bond + _fees())
        );
        _challengeCommitted(stranger, jobId, 2, HONEST);
        // approving the deposit is enough
        uint256 deposit = game.requiredDeposit(jobId);
        vm_prank(stranger);
        token.approve(address(game), deposit);
        _challenge(stranger, jobId, 2, HONEST);
        assertEq(token.allowance(stranger, address(game)), 0, "exactly the deposit pulled");
    }

    function test_challenge_byProvider_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        _commitChallenge(provider, jobId, 2);
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameSelfChallenge.selector);
        _challengeCommitted(provider, jobId, 2, HONEST);
    }

    function test_challenge_unknownJob_reverts() public {
        bytes32[] memory none = new bytes32[](0);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketUnknownJob.selector, 7));
        game.challenge(IDisputeGameTypes.ChallengeParams(7, 0, 1, bytes32(0), bytes32(0), bytes32(0), none, bytes32(0), none, bytes32(0)));
    }

    function test_challenge_uncommittedSegment_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSegmentNotDisputable.selector, jobId, 1, 0, 1));
        _challengeCommitted(challenger, jobId, 5, HONEST);
    }

    // ---------------------------------------------------------------- challenge commitments

    /// A commitment cannot name a job that does not exist yet: nobody holds commitments on future jobs.
    function test_commitChallenge_unknownJob_reverts() public {
        bytes32 c = game.challengeCommitment(7, 1, challenger, keccak256("s"));
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameUnknownJob.selector, 7));
        vm_prank(challenger);
        game.commitChallenge(7, 0, c);
    }

    /// A commitment cannot name a segment before its leaves are committed.
    function test_commitChallenge_uncommittedSegment_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        bytes32 c = game.challengeCommitment(jobId, 5, challenger, keccak256("s"));
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSegmentNotCommitted.selector, jobId, 1));
        vm_prank(challenger);
        game.commitChallenge(jobId, 1, c);
    }

    function test_commitChallenge_zero_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameZeroCommitment.selector, 0));
        vm_prank(challenger);
        game.commitChallenge(jobId, 0, bytes32(0));
    }

    /// A commitment older than CHALLENGE_COMMITMENT_TTL_BLOCKS cannot open a challenge; committing again renews it.
    function test_challenge_expiredCommitment_reverts_thenRenewed() public {
        uint256 jobId = _job(2, 1, HONEST);
        bytes32 salt = _commitChallenge(challenger, jobId, 2);
        uint256 at = block.number - 1;
        uint256 ttl = game.CHALLENGE_COMMITMENT_TTL_BLOCKS();
        VMB.roll(at + ttl + 1);
        bytes32 c = game.challengeCommitment(jobId, 2, challenger, salt);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameChallengeCommitmentExpired.selector, challenger, c, at, at + ttl, at + ttl + 1
            )
        );
        _challengeCommitted(challenger, jobId, 2, HONEST);
        // a live commitment keeps its block; an expired one is renewed from the current block
        vm_prank(challenger);
        game.commitChallenge(jobId, 0, c);
        assertEq(game.challengeCommittedAt(challenger, c), at + ttl + 1, "renewed");
        VMB.roll(block.number + 1);
        vm_prank(challenger);
        game.commitChallenge(jobId, 0, c);
        assertEq(game.challengeCommittedAt(challenger, c), at + ttl + 1, "a live commitment keeps its block");
        _challengeCommitted(challenger, jobId, 2, HONEST);
    }

    /// The commitment is bound to the segment commitment it named: it cannot open a challenge of another segment.
    function test_challenge_commitmentOfOtherSegment_reverts() public {
        uint256 jobId = _job(2, 2, HONEST);
        bytes32 salt = keccak256(abi.encode("challenge", challenger, jobId, uint256(6)));
        bytes32 c = game.challengeCommitment(jobId, 6, challenger, salt);
        vm_prank(challenger);
        game.commitChallenge(jobId, 0, c); // step 6 is in segment 1, but the commitment names segment 0
        VMB.roll(block.number + 1);
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameChallengeCommitmentWrongSegment.selector, challenger, c, jobId, 1)
        );
        _challengeCommitted(challenger, jobId, 6, HONEST);
    }

    /// The first valid challenge of a step holds it: a later one on the same step reverts, whoever committed first.
    function test_challenge_secondOnSameStep_reverts() public {
        uint256 jobId = _job(2, 1, 1);
        _commitChallenge(challenger, jobId, 2);
        _commitChallenge(stranger, jobId, 2);
        uint256 id = _challengeCommitted(stranger, jobId, 2, 1);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameDisputeOpen.selector, jobId, 2, id));
        _challengeCommitted(challenger, jobId, 2, 1);
    }

    function test_challenge_stepOutsideSegment_reverts() public {
        uint256 jobId = _job(2, 2, HONEST);
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 1, HONEST);
        // step 3 = 1*K is the first state of segment 1, but step 3's pre-state h(2) belongs to segment 0 only.
        bytes32 salt = _commitChallenge(challenger, jobId, 3);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameStepOutsideSegment.selector, 1, 3, 3));
        vm_prank(challenger);
        game.challenge(IDisputeGameTypes.ChallengeParams(jobId, 1, 3, root(lv), hs[3], hs[0], proof(lv, 0), hs[0], proof(lv, 0), salt));
    }

    function test_challenge_wrongRoot_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 0, 1); // not the committed leaves
        bytes32 salt = _commitChallenge(challenger, jobId, 1);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameCommitmentMismatch.selector, jobId, 0));
        vm_prank(challenger);
        game.challenge(IDisputeGameTypes.ChallengeParams(jobId, 0, 1, root(lv), hs[3], hs[0], proof(lv, 0), hs[1], proof(lv, 1), salt));
    }

    function test_challenge_badLeafProof_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 0, HONEST);
        bytes32 fake = keccak256("not a leaf");
        bytes32 salt = _commitChallenge(challenger, jobId, 2);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameBadLeafProof.selector, 2, fake));
        vm_prank(challenger);
        game.challenge(IDisputeGameTypes.ChallengeParams(jobId, 0, 2, root(lv), hs[3], hs[1], proof(lv, 1), fake, proof(lv, 2), salt));
    }

    function test_challenge_sameStepTwice_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        _commitChallenge(stranger, jobId, 2);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameDisputeOpen.selector, jobId, 2, id));
        _challengeCommitted(stranger, jobId, 2, HONEST);
    }

    function test_challenge_afterChallengeWindow_reverts() public {
        uint256 jobId = _job(1, 1, HONEST);
        VM.warp(block.timestamp + 1 days + 1);
        _commitChallenge(challenger, jobId, 2);
        VM.expectPartialRevert(IJobMarket.JobMarketChallengeWindowClosed.selector);
        _challengeCommitted(challenger, jobId, 2, HONEST);
    }

    /// Rewards are the slash's challenger share (stake token) paid with the bonds: one token, checked at deployment.
    function test_constructor_bondTokenOtherThanStakeToken_reverts() public {
        TestToken other = new TestToken("Other", "OTH");
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameTokenMismatch.selector, address(token), address(other))
        );
        new DisputeGame(market, registry, IStepVerifier(address(verifier)), bytes32(0), IERC20(address(other)), defaultParams());
    }

    /// A provider that stops committing cannot keep the escrow frozen with a dispute opened after its deadline.
    function test_challenge_activeJobPastSegmentDeadline_reverts() public {
        uint256 jobId = _job(3, 1, HONEST);
        uint64 deadline = market.getJob(jobId).deadline;
        VM.warp(uint256(deadline) + 1);
        _commitChallenge(challenger, jobId, 2);
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketSegmentDeadlinePassed.selector, jobId, deadline, uint256(deadline) + 1)
        );
        _challengeCommitted(challenger, jobId, 2, HONEST);
        market.reportTimeout(jobId);
        // the committed segment stays disputable for a window after the timeout; then the job re-opens
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut, "timed out");
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reopenJob(jobId);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Open, "re-opened for another provider");
    }

    /// A challenge revealed in the block of its own commitment is refused: a copier cannot commit and reveal at once.
    function test_challenge_sameBlockAsCommitment_reverts() public {
        uint256 jobId = _job(2, 1, HONEST);
        bytes32 salt = keccak256("s");
        bytes32 c = game.challengeCommitment(jobId, 2, challenger, salt);
        vm_prank(challenger);
        game.commitChallenge(jobId, 0, c);
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 0, HONEST);
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameChallengeNotCommitted.selector, challenger, c, block.number, block.number)
        );
        vm_prank(challenger);
        game.challenge(IDisputeGameTypes.ChallengeParams(jobId, 0, 2, root(lv), hs[3], hs[1], proof(lv, 1), hs[2], proof(lv, 2), salt));
    }

    // ---------------------------------------------------------------- concede

    function test_concede_slashesProviderAtOnce() public {
        (uint256 jobId, uint256 id) = _cheatingDispute();
        uint256 bond = game.getDispute(id).bond;
        vm_prank(provider);
        game.concede(id);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.Conceded, "conceded");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "refunded");
        assertEq(game.creditOf(challenger), bond + _fees() + REWARD, "bond, fees and the whole challenger share");
        assertEq(vault.creditOf(challenger), 0, "reward paid by the game, not the vault");
        assertEq(vault.creditOf(buyer), 3e18, "buyer share of stake");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "buyer refunded");
        assertEq(vault.lockedFor(provider, jobId), 0, "lock gone");
        assertEq(game.openDisputeOf(jobId, 2), 0, "step free");
        vm_prank(challenger);
        assertEq(game.claim(), bond + _fees() + REWARD, "claimed");
        assertEq(token.balanceOf(address(game)), 0, "game empty");
    }

    function test_concede_byStranger_reverts() public {
        (, uint256 id) = _cheatingDispute();
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNotProvider.selector, id, stranger, provider));
        vm_prank(stranger);
        game.concede(id);
    }

    function test_unknownDispute_reverts() public {
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameUnknownDispute.selector, 42));
        game.concede(42);
    }

    // ---------------------------------------------------------------- panel

    function test_panel_excludesPartiesAndIsFixedBySeedBlock() public {
        (, uint256 id) = _cheatingDispute();
        address[] memory panel = _draw(id);
        assertEq(panel.length, 3, "k members");
        for (uint256 i; i < panel.length; ++i) {
            assertTrue(panel[i] != provider && panel[i] != challenger && panel[i] != buyer, "parties excluded");
            assertTrue(registry.isActive(panel[i]), "active auditor");
        }
    }

    function test_panelFault_slashesProviderAndPaysMajority() public {
        (uint256 jobId, uint256 id) = _cheatingDispute();
        address[] memory p = _draw(id);
        uint256[3] memory before = [_bondOf(p[0]), _bondOf(p[1]), _bondOf(p[2])];
        _vote(id, p, [FAULT, FAULT, VALID]);
        game.resolve(id);
        _appealRounds(id, FAULT); // the split Fault is appealed; the later rounds vote the truth
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelFault, "fault");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "refunded");
        // the two majority fees come out of the reward, so the deposit comes back whole
        assertEq(game.creditOf(challenger), game.getDispute(id).bond + _fees() + REWARD - 1e17, "bond, fees, reward less panel");
        // the minority member forfeits 20e18, split between the two majority members
        assertEq(_bondOf(p[2]), before[2] - 20e18, "minority forfeits");
        assertEq(_bondOf(p[0]), before[0], "majority keeps");
        assertEq(registry.creditOf(p[0]), 10e18, "majority paid");
        assertEq(registry.creditOf(p[1]), 10e18, "majority paid");
    }

    function test_panelValid_challengerLosesBondAndJobFinalizes() public {
        uint256 jobId = _job(1, 1, HONEST);
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        uint256 bond = game.getDispute(id).bond;
        address[] memory p = _draw(id);
        _vote(id, p, [VALID, VALID, VALID]);
        game.resolve(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelValid, "valid");
        assertEq(game.creditOf(provider), bond, "bond to provider");
        assertEq(game.creditOf(challenger), 0, "challenger gets nothing");
        assertEq(market.getJob(jobId).openDisputes, 0, "unfrozen");
        VM.warp(block.timestamp + 1 days);
        market.finalize(jobId);
        assertEq(market.creditOf(provider, address(token)), PAYMENT, "provider paid");
    }

    /// The bait a withholding provider would play: its start checkpoint unavailable until a bot challenges the segment's
    /// first step, then published, so the panel votes Valid. The wrong challenge's bond is burned there, not paid to the
    /// provider (or its buyer address): the provider gains nothing. A wrong challenge of a later step still pays it.
    function test_panelValid_atSegmentStart_burnsBondProviderGetsNothing() public {
        // steps 1 and 4: the first steps of segments 0 and 1 (K = 3); step 5: a later step. One job each (a dispute
        // takes longer than the job's window).
        uint256[3] memory steps = [uint256(1), 4, 5];
        for (uint256 i; i < 3; ++i) {
            uint256 jobId = _job(2, 2, HONEST);
            uint256 id = _challenge(challenger, jobId, steps[i], HONEST);
            uint256 bond = game.getDispute(id).bond;
            uint256 burnedBefore = token.balanceOf(game.BURN_ADDRESS());
            uint256 providerBefore = game.creditOf(provider);
            _vote(id, _draw(id), [VALID, VALID, VALID]);
            game.resolve(id);
            assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelValid, "valid");
            assertEq(game.creditOf(challenger), 0, "challenger loses the bond");
            assertEq(game.creditOf(buyer), 0, "buyer gets nothing");
            if (i < 2) {
                assertEq(token.balanceOf(game.BURN_ADDRESS()), burnedBefore + bond, "segment start: bond burned");
                assertEq(game.creditOf(provider), providerBefore, "segment start: provider gets nothing");
            } else {
                assertEq(token.balanceOf(game.BURN_ADDRESS()), burnedBefore, "later step: nothing burned");
                assertEq(game.creditOf(provider), providerBefore + bond, "later step: bond to provider");
            }
        }
        _assertSolvent();
    }

    function test_resolveEarly_onceAllRevealed() public {
        (, uint256 id) = _cheatingDispute();
        address[] memory p = _draw(id);
        for (uint256 i; i < 3; ++i) _commitVote(id, p[i], FAULT);
        // every member committed: reveals open before the commit deadline, and resolve after the last reveal
        for (uint256 i; i < 3; ++i) _reveal(id, p[i], FAULT);
        game.resolve(id);
        // a unanimous first-round Fault waits one commit window for the provider's appeal, then settles
        (uint64 until, uint128 providerBond) = game.faultAppealOf(id);
        assertEq(until, block.timestamp + defaultParams().commitWindowSeconds.toUint(), "appeal window");
        assertEq(providerBond, 0, "not appealed");
        assertTrue(game.getDispute(id).status == IDisputeGameTypes.Status.Open, "not settled in the window");
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameFaultAppealOpen.selector, id, until, block.timestamp));
        game.resolve(id);
        VM.warp(until + 1);
        game.resolve(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelFault, "fault in one voting round");
        (until,) = game.faultAppealOf(id);
        assertEq(until, 0, "window closed");
    }

    function test_silentMember_forfeitsToMajority() public {
        (, uint256 id) = _cheatingDispute();
        address[] memory p = _draw(id);
        uint256 silentBefore = _bondOf(p[2]);
        _commitVote(id, p[2], FAULT); // commits, never reveals
        _vote(id, p, [FAULT, FAULT, IDisputeGameTypes.Vote.None]);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameVotingOpen.selector, id, game.getDispute(id).revealDeadline, block.timestamp
            )
        );
        game.resolve(id);
        VM.warp(game.getDispute(id).revealDeadline + 1);
        game.resolve(id);
        // a silent seat makes the Fault a split: appealed; the later rounds vote the truth and the silence is judged then
        assertEq(game.getDispute(id).round, 2, "appealed");
        _appealRounds(id, FAULT);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelFault, "fault");
        assertEq(_bondOf(p[2]), silentBefore - 20e18, "silent forfeits");
        assertEq(registry.creditOf(p[0]) + registry.creditOf(p[1]), 20e18, "to the majority");
    }

    /// A round whose whole panel stays silent is no verdict and is appealed like a tie while rounds are left (no re-open
    /// of the job's window spent); only the last silent round ends NoDecision. Every silent member of every round
    /// forfeits its round's forfeit (burned: nobody revealed), and the challenger gets its bond and every fee back.
    function test_silentRounds_appealed_thenNoDecision_refundsBondAndBurnsSilentForfeits() public {
        (uint256 jobId, uint256 id) = _cheatingDispute();
        uint256 bond = game.getDispute(id).bond;
        uint256 deadline = market.getJob(jobId).deadline;
        VMB.roll(block.number + 3);
        VM.warp(block.timestamp + 2 days + 1);
        game.resolve(id); // draws the panel now so that its silent members answer for it
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.status == IDisputeGameTypes.Status.Open, "a silent round does not end the dispute");
        assertEq(d.round, 2, "appealed");
        assertEq(game.roundPanelOf(id, 1).length, 3, "round 1 panel drawn at resolve");
        assertEq(market.getJob(jobId).deadline, deadline, "no re-open spent");
        assertEq(market.getJob(jobId).openDisputes, 1, "still frozen");
        _resolveSilent(id);
        d = game.getDispute(id);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.NoDecision, "the last silent round ends NoDecision");
        assertEq(d.round, game.MAX_ROUNDS(), "after every round");
        assertEq(game.creditOf(challenger), bond + _fees(), "bond and every fee back (nobody revealed)");
        uint256 f = defaultParams().panelForfeit;
        uint256 burned;
        for (uint256 r = 1; r <= game.MAX_ROUNDS(); ++r) burned += game.roundPanelOf(id, r).length * (f << (r - 1));
        assertEq(burned, 3 * f + 5 * 2 * f + 5 * 4 * f, "the pool of five seats rounds 2 and 3");
        assertEq(registry.creditOf(game.BURN_ADDRESS()), burned, "every silent member forfeits, burned");
        assertEq(market.getJob(jobId).openDisputes, 0, "unfrozen");
        _assertSolvent();
    }

    /// A tie of revealed votes (one silent seat) is no verdict but no longer ends the dispute: it is appealed like a
    /// split Fault, without spending a re-open of the job's window; the last round decides, and the tie's revealers and
    /// its silent member are judged by that decision.
    function test_tie_appealed_judgedByLastRound() public {
        (uint256 jobId, uint256 id) = _cheatingDispute();
        address[] memory p = _draw(id);
        uint256 deadline = market.getJob(jobId).deadline;
        _vote(id, p, [FAULT, VALID, IDisputeGameTypes.Vote.None]);
        VM.warp(block.timestamp + 1 days);
        game.resolve(id);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.status == IDisputeGameTypes.Status.Open, "a tie does not end the dispute");
        assertEq(d.round, 2, "appealed");
        assertEq(market.getJob(jobId).deadline, deadline, "no re-open spent");
        assertEq(game.tiedDisputeOf(jobId, 2), 0, "nothing left for a later dispute to judge");
        uint256[3] memory before = [_bondOf(p[0]), _bondOf(p[1]), _bondOf(p[2])];
        uint256 credit0 = registry.creditOf(p[0]);
        _appealRounds(id, FAULT);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelFault, "the last round decides");
        uint256 forfeit = defaultParams().panelForfeit;
        assertEq(_bondOf(p[0]), before[0], "the tie's right revealer keeps its bond");
        assertEq(_bondOf(p[1]), before[1] - forfeit, "the tie's wrong revealer forfeits");
        assertEq(_bondOf(p[2]), before[2] - forfeit, "the tie's silent member forfeits");
        assertEq(registry.creditOf(p[0]) - credit0, 2 * forfeit, "both to the round's right revealer");
        _assertSolvent();
    }

    function test_panelUnavailable_noDecision() public {
        for (uint256 i; i < 3; ++i) {
            vm_prank(auditors[i]);
            registry.requestExit();
        }
        (, uint256 id) = _cheatingDispute();
        VMB.roll(block.number + 3);
        assertTrue(!game.drawPanel(id), "no panel");
        VM.warp(block.timestamp + 2 days + 1);
        game.resolve(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.NoDecision, "no decision");
        assertEq(game.creditOf(challenger), game.getDispute(id).bond + _fees(), "bond and fees back");
        _assertSolvent();
    }

    /// A seed that left blockhash range is never re-anchored: drawPanel reverts DisputeGameSeedExpired (naming the seed
    /// block and the block now) and leaves the seed block as it was, so the round has no panel and resolves NoDecision.
    function test_seedOutOfRange_expiredNotReseeded() public {
        (, uint256 id) = _cheatingDispute();
        uint64 seedBlock = game.getDispute(id).seedBlock;
        VMB.roll(block.number + 300);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedExpired.selector, id, seedBlock, block.number));
        game.drawPanel(id);
        assertEq(game.getDispute(id).seedBlock, seedBlock, "never re-anchored");
        VM.warp(game.getDispute(id).revealDeadline + 1);
        game.resolve(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.NoDecision, "no panel: no decision");
        assertEq(game.getDispute(id).panel.length, 0, "never drawn");
        _assertSolvent();
    }

    /// commitVote before a panel exists says why it cannot draw, by name: a lapsed seed is not "not ready" (which a bot
    /// retries as time fixes it) but SeedExpired, and PanelUnavailable when too few auditors are eligible.
    function test_commitVote_lapsedSeed_namedErrors() public {
        (, uint256 id) = _cheatingDispute();
        uint64 seedBlock = game.getDispute(id).seedBlock;
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedNotReady.selector, id, seedBlock, block.number));
        vm_prank(auditors[0]);
        game.commitVote(id, keccak256("c"));
        VMB.roll(block.number + 300);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedExpired.selector, id, seedBlock, block.number));
        vm_prank(auditors[0]);
        game.commitVote(id, keccak256("c"));
        assertEq(game.getDispute(id).seedBlock, seedBlock, "commitVote does not re-anchor");
    }

    function test_commitVote_tooFewAuditors_panelUnavailable() public {
        for (uint256 i; i < 3; ++i) {
            vm_prank(auditors[i]);
            registry.requestExit();
        }
        (, uint256 id) = _cheatingDispute();
        VMB.roll(block.number + 3);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelUnavailable.selector, id));
        vm_prank(auditors[3]);
        game.commitVote(id, keccak256("c"));
    }

    function test_copiedVote_cannotBeRevealed() public {
        (, uint256 id) = _cheatingDispute();
        address[] memory p = _draw(id);
        _commitVote(id, p[0], FAULT);
        (bytes32 copied,) = game.ballotOf(id, p[0]);
        vm_prank(p[1]);
        game.commitVote(id, copied); // copies p[0]'s commitment
        _commitVote(id, p[2], FAULT);
        _reveal(id, p[0], FAULT);
        // p[1] now knows p[0]'s vote and salt, but the commitment binds p[0]'s address
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameRevealMismatch.selector, id, p[1]));
        vm_prank(p[1]);
        game.revealVote(id, FAULT, _salt(p[0]));
        // and it cannot commit anew after seeing the reveal: every member committed, so commits are closed
        bytes32 fresh = game.voteCommitment(FAULT, _salt(p[1]), p[1]);
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameCommitClosed.selector);
        vm_prank(p[1]);
        game.commitVote(id, fresh);
    }

    function test_panelErrors() public {
        (, uint256 id) = _cheatingDispute();
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedNotReady.selector, id, block.number + 2, block.number)
        );
        game.drawPanel(id);
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameSeedNotReady.selector);
        vm_prank(auditors[0]);
        game.commitVote(id, keccak256("c"));
        address[] memory p = _draw(id);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelDrawn.selector, id));
        game.drawPanel(id);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNotPanelMember.selector, id, stranger));
        vm_prank(stranger);
        game.commitVote(id, keccak256("c"));
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameZeroCommitment.selector, id));
        vm_prank(p[0]);
        game.commitVote(id, bytes32(0));
        _commitVote(id, p[0], FAULT);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameAlreadyCommitted.selector, id, p[0]));
        vm_prank(p[0]);
        game.commitVote(id, keccak256("again"));
        // reveals wait for the commit phase to end
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameRevealClosed.selector);
        _reveal(id, p[0], FAULT);
        VM.warp(block.timestamp + 1 days + 1);
        bytes32 late = game.voteCommitment(FAULT, _salt(p[1]), p[1]);
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameCommitClosed.selector);
        vm_prank(p[1]);
        game.commitVote(id, late);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNoCommitment.selector, id, p[1]));
        _reveal(id, p[1], FAULT);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNotPanelMember.selector, id, stranger));
        _reveal(id, stranger, FAULT);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameInvalidVote.selector, 0));
        _reveal(id, p[0], IDisputeGameTypes.Vote.None);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameRevealMismatch.selector, id, p[0]));
        _reveal(id, p[0], VALID);
        _reveal(id, p[0], FAULT);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameAlreadyRevealed.selector, id, p[0]));
        _reveal(id, p[0], FAULT);
        VM.warp(block.timestamp + 1 days);
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameRevealClosed.selector);
        _reveal(id, p[0], FAULT);
    }

    // ---------------------------------------------------------------- panel fees

    /// @dev Claims every game credit and checks the game ends empty.
    function _claimAllAndAssertEmpty(address[] memory p) internal {
        address[4] memory parties = [challenger, provider, stranger, buyer];
        for (uint256 i; i < parties.length; ++i) {
            if (game.creditOf(parties[i]) != 0) {
                vm_prank(parties[i]);
                game.claim();
            }
        }
        for (uint256 i; i < p.length; ++i) {
            if (game.creditOf(p[i]) == 0) continue;
            uint256 before = token.balanceOf(p[i]);
            vm_prank(p[i]);
            game.claim();
            assertEq(token.balanceOf(p[i]), before + 5e16, "member claimed its fee");
        }
        assertEq(token.balanceOf(address(game)), 0, "game empty");
    }

    function test_panelFee_fault_paysFaultRevealersRefundsMinorityFee() public {
        (, uint256 id) = _cheatingDispute();
        uint256 bond = game.getDispute(id).bond;
        address[] memory p = _draw(id);
        _vote(id, p, [FAULT, FAULT, VALID]);
        game.resolve(id);
        _appealRounds(id, FAULT); // the split Fault is appealed; the later rounds vote the truth
        assertEq(game.creditOf(p[0]), 5e16, "majority fee");
        assertEq(game.creditOf(p[1]), 5e16, "majority fee");
        assertEq(game.creditOf(p[2]), 0, "minority earns no fee");
        assertEq(game.creditOf(challenger), bond + _fees() + REWARD - 1e17, "deposit back, reward less the panel's fees");
        assertEq(game.creditOf(provider), 0, "provider nothing");
        assertEq(game.openFees(), 0, "fees settled");
        _assertSolvent();
        _claimAllAndAssertEmpty(p);
    }

    function test_panelFee_valid_paysValidRevealersChallengerLosesBond() public {
        uint256 jobId = _job(1, 1, HONEST);
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        uint256 bond = game.getDispute(id).bond;
        address[] memory p = _draw(id);
        _vote(id, p, [VALID, FAULT, VALID]);
        game.resolve(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelValid, "valid");
        assertEq(game.creditOf(p[0]), 5e16, "majority fee");
        assertEq(game.creditOf(p[1]), 0, "minority earns no fee");
        assertEq(game.creditOf(p[2]), 5e16, "majority fee");
        assertEq(game.creditOf(provider), bond, "bond to provider");
        assertEq(game.creditOf(challenger), 5e16, "only the minority's fee back");
        _assertSolvent();
        _claimAllAndAssertEmpty(p);
    }

    /// A member that forfeits on one panel is out of every panel open at that time: its vote there is not counted (even
    /// a right one), earns no fee and no share of a forfeit, and its seat counts as silent for the outcome. Here it
    /// votes Fault with the two others on a faulty step after losing a meta-audit on a false challenge resolved first:
    /// without it the Fault is a split, so it is appealed instead of settling as a unanimous Fault.
    function test_forfeitedMember_voteNotCountedOnItsOtherPanels() public {
        uint256 falseJob = _job(2, 2, HONEST);
        uint256 a = _challenge(challenger, falseJob, 2, HONEST);
        (, uint256 b) = _cheatingDispute();
        address[] memory pa = _draw(a);
        address[] memory pb = _draw(b);
        // two panels of 3 from 5 auditors share a member
        address m;
        for (uint256 i; i < 3 && m == address(0); ++i) {
            for (uint256 j; j < 3; ++j) {
                if (pa[i] == pb[j]) m = pa[i];
            }
        }
        assertTrue(m != address(0), "shared member");
        for (uint256 i; i < 3; ++i) _commitVote(a, pa[i], pa[i] == m ? FAULT : VALID);
        for (uint256 i; i < 3; ++i) _commitVote(b, pb[i], FAULT);
        for (uint256 i; i < 3; ++i) _reveal(a, pa[i], pa[i] == m ? FAULT : VALID);
        for (uint256 i; i < 3; ++i) _reveal(b, pb[i], FAULT);
        game.resolve(a); // every member revealed: resolvable now
        assertTrue(game.getDispute(a).outcome == IDisputeGameTypes.Outcome.PanelValid, "false challenge rejected");
        uint256 bondAfterA = _bondOf(m);
        assertEq(bondAfterA, AUDITOR_BOND - defaultParams().panelForfeit, "m forfeited on a");
        assertTrue(registry.forfeitedAt(m) > game.getDispute(b).challengedAt, "after b opened");
        // one forfeit leaves m a full panelForfeit at stake: its vote would still count; drained below one forfeit
        // (nothing left to pay for a wrong vote) it is out of b's panel
        address burn = game.BURN_ADDRESS();
        uint256 drain = bondAfterA - defaultParams().panelForfeit / 2;
        VM.prank(address(game));
        registry.forfeit(m, drain, burn);
        bondAfterA = _bondOf(m);
        game.resolve(b);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(b);
        assertTrue(d.status == IDisputeGameTypes.Status.Open, "2 counted Fault votes of 3 seats: a split, not final");
        assertEq(d.round, 2, "appealed");
        (, IDisputeGameTypes.Vote v) = game.roundBallotOf(b, 1, m);
        assertTrue(v == FAULT, "the ballot stays as revealed");
        _appealRounds(b, FAULT);
        assertTrue(game.getDispute(b).outcome == IDisputeGameTypes.Outcome.PanelFault, "fault");
        assertEq(game.creditOf(m), 0, "no fee for a vote that did not count");
        assertEq(_bondOf(m), bondAfterA, "a right vote, even uncounted, forfeits nothing");
        for (uint256 i; i < 3; ++i) {
            if (pb[i] != m) assertGe(game.creditOf(pb[i]), 5e16, "the counted Fault voters are paid");
        }
        _assertSolvent();
    }

    /// A tied round earns no fee by itself: the tie is appealed, and round 1's revealers of the side the last round
    /// decides earn theirs (out of the reward on a fault); the silent member's fee and the wrong revealer's go back.
    function test_panelFee_tie_paysRevealersOfTheDecidedSide() public {
        (, uint256 id) = _cheatingDispute();
        uint256 bond = game.getDispute(id).bond;
        address[] memory p = _draw(id);
        _commitVote(id, p[2], FAULT); // commits, never reveals
        _vote(id, p, [FAULT, VALID, IDisputeGameTypes.Vote.None]);
        VM.warp(block.timestamp + 1 days);
        game.resolve(id);
        assertEq(game.creditOf(p[0]) + game.creditOf(p[1]), 0, "no fee for a tie");
        _appealRounds(id, FAULT);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelFault, "fault");
        assertEq(game.creditOf(p[0]), 5e16, "revealer of the decided side paid");
        assertEq(game.creditOf(p[1]), 0, "wrong revealer earns nothing");
        assertEq(game.creditOf(p[2]), 0, "silent member earns nothing");
        assertEq(game.creditOf(challenger), bond + _fees() + REWARD - 5e16, "deposit back, reward less the fee");
        _assertSolvent();
        _claimAllAndAssertEmpty(p);
    }

    /// A concession while the commit phase is open (two of three members committed, nothing revealed) counts no vote:
    /// every fee goes back to the challenger. Once the third commit closes the phase, concede is refused
    /// (DisputeGameAttacks.t.sol: test_concedeAfterReveals_refused_sybilMemberForfeits).
    function test_panelFee_conceded_whileCommitsOpen_refundsEveryFee() public {
        (, uint256 id) = _cheatingDispute();
        uint256 bond = game.getDispute(id).bond;
        address[] memory p = _draw(id);
        for (uint256 i; i < 2; ++i) _commitVote(id, p[i], FAULT);
        vm_prank(provider);
        game.concede(id);
        for (uint256 i; i < 3; ++i) {
            assertEq(game.creditOf(p[i]), 0, "no vote counted: no fee");
        }
        assertEq(game.creditOf(challenger), bond + _fees() + REWARD, "bond, every fee and the reward");
        assertEq(game.openFees(), 0, "fees settled");
        _assertSolvent();
        _claimAllAndAssertEmpty(p);
    }

    // ---------------------------------------------------------------- several disputes on one job

    /// The provider concedes the first dispute: the other open dispute can no longer be conceded, goes to its panel, and
    /// a unanimous Fault (no appeal window: the job already faulted) pays its panel out of the held challenger share and
    /// takes the rest of it: a fault a panel decided outranks the provider's concession.
    function test_secondDisputeAfterFault_panelFault_bondBackAndShare() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 first = _challenge(challenger, jobId, 2, 2);
        uint256 second = _challenge(stranger, jobId, 3, 2);
        assertEq(market.getJob(jobId).openDisputes, 2, "two open");
        vm_prank(provider);
        game.concede(first);
        assertEq(game.creditOf(challenger), game.getDispute(first).bond + _fees(), "deposit back, the reward waits");
        (uint256 left, uint256 shares) = game.rewardPoolOf(jobId);
        assertEq(left, REWARD, "the whole reward held");
        assertEq(shares, 1, "one dispute left to settle");
        vm_prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSuperseded.selector, second, jobId));
        game.concede(second);
        // nothing is decided yet: the panel still votes
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameVotingOpen.selector, second, game.getDispute(second).revealDeadline, block.timestamp
            )
        );
        game.resolve(second);
        address[] memory p = _draw(second);
        _vote(second, p, [FAULT, FAULT, FAULT]);
        game.resolve(second);
        assertTrue(game.getDispute(second).outcome == IDisputeGameTypes.Outcome.PanelFault, "decided by its panel");
        assertEq(game.creditOf(stranger), game.getDispute(second).bond + REWARD, "bond, fees out of the reward, the rest");
        assertEq(game.creditOf(challenger), game.getDispute(first).bond + _fees(), "the conceded one: deposit back");
        assertEq(vault.creditOf(stranger), 0, "no second slash");
        assertEq(game.pooled(), 0, "pool paid out");
        _assertSolvent();
    }

    /// A false challenge that is still open when another dispute faulted the job is decided by its own panel: the bond
    /// goes to the provider, the member that voted Fault forfeits to the Valid voters, and the challenge takes no part
    /// of the reward: the whole of it goes to the fault, nothing is burned.
    function test_falseDisputeAfterFault_panelValid_bondToProviderNoShare() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 first = _challenge(challenger, jobId, 2, 2);
        uint256 falseId = _challenge(stranger, jobId, 5, 2); // step 5 is valid (not a segment's first step)
        vm_prank(provider);
        game.concede(first);
        uint256 burned0 = token.balanceOf(game.BURN_ADDRESS());
        address[] memory p = _draw(falseId);
        uint256 wrongBond = _bondOf(p[2]);
        _vote(falseId, p, [VALID, VALID, FAULT]);
        game.resolve(falseId);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(falseId);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.PanelValid, "decided Valid, not Superseded");
        assertEq(game.creditOf(provider), d.bond, "bond to the provider");
        assertEq(game.creditOf(stranger), defaultParams().panelFee, "only the minority's fee back");
        assertEq(_bondOf(p[2]), wrongBond - defaultParams().panelForfeit, "Fault voter forfeits");
        assertEq(token.balanceOf(game.BURN_ADDRESS()), burned0, "nothing burned");
        assertEq(game.creditOf(challenger), game.getDispute(first).bond + _fees() + REWARD, "the fault takes it all");
        assertEq(game.pooled(), 0, "pool closed");
        _assertSolvent();
    }

    /// Three disputes: a concession faults the job, a false challenge is then decided Valid and earns nothing, and the
    /// reward goes to the fault a panel decided once the last of the three settled.
    function test_forgoneShare_goesToLaterRightChallenge() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 first = _challenge(challenger, jobId, 2, 2);
        uint256 falseId = _challenge(stranger, jobId, 5, 2);
        uint256 right = _challenge(buyer, jobId, 3, 2);
        vm_prank(provider);
        game.concede(first);
        assertEq(game.creditOf(challenger), game.getDispute(first).bond + _fees(), "the reward waits");
        address[] memory pf = _draw(falseId);
        address[] memory pr = _draw(right);
        for (uint256 i; i < 3; ++i) _commitVote(right, pr[i], FAULT);
        _vote(falseId, pf, [VALID, VALID, VALID]);
        for (uint256 i; i < 3; ++i) _reveal(right, pr[i], FAULT);
        game.resolve(falseId);
        (uint256 left, uint256 shares) = game.rewardPoolOf(jobId);
        assertEq(shares, 1, "one dispute left to settle");
        assertEq(left, REWARD, "nothing paid yet");
        game.resolve(right);
        assertEq(game.creditOf(buyer), game.getDispute(right).bond + REWARD, "right challenge: its panel and the rest");
        assertEq(game.creditOf(challenger), game.getDispute(first).bond + _fees(), "conceded: deposit back");
        assertEq(game.creditOf(provider), game.getDispute(falseId).bond, "false bond to the provider");
        assertEq(game.pooled(), 0, "pool paid out");
        _assertSolvent();
    }

    /// A dispute its panels did not decide (nobody revealed in any round: a silent round is appealed like a tie) closes
    /// as Superseded once its job faulted: the bond and every fee come back, the silent members forfeit every round's
    /// forfeit, and the dispute earns no part of the reward (a provider's undecided disputes would otherwise dilute the
    /// fault's).
    function test_undecidedDisputeAfterFault_superseded_refundsAndShares() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 first = _challenge(challenger, jobId, 2, 2);
        uint256 second = _challenge(stranger, jobId, 5, 2);
        vm_prank(provider);
        game.concede(first);
        address[] memory p = _draw(second);
        uint256 silentBond = _bondOf(p[2]);
        // nobody reveals, in any round: the panels did not decide
        _commitVote(second, p[0], FAULT);
        _resolveSilent(second);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(second);
        assertEq(d.round, game.MAX_ROUNDS(), "every round played");
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.Superseded, "no decision: superseded");
        assertEq(game.creditOf(stranger), d.bond + _fees(), "bond and every fee, no reward");
        assertEq(game.creditOf(challenger), game.getDispute(first).bond + _fees() + REWARD, "the fault takes the reward");
        // the pool of five seats every round: F + 2F + 4F
        assertEq(_bondOf(p[2]), silentBond - 7 * uint256(defaultParams().panelForfeit), "silent member forfeits");
        assertEq(game.creditOf(provider), 0, "provider gets nothing");
        _assertSolvent();
    }

    // ---------------------------------------------------------------- limits on open disputes

    /// One challenger holds at most MAX_OPEN_PER_CHALLENGER open disputes on a job; a settled one gives its slot back.
    function test_challenge_pastChallengerLimit_reverts() public {
        uint256 jobId = _job(2, 2, HONEST);
        uint256 max = game.MAX_OPEN_PER_CHALLENGER();
        assertEq(max, 4, "limit");
        uint256 first;
        for (uint256 step = 1; step <= max; ++step) {
            uint256 id = _challenge(challenger, jobId, step, HONEST);
            if (first == 0) first = id;
        }
        assertEq(game.openDisputesBy(jobId, challenger), max, "four open");
        _commitChallenge(challenger, jobId, 5);
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameChallengerLimit.selector, jobId, challenger, max, max)
        );
        _challengeCommitted(challenger, jobId, 5, HONEST);
        // another challenger is not limited by it
        _challenge(stranger, jobId, 5, HONEST);
        // a settled dispute frees its slot
        address[] memory p = _draw(first);
        _vote(first, p, [VALID, VALID, VALID]);
        game.resolve(first);
        assertEq(game.openDisputesBy(jobId, challenger), max - 1, "slot freed");
    }

    /// A job holds at most MAX_OPEN_PER_JOB open disputes, however many addresses open them.
    function test_challenge_pastJobLimit_reverts() public {
        uint256 max = game.MAX_OPEN_PER_JOB();
        uint256 perChallenger = game.MAX_OPEN_PER_CHALLENGER();
        uint16 segments = uint16((max + K) / K); // more steps than the limit
        uint256 jobId = _job(segments, segments, HONEST);
        for (uint256 i; i < max; ++i) {
            address who = address(uint160(0xC4A1100 + i / perChallenger));
            if (i % perChallenger == 0) _fund(who);
            _challenge(who, jobId, i + 1, HONEST);
        }
        assertEq(game.openDisputesOn(jobId), max, "job full");
        _commitChallenge(stranger, jobId, max + 1);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameJobDisputeLimit.selector, jobId, max, max));
        _challengeCommitted(stranger, jobId, max + 1, HONEST);
    }

    // ---------------------------------------------------------------- resolved disputes are final

    function test_resolvedDispute_touchedAgain_reverts() public {
        (, uint256 id) = _cheatingDispute();
        vm_prank(provider);
        game.concede(id);
        bytes memory err = abi.encodeWithSelector(
            IDisputeGameTypes.DisputeGameAlreadyResolved.selector, id, IDisputeGameTypes.Outcome.Conceded
        );
        VM.expectRevert(err);
        vm_prank(provider);
        game.concede(id);
        VM.expectRevert(err);
        game.resolve(id);
        VM.expectRevert(err);
        game.drawPanel(id);
        VM.expectRevert(err);
        vm_prank(auditors[0]);
        game.commitVote(id, keccak256("c"));
        VM.expectRevert(err);
        _reveal(id, auditors[0], FAULT);
        uint256[2] memory a;
        uint256[2][2] memory b;
        VM.expectRevert(err);
        game.prove(id, 0, 0, 0, new bytes32[](0), a, b, a);
    }

    // ---------------------------------------------------------------- circuit class (prove)

    function _batch(uint256 t) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode("batch", t))) >> 8;
    }

    function _batchLeaves() internal pure returns (bytes32[4] memory lv) {
        for (uint256 t = 1; t <= 4; ++t) {
            lv[t - 1] = Trace.leaf(uint64(t), bytes32(_batch(t)));
        }
    }

    bytes32 internal constant BODY = keccak256("circuit manifest document");

    function _circuitJob() internal returns (uint256 jobId) {
        bytes32 batchRoot = root(_batchLeaves());
        bytes32 manifestHash = game.circuitManifestHash(BODY, 3277, batchRoot);
        vm_prank(buyer);
        jobId = market.createJob(manifestHash, "ipfs://m", address(token), PAYMENT, policy(1));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 3277, batchRoot, BODY);
        vm_prank(provider);
        market.acceptJob(jobId);
        _commit(jobId, 1, HONEST);
    }

    function test_prove_forgedProof_rejected() public {
        uint256 jobId = _circuitJob();
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        uint256[2] memory a = [uint256(1), uint256(2)];
        uint256[2][2] memory b = [[uint256(1), uint256(2)], [uint256(3), uint256(4)]];
        uint256[2] memory c = [uint256(1), uint256(2)];
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameInvalidProof.selector, id));
        game.prove(id, weights(1, 0), weights(2, 0), _batch(2), proof(_batchLeaves(), 1), a, b, c);
    }

    function test_prove_bindingErrors() public {
        uint256 jobId = _circuitJob();
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        uint256[2] memory a;
        uint256[2][2] memory b;
        bytes32[] memory bp = proof(_batchLeaves(), 1);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameStateMismatch.selector, id));
        game.prove(id, weights(1, 1), weights(2, 0), _batch(2), bp, a, b, a);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameStateMismatch.selector, id));
        game.prove(id, weights(1, 0), weights(2, 1), _batch(2), bp, a, b, a);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameBadBatchProof.selector, id, 2));
        game.prove(id, weights(1, 0), weights(2, 0), _batch(3), bp, a, b, a);
    }

    /// @dev Makes the development verifier accept any proof: what a real proof would do (real proofs are checked in
    /// test/dispute/, Mocha); this file tests the settlement around it.
    function _acceptAnyProof() internal {
        VMM.mockCall(address(verifier), abi.encodeWithSelector(IStepVerifier.verifyProof.selector), abi.encode(true));
    }

    function _prove(uint256 id) internal {
        uint256[2] memory a;
        uint256[2][2] memory b;
        game.prove(id, weights(1, 0), weights(2, 0), _batch(2), proof(_batchLeaves(), 1), a, b, a);
    }

    /// A challenger's members vote Fault on a valid step of a circuit-class job and win the panel 2-1; the provider
    /// proves the step after the reveals, before anyone resolves. Proven counts no vote, so the wrong Fault voters used
    /// to keep their bonds (a free vote for a challenger's sybils). Now each revealed Fault forfeits panelForfeit to the
    /// member that revealed Valid; the bond goes to the provider as on any Proven dispute.
    function test_prove_afterReveals_wrongFaultVotersForfeit() public {
        uint256 jobId = _circuitJob();
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        address[] memory p = _draw(id);
        _vote(id, p, [FAULT, FAULT, VALID]);
        uint256 b0 = _bondOf(p[0]);
        uint256 b1 = _bondOf(p[1]);
        uint256 b2 = _bondOf(p[2]);
        _acceptAnyProof();
        _prove(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.Proven, "proven");
        uint256 forfeit = defaultParams().panelForfeit;
        assertEq(_bondOf(p[0]), b0 - forfeit, "wrong Fault voter forfeits");
        assertEq(_bondOf(p[1]), b1 - forfeit, "wrong Fault voter forfeits");
        assertEq(_bondOf(p[2]), b2, "the Valid voter keeps its bond");
        assertEq(registry.creditOf(p[2]), 2 * forfeit, "and takes both forfeits");
        assertEq(game.creditOf(provider), game.getDispute(id).bond, "the bond to the provider");
        _assertSolvent();
    }

    /// @notice Any panel behaviour (silent, committed only, revealed Valid, revealed Fault per member), then the provider
    /// proves the valid step after the reveals: exactly the members that revealed Fault forfeit panelForfeit each, to
    /// the Valid revealers (burned when there are none); silent and unrevealed members are not judged; the game stays
    /// solvent and the registry holds exactly its bonds and credits.
    function testFuzz_prove_afterReveals_onlyRevealedFaultForfeits(uint8 pattern) public {
        uint256 jobId = _circuitJob();
        uint256 id = _challenge(challenger, jobId, 2, HONEST);
        address[] memory p = _draw(id);
        uint256[3] memory kind;
        uint256[3] memory bond0;
        uint256[3] memory credit0;
        uint256 nValid;
        uint256 nFault;
        for (uint256 i; i < 3; ++i) {
            kind[i] = (pattern >> (2 * i)) & 3; // 0 silent, 1 commit only, 2 Valid, 3 Fault
            if (kind[i] > 0) _commitVote(id, p[i], kind[i] == 3 ? FAULT : VALID);
            bond0[i] = _bondOf(p[i]);
            credit0[i] = registry.creditOf(p[i]);
        }
        VM.warp(game.getDispute(id).commitDeadline + 1);
        for (uint256 i; i < 3; ++i) {
            if (kind[i] < 2) continue;
            _reveal(id, p[i], kind[i] == 3 ? FAULT : VALID);
            if (kind[i] == 3) ++nFault;
            else ++nValid;
        }
        uint256 registryBalance = token.balanceOf(address(registry));
        uint256 burned0 = registry.creditOf(game.BURN_ADDRESS());
        _acceptAnyProof();
        _prove(id);
        assertTrue(game.getDispute(id).outcome == IDisputeGameTypes.Outcome.Proven, "proven");
        uint256 forfeit = defaultParams().panelForfeit;
        uint256 won;
        for (uint256 i; i < 3; ++i) {
            assertEq(bond0[i] - _bondOf(p[i]), kind[i] == 3 ? forfeit : 0, "only a revealed Fault forfeits");
            uint256 gained = registry.creditOf(p[i]) - credit0[i];
            if (kind[i] != 2) assertEq(gained, 0, "only a Valid revealer is credited");
            won += gained;
        }
        assertEq(won, nValid > 0 ? nFault * forfeit : 0, "the forfeits go to the Valid revealers");
        assertEq(registry.creditOf(game.BURN_ADDRESS()) - burned0, nValid > 0 ? 0 : nFault * forfeit, "or are burned");
        assertEq(token.balanceOf(address(registry)), registryBalance, "forfeits move bonds to credits inside the registry");
        assertEq(game.creditOf(provider), game.getDispute(id).bond, "the bond to the provider");
        _assertSolvent();
    }

    /// A proof before any reveal judges nobody (no vote is known); with only Fault revealed, the forfeits are burned.
    function test_prove_beforeReveals_noForfeit_allFault_burned() public {
        uint256 jobId = _circuitJob();
        uint256 early = _challenge(challenger, jobId, 2, HONEST);
        address[] memory p = _draw(early);
        _commitVote(early, p[0], FAULT);
        uint256 b0 = _bondOf(p[0]);
        _acceptAnyProof();
        _prove(early);
        assertEq(_bondOf(p[0]), b0, "a committed, unrevealed vote is not judged");

        uint256 job2 = _circuitJob();
        uint256 late = _challenge(stranger, job2, 2, HONEST);
        address[] memory q = _draw(late);
        _vote(late, q, [FAULT, IDisputeGameTypes.Vote.None, IDisputeGameTypes.Vote.None]);
        uint256 q0 = _bondOf(q[0]);
        uint256 q1 = _bondOf(q[1]);
        uint256 burned0 = registry.creditOf(game.BURN_ADDRESS());
        _prove(late);
        uint256 forfeit = defaultParams().panelForfeit;
        assertEq(_bondOf(q[0]), q0 - forfeit, "the Fault revealer forfeits");
        assertEq(_bondOf(q[1]), q1, "a silent member is not judged by a proof");
        assertEq(registry.creditOf(game.BURN_ADDRESS()) - burned0, forfeit, "no Valid revealer: burned");
    }

    function test_prove_firstStepOfSegment_reverts() public {
        uint256 jobId = _circuitJob();
        uint256 id = _challenge(challenger, jobId, 1, HONEST);
        uint256[2] memory a;
        uint256[2][2] memory b;
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameProofNotAllowed.selector, id, 1));
        game.prove(id, weights(0, 0), weights(1, 0), _batch(1), proof(_batchLeaves(), 0), a, b, a);
    }

    function test_prove_onPanelJob_reverts() public {
        (uint256 jobId, uint256 id) = _cheatingDispute();
        uint256[2] memory a;
        uint256[2][2] memory b;
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNotCircuitJob.selector, jobId));
        game.prove(id, 0, 0, 0, new bytes32[](0), a, b, a);
    }

    function test_setCircuitTerms_errors() public {
        bytes32 r1 = bytes32(uint256(1));
        bytes32 manifestHash = game.circuitManifestHash(BODY, 1, r1);
        vm_prank(buyer);
        uint256 jobId = market.createJob(manifestHash, "ipfs://m", address(token), PAYMENT, policy(1));
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNotBuyer.selector, jobId, stranger, buyer));
        vm_prank(stranger);
        game.setCircuitTerms(jobId, 1, r1, BODY);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameInvalidTerms.selector, 2 ** 32, r1));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 2 ** 32, r1, BODY);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameInvalidTerms.selector, 1, bytes32(0)));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 1, bytes32(0), BODY);
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 1, r1, BODY);
        assertEq(game.circuitTerms(jobId).lr, 1, "terms stored");
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameTermsLocked.selector, jobId));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 2, r1, BODY);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketUnknownJob.selector, 99));
        game.setCircuitTerms(99, 1, r1, BODY);
    }

    /// A buyer (colluding with the provider or not) cannot register terms other than the ones the manifest hash it
    /// created the job with commits to: another lr, another batch root (another data order) or another document.
    function test_setCircuitTerms_notInManifest_reverts() public {
        bytes32 batchRoot = root(_batchLeaves());
        bytes32 manifestHash = game.circuitManifestHash(BODY, 3277, batchRoot);
        vm_prank(buyer);
        uint256 jobId = market.createJob(manifestHash, "ipfs://m", address(token), PAYMENT, policy(1));
        bytes32 otherRoot = keccak256("another data order");
        bytes32 otherBody = keccak256("another document");
        bytes32 hRoot = game.circuitManifestHash(BODY, 3277, otherRoot);
        bytes32 hLr = game.circuitManifestHash(BODY, 3278, batchRoot);
        bytes32 hBody = game.circuitManifestHash(otherBody, 3277, batchRoot);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameTermsNotInManifest.selector, jobId, manifestHash, hRoot));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 3277, otherRoot, BODY);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameTermsNotInManifest.selector, jobId, manifestHash, hLr));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 3278, batchRoot, BODY);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameTermsNotInManifest.selector, jobId, manifestHash, hBody));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 3277, batchRoot, otherBody);
        // a job created with a plain (non-circuit) manifest hash can never become circuit class
        vm_prank(buyer);
        uint256 plain = market.createJob(keccak256("m"), "ipfs://m", address(token), PAYMENT, policy(1));
        VM.expectPartialRevert(IDisputeGameTypes.DisputeGameTermsNotInManifest.selector);
        vm_prank(buyer);
        game.setCircuitTerms(plain, 3277, batchRoot, BODY);
        // the manifest's own terms go through
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 3277, batchRoot, BODY);
        assertEq(game.circuitTerms(jobId).batchRoot, batchRoot, "terms stored");
    }

    /// Fixed vector shared with verifier/src/dispute/terms.ts (test/dispute/terms.test.ts).
    /// @notice DisputeSettlement runs only on DisputeGame's storage: called directly (its own, empty storage) every entry
    /// reverts by name, and through the game the same calls settle as usual (every other test of this file).
    function test_settlement_directCall_reverts() public {
        DisputeSettlement s = DisputeSettlement(game.settlement());
        assertTrue(address(s).code.length != 0, "settlement deployed by the game");
        bytes memory err = abi.encodeWithSelector(IDisputeGameTypes.DisputeSettlementDirectCall.selector, address(s));
        VM.expectRevert(err);
        s.resolve(1);
        VM.expectRevert(err);
        s.concede(1);
        VM.expectRevert(err);
        s.setCircuitTerms(1, 1, bytes32(uint256(1)), bytes32(0));
        uint256[2] memory a;
        uint256[2][2] memory b;
        VM.expectRevert(err);
        s.prove(1, 0, 0, 0, new bytes32[](0), a, b, a);
    }

    function test_circuitManifestHash_vector() public view {
        assertEq(
            game.circuitManifestHash(bytes32(uint256(1)), 3277, bytes32(uint256(2))),
            keccak256(
                abi.encode(
                    keccak256("PoUWCircuitManifest(bytes32 manifestBody,uint256 lr,bytes32 batchRoot)"),
                    bytes32(uint256(1)),
                    uint256(3277),
                    bytes32(uint256(2))
                )
            ),
            "circuitManifestHash"
        );
    }

    function test_setCircuitTerms_afterAcceptance_reverts() public {
        uint256 jobId = _job(1, 0, HONEST);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameTermsLocked.selector, jobId));
        vm_prank(buyer);
        game.setCircuitTerms(jobId, 1, bytes32(uint256(1)), BODY);
    }

    // ---------------------------------------------------------------- proving mode (which setup may settle)

    function _gameWith(address v, bytes32 vkeyHash) internal returns (DisputeGame) {
        return new DisputeGame(market, registry, IStepVerifier(v), vkeyHash, token, defaultParams());
    }

    function test_provingMode_devChain_developmentVerifier() public view {
        (address v, bytes32 h, IDisputeGameTypes.ProvingMode mode) = game.proving();
        assertEq(v, address(verifier), "verifier");
        assertEq(h, bytes32(0), "no vkey hash");
        assertEq(uint256(mode), uint256(IDisputeGameTypes.ProvingMode.Development), "dev chain: development setup proves");
    }

    /// On any chain but 31337 the development verifier (no vkey hash, or its own) leaves proving disabled: `prove`
    /// reverts with DisputeGameProvingDisabled before it reads anything.
    function test_prove_nonDevChain_withoutCeremonyVerifier_reverts() public {
        VM.chainId(1);
        DisputeGame live = _gameWith(address(verifier), bytes32(0));
        (,, IDisputeGameTypes.ProvingMode mode) = live.proving();
        assertEq(uint256(mode), uint256(IDisputeGameTypes.ProvingMode.Disabled), "disabled");
        uint256[2] memory a;
        uint256[2][2] memory b;
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameProvingDisabled.selector, address(verifier), bytes32(0), 1)
        );
        live.prove(1, 0, 0, 0, new bytes32[](0), a, b, a);
        bytes32 devHash = game.DEV_VKEY_HASH();
        DisputeGame named = _gameWith(address(verifier), devHash);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameProvingDisabled.selector, address(verifier), devHash, 1));
        named.prove(1, 0, 0, 0, new bytes32[](0), a, b, a);
        DisputeGame none = _gameWith(address(0), bytes32(0));
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameProvingDisabled.selector, address(0), bytes32(0), 1));
        none.prove(1, 0, 0, 0, new bytes32[](0), a, b, a);
    }

    /// A verifier named by a ceremony's vkey hash proves on any chain: the gate passes and `prove` goes on to its
    /// dispute checks.
    function test_prove_nonDevChain_ceremonyVerifier_passesGate() public {
        VM.chainId(1);
        bytes32 ceremony = keccak256("a ceremony's vkey hash");
        DisputeGame live = _gameWith(address(verifier), ceremony);
        (, bytes32 h, IDisputeGameTypes.ProvingMode mode) = live.proving();
        assertEq(h, ceremony, "vkey hash");
        assertEq(uint256(mode), uint256(IDisputeGameTypes.ProvingMode.Ceremony), "ceremony");
        uint256[2] memory a;
        uint256[2][2] memory b;
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameUnknownDispute.selector, 1));
        live.prove(1, 0, 0, 0, new bytes32[](0), a, b, a);
    }

    function test_provingMode_noVerifier_disabledEvenOnDevChain() public {
        DisputeGame none = _gameWith(address(0), bytes32(0));
        (,, IDisputeGameTypes.ProvingMode mode) = none.proving();
        assertEq(uint256(mode), uint256(IDisputeGameTypes.ProvingMode.Disabled), "no verifier: disabled");
    }

    function test_constructor_invalidVerifier_reverts() public {
        bytes32 ceremony = keccak256("a ceremony's vkey hash");
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameInvalidVerifier.selector, address(0), ceremony));
        _gameWith(address(0), ceremony);
        address noCode = address(0xC0DE);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameInvalidVerifier.selector, noCode, ceremony));
        _gameWith(noCode, ceremony);
    }

    // ---------------------------------------------------------------- parameters and credits

    /// @dev Deploys a DisputeGame with `p`, expecting the revert `err`.
    function _expectParamsRevert(IDisputeGameTypes.Params memory p, bytes memory err) private {
        VM.expectRevert(err);
        new DisputeGame(market, registry, IStepVerifier(address(verifier)), bytes32(0), token, p);
    }

    function test_constructor_zeroMinChallengerBond_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.minChallengerBond = 0;
        _expectParamsRevert(p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGameMinChallengerBondZero.selector));
    }

    function test_constructor_panelErrorTooHigh_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.panelErrorBps = 5_000;
        _expectParamsRevert(
            p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelErrorTooHigh.selector, uint256(5_000), uint256(5_000))
        );
    }

    function test_constructor_panelSizeOutOfRange_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.panelSize = 0;
        _expectParamsRevert(
            p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelSizeOutOfRange.selector, uint256(0), uint256(1), uint256(15))
        );
        p.panelSize = 17;
        _expectParamsRevert(
            p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelSizeOutOfRange.selector, uint256(17), uint256(1), uint256(15))
        );
    }

    function test_constructor_evenPanelSize_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.panelSize = 4;
        _expectParamsRevert(p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelSizeEven.selector, uint256(4)));
    }

    function test_constructor_seedDelayOutOfRange_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.seedDelayBlocks = 0;
        _expectParamsRevert(
            p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedDelayOutOfRange.selector, uint256(0), uint256(1), uint256(200))
        );
        p.seedDelayBlocks = 201;
        _expectParamsRevert(
            p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedDelayOutOfRange.selector, uint256(201), uint256(1), uint256(200))
        );
    }

    function test_constructor_zeroCommitWindow_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.commitWindowSeconds = Seconds.wrap(0);
        _expectParamsRevert(p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGameCommitWindowZero.selector));
    }

    function test_constructor_zeroRevealWindow_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.revealWindowSeconds = Seconds.wrap(0);
        _expectParamsRevert(p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGameRevealWindowZero.selector));
    }

    function test_constructor_zeroPanelFee_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.panelFee = 0;
        _expectParamsRevert(p, abi.encodeWithSelector(IDisputeGameTypes.DisputeGamePanelFeeZero.selector));
    }

    function test_constructor_panelFeesTooLarge_reverts() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        p.panelFee = type(uint128).max / 2; // panelSize 3: the deposit's fee part would not fit in uint128
        _expectParamsRevert(
            p,
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGamePanelFeesTooLarge.selector,
                uint256(type(uint128).max / 2),
                uint256(3),
                uint256(type(uint128).max)
            )
        );
    }

    function test_claim_nothing_reverts() public {
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNothingToClaim.selector, stranger));
        vm_prank(stranger);
        game.claim();
    }

    // ---------------------------------------------------------------- fuzz

    /// @notice The bond deters a frivolous challenge: its expected loss (1-eps)*B is at least the expected gain
    /// eps * lam * S, for every stake and challenger share.
    function testFuzz_requiredBond_deters(uint128 stake, uint16 challengerBps) public {
        stake = uint128(bound(stake, 1, 1e30));
        challengerBps = uint16(bound(challengerBps, 0, 5_000));
        IJobMarket.Policy memory pol = policy(1);
        pol.requiredStake = stake;
        pol.challengerBps = challengerBps;
        pol.buyerBps = 10_000 - challengerBps;
        pol.burnBps = 0;
        vm_prank(buyer);
        uint256 jobId = market.createJob(keccak256("m"), "ipfs://m", address(token), PAYMENT, pol);
        uint256 bond = game.requiredBond(jobId);
        uint256 eps = defaultParams().panelErrorBps;
        uint256 gain = uint256(stake) * challengerBps * eps; // scaled by 1e8
        assertGe((bond - defaultParams().minChallengerBond) * 10_000 * (10_000 - eps), gain, "(1-eps)B >= eps*lam*S");
        assertGe(bond, defaultParams().minChallengerBond, "floor");
    }

    /// @notice Any pattern of panel behaviour (silent, committed only, Valid, Fault) ends in the majority outcome, and
    /// every wei stays accounted for: the game holds exactly its credits, auditor bonds only move to credits.
    function testFuzz_votePatterns(uint8 pattern) public {
        (uint256 jobId, uint256 id) = _cheatingDispute();
        address[] memory p = _draw(id);
        uint256 valid;
        uint256 fault;
        uint256 registryBefore = token.balanceOf(address(registry));
        for (uint256 i; i < 3; ++i) {
            uint256 kind = (pattern >> (2 * i)) & 3; // 0 silent, 1 commit only, 2 Valid, 3 Fault
            if (kind == 0) continue;
            _commitVote(id, p[i], kind == 2 ? VALID : FAULT);
        }
        VM.warp(block.timestamp + 1 days + 1);
        for (uint256 i; i < 3; ++i) {
            uint256 kind = (pattern >> (2 * i)) & 3;
            if (kind < 2) continue;
            _reveal(id, p[i], kind == 2 ? VALID : FAULT);
            if (kind == 2) ++valid;
            else ++fault;
        }
        VM.warp(block.timestamp + 1 days);
        game.resolve(id);
        // a split Fault (a Valid or silent seat), a tie of revealed votes and a round nobody revealed in are appealed;
        // the later rounds vote the truth (Fault) unanimously
        bool undecided = fault == valid;
        if (undecided) fault = valid + 1; // decided by the appeal: Fault
        if (fault > valid) _appealRounds(id, FAULT);
        IDisputeGameTypes.Outcome o = game.getDispute(id).outcome;
        if (fault > valid) assertTrue(o == IDisputeGameTypes.Outcome.PanelFault, "fault majority");
        else assertTrue(o == IDisputeGameTypes.Outcome.PanelValid, "valid majority");
        uint256 bond = game.getDispute(id).bond;
        uint256 paid;
        for (uint256 i; i < 3; ++i) {
            uint256 kind = (pattern >> (2 * i)) & 3;
            // fee earned: revealed on the side the last round decided
            bool earns = kind >= 2 && (kind == 3) == (fault > valid);
            assertEq(game.creditOf(p[i]), earns ? 5e16 : 0, "member fee");
            if (earns) paid += 5e16;
        }
        uint256 reward = fault > valid ? REWARD : 0; // on a fault the panel is paid out of the reward
        assertEq(
            game.creditOf(challenger) + game.creditOf(provider),
            bond + _fees() - paid + reward,
            "bond, unearned fees and reward credited"
        );
        assertEq(
            game.creditOf(valid > fault ? provider : challenger),
            valid > fault ? bond : bond + _fees() - paid + reward,
            "bond"
        );
        _assertSolvent();
        assertEq(game.openFees(), 0, "no open fees");
        assertEq(token.balanceOf(address(registry)), registryBefore, "registry tokens unchanged");
        uint256 owed;
        for (uint256 i; i < auditors.length; ++i) {
            owed += _bondOf(auditors[i]) + registry.creditOf(auditors[i]);
        }
        owed += registry.creditOf(game.BURN_ADDRESS());
        assertEq(owed, registryBefore, "bonds + credits = registry balance");
        assertEq(market.getJob(jobId).openDisputes, 0, "job no longer frozen by this dispute");
    }

    // ---------------------------------------------------------------- util

    function vm_prank(address who) internal {
        VM.prank(who);
    }
}
