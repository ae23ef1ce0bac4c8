// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {DisputeBase, DisputeFixture} from "./DisputeFixture.sol";
import {IDisputeGameTypes} from "../interfaces/IDisputeGame.sol";
import {IStakeVault} from "../interfaces/IStakeVault.sol";

/// @notice Invariant-test handler for mass disputes against an honest provider. On its first call the fuzzer picks the
/// pool and the attacker's part of it: 1, 2 or 3 of 7 bonded auditors, or 3 of 12, and which of them the attacker holds
/// (a fuzzed subset). The provider only ever commits honest traces. The attacker, from its own challenger addresses,
/// disputes every step of a job (massDispute); every drawn panel votes with its attacker members voting Fault (or, as
/// fuzzed, staying silent) and its honest members voting Valid, the truth, in every round an appeal opens (vote);
/// time passes (warp). The handler records every dispute, whether its first panel was held entirely by the attacker,
/// and every outcome.
contract MassDisputeHandler is DisputeBase {
    /// @dev The pools the fuzzer chooses from: (attacker auditors, bonded auditors).
    uint256 internal constant CONFIGS = 4;
    /// @dev Disputes one challenger address may hold open on a job (DisputeGame.MAX_OPEN_PER_CHALLENGER).
    uint256 internal constant OPEN_PER_CHALLENGER = 4;
    uint256 internal constant CHALLENGERS = 3;
    uint256 internal constant HONEST = type(uint256).max;

    uint256 public ghost_calls;
    bool public configured;
    /// @dev a: the auditors the attacker holds; n: every bonded auditor (the snapshot's pool; no party is bonded).
    uint256 public attackerCount;
    uint256 public poolCount;
    mapping(address => bool) public isAttacker;
    address[] internal _pool;
    address[CHALLENGERS] internal _challengers;
    uint256[] internal _jobs;
    uint256[] internal _disputes;
    /// @dev The provider's stake (free + locked + pending) once the pool was set up: an honest provider never ends below.
    uint256 public providerStake0;
    /// @dev Disputes that reached an appeal round, and those that ended in each outcome.
    uint256 public ghost_appealed;
    uint256 public ghost_faults;
    uint256 public ghost_valid;
    uint256 public ghost_noDecision;
    /// @dev Must stay 0: Faults whose first panel the attacker did not hold entirely although it held less than half of
    /// the last round's seats (the one capture appeals do not close is a unanimous first panel: docs/disputes.md,
    /// "The bound").
    uint256 public ghost_faultsWithoutUnanimousCapture;
    /// @dev Faults without a captured first panel where some honest seat's vote was voided (DisputeSettlement
    /// _voidForfeited: it forfeited after the dispute opened and holds less than one panelForfeit): the handler's warps
    /// make honest members silent on other panels until they have nothing at stake, so the attacker's part of the
    /// members WITH something at stake exceeds its part of the snapshot. Counted, not asserted: the bound is stated for
    /// honest members that keep their bond (docs/disputes.md "The bound").
    uint256 public ghost_faultsAfterHonestVoided;
    /// @dev Must stay 0: a resolve that reverted although every deadline had passed.
    uint256 public ghost_stuckResolves;
    mapping(uint256 disputeId => bool) internal _appealSeen;
    /// @dev The seed each round's panel was drawn with (DisputeGame: keccak256(blockhash(seedBlock), disputeId)).
    mapping(uint256 disputeId => mapping(uint256 round => bytes32 seed)) public ghost_roundSeed;
    /// @dev Per dispute, measured on the registry's snapshot at its challengedAt: the attacker's auditors in the
    /// drawable pool, and the drawable pool (the snapshot minus the job's parties). Honest auditors that stayed silent
    /// (the handler's warps make whole panels miss their deadlines) forfeit and may fall below the minimum bond, so the
    /// attacker's part of a later snapshot can exceed its part of the configured pool: the bound is judged per snapshot.
    mapping(uint256 disputeId => uint256) public snapAttackers;
    mapping(uint256 disputeId => uint256) public snapPool;
    /// @dev Must stay 0: Faults of disputes whose snapshot had the attacker below the stated bound.
    uint256 public ghost_faultsBelowBound;
    /// @dev Unanimous first-round Faults the honest provider appealed (appealFault).
    uint256 public ghost_providerAppeals;
    /// @dev Must stay 0: disputes that ended NoDecision in a round before the last although that round had a drawn
    /// panel and no counted vote (a silent round, e.g. a first panel the attacker holds whole and keeps silent, is
    /// appealed like a tie: silence alone never ends a dispute while rounds are left, so it spends no re-open).
    uint256 public ghost_silentRoundsEnded;
    /// @dev Silent rounds (a drawn panel, no counted vote) that were appealed.
    uint256 public ghost_silentRoundsAppealed;

    constructor(DisputeFixture f) {
        token = f.token();
        vault = f.vault();
        registry = f.registry();
        market = f.market();
        game = f.game();
        verifier = f.verifier();
        for (uint256 i; i < 5; ++i) _pool.push(f.auditors(i));
        for (uint256 i; i < CHALLENGERS; ++i) {
            _challengers[i] = address(uint160(0xA77AC0 + i));
        }
    }

    // ---------------------------------------------------------------- fuzzed entry points

    /// @notice The attacker disputes every step of a fresh honest job of 1 to 4 segments (3 to 12 steps).
    function massDispute(uint256 seed, uint8 segments) external {
        ++ghost_calls;
        _configure(seed);
        uint16 segs = uint16(1 + (segments % 4));
        vm.prank(buyer);
        uint256 jobId = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, policy(segs));
        vm.prank(provider);
        market.acceptJob(jobId);
        _commit(jobId, segs, HONEST);
        _jobs.push(jobId);
        uint256 steps = uint256(segs) * K;
        uint256 first = _disputes.length;
        for (uint256 step = 1; step <= steps; ++step) {
            address who = _challengers[(step - 1) / OPEN_PER_CHALLENGER];
            _disputes.push(_challenge(who, jobId, step, HONEST));
        }
        // the snapshot at challengedAt can be read once that second is over
        vm.warp(block.timestamp + 1);
        for (uint256 i = first; i < _disputes.length; ++i) _recordSnapshot(_disputes[i]);
    }

    /// @notice Plays the current round of one open dispute to its resolve: draw, commits, reveals, resolve. The
    /// attacker's members vote Fault, or stay silent when `attackerSilent`; honest members vote Valid.
    function vote(uint256 pick, bool attackerSilent) external {
        ++ghost_calls;
        if (!configured || _disputes.length == 0) return;
        uint256 id = _openDispute(pick);
        if (id == 0) return;
        _playRound(id, attackerSilent);
    }

    /// @notice Time passes (up to two days): deadlines lapse, undrawn and unvoted rounds end without a decision.
    function warp(uint256 secs) external {
        ++ghost_calls;
        vm.warp(block.timestamp + bound(secs, 1, 2 days));
    }

    /// @notice Anyone resolves a dispute whose deadlines have passed (a round nobody voted in).
    function resolveLapsed(uint256 pick) external {
        ++ghost_calls;
        if (!configured || _disputes.length == 0) return;
        uint256 id = _openDispute(pick);
        if (id == 0) return;
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (block.timestamp <= d.revealDeadline) return;
        _resolve(id);
    }

    /// @notice Plays every open dispute to its end (the afterInvariant step), honest members voting in every round.
    function settleAll() external {
        for (uint256 i; i < _disputes.length; ++i) {
            for (uint256 rounds; rounds < 8 && game.getDispute(_disputes[i]).status == IDisputeGameTypes.Status.Open; ++rounds) {
                _playRound(_disputes[i], false);
            }
        }
    }

    // ---------------------------------------------------------------- views for the invariants

    function jobs() external view returns (uint256[] memory) {
        return _jobs;
    }

    function disputes() external view returns (uint256[] memory) {
        return _disputes;
    }

    function pool() external view returns (address[] memory) {
        return _pool;
    }

    /// @notice Whether some honest seat of dispute `id` (any round) had its vote voided: it forfeited after the dispute
    /// opened and holds less than one panelForfeit of bond.
    function honestVoided(uint256 id) public view returns (bool) {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        uint256 stake = game.params().panelForfeit;
        for (uint256 r = 1; r <= d.round; ++r) {
            address[] memory p = game.roundPanelOf(id, r);
            for (uint256 i; i < p.length; ++i) {
                if (isAttacker[p[i]]) continue;
                if (registry.forfeitedAt(p[i]) > d.challengedAt && registry.auditorOf(p[i]).bond < stake) return true;
            }
        }
        return false;
    }

    /// @notice Whether the attacker holds every seat of dispute `id`'s first panel.
    function unanimousCapture(uint256 id) public view returns (bool) {
        address[] memory p = game.roundPanelOf(id, 1);
        if (p.length == 0) return false;
        for (uint256 i; i < p.length; ++i) {
            if (!isAttacker[p[i]]) return false;
        }
        return true;
    }

    /// @notice The stated bound that holds even when whole panels of honest members stay silent (the time jumps here):
    /// an honest provider is never slashed while the attacker holds fewer auditors than the first panel has seats
    /// (a < k) and fewer than half of the last round's seats (2a < k3 + 1), k3 = min(MAX_PANEL, drawable pool n) rounded
    /// down to odd. With the honest members voting and the provider appealing every unanimous first-round Fault, the
    /// bound is wider (2a < k2 + 1, docs/disputes.md "The bound"; DisputeGameAttacks.t.sol and bench row 24 play it).
    function belowStatedBound(uint256 a, uint256 n) public view virtual returns (bool) {
        return a < game.params().panelSize && 2 * a < _lastRoundSeats(n) + 1;
    }

    // ---------------------------------------------------------------- internals

    function _lastRoundSeats(uint256 n) internal view returns (uint256 last) {
        last = n < game.MAX_PANEL() ? n : game.MAX_PANEL();
        if (last % 2 == 0 && last != 0) --last;
    }

    function _recordSnapshot(uint256 id) internal {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        (address jobBuyer,,) = market.jobParties(d.jobId);
        address[] memory parties = new address[](3);
        parties[0] = d.provider;
        parties[1] = d.challenger;
        parties[2] = jobBuyer;
        address[] memory withAttackers = new address[](3 + attackerCount);
        uint256 j;
        for (uint256 i; i < 3; ++i) withAttackers[j++] = parties[i];
        for (uint256 i; i < _pool.length; ++i) {
            if (isAttacker[_pool[i]]) withAttackers[j++] = _pool[i];
        }
        uint256 all = registry.poolSize(d.challengedAt, parties);
        snapPool[id] = all;
        snapAttackers[id] = all - registry.poolSize(d.challengedAt, withAttackers);
    }

    /// @dev The pool on the first call: config = seed % 4 -> (1, 7), (2, 7), (3, 7), (3, 12); the attacker's auditors
    /// are a fuzzed subset of the pool (partial Fisher-Yates over keccak(seed, i)).
    function _configure(uint256 seed) internal {
        if (configured) return;
        configured = true;
        uint256 c = seed % CONFIGS;
        attackerCount = c < 3 ? c + 1 : 3;
        poolCount = c < 3 ? 7 : 12;
        for (uint256 i = _pool.length; i < poolCount; ++i) {
            address a = address(uint160(0xA0D200 + i));
            _pool.push(a);
            _fund(a);
            vm.prank(a);
            registry.postBond(AUDITOR_BOND);
        }
        address[] memory order = _pool;
        for (uint256 i; i < attackerCount; ++i) {
            uint256 j = i + (uint256(keccak256(abi.encode(seed, i))) % (order.length - i));
            (order[i], order[j]) = (order[j], order[i]);
            isAttacker[order[i]] = true;
        }
        for (uint256 i; i < CHALLENGERS; ++i) _fund(_challengers[i]);
        // 4 segments a job: enough free stake for many jobs locked at once
        vm.prank(provider);
        vault.deposit(10_000e18);
        providerStake0 = providerStake();
        // the new bonds count for snapshots from here on
        vm.warp(block.timestamp + ACTIVATION_DELAY);
    }

    /// @notice The provider's stake in the vault: free + locked + pending withdrawal.
    function providerStake() public view returns (uint256) {
        IStakeVault.Account memory a = vault.accountOf(provider);
        return uint256(a.free) + a.locked + a.pendingWithdrawal;
    }

    /// @dev The first open dispute at or after `pick` (cyclically), or 0.
    function _openDispute(uint256 pick) internal view returns (uint256) {
        uint256 n = _disputes.length;
        for (uint256 i; i < n; ++i) {
            uint256 id = _disputes[(pick + i) % n];
            if (game.getDispute(id).status == IDisputeGameTypes.Status.Open) return id;
        }
        return 0;
    }

    function _playRound(uint256 id, bool attackerSilent) internal {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (d.status != IDisputeGameTypes.Status.Open) return;
        // a seed that lapsed is never re-anchored: the draw then reverts and the round ends without a panel
        for (uint256 tries; tries < 2 && d.panel.length == 0; ++tries) {
            if (block.number <= d.seedBlock) VMB.roll(d.seedBlock + 1);
            if (block.timestamp <= d.challengedAt) vm.warp(d.challengedAt + 1);
            bytes32 bh = blockhash(d.seedBlock);
            try game.drawPanel(id) {} catch {}
            d = game.getDispute(id);
            if (d.panel.length != 0 && bh != bytes32(0)) ghost_roundSeed[id][d.round] = keccak256(abi.encode(bh, id));
        }
        uint256 round = d.round;
        for (uint256 i; i < d.panel.length; ++i) {
            address m = d.panel[i];
            if (isAttacker[m] && attackerSilent) continue;
            (bytes32 c,) = game.roundBallotOf(id, round, m);
            if (c != bytes32(0)) continue;
            bytes32 commitment = game.voteCommitment(_voteOf(m), _roundSalt(m, id, round), m);
            vm.prank(m);
            try game.commitVote(id, commitment) {} catch {}
        }
        d = game.getDispute(id);
        // reveals open once every member committed, or at the commit deadline
        if (d.commits < d.panel.length && block.timestamp <= d.commitDeadline) vm.warp(d.commitDeadline + 1);
        for (uint256 i; i < d.panel.length; ++i) {
            address m = d.panel[i];
            (bytes32 c, IDisputeGameTypes.Vote v) = game.roundBallotOf(id, round, m);
            if (c == bytes32(0) || v != IDisputeGameTypes.Vote.None) continue;
            vm.prank(m);
            try game.revealVote(id, _voteOf(m), _roundSalt(m, id, round)) {} catch {}
        }
        d = game.getDispute(id);
        // someone stayed silent (or there is no panel): the round ends at its reveal deadline
        if ((d.panel.length == 0 || d.validVotes + d.faultVotes < d.panel.length) && block.timestamp <= d.revealDeadline) {
            vm.warp(d.revealDeadline + 1);
        }
        _resolve(id);
    }

    function _resolve(uint256 id) internal {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        uint256 round0 = d.round;
        try game.resolve(id) {}
        catch {
            // a resolve may wait for its deadlines or its seed block; past both it must go through
            if (block.timestamp > d.revealDeadline && block.number > d.seedBlock) ++ghost_stuckResolves;
            return;
        }
        d = game.getDispute(id);
        _noteSilentRound(id, round0, d);
        (uint64 appealUntil,) = game.faultAppealOf(id);
        if (appealUntil != 0) {
            // INVARIANT (of the honest provider): it appeals every unanimous first-round Fault on its honest job
            vm.prank(provider);
            try game.appealFault(id) {
                ++ghost_providerAppeals;
            } catch {
                ++ghost_stuckResolves;
            }
        }
        if (d.status == IDisputeGameTypes.Status.Open) {
            if (!_appealSeen[id]) {
                _appealSeen[id] = true;
                ++ghost_appealed;
            }
            return;
        }
        if (d.outcome == IDisputeGameTypes.Outcome.PanelFault) {
            ++ghost_faults;
            (uint256 a, uint256 n) = (snapAttackers[id], snapPool[id]);
            // NOTE: the bound is stated for honest members that keep their vote: a Fault where an honest seat was voided
            // (it forfeited since the dispute opened, here for its own silence in the handler's time jumps, and holds
            // less than one panelForfeit) is the forfeit-voiding edge, counted apart and bounded by
            // DisputeGameForfeitVoidInvariantTest (docs/disputes.md, "Forfeited members").
            if (honestVoided(id)) {
                ++ghost_faultsAfterHonestVoided;
            } else {
                if (belowStatedBound(a, n)) ++ghost_faultsBelowBound;
                // the attacker cannot hold half of an appeal round: only a first panel it held entirely can decide Fault
                if (2 * a < _lastRoundSeats(n) + 1 && !unanimousCapture(id)) ++ghost_faultsWithoutUnanimousCapture;
            }
        } else if (d.outcome == IDisputeGameTypes.Outcome.PanelValid) {
            ++ghost_valid;
        } else {
            ++ghost_noDecision;
        }
    }

    /// @dev Books the resolve of dispute `id`'s round `round0` (`d`: the dispute after it) when that round had a drawn
    /// panel and no counted vote: appealed, or (a violation before the last round) ended.
    function _noteSilentRound(uint256 id, uint256 round0, IDisputeGameTypes.DisputeView memory d) internal {
        address[] memory p = game.roundPanelOf(id, round0);
        if (p.length == 0) return;
        for (uint256 i; i < p.length; ++i) {
            (, IDisputeGameTypes.Vote v) = game.roundBallotOf(id, round0, p[i]);
            if (v != IDisputeGameTypes.Vote.None && !_voided(id, p[i])) return;
        }
        if (d.round > round0) ++ghost_silentRoundsAppealed;
        else if (d.outcome == IDisputeGameTypes.Outcome.NoDecision && round0 < game.MAX_ROUNDS()) ++ghost_silentRoundsEnded;
    }

    /// @dev Whether `member`'s revealed vote on dispute `id` was voided at resolve: the rule of
    /// DisputeSettlement._voidForfeited (it forfeited after the dispute opened and holds less than one panelForfeit).
    function _voided(uint256 id, address member) internal view returns (bool) {
        return registry.forfeitedAt(member) > game.getDispute(id).challengedAt
            && registry.auditorOf(member).bond < game.params().panelForfeit;
    }

    function _voteOf(address member) internal view returns (IDisputeGameTypes.Vote) {
        // every disputed step is valid: the honest members vote the truth, the attacker's Fault
        return isAttacker[member] ? IDisputeGameTypes.Vote.Fault : IDisputeGameTypes.Vote.Valid;
    }

    function _roundSalt(address member, uint256 id, uint256 round) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", member, id, round));
    }

    function bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256) {
        if (x >= min && x <= max) return x;
        return min + (x % (max - min + 1));
    }
}
