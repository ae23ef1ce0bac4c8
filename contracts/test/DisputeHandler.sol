// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {DisputeBase, DisputeFixture} from "./DisputeFixture.sol";
import {IDisputeGameTypes} from "../interfaces/IDisputeGame.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";

/// @notice Invariant-test handler for DisputeGame: random actors open jobs (honest or cheating), challenge steps,
/// concede, vote in any pattern, let deadlines pass, resolve and claim. `settleAllAndClaim` ends every open dispute
/// and claims every credit, then records in `ghost_strandedTokens` anything DisputeGame still holds.
/// @dev Fee and reward ghosts follow the reward rule (IDisputeGame): on a job's first fault the game receives the
/// challenger share R = floor(L * challengerBps / 10,000) of the lock L; the deciding panel's earned fees are paid out
/// of R first (one panelFee at a time while R - paid >= panelFee), the rest out of the challenger's deposit; a
/// Conceded or Proven dispute pays no fee; a dispute settled after its job faulted pays a Fault panel out of what is
/// left of the pool first. The expectations here are computed from the ballots, the lock read before the call and the
/// policy; only the pool left before a post-fault settlement is read from the game (rewardPoolOf).
contract DisputeHandler is DisputeBase {
    /// @dev Handler entry points called in this run (the afterInvariant "handler ran" check).
    uint256 public ghost_calls;
    uint256 public ghost_challenges;
    /// @dev Panel fees deposited by successful challenges.
    uint256 public ghost_feesDeposited;
    /// @dev Bonds deposited by successful challenges.
    uint256 public ghost_bondsDeposited;
    /// @dev Panel fees the fee rule gives members of resolved disputes (revealed on the winning side, or revealed at
    /// all on NoDecision or Superseded; nothing on Conceded or Proven), computed here from the ballots.
    uint256 public ghost_expectedMemberFees;
    /// @dev Part of ghost_expectedMemberFees paid out of faults' rewards: fee * min(earned, floor(R / fee)) on the
    /// dispute that faulted the job; the remainder of the expected fees comes out of challengers' deposits.
    uint256 public ghost_feesFromReward;
    /// @dev Sum over faulted jobs of R = floor(L * challengerBps / 10,000), L the lock just before the faulting call.
    uint256 public ghost_rewards;
    /// @dev Everything claimed from the game by anyone (must equal bonds + fees deposited + rewards once all is
    /// settled and claimed: the game neither keeps nor invents a wei).
    uint256 public ghost_claimedFromGame;
    /// @dev Bonds burned: a PanelValid dispute of a segment's first step (step - 1 == segment * K) burns its bond
    /// (the withhold-then-publish bait must not pay the provider). A job's reward pool is never burned: the dispute that
    /// faulted the job always takes a part.
    uint256 public ghost_bondsBurned;
    uint256 internal _poolAmountBefore;
    uint256 internal _poolSharesBefore;
    /// @dev Game credits the auditors (panel members; never a party here) claimed: must equal the expected fees
    /// once everything is claimed.
    uint256 public ghost_memberFeesClaimed;
    /// @dev dispute id => round-1 member whose vote resolve voided (see _noteVoids)
    mapping(uint256 => mapping(address => bool)) internal _voided;
    uint256 public ghost_resolved;
    uint256 public ghost_settleAllRuns;
    /// @dev Must stay 0: tokens DisputeGame still held after every dispute was resolved and every credit claimed.
    uint256 public ghost_strandedTokens;
    /// @dev Unanimous first-round Faults the provider appealed (their bonds count in ghost_bondsDeposited).
    uint256 public ghost_providerAppeals;
    /// @dev Must stay 0: a resolve that reverted although every deadline had passed (a stuck dispute).
    uint256 public ghost_stuckResolves;

    uint256[] internal _jobs;
    /// @dev First divergent state of each job's trace (type(uint256).max: honest), so challenges can rebuild the leaves.
    mapping(uint256 jobId => uint256 badFrom) internal _badFrom;

    error OnlySelf(address caller);

    constructor(DisputeFixture f) {
        token = f.token();
        vault = f.vault();
        registry = f.registry();
        market = f.market();
        game = f.game();
        verifier = f.verifier();
        for (uint256 i; i < 5; ++i) auditors.push(f.auditors(i));
        _addJob(3, 4); // cheating from step 4 (segment 1)
        _addJob(2, type(uint256).max); // honest
    }

    function people() public view returns (address[] memory all) {
        all = new address[](4 + auditors.length + 1);
        all[0] = buyer;
        all[1] = provider;
        all[2] = challenger;
        all[3] = stranger;
        for (uint256 i; i < auditors.length; ++i) all[4 + i] = auditors[i];
        all[all.length - 1] = address(this);
    }

    function newJob(uint8 badFrom, bool honest) external {
        ++ghost_calls;
        if (_jobs.length >= 6) return;
        _addJob(2, honest ? type(uint256).max : 1 + (badFrom % 6));
    }

    function _addJob(uint16 segments, uint256 badFrom) internal {
        uint256 jobId = _job(segments, segments, badFrom);
        _jobs.push(jobId);
        _badFrom[jobId] = badFrom;
    }

    function challengeStep(uint8 jobSeed, uint8 stepSeed, bool byStranger) external {
        ++ghost_calls;
        uint256 jobId = _jobs[jobSeed % _jobs.length];
        IJobMarket.JobView memory j = market.getJob(jobId);
        if (j.nextSegment == 0) return;
        uint256 step = 1 + (stepSeed % (uint256(j.nextSegment) * K));
        try this.challengeAs(byStranger ? stranger : challenger, jobId, step, _badFrom[jobId]) {
            ++ghost_challenges;
            IDisputeGameTypes.DisputeView memory d = game.getDispute(game.disputeCount());
            ghost_feesDeposited += d.fees;
            ghost_bondsDeposited += d.bond;
        } catch {}
    }

    /// @dev External so that challengeStep can catch its expected reverts (window closed, step already open).
    function challengeAs(address who, uint256 jobId, uint256 step, uint256 badFrom) external {
        if (msg.sender != address(this)) revert OnlySelf(msg.sender);
        _challenge(who, jobId, step, badFrom);
    }

    function concede(uint8 idSeed) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id == 0) return;
        (uint256 jobId, uint256 lock) = _beforeSettle(id);
        vm.prank(provider);
        try game.concede(id) {
            ++ghost_resolved;
            _afterSettle(id, jobId, lock);
        } catch {}
    }

    function vote(uint8 idSeed, uint8 pattern) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id == 0) return;
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (!_drawn(id, d)) return;
        address[] memory panel = game.getDispute(id).panel;
        for (uint256 i; i < panel.length; ++i) {
            uint256 kind = (pattern >> (2 * i)) & 3; // 0 silent, 1 Valid, 2 Fault, 3 commit only
            if (kind == 0) continue;
            IDisputeGameTypes.Vote v = kind == 1 ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault;
            bytes32 c = game.voteCommitment(v, _salt(panel[i]), panel[i]);
            vm.prank(panel[i]);
            try game.commitVote(id, c) {} catch {}
        }
        vm.warp(block.timestamp + 1 days + 1);
        for (uint256 i; i < panel.length; ++i) {
            uint256 kind = (pattern >> (2 * i)) & 3;
            if (kind == 0 || kind == 3) continue;
            IDisputeGameTypes.Vote v = kind == 1 ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault;
            vm.prank(panel[i]);
            try game.revealVote(id, v, _salt(panel[i])) {} catch {}
        }
    }

    /// @notice The provider appeals a unanimous first-round Fault (whatever its job's truth), posting its bond.
    function appealFault(uint8 idSeed) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id == 0) return;
        uint256 bond = game.getDispute(id).bond;
        vm.prank(provider);
        try game.appealFault(id) {
            ++ghost_providerAppeals;
            ghost_bondsDeposited += bond;
        } catch {}
    }

    function warp(uint32 secondsAhead) external {
        ++ghost_calls;
        vm.warp(block.timestamp + (secondsAhead % 3 days));
        VMB.roll(block.number + 1 + (secondsAhead % 5));
    }

    function resolve(uint8 idSeed) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id == 0) return;
        (uint256 jobId, uint256 lock) = _beforeSettle(id);
        _noteVoids(id);
        try game.resolve(id) {
            // an appealed split Fault stays open: its fees and reward are booked when its last round settles
            if (game.getDispute(id).status != IDisputeGameTypes.Status.Resolved) return;
            ++ghost_resolved;
            _afterSettle(id, jobId, lock);
        } catch {}
    }

    function claimAll() external {
        ++ghost_calls;
        _claimAll();
    }

    /// @notice Lets every deadline pass, resolves every open dispute and claims every credit.
    function settleAllAndClaim() external {
        ++ghost_settleAllRuns;
        vm.warp(block.timestamp + 3 days);
        VMB.roll(block.number + 3);
        uint256 n = game.disputeCount();
        for (uint256 id = 1; id <= n; ++id) {
            if (game.getDispute(id).status != IDisputeGameTypes.Status.Open) continue;
            (uint256 jobId, uint256 lock) = _beforeSettle(id);
            // an appealed dispute's later rounds: nobody votes, so the round drawn at resolve ends NoDecision
            // (one more pass than appeal rounds: a unanimous first-round Fault waits out its provider's appeal window)
            for (uint256 r; r < game.MAX_ROUNDS() && game.getDispute(id).round > 0; ++r) {
                _noteVoids(id);
                try game.resolve(id) {} catch {}
                if (game.getDispute(id).status != IDisputeGameTypes.Status.Open) break;
                vm.warp(block.timestamp + 3 days);
                VMB.roll(block.number + 3);
            }
            if (game.getDispute(id).status == IDisputeGameTypes.Status.Resolved) {
                ++ghost_resolved;
                _afterSettle(id, jobId, lock);
                continue;
            }
            _noteVoids(id);
            try game.resolve(id) {
                ++ghost_resolved;
                _afterSettle(id, jobId, lock);
            } catch {
                ++ghost_stuckResolves;
            }
        }
        _claimAll();
        ghost_strandedTokens += token.balanceOf(address(game));
    }

    function _claimAll() internal {
        address[] memory all = people();
        for (uint256 i; i < all.length; ++i) {
            address a = all[i];
            if (i >= 4 && i < 4 + auditors.length) ghost_memberFeesClaimed += game.creditOf(a);
            if (game.creditOf(a) != 0) {
                ghost_claimedFromGame += game.creditOf(a);
                vm.prank(a);
                game.claim();
            }
            if (vault.creditOf(a) != 0) {
                vm.prank(a);
                vault.claim();
            }
            if (registry.creditOf(a) != 0) {
                vm.prank(a);
                registry.claim();
            }
            if (market.creditOf(a, address(token)) != 0) {
                vm.prank(a);
                market.claim(address(token));
            }
        }
    }

    /// @dev Job of dispute `id` and its provider's lock, read before a call that may settle it (and the job's reward
    /// pool, for a dispute settled after its job faulted).
    function _beforeSettle(uint256 id) internal returns (uint256 jobId, uint256 lock) {
        jobId = game.getDispute(id).jobId;
        if (market.getJob(jobId).status != IJobMarket.JobStatus.Refunded) lock = vault.lockedFor(provider, jobId);
        (_poolAmountBefore, _poolSharesBefore) = game.rewardPoolOf(jobId);
    }

    /// @dev Adds what the fee rule gives the members of just-resolved dispute `id`, and, when this call faulted the job
    /// (it was not Refunded before, it is now), the reward R and the part of the fees R paid.
    function _afterSettle(uint256 id, uint256 jobId, uint256 lockBefore) internal {
        uint256 earned = _earnedFees(id);
        ghost_expectedMemberFees += earned;
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (d.outcome == IDisputeGameTypes.Outcome.PanelValid && d.step - 1 == uint256(d.segment) * market.getJob(jobId).policy.stepsPerSegment) {
            ghost_bondsBurned += d.bond;
        }
        bool faultedNow = lockBefore != 0 && market.getJob(jobId).status == IJobMarket.JobStatus.Refunded;
        if (!faultedNow && _poolSharesBefore != 0) {
            // settled after its job faulted: a Fault's panel is paid out of the pool first; a wrong challenge that held
            // the pool's last part leaves the remainder burned
            uint256 fee_ = game.params().panelFee;
            uint256 coverable_ = (_poolAmountBefore / fee_) * fee_;
            if (d.outcome == IDisputeGameTypes.Outcome.PanelFault) ghost_feesFromReward += earned < coverable_ ? earned : coverable_;
        }
        if (!faultedNow) return;
        uint256 reward = (lockBefore * market.getJob(jobId).policy.challengerBps) / 10_000;
        ghost_rewards += reward;
        uint256 fee = game.params().panelFee;
        uint256 coverable = (reward / fee) * fee;
        ghost_feesFromReward += earned < coverable ? earned : coverable;
    }

    /// @dev What the fee rule gives the members of resolved dispute `id`: panelFee per member who revealed on the
    /// winning side (any revealer on NoDecision and Superseded: no decision); nothing when no vote was counted
    /// (Conceded, Proven).
    function _earnedFees(uint256 id) internal view returns (uint256 total) {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        IDisputeGameTypes.Outcome o = d.outcome;
        if (
            o != IDisputeGameTypes.Outcome.PanelFault && o != IDisputeGameTypes.Outcome.PanelValid && o != IDisputeGameTypes.Outcome.NoDecision
                && o != IDisputeGameTypes.Outcome.Superseded
        ) return 0;
        IDisputeGameTypes.Vote majority = o == IDisputeGameTypes.Outcome.PanelFault
            ? IDisputeGameTypes.Vote.Fault
            : (o == IDisputeGameTypes.Outcome.PanelValid ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.None);
        // the deposit pays round 1's panel, whatever round settled the dispute; an appealed dispute that ends without a
        // decision pays no fee (its deposit goes back)
        if (d.round > 1 && majority == IDisputeGameTypes.Vote.None) return 0;
        address[] memory panel = game.roundPanelOf(id, 1);
        for (uint256 i; i < panel.length; ++i) {
            (, IDisputeGameTypes.Vote v) = game.roundBallotOf(id, 1, panel[i]);
            if (_voided[id][panel[i]]) continue;
            if (v != IDisputeGameTypes.Vote.None && (majority == IDisputeGameTypes.Vote.None || v == majority)) {
                total += game.params().panelFee;
            }
        }
    }

    /// @dev Round-1 members whose revealed vote the next `resolve` of dispute `id` voids (AuditorRegistry.forfeitedAt
    /// after the dispute opened, less than one panelForfeit of bond left): they earn no fee. forfeitedAt never decreases, so marking before a call that reverts
    /// marks only members a later successful resolve voids too.
    function _noteVoids(uint256 id) internal {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (d.status != IDisputeGameTypes.Status.Open || d.round != 1) return;
        for (uint256 i; i < d.panel.length; ++i) {
            (, IDisputeGameTypes.Vote v) = game.roundBallotOf(id, 1, d.panel[i]);
            if (
                v != IDisputeGameTypes.Vote.None && registry.forfeitedAt(d.panel[i]) > d.challengedAt
                    && registry.auditorOf(d.panel[i]).bond < game.params().panelForfeit
            ) _voided[id][d.panel[i]] = true;
        }
    }

    function _pick(uint8 seed) internal view returns (uint256) {
        uint256 n = game.disputeCount();
        return n == 0 ? 0 : 1 + (seed % n);
    }

    function _drawn(uint256 id, IDisputeGameTypes.DisputeView memory d) internal returns (bool) {
        if (d.status != IDisputeGameTypes.Status.Open) return false;
        if (d.panel.length != 0) return true;
        if (block.number <= d.seedBlock) VMB.roll(d.seedBlock + 1);
        _pastChallenge(id);
        try game.drawPanel(id) returns (bool ok) {
            return ok;
        } catch {
            return false;
        }
    }
}
