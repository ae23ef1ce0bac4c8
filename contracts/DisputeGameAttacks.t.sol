// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {AttackFixture} from "./test/AttackFixture.sol";
import {IDisputeGameTypes} from "./interfaces/IDisputeGame.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice One attack per test, each played by the provider side of AttackFixture (the provider, its sybil challengers
/// and auditors), and each shown to lose: the provider side never gets back more than the challenger share of a faulted
/// lock plus its own deposits, an honest challenger on the faulty step never loses, nobody holds a job past its bound,
/// and no end state outside the committed leaves can be bound. Amounts are computed by hand from the fixture: lock
/// L = STAKE = 10e18, challengerBps 5,000 (R = 5e18), buyerBps 3,000, burnBps 2,000, panelSize 3 * panelFee 5e16.
contract DisputeGameAttacksTest is TestBase, AttackFixture {
    /// @dev No panel of the 12 draws tried has exactly one sybil member (the fixture's pool makes one likely).
    error NoPanelWithOneSybil();

    uint256 internal constant HONEST = type(uint256).max;
    uint256 internal constant REWARD = 5e18; // STAKE * 5,000 / 10,000
    uint256 internal constant FEES = 15e16; // 3 * 5e16
    uint256 internal constant DISPUTE_SECONDS = 2 days; // commitWindow + revealWindow
    IDisputeGameTypes.Vote internal constant FAULT_V = IDisputeGameTypes.Vote.Fault;
    IDisputeGameTypes.Vote internal constant VALID_V = IDisputeGameTypes.Vote.Valid;

    // ---------------------------------------------------------------- helpers

    /// @dev The provider side's wealth: tokens, every credit, stake (free, locked, pending) and auditor bonds.
    function _sideWealth() internal view returns (uint256 w) {
        address[5] memory side = [provider, SYBIL_CHALLENGER_1, SYBIL_CHALLENGER_2, SYBIL_AUDITOR_1, SYBIL_AUDITOR_2];
        for (uint256 i; i < side.length; ++i) {
            address a = side[i];
            IStakeVault.Account memory acc = vault.accountOf(a);
            w += token.balanceOf(a) + game.creditOf(a) + vault.creditOf(a) + acc.free + acc.locked + acc.pendingWithdrawal
                + market.creditOf(a, address(token)) + registry.auditorOf(a).bond + registry.creditOf(a);
        }
    }

    function _deposit(uint256 id) internal view returns (uint256) {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        return uint256(d.bond) + d.fees;
    }

    function _outcome(uint256 id) internal view returns (IDisputeGameTypes.Outcome) {
        return game.getDispute(id).outcome;
    }

    /// @dev Draws the panel of every open dispute, and every member commits and reveals the truth of its step (Fault on
    /// `faultyStep`, Valid elsewhere; HONEST: no step is faulty), except the members of dispute `capturedId`, who all
    /// vote Fault (a panel the attacker holds). Leaves every dispute resolvable (all revealed).
    function _panelsVote(uint256 faultyStep, uint256 capturedId) internal {
        VMB.roll(block.number + defaultParams().seedDelayBlocks + 1);
        uint256 n = game.disputeCount();
        for (uint256 id = 1; id <= n; ++id) {
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (d.status != IDisputeGameTypes.Status.Open) continue;
            _pastChallenge(id);
            if (d.panel.length == 0) game.drawPanel(id);
            address[] memory p = game.getDispute(id).panel;
            for (uint256 i; i < p.length; ++i) _commitVote(id, p[i], _truth(id, faultyStep, capturedId));
        }
        for (uint256 id = 1; id <= n; ++id) {
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (d.status != IDisputeGameTypes.Status.Open) continue;
            for (uint256 i; i < d.panel.length; ++i) _reveal(id, d.panel[i], _truth(id, faultyStep, capturedId));
        }
    }

    function _truth(uint256 id, uint256 faultyStep, uint256 capturedId) internal view returns (IDisputeGameTypes.Vote) {
        if (id == capturedId || game.getDispute(id).step == faultyStep) return IDisputeGameTypes.Vote.Fault;
        return IDisputeGameTypes.Vote.Valid;
    }

    // ---------------------------------------------------------------- sybil concession

    /// The provider's second address disputes a valid step first; an honest challenger then disputes the truly faulty
    /// step; the provider concedes its sybil's dispute at once, hoping to take the reward. The reward waits for both
    /// disputes and goes to the fault a panel decided: the honest challenger gets its deposit back plus R less its
    /// panel's fees, the provider side only its sybil's deposit back (it nets -L).
    function test_sybilConcession_honestGetsDepositAndHalf_sideAtMostChallengerShare() public {
        uint256 jobId = _job(2, 2, 2); // the faulty step is 2
        uint256 lock = vault.lockedFor(provider, jobId);
        assertEq(lock, STAKE, "lock");
        uint256 side0 = _sideWealth();
        uint256 buyerVault0 = vault.creditOf(buyer);
        uint256 burn0 = token.balanceOf(game.BURN_ADDRESS());

        uint256 sybilId = _challenge(SYBIL_CHALLENGER_1, jobId, 5, 2); // step 5 is a valid step
        uint256 honestId = _challenge(HONEST_1, jobId, 2, 2);
        VM.prank(provider);
        game.concede(sybilId);
        assertTrue(_outcome(sybilId) == IDisputeGameTypes.Outcome.Conceded, "sybil's conceded");
        // the honest dispute cannot be conceded any more; its panel decides it
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSuperseded.selector, honestId, jobId));
        game.concede(honestId);
        _panelsVote(2, 0);
        game.resolve(honestId);
        assertTrue(_outcome(honestId) == IDisputeGameTypes.Outcome.PanelFault, "honest decided Fault");

        // its panel is paid out of the held reward, so it nets R - fees
        assertEq(game.creditOf(HONEST_1), _deposit(honestId) + REWARD - FEES, "honest: deposit back + R - fees");
        assertEq(game.creditOf(SYBIL_CHALLENGER_1), _deposit(sybilId), "sybil: deposit back, no part");
        // the sybil auditors' panel fees (if drawn on the honest panel) count for the side
        assertLe(side0 - _sideWealth(), lock, "side nets -L + its auditors' fees");
        assertGe(side0 - _sideWealth(), lock - FEES, "side nets -L + at most the fees");
        assertEq(vault.lockedFor(provider, jobId), 0, "whole lock slashed");
        assertEq(vault.creditOf(buyer) - buyerVault0, (lock * 3_000) / 10_000, "buyer share");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "escrow back to the buyer");
        assertEq(token.balanceOf(game.BURN_ADDRESS()) - burn0, (lock * 2_000) / 10_000, "burn share");
        assertEq(game.pooled(), 0, "pool paid out");
    }

    /// The provider's sybil pre-committed to the faulty step long ago and opens its dispute in the block before the
    /// honest challenger's (seen in the mempool); the honest challenge fails (one open dispute per step) and costs
    /// nothing; the provider concedes the sybil's. The side then holds the whole reward, and still loses exactly the
    /// non-challenger share (1 - 5,000/10,000) * L: the most a self-report can save.
    function test_frontRunHonestChallenger_sideLosesNonChallengerShare() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 side0 = _sideWealth();
        uint256 honest0 = token.balanceOf(HONEST_1);
        _commitChallenge(SYBIL_CHALLENGER_1, jobId, 2);
        _commitChallenge(HONEST_1, jobId, 2);
        uint256 sybilId = _challengeCommitted(SYBIL_CHALLENGER_1, jobId, 2, 2);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameDisputeOpen.selector, jobId, 2, sybilId));
        _challengeCommitted(HONEST_1, jobId, 2, 2);
        VM.prank(provider);
        game.concede(sybilId);
        assertEq(token.balanceOf(HONEST_1), honest0, "the failed honest challenge cost nothing");
        assertEq(side0 - _sideWealth(), STAKE - REWARD, "side loses exactly the non-challenger share");
    }

    /// Dilution: once an honest dispute on the faulty step is on chain, the provider's sybils (their commitments made
    /// long before, at no cost) open disputes on every other step of the job, then the provider concedes one of them.
    /// The pool waits for the six open disputes; the sybils' other four disputes are false: their panels decide them
    /// Valid, so they lose their bonds (to the provider, or burned on a segment's first step) and earn nothing, and the
    /// honest dispute, the only fault a panel decided, takes R less its panel's fees. The concession earns nothing.
    function test_sybilDilution_falseDisputesDecidedValid_honestTakesForgoneParts() public {
        uint256 jobId = _job(2, 2, 2); // 6 steps; step 2 is the faulty one
        uint256 side0 = _sideWealth();
        uint256 honestId = _challenge(HONEST_1, jobId, 2, 2);
        uint256[5] memory others = [uint256(1), 3, 4, 5, 6];
        uint256 first;
        for (uint256 i; i < 5; ++i) {
            address sybil = i % 2 == 0 ? SYBIL_CHALLENGER_1 : SYBIL_CHALLENGER_2;
            uint256 id = _challenge(sybil, jobId, others[i], 2);
            if (first == 0) first = id;
        }
        assertEq(game.openDisputesOn(jobId), 6, "six open disputes");
        VM.prank(provider);
        game.concede(first);
        _panelsVote(2, 0);
        // the sybils' false disputes are resolved first (the order the side would like least does not matter here)
        for (uint256 id = first + 1; id <= game.disputeCount(); ++id) {
            game.resolve(id);
            assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelValid, "false dispute decided Valid");
        }
        game.resolve(honestId);
        assertTrue(_outcome(honestId) == IDisputeGameTypes.Outcome.PanelFault, "honest decided Fault");
        assertEq(game.creditOf(HONEST_1), _deposit(honestId) + REWARD - FEES, "honest: deposit + R - fees");
        assertEq(game.pooled(), 0, "pool paid out");
        assertGe(side0 - _sideWealth(), STAKE, "side nets at most -L");
    }

    /// Mass disputes against an honest provider: reckless challengers dispute every step of an honest job; the panel of
    /// the first dispute is captured (all its members vote Fault). A unanimous first-round Fault no longer slashes at
    /// once: the honest provider appeals it (posting a bond as large as the challenger's) to a larger, fresh panel, where
    /// the captured members vote Fault again and are outvoted; the dispute ends PanelValid, the provider gets its appeal
    /// bond back plus the false challenger's bond, and its lock stays whole. Every other dispute is decided by its own
    /// honest panel: Valid, so each false challenge loses its bond (to the honest provider, burned on a segment's first
    /// step).
    function test_massDisputes_capturedFirstPanel_appealedByProvider_nothingSlashed() public {
        VM.warp(block.timestamp + ACTIVATION_DELAY); // all seven auditors count: the three captured ones are a minority
        uint256 jobId = _job(2, 2, HONEST);
        uint256 lock = vault.lockedFor(provider, jobId);
        uint256[6] memory steps = [uint256(2), 1, 3, 4, 5, 6];
        uint256 capturedId;
        for (uint256 i; i < 6; ++i) {
            uint256 id = _challenge(i % 2 == 0 ? challenger : stranger, jobId, steps[i], HONEST);
            if (capturedId == 0) capturedId = id;
        }
        _panelsVote(HONEST, capturedId);
        address[] memory captured = game.getDispute(capturedId).panel;
        game.resolve(capturedId);
        (uint64 until,) = game.faultAppealOf(capturedId);
        assertTrue(until != 0, "unanimous first-round Fault: appeal window, no slash");
        assertEq(vault.lockedFor(provider, jobId), lock, "nothing slashed in the window");
        uint256 bond = game.getDispute(capturedId).bond;
        uint256 provider0 = token.balanceOf(provider);
        VM.prank(provider);
        game.appealFault(capturedId);
        assertEq(provider0 - token.balanceOf(provider), bond, "the provider posted a bond as large as the challenger's");
        (, uint128 posted) = game.faultAppealOf(capturedId);
        assertEq(posted, bond, "appeal bond booked");
        assertEq(game.getDispute(capturedId).round, 2, "round 2");
        // round 2: a fresh draw of up to 7 seats; the captured members vote Fault again, everyone else the truth
        address[] memory p2 = _draw(capturedId);
        assertGe(p2.length, captured.length + 2, "a larger panel");
        for (uint256 i; i < p2.length; ++i) _commitVote(capturedId, p2[i], _wasOn(captured, p2[i]) ? FAULT_V : VALID_V);
        for (uint256 i; i < p2.length; ++i) _reveal(capturedId, p2[i], _wasOn(captured, p2[i]) ? FAULT_V : VALID_V);
        game.resolve(capturedId);
        assertTrue(_outcome(capturedId) == IDisputeGameTypes.Outcome.PanelValid, "the appeal overturns the capture");
        uint256 toProvider = 2 * bond; // its appeal bond back and the false challenger's bond
        uint256 burned;
        for (uint256 id = capturedId + 1; id <= game.disputeCount(); ++id) {
            game.resolve(id);
            assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelValid, "decided Valid");
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (d.step == 1 || d.step == 4) burned += d.bond;
            else toProvider += d.bond;
        }
        assertEq(game.creditOf(provider), toProvider, "false bonds and the appeal bond to the provider");
        assertEq(vault.lockedFor(provider, jobId), lock, "the honest provider's lock whole");
        assertTrue(market.getJob(jobId).status != IJobMarket.JobStatus.Refunded, "job not faulted");
        assertTrue(burned > 0, "segment-start bonds burned");
        assertEq(game.openBonds(), 0, "every bond settled");
    }

    /// A cheating provider appeals the unanimous Fault of an honest panel: the appeal round finds the fault again, so the
    /// job is slashed as it would have been, one round later, and the provider's appeal bond goes to the honest
    /// challenger (for the delay): appealing a true Fault costs the provider B.
    function test_appealOfTrueFault_upheld_providerBondToChallenger() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(HONEST_1, jobId, 2, 2);
        address[] memory p = _draw(id);
        for (uint256 i; i < p.length; ++i) _commitVote(id, p[i], FAULT_V);
        for (uint256 i; i < p.length; ++i) _reveal(id, p[i], FAULT_V);
        game.resolve(id);
        VM.prank(provider);
        game.appealFault(id);
        address[] memory p2 = _draw(id);
        for (uint256 i; i < p2.length; ++i) _commitVote(id, p2[i], FAULT_V);
        for (uint256 i; i < p2.length; ++i) _reveal(id, p2[i], FAULT_V);
        game.resolve(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelFault, "upheld");
        (uint64 until,) = game.faultAppealOf(id);
        assertEq(until, 0, "no second appeal window");
        uint256 bond = game.getDispute(id).bond;
        // deposit back (the reward paid round 1's fees) + the provider's appeal bond + R less the fees
        assertEq(game.creditOf(HONEST_1), _deposit(id) + bond + REWARD - FEES, "challenger: deposit, appeal bond, reward");
        assertEq(vault.lockedFor(provider, jobId), 0, "slashed");
        assertEq(game.openBonds(), 0, "every bond settled");
    }

    /// Every way appealFault is refused, each by name: not the provider, no window open (a split is appealed by resolve,
    /// a dispute still voting has none), the window closed, no allowance for the bond, and a second appeal.
    function test_appealFault_reverts() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(HONEST_1, jobId, 2, 2);
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameFaultNotAppealable.selector, id, uint64(0), block.timestamp));
        game.appealFault(id);
        address[] memory p = _draw(id);
        for (uint256 i; i < p.length; ++i) _commitVote(id, p[i], FAULT_V);
        for (uint256 i; i < p.length; ++i) _reveal(id, p[i], FAULT_V);
        game.resolve(id);
        (uint64 until,) = game.faultAppealOf(id);
        VM.prank(HONEST_1);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameNotProvider.selector, id, HONEST_1, provider));
        game.appealFault(id);
        uint256 bond = game.getDispute(id).bond;
        VM.prank(provider);
        token.approve(address(game), bond - 1);
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameDepositNotApproved.selector, provider, bond - 1, bond));
        game.appealFault(id);
        VM.prank(provider);
        token.approve(address(game), type(uint256).max);
        VM.warp(until + 1);
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameFaultNotAppealable.selector, id, until, block.timestamp));
        game.appealFault(id);
        // a second dispute, appealed once: no second appeal
        uint256 id2 = _challenge(HONEST_2, _job(2, 2, 2), 2, 2);
        address[] memory q = _draw(id2);
        for (uint256 i; i < q.length; ++i) _commitVote(id2, q[i], FAULT_V);
        for (uint256 i; i < q.length; ++i) _reveal(id2, q[i], FAULT_V);
        game.resolve(id2);
        VM.prank(provider);
        game.appealFault(id2);
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameFaultNotAppealable.selector, id2, uint64(0), block.timestamp));
        game.appealFault(id2);
    }

    function _wasOn(address[] memory panel, address who) internal pure returns (bool) {
        for (uint256 i; i < panel.length; ++i) {
            if (panel[i] == who) return true;
        }
        return false;
    }

    // ---------------------------------------------------------------- appeals of a split Fault

    /// @dev Draws dispute `id`'s current round and has every member commit and reveal: the sybil auditors `sybilVote`,
    /// the honest ones `honestVote`. Returns the round's panel.
    function _roundVote(uint256 id, IDisputeGameTypes.Vote sybilVote, IDisputeGameTypes.Vote honestVote)
        internal
        returns (address[] memory panel)
    {
        panel = _draw(id);
        for (uint256 i; i < panel.length; ++i) _commitVote(id, panel[i], _isSybilAuditor(panel[i]) ? sybilVote : honestVote);
        for (uint256 i; i < panel.length; ++i) _reveal(id, panel[i], _isSybilAuditor(panel[i]) ? sybilVote : honestVote);
    }

    /// @dev A dispute by `who` on step `step` of a fresh job (faulty from `badFrom`) whose first panel holds exactly
    /// `sybils` sybil auditors (2 of 7 in the pool: two in a panel of 3 in 1 draw out of 7, one in 4 out of 7).
    function _disputeWithSybils(address who, uint256 step, uint256 badFrom, uint256 sybils)
        internal
        returns (uint256 id)
    {
        // the sybil bonds (posted by AttackFixture after the honest ones) count for snapshots from here on
        VM.warp(block.timestamp + ACTIVATION_DELAY);
        for (uint256 tries; tries < 40; ++tries) {
            id = _challenge(who, _job(2, 2, badFrom), step, badFrom);
            address[] memory panel = _draw(id);
            uint256 n;
            for (uint256 i; i < panel.length; ++i) {
                if (_isSybilAuditor(panel[i])) ++n;
            }
            if (n == sybils) return id;
        }
        revert NoPanelWithOneSybil();
    }

    /// The captured panel: the attacker's challenger disputes a valid step of an honest job and its two auditors hold
    /// two of the three seats and vote Fault; the honest member votes Valid. The split Fault does not slash: it is
    /// appealed to a panel of 7 (the whole pool of 7, since excluding round 1 would leave 4), where the honest five
    /// vote Valid. The last decision settles it: the provider keeps its lock, the false challenger's bond goes to the
    /// provider, and the sybil auditors forfeit panelForfeit for round 1 and twice that for round 2 to the honest voters.
    function test_capturedPanel_splitFaultAppealed_honestProviderNotSlashed() public {
        uint256 id = _disputeWithSybils(SYBIL_CHALLENGER_1, 3, HONEST, 2);
        uint256 jobId = game.getDispute(id).jobId;
        uint256 lock = vault.lockedFor(provider, jobId);
        address[] memory panel1 = game.getDispute(id).panel;
        for (uint256 i; i < panel1.length; ++i) {
            IDisputeGameTypes.Vote v =
                _isSybilAuditor(panel1[i]) ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid;
            _commitVote(id, panel1[i], v);
        }
        for (uint256 i; i < panel1.length; ++i) {
            _reveal(id, panel1[i], _isSybilAuditor(panel1[i]) ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid);
        }
        uint256 bond1 = registry.auditorOf(SYBIL_AUDITOR_1).bond;
        game.resolve(id);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.status == IDisputeGameTypes.Status.Open, "a split Fault stays open");
        assertEq(d.round, 2, "appealed to round 2");
        assertEq(d.panel.length, 0, "round 2 not drawn yet");
        assertEq(vault.lockedFor(provider, jobId), lock, "nothing slashed at the split");
        assertTrue(market.getJob(jobId).status != IJobMarket.JobStatus.Refunded, "job not faulted");
        address[] memory panel2 = _roundVote(id, IDisputeGameTypes.Vote.Fault, IDisputeGameTypes.Vote.Valid);
        assertEq(panel2.length, 7, "round 2: 2 * 3 + 1 members");
        game.resolve(id);
        d = game.getDispute(id);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.PanelValid, "round 2 decides Valid");
        assertEq(vault.lockedFor(provider, jobId), lock, "lock intact: not slashed");
        assertTrue(market.getJob(jobId).status != IJobMarket.JobStatus.Refunded, "job not faulted");
        assertEq(game.creditOf(provider), d.bond, "the false challenge's bond goes to the provider");
        uint256 f = defaultParams().panelForfeit;
        assertEq(registry.auditorOf(SYBIL_AUDITOR_1).bond, bond1 - f - 2 * f, "sybil forfeits F (round 1) + 2F (round 2)");
    }

    /// A real fault with the provider's auditor on the panel voting Valid: the honest majority's Fault is split, so it is
    /// appealed; in rounds 2 and 3 (7 members: the whole pool) both sybils vote Valid and the five honest members Fault,
    /// still split, and round 3 is the last: PanelFault settles, the job is slashed and the honest challenger gets its
    /// deposit back plus the reward less round 1's two earned fees.
    function test_splitFault_onRealFault_lastRoundSettles_honestChallengerWhole() public {
        uint256 id = _disputeWithSybils(HONEST_1, 2, 2, 1);
        uint256 jobId = game.getDispute(id).jobId;
        address[] memory panel1 = game.getDispute(id).panel;
        for (uint256 i; i < panel1.length; ++i) {
            _commitVote(id, panel1[i], _isSybilAuditor(panel1[i]) ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault);
        }
        for (uint256 i; i < panel1.length; ++i) {
            _reveal(id, panel1[i], _isSybilAuditor(panel1[i]) ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault);
        }
        game.resolve(id);
        assertEq(game.getDispute(id).round, 2, "split Fault appealed");
        _roundVote(id, IDisputeGameTypes.Vote.Valid, IDisputeGameTypes.Vote.Fault);
        game.resolve(id);
        assertEq(game.getDispute(id).round, 3, "split again: round 3");
        _roundVote(id, IDisputeGameTypes.Vote.Valid, IDisputeGameTypes.Vote.Fault);
        game.resolve(id);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.PanelFault, "the last round's majority settles");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "job faulted");
        uint256 fee = defaultParams().panelFee;
        assertEq(game.creditOf(HONEST_1), _deposit(id) + REWARD - 2 * fee, "honest: deposit back + reward less 2 fees");
    }

    /// The bound for 2 of 7 (docs/disputes.md, "Appeals"): the attacker's challengers dispute `n` valid steps of an
    /// honest job and its two auditors vote by `pattern` (Fault, Valid or silent, per dispute) in every round; the honest
    /// members drawn vote the truth in every round. No round can be unanimous for Fault (the attacker has 2 auditors) and
    /// no appeal round holds an attacker majority (7 seats), so the honest provider is never slashed.
    function testFuzz_twoOfSeven_honestProviderNeverSlashed(uint8 n, uint16 pattern) public {
        VM.warp(block.timestamp + ACTIVATION_DELAY); // the sybil auditors count
        uint256 jobId = _job(2, 2, HONEST);
        uint256 lock = vault.lockedFor(provider, jobId);
        uint256 disputes = 1 + (n % 4);
        uint256[] memory ids = new uint256[](disputes);
        for (uint256 i; i < disputes; ++i) ids[i] = _challenge(i % 2 == 0 ? SYBIL_CHALLENGER_1 : SYBIL_CHALLENGER_2, jobId, 2 + i, HONEST);
        // the disputes were opened together, so their rounds run in step (same deadlines)
        for (uint256 round; round < game.MAX_ROUNDS(); ++round) {
            bool silence;
            for (uint256 i; i < disputes; ++i) {
                if (game.getDispute(ids[i]).status != IDisputeGameTypes.Status.Open) continue;
                uint256 kind = (pattern >> (2 * i)) & 3; // 0 or 3: Fault, 1: Valid, 2: silent
                address[] memory p = _draw(ids[i]);
                for (uint256 m; m < p.length; ++m) {
                    if (_isSybilAuditor(p[m]) && kind == 2) silence = true;
                    else _commitVote(ids[i], p[m], _attackVote(p[m], kind));
                }
            }
            if (silence) VM.warp(game.getDispute(ids[0]).commitDeadline + 1);
            for (uint256 i; i < disputes; ++i) {
                IDisputeGameTypes.DisputeView memory d = game.getDispute(ids[i]);
                if (d.status != IDisputeGameTypes.Status.Open) continue;
                uint256 kind = (pattern >> (2 * i)) & 3;
                for (uint256 m; m < d.panel.length; ++m) {
                    if (!(_isSybilAuditor(d.panel[m]) && kind == 2)) _reveal(ids[i], d.panel[m], _attackVote(d.panel[m], kind));
                }
            }
            if (silence) VM.warp(game.getDispute(ids[0]).revealDeadline + 1);
            for (uint256 i; i < disputes; ++i) {
                if (game.getDispute(ids[i]).status == IDisputeGameTypes.Status.Open) game.resolve(ids[i]);
            }
        }
        for (uint256 i; i < disputes; ++i) {
            assertTrue(_outcome(ids[i]) == IDisputeGameTypes.Outcome.PanelValid, "every false challenge decided Valid");
        }
        assertTrue(market.getJob(jobId).status != IJobMarket.JobStatus.Refunded, "honest job never faulted");
        assertEq(vault.lockedFor(provider, jobId), lock, "honest provider's lock never slashed");
    }

    function _attackVote(address member, uint256 kind) internal pure returns (IDisputeGameTypes.Vote) {
        if (!_isSybilAuditor(member)) return IDisputeGameTypes.Vote.Valid; // the truth: every disputed step is valid
        return kind == 1 ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault;
    }

    // ---------------------------------------------------------------- concession timed after the reveals

    /// @dev An honest dispute on the faulty step 2 of a fresh job whose drawn panel holds exactly one sybil auditor (the
    /// attack needs a member; a panel of 3 out of 5 honest + 2 sybil auditors holds one in 4 draws out of 7, so a few
    /// jobs find one). Returns the dispute, its panel and the sybil's position in it.
    function _disputeWithOneSybilMember() internal returns (uint256 id, address[] memory panel, uint256 at) {
        // the sybil bonds (posted by AttackFixture after the honest ones) count for snapshots from here on
        VM.warp(block.timestamp + ACTIVATION_DELAY);
        for (uint256 tries; tries < 12; ++tries) {
            uint256 jobId = _job(2, 2, 2);
            id = _challenge(HONEST_1, jobId, 2, 2);
            panel = _draw(id);
            uint256 sybils;
            for (uint256 i; i < panel.length; ++i) {
                if (_isSybilAuditor(panel[i])) {
                    ++sybils;
                    at = i;
                }
            }
            if (sybils == 1) return (id, panel, at);
        }
        revert NoPanelWithOneSybil();
    }

    /// The provider's sybil auditor sits on the panel of an honest dispute on a faulty step and votes Valid; the honest
    /// members vote Fault. Once the reveals show the sybil lost, the provider would concede before anyone resolves:
    /// Conceded counts no vote, so the sybil would keep its bond (no forfeit), the honest majority would earn no fee,
    /// and a colluding member's vote would be free (concede when it loses, keep PanelValid when it wins). The concession
    /// is refused once the commit phase is over; resolve then counts the votes: a split Fault, appealed twice (the
    /// sybils vote Valid in every round), then PanelFault; the sybil forfeits in every round it sat and the two honest
    /// members of round 1 earn their fees out of the reward.
    function test_concedeAfterReveals_refused_sybilMemberForfeits() public {
        (uint256 id, address[] memory panel, uint256 at) = _disputeWithOneSybilMember();
        address sybil = panel[at];
        uint256 sybilBond = registry.auditorOf(sybil).bond;
        uint256 side0 = _sideWealth();
        for (uint256 i; i < panel.length; ++i) {
            _commitVote(id, panel[i], i == at ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault);
        }
        // every member committed: the reveal phase is open, so the provider can no longer concede, even before a reveal
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameConcessionClosed.selector, id, d.commitDeadline, block.timestamp
            )
        );
        game.concede(id);
        for (uint256 i; i < panel.length; ++i) {
            _reveal(id, panel[i], i == at ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault);
        }
        // the race it would have run: concede in the block where the last reveal landed, before the resolve
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameConcessionClosed.selector, id, d.commitDeadline, block.timestamp
            )
        );
        game.concede(id);
        game.resolve(id);
        // the sybil's Valid made the Fault a split: appealed; in rounds 2 and 3 (the whole pool of 7) both sybils vote
        // Valid, the five honest members Fault, and round 3's majority settles
        assertEq(game.getDispute(id).round, 2, "split Fault appealed");
        _roundVote(id, IDisputeGameTypes.Vote.Valid, IDisputeGameTypes.Vote.Fault);
        game.resolve(id);
        _roundVote(id, IDisputeGameTypes.Vote.Valid, IDisputeGameTypes.Vote.Fault);
        game.resolve(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelFault, "the panel decided");
        uint256 forfeit = defaultParams().panelForfeit;
        assertEq(registry.auditorOf(sybil).bond, sybilBond - 7 * forfeit, "the sybil forfeits F + 2F + 4F (rounds 1-3)");
        uint256 fee = defaultParams().panelFee;
        for (uint256 i; i < panel.length; ++i) {
            if (i == at) {
                assertEq(game.creditOf(panel[i]), 0, "the minority earns no fee");
                continue;
            }
            assertEq(game.creditOf(panel[i]), fee, "an honest member earns its fee");
            assertGe(registry.creditOf(panel[i]), forfeit / 2, "and at least half the sybil's round-1 forfeit");
        }
        assertEq(game.creditOf(HONEST_1), _deposit(id) + REWARD - 2 * fee, "honest: deposit back + reward less 2 fees");
        // the side: the whole lock and the sybils' forfeits of every round; nothing of the reward
        assertGe(side0 - _sideWealth(), STAKE + 7 * forfeit, "side loses L + the forfeits");
    }

    /// The concession a provider may still make: while the commit phase is open (here after one of three members
    /// committed, none revealed) it settles at once, and it is refused from the second after the commit deadline, even
    /// with no commit at all (the silent panel is then resolved: NoDecision, silent members forfeit).
    function test_concede_openUntilCommitsClose() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 early = _challenge(HONEST_1, jobId, 2, 2);
        address[] memory p = _draw(early);
        _commitVote(early, p[0], IDisputeGameTypes.Vote.Fault);
        VM.prank(provider);
        game.concede(early);
        assertTrue(_outcome(early) == IDisputeGameTypes.Outcome.Conceded, "conceded while commits are open");

        uint256 job2 = _job(2, 2, 2);
        uint256 late = _challenge(HONEST_2, job2, 2, 2);
        uint64 commitDeadline = game.getDispute(late).commitDeadline;
        VM.warp(commitDeadline);
        VM.prank(provider);
        game.concede(late); // the last second of the commit phase still takes it
        uint256 job3 = _job(2, 2, 2);
        uint256 silent = _challenge(HONEST_1, job3, 2, 2);
        commitDeadline = game.getDispute(silent).commitDeadline;
        VM.warp(commitDeadline + 1);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameConcessionClosed.selector, silent, commitDeadline, commitDeadline + 1)
        );
        game.concede(silent);
    }

    // ---------------------------------------------------------------- timing at the window's edge

    /// Chosen timing at the end of the challenge window: in its last second (block.timestamp == deadline) a challenge
    /// still lands and finalize is refused; one second later finalize pays and a challenge is refused, so there is no
    /// second in which the provider is paid while a challenge could still freeze the job, nor one in which neither can
    /// happen. And the buyer cannot cancel once the work is committed (cancelJob needs an Open job).
    function test_windowEdge_challengeXorFinalize_noCancelAfterWork() public {
        uint256 jobA = _job(2, 2, HONEST);
        uint256 jobB = _job(2, 2, HONEST);
        uint256 d = market.getJob(jobA).deadline;
        assertEq(market.getJob(jobB).deadline, d, "same window");
        VM.prank(buyer);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobA, IJobMarket.JobStatus.Committed, IJobMarket.JobStatus.Open
            )
        );
        market.cancelJob(jobA);
        _commitChallenge(SYBIL_CHALLENGER_1, jobA, 1);
        _commitChallenge(HONEST_1, jobB, 1);
        VM.warp(d);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketChallengeWindowOpen.selector, jobA, d, d));
        market.finalize(jobA);
        _challengeCommitted(SYBIL_CHALLENGER_1, jobA, 1, HONEST); // the last second still takes a challenge
        assertEq(market.getJob(jobA).openDisputes, 1, "frozen at the last second");
        VM.warp(d + 1);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketChallengeWindowClosed.selector, jobB, d, d + 1));
        _challengeCommitted(HONEST_1, jobB, 1, HONEST);
        market.finalize(jobB);
        assertTrue(market.getJob(jobB).status == IJobMarket.JobStatus.Finalized, "paid one second later");
    }

    // ---------------------------------------------------------------- a lock too small to pay the panel

    /// Griefing the challengers: the provider posts (from its own buyer address) or takes a job whose lock L pays a
    /// challenger share lam L below the panel's fees n f, and cheats in plain view. Before the rule, the chain took the
    /// lock, the panel found the fault and the fees the reward could not cover came out of the honest challenger's
    /// deposit (L = 1 wei: 3 * 0.05 = 0.15 below it, paid to a panel where the provider's own auditors earn it when
    /// drawn), so no rational challenger would catch the cheat. Now acceptJob refuses every lock with lam L < n f
    /// (JobMarketLockCannotPayPanel, naming both); a tier discount goes through the same check.
    function test_tinyLock_acceptRefused() public {
        assertEq(market.panelFees(), FEES, "the market read the game's panel fees at wiring");
        IJobMarket.Policy memory pol = policy(2);
        pol.requiredStake = 1;
        VM.prank(buyer);
        uint256 jobId = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, pol);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketLockCannotPayPanel.selector, jobId, provider, 1, 0, FEES)
        );
        market.acceptJob(jobId);
        // one wei below the floor: lam L = 0.15e18 - 1 (rounded down) < n f
        pol.requiredStake = uint128(2 * FEES - 1);
        VM.prank(buyer);
        uint256 below = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, pol);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketLockCannotPayPanel.selector, below, provider, 2 * FEES - 1, FEES - 1, FEES
            )
        );
        market.acceptJob(below);
        assertTrue(market.getJob(below).status == IJobMarket.JobStatus.Open, "still Open: another provider may take it");
        assertEq(vault.lockedFor(provider, below), 0, "nothing locked");
    }

    /// At the floor (lam L == n f exactly) the lock is taken, and a cheat caught there costs the honest challenger
    /// nothing: the reward pays the whole panel and the deposit comes back whole.
    function test_lockAtPanelFloor_honestChallengerWhole() public {
        IJobMarket.Policy memory pol = policy(2);
        pol.requiredStake = uint128(2 * FEES);
        VM.prank(buyer);
        uint256 jobId = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, pol);
        VM.prank(provider);
        market.acceptJob(jobId);
        _commit(jobId, 2, 2);
        uint256 honest0 = token.balanceOf(HONEST_1);
        uint256 id = _challenge(HONEST_1, jobId, 2, 2);
        address[] memory p = _draw(id);
        for (uint256 i; i < p.length; ++i) _commitVote(id, p[i], IDisputeGameTypes.Vote.Fault);
        for (uint256 i; i < p.length; ++i) _reveal(id, p[i], IDisputeGameTypes.Vote.Fault);
        _resolveFault(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelFault, "fault found");
        assertEq(game.creditOf(HONEST_1), _deposit(id), "deposit back whole: the reward paid every fee");
        assertEq(token.balanceOf(HONEST_1) + game.creditOf(HONEST_1), honest0, "honest challenger net 0");
        for (uint256 i; i < p.length; ++i) assertEq(game.creditOf(p[i]), defaultParams().panelFee, "each member paid");
    }

    /// A timeout slash taken at the timeout would shrink the lock behind a TimedOut job's disputable segments: with the
    /// lock at the panel floor and timeoutSlashBps 10,000 it would leave nothing for the panel (the honest challenger
    /// of the timed-out cheat would pay every fee, -0.15). The whole lock stays behind them until their window closed
    /// (the slash waits for reopenJob), so the reward pays the panel and the honest challenger ends whole.
    function test_timeoutSlash_keepsPanelReserve_honestChallengerWhole() public {
        IJobMarket.Policy memory pol = policy(3);
        pol.requiredStake = uint128(2 * FEES + 4); // lam L = n f + 2 wei
        pol.timeoutSlashBps = 10_000;
        VM.prank(buyer);
        uint256 jobId = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, pol);
        VM.prank(provider);
        market.acceptJob(jobId);
        _commit(jobId, 1, 2); // one cheating segment, then the provider walks away
        uint256 buyerStake0 = vault.creditOf(buyer);
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reportTimeout(jobId);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut, "timed out, segment 0 disputable");
        assertEq(vault.lockedFor(provider, jobId), 2 * FEES + 4, "the whole lock kept behind the disputable segment");
        assertEq(vault.creditOf(buyer) - buyerStake0, 0, "no timeout slash while the segment is disputable");
        uint256 honest0 = token.balanceOf(HONEST_1);
        uint256 id = _challenge(HONEST_1, jobId, 2, 2);
        address[] memory p = _draw(id);
        for (uint256 i; i < p.length; ++i) _commitVote(id, p[i], IDisputeGameTypes.Vote.Fault);
        for (uint256 i; i < p.length; ++i) _reveal(id, p[i], IDisputeGameTypes.Vote.Fault);
        _resolveFault(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelFault, "fault found");
        assertGe(token.balanceOf(HONEST_1) + game.creditOf(HONEST_1), honest0, "honest challenger net >= 0");
    }

    /// An idle tenure (nothing committed, nothing to dispute) keeps no reserve: the whole timeout slash applies.
    function test_idleTimeoutSlash_takesWholeShare() public {
        IJobMarket.Policy memory pol = policy(2);
        pol.requiredStake = uint128(2 * FEES);
        pol.timeoutSlashBps = 10_000;
        VM.prank(buyer);
        uint256 jobId = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, pol);
        VM.prank(provider);
        market.acceptJob(jobId);
        uint256 buyerStake0 = vault.creditOf(buyer);
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reportTimeout(jobId);
        assertEq(vault.creditOf(buyer) - buyerStake0, 2 * FEES, "whole lock slashed");
    }

    // ---------------------------------------------------------------- panel re-rolls by lapsing seeds

    /// Panel re-rolls while the honest bots are offline: the provider alone watches an honest dispute on its faulty
    /// step. At the seed block it computes the panel the seed would draw (public once the block exists) and, unless its
    /// two sybil auditors would hold the majority, lets the seed lapse (256 blocks) and calls drawPanel, hoping for a
    /// re-anchored seed and a second panel (best of two: a sybil majority goes from 1/7 to 13/49). No seed is ever
    /// re-anchored: the lapsed round reverts DisputeGameSeedExpired, the side saw one panel only, and without a draw the
    /// dispute ends NoDecision (nothing slashed, nothing paid to the side, the honest challenger's deposit back, the
    /// window re-opened for the next challenge).
    function test_panelReroll_byLapsingSeed_noReseed() public {
        VM.warp(block.timestamp + ACTIVATION_DELAY); // the sybil bonds count for snapshots from here on
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(HONEST_1, jobId, 2, 2);
        _pastChallenge(id);
        uint256 side0 = _sideWealth();
        uint64 seedBlock = game.getDispute(id).seedBlock;
        VMB.roll(seedBlock + 1); // the side sees the panel this seed draws, and lets it lapse
        VMB.roll(block.number + 257);
        VM.expectRevert(abi.encodeWithSelector(IDisputeGameTypes.DisputeGameSeedExpired.selector, id, seedBlock, block.number));
        game.drawPanel(id);
        assertEq(game.getDispute(id).seedBlock, seedBlock, "no second seed");
        VM.warp(game.getDispute(id).revealDeadline + 1);
        game.resolve(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.NoDecision, "no panel: no decision");
        assertEq(game.getDispute(id).panel.length, 0, "never drawn");
        assertEq(game.creditOf(HONEST_1), _deposit(id), "honest challenger: deposit back");
        assertEq(_sideWealth(), side0, "the side gained nothing");
        assertTrue(market.getJob(jobId).deadline > block.timestamp, "the window re-opened for a new challenge");
    }

    // ---------------------------------------------------------------- a tie from a silent honest member

    /// A tie from one silent honest member: the provider's sybil auditor votes Valid on the faulty step, one honest member
    /// votes Fault and the other stays silent. 1-1 is no verdict (deciding it for the challenger would hand the same
    /// trick to a challenger's sybil against an honest provider), but it no longer ends the dispute: the round is
    /// appealed to a fresh, larger panel, so no re-open of the job's window is spent and three ties in a row cannot run
    /// the job out of re-opens. The sybils vote Valid in every round; the honest majority of the last round decides
    /// Fault: the cheater is slashed, the sybil forfeits for the tie and the silent member for its silence.
    function test_tieFromSilentMember_appealed_cheaterSlashed_sybilJudged() public {
        (uint256 id, address[] memory panel, uint256 at) = _disputeWithOneSybilMember();
        uint256 jobId = game.getDispute(id).jobId;
        address sybil = panel[at];
        address silent = panel[(at + 1) % 3];
        address right = panel[(at + 2) % 3];
        _commitVote(id, sybil, IDisputeGameTypes.Vote.Valid);
        _commitVote(id, right, IDisputeGameTypes.Vote.Fault);
        VM.warp(game.getDispute(id).commitDeadline + 1);
        _reveal(id, sybil, IDisputeGameTypes.Vote.Valid);
        _reveal(id, right, IDisputeGameTypes.Vote.Fault);
        VM.warp(game.getDispute(id).revealDeadline + 1);
        uint256 forfeit = defaultParams().panelForfeit;
        uint256 silentBond = registry.auditorOf(silent).bond;
        uint256 rightCredit0 = registry.creditOf(right);
        uint256 deadline = market.getJob(jobId).deadline;
        game.resolve(id);
        assertTrue(game.getDispute(id).status == IDisputeGameTypes.Status.Open, "a tie is no verdict and no end");
        assertEq(game.getDispute(id).round, 2, "appealed");
        assertEq(market.getJob(jobId).deadline, deadline, "no re-open spent");
        while (game.getDispute(id).status == IDisputeGameTypes.Status.Open) {
            _roundVote(id, IDisputeGameTypes.Vote.Valid, IDisputeGameTypes.Vote.Fault);
            game.resolve(id);
        }
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelFault, "the honest majority decides");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "cheater not paid");
        assertEq(registry.auditorOf(silent).bond, silentBond - forfeit, "the silent member forfeits (round 1 only)");
        // round 1: the sybil's tie vote and the silent seat both forfeit to the one member that revealed the truth
        assertGe(registry.creditOf(right) - rightCredit0, 2 * forfeit, "to the member that revealed the truth");
        assertEq(game.tiedDisputeOf(jobId, 2), 0, "nothing left unjudged");
    }

    /// @dev Plays the current round of disputes `ids` (opened together, so their deadlines agree) as ties: in each, `n`
    /// members reveal Fault, `n` reveal Valid and the rest stay silent (a panel of 2n + 1); then resolves each.
    function _tieRound(uint256[] memory ids) internal {
        address[][] memory panels = new address[][](ids.length);
        for (uint256 d; d < ids.length; ++d) {
            panels[d] = _draw(ids[d]);
            uint256 n = panels[d].length / 2;
            for (uint256 i; i < 2 * n; ++i) {
                _commitVote(ids[d], panels[d][i], i < n ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid);
            }
        }
        VM.warp(game.getDispute(ids[0]).commitDeadline + 1);
        for (uint256 d; d < ids.length; ++d) {
            uint256 n = panels[d].length / 2;
            for (uint256 i; i < 2 * n; ++i) {
                _reveal(ids[d], panels[d][i], i < n ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid);
            }
        }
        VM.warp(game.getDispute(ids[0]).revealDeadline + 1);
        for (uint256 d; d < ids.length; ++d) game.resolve(ids[d]);
    }

    function _ids(uint256 a, uint256 b) internal pure returns (uint256[] memory ids) {
        ids = new uint256[](b == 0 ? 1 : 2);
        ids[0] = a;
        if (b != 0) ids[1] = b;
    }

    /// @dev Every bonded auditor: the five honest ones and the two sybils.
    function _pool() internal view returns (address[] memory pool) {
        pool = new address[](auditors.length + sybilAuditors.length);
        for (uint256 i; i < auditors.length; ++i) pool[i] = auditors[i];
        for (uint256 i; i < sybilAuditors.length; ++i) pool[auditors.length + i] = sybilAuditors[i];
    }

    /// @dev What the Fault revealers of every round of tied dispute `id` forfeit once the step is decided Valid.
    function _tieForfeits(uint256 id) internal view returns (uint256 total) {
        uint256 rounds = game.getDispute(id).round;
        for (uint256 r = 1; r <= rounds; ++r) {
            address[] memory p = game.roundPanelOf(id, r);
            for (uint256 i; i < p.length; ++i) {
                (, IDisputeGameTypes.Vote v) = game.roundBallotOf(id, r, p[i]);
                if (v == IDisputeGameTypes.Vote.Fault) total += uint256(defaultParams().panelForfeit) << (r - 1);
            }
        }
    }

    /// Every tie is judged, in every round, and not only the last one per step: two disputes on the same valid step of
    /// an honest job, one after the other, each tie in all three rounds (each round's tie is appealed; the last round's
    /// tie ends NoDecision and is chained for the step), and the next decided dispute on the step (Valid) judges both
    /// chained ties: every Fault revealer of every round of both forfeits its round's forfeit. (Two ties played at once
    /// would not both stay ties: the first to settle forfeits its silent members, whose votes on the other then do not
    /// count.)
    function test_everyTieOnAStep_judgedInEveryRound() public {
        VM.warp(block.timestamp + ACTIVATION_DELAY);
        // bonds large enough that no forfeit is capped by what is left
        address[] memory pool = _pool();
        for (uint256 i; i < pool.length; ++i) {
            _fund(pool[i]);
            VM.prank(pool[i]);
            registry.postBond(1_000e18);
        }
        uint256 jobId = _job(2, 2, HONEST); // every step valid
        uint256 first = _challenge(challenger, jobId, 2, HONEST);
        for (uint256 r; r < game.MAX_ROUNDS(); ++r) _tieRound(_ids(first, 0));
        assertTrue(_outcome(first) == IDisputeGameTypes.Outcome.NoDecision, "the last round's tie ends NoDecision");
        assertEq(game.getDispute(first).round, game.MAX_ROUNDS(), "after every round");
        uint256 second = _challenge(challenger, jobId, 2, HONEST);
        for (uint256 r; r < game.MAX_ROUNDS(); ++r) _tieRound(_ids(second, 0));
        assertEq(game.tiedDisputeOf(jobId, 2), second, "the newest tie heads the step's chain");
        uint256 expected = _tieForfeits(first) + _tieForfeits(second);
        uint256 bonds0;
        for (uint256 i; i < pool.length; ++i) bonds0 += registry.auditorOf(pool[i]).bond;
        uint256 decided = _challenge(challenger, jobId, 2, HONEST);
        address[] memory p = _draw(decided);
        for (uint256 i; i < p.length; ++i) _commitVote(decided, p[i], IDisputeGameTypes.Vote.Valid);
        for (uint256 i; i < p.length; ++i) _reveal(decided, p[i], IDisputeGameTypes.Vote.Valid);
        game.resolve(decided);
        assertTrue(_outcome(decided) == IDisputeGameTypes.Outcome.PanelValid, "step 2 is valid");
        uint256 bonds1;
        for (uint256 i; i < pool.length; ++i) bonds1 += registry.auditorOf(pool[i]).bond;
        assertTrue(expected > 0, "the ties had Fault revealers");
        assertEq(bonds0 - bonds1, expected, "both ties' wrong revealers forfeit, in every round");
        assertEq(game.tiedDisputeOf(jobId, 2), 0, "judged once");
    }

    // ---------------------------------------------------------------- mempool copy

    /// A copier replays the honest challenger's challenge (same calldata, same salt) in the block where it lands: the
    /// commitment it would open is keccak(jobId, step, copier, salt), which nobody committed.
    function test_mempoolCopy_reverts() public {
        uint256 jobId = _job(2, 2, 2);
        bytes32 salt = _commitChallenge(HONEST_1, jobId, 2);
        bytes32 copierCommitment = game.challengeCommitment(jobId, 2, COPIER, salt);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameChallengeNotCommitted.selector, COPIER, copierCommitment, 0, block.number
            )
        );
        _challengeWithSalt(COPIER, jobId, salt);
        // copying the commitment itself does not help: the challenger's address is in the preimage
        bytes32 honestCommitment = game.challengeCommitment(jobId, 2, HONEST_1, salt);
        VM.prank(COPIER);
        game.commitChallenge(jobId, 0, honestCommitment);
        VMB.roll(block.number + 1);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameChallengeNotCommitted.selector, COPIER, copierCommitment, 0, block.number
            )
        );
        _challengeWithSalt(COPIER, jobId, salt);
        // the honest challenger's own challenge goes through
        uint256 id = _challengeCommitted(HONEST_1, jobId, 2, 2);
        assertEq(game.getDispute(id).challenger, HONEST_1, "honest dispute opened");
    }

    /// Committing and challenging in the same block (so a copier could do both after seeing the challenge) reverts.
    function test_commitAndChallengeSameBlock_reverts() public {
        uint256 jobId = _job(2, 2, 2);
        bytes32 salt = keccak256("same block");
        bytes32 c = game.challengeCommitment(jobId, 2, COPIER, salt);
        VM.prank(COPIER);
        game.commitChallenge(jobId, 0, c);
        VM.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameChallengeNotCommitted.selector, COPIER, c, block.number, block.number
            )
        );
        _challengeWithSalt(COPIER, jobId, salt);
        VMB.roll(block.number + 1);
        _challengeWithSalt(COPIER, jobId, salt); // one block later it opens
        assertEq(game.openDisputeOf(jobId, 2), game.disputeCount(), "opened a block later");
    }

    // ---------------------------------------------------------------- unbounded freeze

    /// The provider stops committing and keeps a sybil dispute open, hoping to hold the escrow: a dispute opened at the
    /// last second before the segment deadline is the last one; after the deadline no new dispute can freeze the job,
    /// and reportTimeout succeeds as soon as that dispute resolves, within one dispute duration of the deadline.
    function test_unboundedFreeze_noFreezePastDeadline_timeoutWithinOneDispute() public {
        uint256 jobId = _job(2, 1, HONEST); // Active, segment 1 never comes
        uint256 deadline = market.getJob(jobId).deadline;
        VM.warp(deadline); // the last second the job can be frozen
        uint256 id = _challenge(SYBIL_CHALLENGER_1, jobId, 1, HONEST);
        VM.warp(deadline + 1);
        _commitChallenge(SYBIL_CHALLENGER_2, jobId, 2);
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketSegmentDeadlinePassed.selector, jobId, deadline, deadline + 1)
        );
        _challengeCommitted(SYBIL_CHALLENGER_2, jobId, 2, HONEST);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketFrozen.selector, jobId, 1));
        market.reportTimeout(jobId);
        // the provider cannot come back late either
        (, bytes32[4] memory hs) = leaves(jobId, 1, HONEST);
        VM.prank(provider);
        VM.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketSegmentLate.selector, jobId, 1, deadline, deadline + 1)
        );
        market.commitSegment(jobId, 1, dyn(hs), 1, "cid");

        VM.warp(game.getDispute(id).revealDeadline + 1);
        game.resolve(id); // silent panel
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.NoDecision, "no decision");
        market.reportTimeout(jobId);
        assertLe(block.timestamp, deadline + DISPUTE_SECONDS + 1, "timed out within one dispute of the deadline");
        // segment 0 stays disputable for one more window (TimedOut), then the job re-opens and the lock is released
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut, "timed out");
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reopenJob(jobId);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Open, "re-opened");
        assertLe(
            block.timestamp, deadline + DISPUTE_SECONDS + policy(2).challengeWindow + 2, "ends within a dispute and a window"
        );
        assertEq(vault.lockedFor(provider, jobId), 0, "lock released (minus the timeout slash)");
    }

    // ---------------------------------------------------------------- NoDecision after the window

    /// A sybil disputes at the last second of the challenge window and its panel stays silent: each NoDecision re-opens
    /// the window to now + challengeWindow (a new challenge can be opened, finalize is refused until it closes), at most
    /// MAX_REOPENS = 2 times; the third NoDecision re-opens nothing and ends the job Unresolved (nobody paid, nobody
    /// slashed) by the stated bound lastCommit + challengeWindow * 3 + (commitWindow + revealWindow) * 3 (+ 1 s per
    /// resolve). Here the whole panel stays silent in every round (every drawn member offline): the price of never paying
    /// by default is that an honest provider whose auditors never vote is not paid either (docs/disputes.md, "Unresolved").
    function test_noDecisionAfterWindow_reopensAtMostTwice_thenEnds() public {
        uint256 jobId = _job(2, 2, HONEST); // Committed now
        uint256 lastCommit = block.timestamp;
        uint256 window = 1 days;
        for (uint256 round; round < 3; ++round) {
            uint256 d = market.getJob(jobId).deadline;
            VM.warp(d);
            uint256 id = _challenge(SYBIL_CHALLENGER_1, jobId, 1, HONEST);
            VM.warp(d + 1);
            VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketFrozen.selector, jobId, 1));
            market.finalize(jobId);
            VM.warp(game.getDispute(id).revealDeadline + 1);
            game.resolve(id);
            assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.NoDecision, "silent panel: no decision");
            uint256 reopened = market.getJob(jobId).deadline;
            if (round < 2) {
                assertEq(reopened, block.timestamp + window, "window re-opened to now + challengeWindow");
                VM.expectRevert(
                    abi.encodeWithSelector(
                        IJobMarket.JobMarketChallengeWindowOpen.selector, jobId, reopened, block.timestamp
                    )
                );
                market.finalize(jobId);
                // the next round's challenge is opened in this re-opened window, after the original one had closed
                assertTrue(block.timestamp > lastCommit + window, "past the original window");
            } else {
                assertEq(reopened, d, "no third re-open");
            }
        }
        // the job ended: no new dispute, no finalize (nobody is paid by default)
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Unresolved, "Unresolved");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "escrow back to the buyer");
        assertEq(market.creditOf(provider, address(token)), 0, "no pay");
        assertEq(vault.lockedFor(provider, jobId), 0, "lock released");
        _commitChallenge(HONEST_1, jobId, 2);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketNotDisputable.selector, jobId, IJobMarket.JobStatus.Unresolved
            )
        );
        _challengeCommitted(HONEST_1, jobId, 2, HONEST);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.Unresolved, IJobMarket.JobStatus.Committed
            )
        );
        market.finalize(jobId);
        assertLe(block.timestamp, lastCommit + window * 3 + DISPUTE_SECONDS * 3 + 3, "within the stated bound");
    }

    // ---------------------------------------------------------------- disputes that exhaust their rounds

    /// @dev A dispute by `who` on `step` of job `jobId` (faulty from `badFrom`) opened at the last second of the job's
    /// window, whose panels all stay silent: each silent round is appealed, and the last one resolves NoDecision.
    function _silentDisputeAtWindowEnd(address who, uint256 jobId, uint256 step, uint256 badFrom)
        internal
        returns (uint256 id)
    {
        VM.warp(market.getJob(jobId).deadline);
        id = _challenge(who, jobId, step, badFrom);
        _resolveSilent(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.NoDecision, "silent panels: no decision");
        assertEq(game.getDispute(id).round, game.MAX_ROUNDS(), "every round played");
    }

    /// @dev Tops up every bonded auditor's bond so that the silent rounds' forfeits (F, 2F, 4F per seat) of several
    /// disputes leave every auditor drawable.
    function _bigBonds() internal {
        address[] memory pool = _pool();
        for (uint256 i; i < pool.length; ++i) {
            _fund(pool[i]);
            VM.prank(pool[i]);
            registry.postBond(1_000e18);
        }
        VM.warp(block.timestamp + ACTIVATION_DELAY);
    }

    /// A party holding every seat of a first panel used to end the dispute NoDecision by silence alone (3 forfeits),
    /// spending one of the job's re-opens; three such captures ended an honest challenger's case Unresolved. A silent
    /// round is now appealed like a tie: no re-open is spent, round 2 seats 7 fresh members without round 1's (the pool
    /// allows it here), their votes decide, and the silent round-1 members forfeit panelForfeit each.
    function test_silentCapturedFirstPanel_appealed_silentExcluded_cheaterSlashed() public {
        // six more honest auditors: a pool of 13, so round 2's 7 seats can leave round 1's 3 members out
        for (uint256 i = 1; i <= 6; ++i) {
            address a = address(uint160(0xB0D170 + i));
            _fund(a);
            VM.prank(a);
            registry.postBond(AUDITOR_BOND);
        }
        VM.warp(block.timestamp + ACTIVATION_DELAY);
        uint256 jobId = _job(2, 2, 2); // the provider cheats from step 2
        uint256 id = _challenge(HONEST_1, jobId, 2, 2);
        uint256 deadline = market.getJob(jobId).deadline;
        address[] memory p1 = _draw(id);
        uint256[] memory bonds1 = new uint256[](3);
        for (uint256 i; i < 3; ++i) bonds1[i] = registry.auditorOf(p1[i]).bond;
        VM.warp(game.getDispute(id).revealDeadline + 1);
        game.resolve(id); // every seat silent
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.status == IDisputeGameTypes.Status.Open, "a silent first round does not end the dispute");
        assertEq(d.round, 2, "appealed like a tie");
        assertEq(market.getJob(jobId).deadline, deadline, "no re-open spent");
        address[] memory p2 = _draw(id);
        assertEq(p2.length, 7, "round 2 seats 7");
        for (uint256 i; i < p2.length; ++i) {
            for (uint256 j; j < 3; ++j) assertTrue(p2[i] != p1[j], "round 1's silent members excluded");
        }
        for (uint256 i; i < p2.length; ++i) _commitVote(id, p2[i], FAULT_V);
        for (uint256 i; i < p2.length; ++i) _reveal(id, p2[i], FAULT_V);
        game.resolve(id);
        assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelFault, "round 2 decides");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "cheater slashed, buyer refunded");
        for (uint256 i; i < 3; ++i) {
            assertEq(registry.auditorOf(p1[i]).bond, bonds1[i] - defaultParams().panelForfeit, "silent member forfeits");
        }
    }

    /// A cheating provider whose own members keep every panel on its faulty step silent (or that ties them, or makes
    /// them unavailable) used to be paid in full once MAX_REOPENS NoDecisions had run its window out: the job stayed
    /// Committed and finalize paid it. Now the no-decision that would need a third re-open ends the job Unresolved: the
    /// buyer's whole escrow back, the provider's lock released whole, no pay, no slash; and the job takes no dispute and
    /// no finalize any more.
    function test_exhaustedNoDecisions_cheaterNotPaid_jobUnresolved() public {
        _bigBonds();
        uint256 jobId = _job(2, 2, 2); // the provider cheats from step 2
        IStakeVault.Account memory acc0 = vault.accountOf(provider);
        uint256 stake0 = uint256(acc0.free) + acc0.locked;
        for (uint256 i; i < 3; ++i) {
            _silentDisputeAtWindowEnd(HONEST_1, jobId, 2, 2);
            if (i < 2) assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Committed, "re-opened");
        }
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Unresolved, "Unresolved");
        assertEq(market.creditOf(provider, address(token)), 0, "cheater paid 0");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "buyer refunded the whole escrow");
        IStakeVault.Account memory acc = vault.accountOf(provider);
        assertEq(acc.locked, 0, "lock released");
        assertEq(uint256(acc.free) + acc.locked, stake0, "stake whole: no slash");
        VM.warp(block.timestamp + 30 days);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.Unresolved, IJobMarket.JobStatus.Committed
            )
        );
        market.finalize(jobId);
    }

    /// A TimedOut job's window counts the same re-opens (one counter per job): the third no-decision ends it Unresolved
    /// too, with the escrow back to the buyer and the rest of the lock (after the timeout slash) released; reopenJob is
    /// refused from then on, so nobody re-offers a job whose trajectory nobody could decide.
    function test_exhausted_timedOutJob_endsUnresolved_reopenRefused() public {
        _bigBonds();
        uint256 jobId = _job(2, 1, 2); // one of two segments committed, faulty from step 2
        VM.warp(market.getJob(jobId).deadline + 1);
        market.reportTimeout(jobId);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut, "TimedOut");
        for (uint256 i; i < 3; ++i) _silentDisputeAtWindowEnd(HONEST_1, jobId, 2, 2);
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Unresolved, "Unresolved");
        assertEq(vault.lockedFor(provider, jobId), 0, "the rest of the lock released");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "escrow back to the buyer");
        assertEq(market.creditOf(provider, address(token)), 0, "no pay");
        VM.warp(block.timestamp + 30 days);
        VM.expectRevert(
            abi.encodeWithSelector(
                IJobMarket.JobMarketWrongStatus.selector, jobId, IJobMarket.JobStatus.Unresolved, IJobMarket.JobStatus.TimedOut
            )
        );
        market.reopenJob(jobId);
    }

    /// The no-decision that uses up the re-opens while another dispute of the job is still open only marks the job:
    /// the job ends when its last dispute closes, Unresolved when that one is no fault (here a PanelValid on a valid
    /// step), and finalize stays refused meanwhile (JobMarketFrozen) and after (JobMarketWrongStatus).
    function test_exhausted_withDisputeOpen_endsUnresolvedWhenItCloses() public {
        _bigBonds();
        uint256 jobId = _job(2, 2, 5); // faulty from step 5
        _silentDisputeAtWindowEnd(HONEST_1, jobId, 5, 5);
        _silentDisputeAtWindowEnd(HONEST_1, jobId, 5, 5);
        VM.warp(market.getJob(jobId).deadline);
        uint256 other = _challenge(challenger, jobId, 1, 5); // a reckless challenge of the valid step 1
        uint256 last = _challenge(HONEST_1, jobId, 5, 5);
        _resolveSilent(last);
        assertTrue(_outcome(last) == IDisputeGameTypes.Outcome.NoDecision, "silent panels");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Committed, "waits for the open dispute");
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketFrozen.selector, jobId, 1));
        market.finalize(jobId);
        _resolveSilent(other); // its panels were silent too: NoDecision, no re-open left
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Unresolved, "ends with its last dispute");
        assertEq(market.creditOf(provider, address(token)), 0, "no pay");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "buyer refunded");
    }

    /// A Fault decided by a dispute still open when the re-opens ran out settles first: the marked job is slashed and
    /// refunded as on any fault (the mark never spares a cheater its slash).
    function test_exhausted_openFaultStillSlashes() public {
        _bigBonds();
        uint256 jobId = _job(2, 2, 5);
        _silentDisputeAtWindowEnd(HONEST_1, jobId, 5, 5);
        _silentDisputeAtWindowEnd(HONEST_1, jobId, 5, 5);
        VM.warp(market.getJob(jobId).deadline);
        uint256 honest = _challenge(HONEST_2, jobId, 5, 5);
        uint256 last = _challenge(HONEST_1, jobId, 4, 5); // step 4 is valid; its panel stays silent
        address[] memory p = _draw(honest);
        for (uint256 i; i < p.length; ++i) _commitVote(honest, p[i], FAULT_V);
        for (uint256 i; i < p.length; ++i) _reveal(honest, p[i], FAULT_V);
        _resolveSilent(last);
        assertTrue(_outcome(last) == IDisputeGameTypes.Outcome.NoDecision, "silent panels");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Committed, "marked, not ended");
        IStakeVault.Account memory acc0 = vault.accountOf(provider);
        _resolveFault(honest);
        assertTrue(_outcome(honest) == IDisputeGameTypes.Outcome.PanelFault, "the open dispute's Fault");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "refunded, not Unresolved");
        assertEq(vault.accountOf(provider).locked, acc0.locked - STAKE, "the whole lock slashed");
        assertEq(market.creditOf(provider, address(token)), 0, "no pay");
        assertEq(market.creditOf(buyer, address(token)), PAYMENT, "buyer refunded once");
    }

    /// Tie exhaustion against an honest provider: a griefer's challenger disputes a valid step at the last second of the
    /// window, three times, and each time its auditor on the panel votes Fault while one honest member stays silent (1-1).
    /// A tie is appealed (7 fresh seats, then 15 capped by the pool), never a NoDecision while rounds are left, so the
    /// honest members of the later rounds decide Valid: no re-open is spent, the griefer loses its bond each time and the
    /// honest provider is paid in full with its lock whole.
    function test_tieExhaustion_honestProviderPaid_griefersLose() public {
        // bonds large enough that the forfeits of three disputes leave every auditor drawable
        address[] memory pool = _pool();
        for (uint256 i; i < pool.length; ++i) {
            _fund(pool[i]);
            VM.prank(pool[i]);
            registry.postBond(1_000e18);
        }
        uint256 paid;
        for (uint256 tries; tries < 3; ++tries) {
            (uint256 id, address[] memory panel, uint256 at) = _griefTieDispute();
            uint256 jobId = game.getDispute(id).jobId;
            uint256 deadline = market.getJob(jobId).deadline;
            _commitVote(id, panel[at], FAULT_V);
            _commitVote(id, panel[(at + 1) % 3], VALID_V);
            VM.warp(game.getDispute(id).commitDeadline + 1);
            _reveal(id, panel[at], FAULT_V);
            _reveal(id, panel[(at + 1) % 3], VALID_V);
            VM.warp(game.getDispute(id).revealDeadline + 1);
            game.resolve(id);
            assertEq(game.getDispute(id).round, 2, "the tie is appealed");
            while (game.getDispute(id).status == IDisputeGameTypes.Status.Open) {
                _roundVote(id, FAULT_V, VALID_V);
                game.resolve(id);
            }
            assertTrue(_outcome(id) == IDisputeGameTypes.Outcome.PanelValid, "the honest majority decides");
            assertEq(market.getJob(jobId).deadline, deadline, "no re-open spent");
            uint256 credit0 = market.creditOf(provider, address(token));
            market.finalize(jobId);
            assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Finalized, "finalized");
            assertEq(market.creditOf(provider, address(token)) - credit0, PAYMENT, "honest provider paid in full");
            assertEq(vault.lockedFor(provider, jobId), 0, "lock released whole");
            paid += PAYMENT;
        }
        assertEq(paid, 3 * PAYMENT, "paid for every job");
    }

    /// @dev A griefer's dispute on the valid step 1 of a fresh honest job, opened at its window's last second, whose
    /// first panel holds exactly one sybil auditor (at index `at`).
    function _griefTieDispute() internal returns (uint256 id, address[] memory panel, uint256 at) {
        VM.warp(block.timestamp + ACTIVATION_DELAY);
        for (uint256 tries; tries < 12; ++tries) {
            uint256 jobId = _job(2, 2, HONEST);
            VM.warp(market.getJob(jobId).deadline);
            id = _challenge(SYBIL_CHALLENGER_1, jobId, 1, HONEST);
            panel = _draw(id);
            uint256 sybils;
            for (uint256 i; i < panel.length; ++i) {
                if (_isSybilAuditor(panel[i])) {
                    ++sybils;
                    at = i;
                }
            }
            if (sybils == 1) return (id, panel, at);
        }
        revert NoPanelWithOneSybil();
    }

    /// The re-opened window really takes a new challenge: an honest challenger disputes in it and wins.
    function test_noDecision_reopenedWindow_takesNewChallenge() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 d = market.getJob(jobId).deadline;
        VM.warp(d);
        uint256 id = _challenge(SYBIL_CHALLENGER_1, jobId, 5, 2);
        VM.warp(game.getDispute(id).revealDeadline + 1);
        game.resolve(id);
        assertTrue(market.getJob(jobId).deadline > block.timestamp, "re-opened");
        assertTrue(block.timestamp > d, "past the original window");
        uint256 honestId = _challenge(HONEST_1, jobId, 2, 2);
        VM.prank(provider);
        game.concede(honestId);
        assertEq(game.creditOf(HONEST_1), _deposit(honestId) + REWARD, "honest: deposit + whole reward");
        assertTrue(market.getJob(jobId).status == IJobMarket.JobStatus.Refunded, "refunded");
    }

    // ---------------------------------------------------------------- backdoored end state

    /// The provider would like to bind an end state (say, backdoored weights) that is not one of its committed steps.
    /// commitSegment takes no end state: the stored commitment is commitment(root(leaves), last leaf), so only the
    /// last leaf verifies as the end state, and the next segment must start from it.
    function test_backdooredEndState_impossible_endIsLastLeaf() public {
        uint256 jobId = _job(2, 1, HONEST);
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 0, HONEST);
        assertEq(market.segmentCommitment(jobId, 0), Trace.commitment(root(lv), hs[3]), "end state = last leaf");
        bytes32 backdoor = h(jobId, 3, 666);
        assertTrue(market.verifySegment(jobId, 0, root(lv), hs[3]), "last leaf verifies");
        assertTrue(!market.verifySegment(jobId, 0, root(lv), backdoor), "another end state does not");
        (, bytes32[4] memory next) = leaves(jobId, 1, HONEST);
        bytes32[] memory sent = dyn(next);
        sent[0] = backdoor;
        VM.prank(provider);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketBoundaryMismatch.selector, jobId, 1, backdoor, hs[3]));
        market.commitSegment(jobId, 1, sent, 1, "cid");
    }

    /// Fuzz: a commitSegment with the wrong number of leaves, a zero leaf anywhere, or a first leaf other than the
    /// previous segment's end state always reverts with its own error; the well-formed one then commits the
    /// commitment of exactly those leaves (hand-built 4-leaf tree, last leaf as the end state).
    function testFuzz_commitSegment_malformedLeaves_revert(uint8 kind, uint8 count, uint8 at, bytes32 first) public {
        uint256 jobId = _job(2, 1, HONEST); // next: segment 1, which must start at h(3)
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 1, HONEST);
        bytes32[] memory sent;
        bytes memory err;
        kind %= 3;
        if (kind == 0) {
            uint256 n = bound(count, 0, 20);
            if (n == K + 1) n = K + 2;
            sent = new bytes32[](n);
            for (uint256 i; i < n; ++i) sent[i] = i < 4 ? hs[i] : keccak256(abi.encode("extra", i));
            err = abi.encodeWithSelector(IJobMarket.JobMarketWrongLeafCount.selector, jobId, 1, n, K + 1);
        } else if (kind == 1) {
            sent = dyn(hs);
            sent[at % 4] = bytes32(0);
            err = abi.encodeWithSelector(IJobMarket.JobMarketZeroCommitment.selector, jobId, 1);
        } else {
            if (first == hs[0] || first == bytes32(0)) first = keccak256(abi.encode(first));
            sent = dyn(hs);
            sent[0] = first;
            err = abi.encodeWithSelector(IJobMarket.JobMarketBoundaryMismatch.selector, jobId, 1, first, hs[0]);
        }
        VM.prank(provider);
        VM.expectRevert(err);
        market.commitSegment(jobId, 1, sent, 1, "cid");
        assertEq(market.segmentCommitment(jobId, 1), bytes32(0), "nothing stored");
        VM.prank(provider);
        market.commitSegment(jobId, 1, dyn(hs), 1, "cid");
        assertEq(market.segmentCommitment(jobId, 1), Trace.commitment(root(lv), hs[3]), "the calldata leaves");
    }

    // ---------------------------------------------------------------- challenger share

    /// A challenger share of 100% would let a provider that concedes to itself lose nothing: refused above 50%.
    function test_challengerBps10000_rejected() public {
        IJobMarket.Policy memory pol = policy(1);
        pol.challengerBps = 10_000;
        pol.buyerBps = 0;
        pol.burnBps = 0;
        VM.prank(buyer);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketChallengerShareTooHigh.selector, 10_000, 5_000));
        market.createJob(keccak256("m"), "ipfs://m", address(token), PAYMENT, pol);
        pol.challengerBps = 5_001;
        pol.buyerBps = 4_999;
        VM.prank(buyer);
        VM.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketChallengerShareTooHigh.selector, 5_001, 5_000));
        market.createJob(keccak256("m"), "ipfs://m", address(token), PAYMENT, pol);
        pol.challengerBps = 5_000;
        pol.buyerBps = 5_000;
        VM.prank(buyer);
        market.createJob(keccak256("m"), "ipfs://m", address(token), PAYMENT, pol); // the maximum is allowed
    }

    // ---------------------------------------------------------------- util

    /// @dev `who` calls challenge on step 2 (segment 0) of a job whose trace diverges at 2, with `salt` (someone else's).
    function _challengeWithSalt(address who, uint256 jobId, bytes32 salt) internal returns (uint256) {
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, 0, 2);
        VM.prank(who);
        return game.challenge(IDisputeGameTypes.ChallengeParams(jobId, 0, 2, root(lv), hs[3], hs[1], proof(lv, 1), hs[2], proof(lv, 2), salt));
    }
}
