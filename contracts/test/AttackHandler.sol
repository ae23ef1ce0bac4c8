// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {DisputeBase} from "./DisputeFixture.sol";
import {AttackActors, AttackFixture} from "./AttackFixture.sol";
import {IDisputeGameTypes} from "../interfaces/IDisputeGame.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";
import {IStakeVault} from "../interfaces/IStakeVault.sol";

/// @notice Invariant-test handler that plays the adversary of docs/disputes.md against honest parties (Optimism's
/// FaultDisputeGame actor handlers, Arbitrum BOLD's "one honest party always wins").
///
/// The provider side (provider, two sybil challengers, two sybil auditors) builds the traces, so the handler knows the
/// one truly faulty step of each cheating job (step `badFrom`: h(badFrom-1) is on the honest trajectory, h(badFrom)
/// is not; later steps are correct transitions from the wrong state). It commits segments when it likes (or stops),
/// tries malformed commits, opens sybil challenges on any step, concedes any of its disputes at any time (its sybil's
/// right after an honest challenger disputed the faulty step, too), front-runs an honest challenger on the faulty step
/// with a pre-committed sybil challenge, copies honest challenge transactions from the mempool, votes its sybil
/// auditors any way, reports its own timeouts, re-accepts, and chooses the clock (warps, and rolls of up to 300
/// blocks, which can push a panel seed out of blockhash range).
///
/// The honest side: two honest challengers dispute only the faulty step; two reckless challengers (the fixture's
/// `challenger` and `stranger`) dispute any step; the five honest auditors vote the truth every time `vote` runs
/// (unless the fuzzer picks `chaos`, then every member votes at random and the dispute is marked so); a keeper (any
/// honest party) resolves every dispute at revealDeadline + 1 (a faulted job's too: its panel decides it): all time moves
/// through `_advance`, which stops at each such deadline.
///
/// Ghosts, per job: the lock L just before the call that faulted it, the provider side's and the buyer's wealth change
/// over every call that touched the job (see `Snap`), and `allowance`, what the side may have taken from honest
/// parties on the job (see invariant_providerSideLosesNonChallengerShare in DisputeGame.invariant.t.sol); the
/// leaves passed in each commitSegment's calldata; the last commit's time. Per dispute: who opened it, whether the step
/// is the faulty one, the deposit, what the challenger was credited by the call that settled it, whether the panel had
/// a sybil majority or voted in chaos.
contract AttackHandler is DisputeBase, AttackActors {
    uint256 public constant HONEST_TRACE = type(uint256).max;
    uint256 internal constant MAX_JOBS = 5;
    uint256 internal constant BPS = 10_000;
    /// @dev The largest jump of one warp, and of one roll (past blockhash range: 256).
    uint256 internal constant MAX_WARP = 3 days;
    uint256 internal constant MAX_ROLL = 300;

    /// @dev Wealth of the provider side, split by where it sits, and of the buyer. Wealth counts tokens, every credit
    /// (game, vault, market) and stake (vault free, locked, pending) and auditor bonds, but NOT AuditorRegistry credits:
    /// those only come from forfeits of other members' bonds (honest members' or the side's own), so leaving them out
    /// keeps the side's gains from the lock and the disputes only (a sybil's forfeit to another sybil then counts as a
    /// loss: conservative). Claims move credits to tokens and are never booked.
    struct Snap {
        int256 game; // tokens + DisputeGame credits (a challenge deposit moves tokens into the game)
        int256 vault; // StakeVault free + locked + pending + credits
        int256 market; // JobMarket credits
        int256 bonds; // AuditorRegistry bonds of the sybil auditors
        int256 buyer; // the buyer's tokens + game, vault and market credits
        uint256 sybilFees; // DisputeGame credits of the sybil auditors
    }

    struct JobGhost {
        uint256 badFrom; // first divergent state; HONEST_TRACE: none
        uint256 lastCommitAt;
        uint256 timedOutAt; // when reportTimeout left the job TimedOut (its tenure's segments stay disputable)
        uint256 lock; // L: the provider's lock just before the call that faulted the job
        uint256 allowance; // see invariant_providerSideLosesNonChallengerShare
        int256 sideGame;
        int256 sideVault;
        int256 sideMarket;
        int256 sideBonds;
        int256 buyerNet;
        uint256 shareAtFault; // floor(pool / disputes open at the fault), pool = R - the deciding panel's fees
        uint16 challengerBps;
        uint16 buyerBps;
        uint16 tenures; // successful acceptJob calls (<= segments + MAX_IDLE_TIMEOUTS: invariant_tenuresBounded)
        bool faulted;
    }

    struct DisputeGhost {
        bool honest; // opened by HONEST_1 or HONEST_2 (always on the faulty step)
        bool faultyStep;
        bool side; // opened by a sybil challenger
        bool chaos; // some `vote` call let every member vote at random
        bool settled;
        bool sybilMajority; // the drawn panel held more sybil auditors than honest ones
        bool openAtFault; // open when its job faulted: it takes an equal part of the pool
        bool faultedJob; // its settlement faulted the job (the first fault)
        IDisputeGameTypes.Outcome outcome;
        uint256 jobId;
        uint256 deposit; // bond + fees
        uint256 received; // the challenger's DisputeGame credit from the call that settled it
    }

    /// @dev The calldata of a challenge of `step`: the provider's own leaves and their proofs.
    struct ChallengeArgs {
        uint256 segment;
        bytes32 traceRoot;
        bytes32 end;
        bytes32 hPrev;
        bytes32[] proofPrev;
        bytes32 hStep;
        bytes32[] proofStep;
    }

    uint256[] internal _jobs;
    mapping(uint256 jobId => JobGhost) internal _jg;
    mapping(uint256 disputeId => DisputeGhost) internal _dg;
    mapping(uint256 jobId => mapping(uint256 segment => bytes32[4] hashes)) internal _leavesSent;
    mapping(uint256 jobId => mapping(uint256 segment => bool)) public ghost_committedByHandler;

    uint256 public ghost_calls;
    /// @dev Must stay 0: a malformed commitSegment (wrong leaf count, zero leaf, broken boundary) that was accepted, or
    /// rejected with another error than the one its defect calls for.
    uint256 public ghost_badCommitAccepted;
    uint256 public ghost_badCommitWrongError;
    /// @dev Must stay 0: a copied challenge (someone else's exact calldata and salt) that opened, or failed otherwise
    /// than DisputeGameChallengeNotCommitted.
    uint256 public ghost_copyAccepted;
    /// @dev Must stay 0: a second dispute opened on a step that already had one.
    uint256 public ghost_twoOpenOnStep;
    /// @dev Must stay 0: a resolve that reverted although the dispute was resolvable (deadline passed or superseded).
    uint256 public ghost_stuckResolves;
    /// @dev Must stay 0: a job that could not be finalized / reported at its bound (settleAll).
    uint256 public ghost_notTerminal;
    /// @dev Must stay 0: a well-formed commit that the market refused before the deadline.
    uint256 public ghost_goodCommitRejected;
    uint256 public ghost_strandedTokens;
    // coverage counters (what the runs reached)
    uint256 public ghost_faults;
    uint256 public ghost_sybilRaces;
    uint256 public ghost_frontRuns;
    uint256 public ghost_superseded;
    uint256 public ghost_reopens;
    uint256 public ghost_honestOpened;
    uint256 public ghost_timeouts;
    /// @dev Each drawn panel's seed (keccak256(blockhash(seedBlock), disputeId)), recorded at the draw: the snapshot
    /// invariant re-draws from it.
    mapping(uint256 disputeId => bytes32 seed) public ghost_panelSeed;
    /// @dev The seed each round's panel was drawn with (round 1, then each appeal round), recorded at its draw.
    mapping(uint256 disputeId => mapping(uint256 round => bytes32 seed)) public ghost_roundSeed;
    uint256 public ghost_churns;
    uint256 public ghost_finalized;
    uint256 public ghost_stalls;

    error OnlySelf(address caller);

    constructor(AttackFixture f) {
        token = f.token();
        vault = f.vault();
        registry = f.registry();
        market = f.market();
        game = f.game();
        verifier = f.verifier();
        for (uint256 i; i < 5; ++i) auditors.push(f.auditors(i));
        uint256 a = _newJob(3, 4, 5_000); // cheating from step 4 (segment 1)
        _commitNext(a);
        _commitNext(a);
        _commitNext(a); // Committed
        uint256 b = _newJob(2, 2, 2_500); // cheating at step 2 (segment 0)
        _commitNext(b); // Active
        uint256 c = _newJob(2, HONEST_TRACE, 1_000);
        _commitNext(c);
        _commitNext(c); // Committed, honest
    }

    // ---------------------------------------------------------------- views for the invariants

    function jobs() external view returns (uint256[] memory) {
        return _jobs;
    }

    function jobGhost(uint256 jobId) external view returns (JobGhost memory) {
        return _jg[jobId];
    }

    function disputeGhost(uint256 disputeId) external view returns (DisputeGhost memory) {
        return _dg[disputeId];
    }

    function leavesSent(uint256 jobId, uint256 segment) external view returns (bytes32[4] memory) {
        return _leavesSent[jobId][segment];
    }

    /// @notice Everyone who can hold a credit or a balance in this test.
    function people() public view returns (address[] memory all) {
        address[11] memory fixed_ = [
            buyer,
            provider,
            challenger,
            stranger,
            SYBIL_CHALLENGER_1,
            SYBIL_CHALLENGER_2,
            SYBIL_AUDITOR_1,
            SYBIL_AUDITOR_2,
            HONEST_1,
            HONEST_2,
            COPIER
        ];
        all = new address[](fixed_.length + auditors.length);
        for (uint256 i; i < fixed_.length; ++i) all[i] = fixed_[i];
        for (uint256 i; i < auditors.length; ++i) all[fixed_.length + i] = auditors[i];
    }

    /// @notice The stated bound by which job `jobId` ends, given the keeper (0: no bound applies now: the job is Open,
    /// Cancelled or already terminal), with D = MAX_ROUNDS * (commitWindow + revealWindow + 1 + 12 * seedDelayBlocks)
    /// (a dispute's longest life: every round appealed, each resolved 1 s after its reveal deadline). Committed: last
    /// commit + challengeWindow * (1 + MAX_REOPENS) + D * (MAX_REOPENS + 1) + (MAX_REOPENS + 1). Active: deadline + D + 1.
    function boundOf(uint256 jobId) public view returns (uint256) {
        IJobMarket.JobView memory j = market.getJob(jobId);
        IDisputeGameTypes.Params memory p = game.params();
        // a dispute lasts up to MAX_ROUNDS rounds (a split Fault is appealed), each commit + reveal window plus the
        // keeper's 1 s lag and the seed blocks' seconds
        uint256 dispute = (p.commitWindowSeconds.toUint() + p.revealWindowSeconds.toUint() + 1 + 12 * p.seedDelayBlocks)
            * game.MAX_ROUNDS();
        uint256 reopens = market.MAX_REOPENS();
        if (j.status == IJobMarket.JobStatus.Committed) {
            return _jg[jobId].lastCommitAt + uint256(j.policy.challengeWindow) * (1 + reopens) + dispute * (reopens + 1)
                + (reopens + 1);
        }
        if (j.status == IJobMarket.JobStatus.TimedOut) {
            return _jg[jobId].timedOutAt + uint256(j.policy.challengeWindow) * (1 + reopens) + dispute * (reopens + 1)
                + (reopens + 1);
        }
        if (j.status == IJobMarket.JobStatus.Active) return uint256(j.deadline) + dispute + 1;
        return 0;
    }

    /// @notice Whether step `step` of job `jobId` is the faulty transition of the provider's trace.
    function isFaulty(uint256 jobId, uint256 step) public view returns (bool) {
        return _jg[jobId].badFrom == step;
    }

    // ---------------------------------------------------------------- provider side

    function newJob(uint8 seed) external {
        ++ghost_calls;
        if (_jobs.length >= MAX_JOBS) return;
        uint16 segments = uint16(1 + (seed % 3));
        uint256 badFrom = (seed >> 2) % 4 == 0 ? HONEST_TRACE : 1 + ((seed >> 4) % (uint256(segments) * K));
        uint16[3] memory shares = [uint16(5_000), 2_500, 1_000];
        _newJob(segments, badFrom, shares[(seed >> 6) % 3]);
    }

    /// @notice The provider commits the next segment of a job it holds (it may also never do so: abandonment).
    function commitNext(uint8 jobSeed) external {
        ++ghost_calls;
        _commitNext(_jobAt(jobSeed));
    }

    /// @notice The provider tries a malformed commit: K or K+2 leaves, a zero leaf, or a first leaf that is not the
    /// previous segment's end state. Each must revert with its own error.
    function badCommit(uint8 jobSeed, uint8 kind, uint8 index) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        IJobMarket.JobView memory j = market.getJob(jobId);
        if (j.status != IJobMarket.JobStatus.Active || j.provider != provider || block.timestamp > j.deadline) return;
        uint256 segment = j.nextSegment;
        (, bytes32[4] memory hs) = leaves(jobId, segment, _jg[jobId].badFrom);
        bytes32[] memory sent;
        bytes4 expected;
        kind %= 4;
        if (kind == 3 && segment == 0) kind = 2; // segment 0 has no previous end state
        if (kind < 2) {
            sent = new bytes32[](kind == 0 ? K : K + 2);
            for (uint256 i; i < sent.length; ++i) sent[i] = i < 4 ? hs[i] : keccak256("extra");
            expected = IJobMarket.JobMarketWrongLeafCount.selector;
        } else {
            sent = dyn(hs);
            if (kind == 2) {
                sent[index % 4] = bytes32(0);
                expected = IJobMarket.JobMarketZeroCommitment.selector;
            } else {
                sent[0] = keccak256(abi.encode("backdoor", jobId, segment));
                expected = IJobMarket.JobMarketBoundaryMismatch.selector;
            }
        }
        vm.prank(provider);
        try market.commitSegment(jobId, segment, sent, 1, "cid") {
            ++ghost_badCommitAccepted;
        } catch (bytes memory err) {
            if (bytes4(err) != expected) ++ghost_badCommitWrongError;
        }
    }

    /// @notice A sybil challenger disputes any committed step of the current tenure (usually a valid one).
    function sybilChallenge(uint8 jobSeed, uint8 stepSeed, bool second) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        (bool ok, uint256 step) = _anyStep(jobId, stepSeed);
        if (ok) _openChallenge(_sybilChallenger(second), jobId, step, false);
    }

    /// @notice The provider concedes any open dispute (its sybil's, or an honest one).
    function concede(uint8 idSeed) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id != 0) _settle(id, true);
    }

    /// @notice The sybil-concession attack: right after an honest challenger disputed the faulty step, a sybil disputes
    /// some step of the same job and the provider concedes the sybil's dispute at once, hoping to route the reward to
    /// itself.
    function sybilRace(uint8 idSeed, uint8 stepSeed, bool second) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id == 0 || !_dg[id].honest || game.getDispute(id).status != IDisputeGameTypes.Status.Open) return;
        uint256 jobId = game.getDispute(id).jobId;
        (bool ok, uint256 step) = _anyStep(jobId, stepSeed);
        if (!ok) return;
        uint256 sybilId = _openChallenge(_sybilChallenger(second), jobId, step, false);
        if (sybilId == 0) return;
        ++ghost_sybilRaces;
        _settle(sybilId, true);
    }

    /// @notice The front-run attack: a sybil that pre-committed to the faulty step opens its dispute before the honest
    /// challenger's (whose challenge on the same step then fails), and the provider concedes the sybil's dispute.
    function frontRun(uint8 jobSeed, bool second) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        (bool ok, uint256 step) = _faultyStep(jobId);
        if (!ok) return;
        uint256 sybilId = _openChallenge(_sybilChallenger(second), jobId, step, false);
        if (sybilId == 0) return;
        ++ghost_frontRuns;
        _openChallenge(_honestChallenger(second), jobId, step, false); // one open dispute per step: must fail
        _settle(sybilId, true);
    }

    /// @notice The stalling attack: a sybil disputes a step at the last second the job can be frozen (the end of the
    /// challenge window, or the segment deadline of an Active job), then lets the dispute lapse to NoDecision (silent
    /// panel; with `killSeed` the seed block leaves blockhash range, so no panel is ever drawn); repeated up to four
    /// times, each time at the new last second (a NoDecision re-opens a Committed job's window, at most MAX_REOPENS
    /// times; an Active job past its deadline takes no new dispute).
    function stall(uint8 jobSeed, uint8 rounds, bool killSeed, bool second) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        IDisputeGameTypes.Params memory p = game.params();
        for (uint256 r; r <= rounds % 4; ++r) {
            IJobMarket.JobView memory j = market.getJob(jobId);
            if (
                j.status != IJobMarket.JobStatus.Active && j.status != IJobMarket.JobStatus.Committed
                    && j.status != IJobMarket.JobStatus.TimedOut
            ) return;
            (bool ok, uint256 step) = _anyStep(jobId, uint8(rounds + r));
            if (!ok) return;
            if (j.deadline > block.timestamp) _advance(j.deadline - block.timestamp);
            if (_openChallenge(_sybilChallenger(second), jobId, step, false) == 0) return;
            ++ghost_stalls;
            if (killSeed) VMB.roll(block.number + MAX_ROLL);
            _advance(p.commitWindowSeconds.toUint() + p.revealWindowSeconds.toUint() + 1);
        }
    }

    /// @notice The provider (or the buyer) reports a missed deadline, or re-opens a TimedOut job after its window;
    /// the provider re-accepts a re-opened job.
    function reportTimeout(uint8 jobSeed, bool byProvider) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        bool timedOut = market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut;
        if (_marketCall(jobId, byProvider ? provider : buyer, timedOut ? 3 : 0) && !timedOut) ++ghost_timeouts;
    }

    function reaccept(uint8 jobSeed) external {
        ++ghost_calls;
        _marketCall(_jobAt(jobSeed), provider, 1);
    }

    /// @notice The provider holds the escrow with idle tenures: at each deadline it reports its own timeout and
    /// re-accepts in the same block, so the buyer never sees the job Open (up to `rounds` times).
    function holdEscrow(uint8 jobSeed, uint8 rounds) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        for (uint256 r; r <= rounds % 6; ++r) {
            IJobMarket.JobView memory j = market.getJob(jobId);
            if (j.status == IJobMarket.JobStatus.Open) {
                if (!_marketCall(jobId, provider, 1)) return;
                continue;
            }
            if (j.status != IJobMarket.JobStatus.Active || j.provider != provider || j.nextSegment != j.startSegment) return;
            if (j.deadline >= block.timestamp) _advance(j.deadline + 1 - block.timestamp);
            if (!_marketCall(jobId, provider, 0)) return;
            ++ghost_timeouts;
            if (market.getJob(jobId).status == IJobMarket.JobStatus.Open) _marketCall(jobId, provider, 1);
        }
    }

    /// @notice The provider's auditors churn around draws: request exit, leave once exitable, or bond again (a new
    /// membership), at any moment, before or after a dispute's seed is public.
    function auditorChurn(bool second, uint8 what) external {
        ++ghost_calls;
        address a = second ? SYBIL_AUDITOR_2 : SYBIL_AUDITOR_1;
        bool ok;
        vm.prank(a);
        if (what % 3 == 0) {
            try registry.requestExit() {
                ok = true;
            } catch {}
        } else if (what % 3 == 1) {
            try registry.leave() {
                ok = true;
            } catch {}
        } else {
            try registry.postBond(AUDITOR_BOND) {
                ok = true;
            } catch {}
        }
        if (ok) ++ghost_churns;
    }

    /// @notice The provider's (or anyone's) clock: time moves through the keeper; blocks move up to MAX_ROLL.
    function warp(uint32 secondsAhead, uint16 blocks) external {
        ++ghost_calls;
        _advance(secondsAhead % MAX_WARP);
        VMB.roll(block.number + 1 + (blocks % MAX_ROLL));
    }

    // ---------------------------------------------------------------- honest side

    /// @notice An honest challenger disputes the faulty step; with `copied`, a mempool watcher first replays the
    /// honest challenge (same calldata, same salt) in the block where it lands.
    function honestChallenge(uint8 jobSeed, bool second, bool copied) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        (bool ok, uint256 step) = _faultyStep(jobId);
        if (ok) _openChallenge(_honestChallenger(second), jobId, step, copied);
    }

    /// @notice A reckless challenger disputes any committed step (right or wrong).
    function recklessChallenge(uint8 jobSeed, uint8 stepSeed, bool second) external {
        ++ghost_calls;
        uint256 jobId = _jobAt(jobSeed);
        (bool ok, uint256 step) = _anyStep(jobId, stepSeed);
        if (ok) _openChallenge(second ? stranger : challenger, jobId, step, false);
    }

    /// @notice The drawn panel votes: honest members commit and reveal the truth, sybil members follow `pattern` (two
    /// bits each: 0 silent, 1 Valid, 2 Fault, 3 commit only); with `chaos` every member follows the pattern.
    function vote(uint8 idSeed, uint8 pattern, bool chaos) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id == 0) return;
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (!_drawn(id, d)) return;
        address[] memory panel = game.getDispute(id).panel;
        if (chaos) _dg[id].chaos = true;
        uint256 truth = isFaulty(d.jobId, d.step) ? 2 : 1;
        for (uint256 i; i < panel.length; ++i) {
            uint256 kind = chaos || _isSybilAuditor(panel[i]) ? (pattern >> (2 * i)) & 3 : truth;
            if (kind == 0) continue;
            bytes32 c = game.voteCommitment(_vote(kind), _salt(panel[i]), panel[i]);
            vm.prank(panel[i]);
            try game.commitVote(id, c) {} catch {}
        }
        _advance(1 days + 1);
        for (uint256 i; i < panel.length; ++i) {
            uint256 kind = chaos || _isSybilAuditor(panel[i]) ? (pattern >> (2 * i)) & 3 : truth;
            if (kind == 0 || kind == 3) continue;
            vm.prank(panel[i]);
            try game.revealVote(id, _vote(kind), _salt(panel[i])) {} catch {}
        }
    }

    function resolve(uint8 idSeed) external {
        ++ghost_calls;
        uint256 id = _pick(idSeed);
        if (id != 0) _settle(id, false);
    }

    function finalize(uint8 jobSeed) external {
        ++ghost_calls;
        if (_marketCall(_jobAt(jobSeed), buyer, 2)) ++ghost_finalized;
    }

    function claimAll() external {
        ++ghost_calls;
        _claimAll();
    }

    /// @notice The end of a run: the keeper and the buyer end every job at its bound (ascending), each Committed job
    /// must finalize and each Active one must be reportable there; then every dispute left is resolved and every credit
    /// claimed, and `ghost_strandedTokens` records what the game still holds.
    function settleAll() external {
        _keeperPass();
        uint256 n = _jobs.length;
        uint256[] memory bounds = new uint256[](n);
        for (uint256 i; i < n; ++i) bounds[i] = boundOf(_jobs[i]);
        // a job that times out here is TimedOut for its window: it comes back once with its new bound (2n rounds)
        for (uint256 round; round < 2 * n; ++round) {
            uint256 best = type(uint256).max;
            uint256 at;
            for (uint256 i; i < n; ++i) {
                if (bounds[i] != 0 && bounds[i] < best) (best, at) = (bounds[i], i);
            }
            if (best == type(uint256).max) break;
            bounds[at] = 0;
            if (best > block.timestamp) _advance(best - block.timestamp);
            uint256 jobId = _jobs[at];
            IJobMarket.JobStatus st = market.getJob(jobId).status;
            if (st == IJobMarket.JobStatus.Committed) {
                if (_marketCall(jobId, buyer, 2)) ++ghost_finalized;
                else ++ghost_notTerminal;
            } else if (st == IJobMarket.JobStatus.Active) {
                if (_marketCall(jobId, buyer, 0)) ++ghost_timeouts;
                else ++ghost_notTerminal;
                if (market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut) bounds[at] = boundOf(jobId);
            } else if (st == IJobMarket.JobStatus.TimedOut) {
                if (!_marketCall(jobId, buyer, 3)) ++ghost_notTerminal;
            }
        }
        IDisputeGameTypes.Params memory p = game.params();
        // Nobody votes from here on: a round resolved at its deadline with a drawn panel and no counted vote is appealed
        // like a tie while rounds are left, so each dispute may need MAX_ROUNDS more rounds (each past its seed block).
        for (uint256 r; r < game.MAX_ROUNDS() && _anyOpenDispute(); ++r) {
            VMB.roll(block.number + p.seedDelayBlocks + 1);
            _advance(p.commitWindowSeconds.toUint() + p.revealWindowSeconds.toUint() + 1);
        }
        _claimAll();
        ghost_strandedTokens += token.balanceOf(address(game));
    }

    /// @dev External so that challenge reverts can be caught (window closed, step already disputed, copy).
    function openAs(address who, uint256 jobId, uint256 step, bytes32 salt) external returns (uint256) {
        if (msg.sender != address(this)) revert OnlySelf(msg.sender);
        ChallengeArgs memory a = _challengeArgs(jobId, step);
        vm.prank(who);
        return game.challenge(IDisputeGameTypes.ChallengeParams(jobId, a.segment, step, a.traceRoot, a.end, a.hPrev, a.proofPrev, a.hStep, a.proofStep, salt));
    }

    // ---------------------------------------------------------------- internal: actions

    function _newJob(uint16 segments, uint256 badFrom, uint16 challengerBps) internal returns (uint256 jobId) {
        IJobMarket.Policy memory pol = policy(segments);
        pol.challengerBps = challengerBps;
        pol.buyerBps = 8_000 - challengerBps;
        pol.burnBps = 2_000;
        Snap memory s0 = _snap();
        vm.prank(buyer);
        jobId = market.createJob(keccak256(abi.encode("manifest", _jobs.length)), "ipfs://m", address(token), PAYMENT, pol);
        vm.prank(provider);
        market.acceptJob(jobId);
        _jobs.push(jobId);
        JobGhost storage g = _jg[jobId];
        g.badFrom = badFrom;
        g.challengerBps = challengerBps;
        g.buyerBps = pol.buyerBps;
        g.tenures = 1;
        _book(jobId, s0, _snap());
    }

    function _commitNext(uint256 jobId) internal {
        IJobMarket.JobView memory j = market.getJob(jobId);
        if (j.status != IJobMarket.JobStatus.Active || j.provider != provider || block.timestamp > j.deadline) return;
        uint256 segment = j.nextSegment;
        (, bytes32[4] memory hs) = leaves(jobId, segment, _jg[jobId].badFrom);
        vm.prank(provider);
        try market.commitSegment(jobId, segment, dyn(hs), 1, "cid") {
            _leavesSent[jobId][segment] = hs;
            ghost_committedByHandler[jobId][segment] = true;
            _jg[jobId].lastCommitAt = block.timestamp;
        } catch {
            ++ghost_goodCommitRejected;
        }
    }

    /// @dev `who` commits to challenging `step`, the chain moves one block, (a copier replays it), `who` challenges.
    /// Returns the new dispute id, 0 if the challenge reverted.
    function _openChallenge(address who, uint256 jobId, uint256 step, bool copied) internal returns (uint256 id) {
        bytes32 salt = _commitChallenge(who, jobId, step);
        if (copied) {
            try this.openAs(COPIER, jobId, step, salt) {
                ++ghost_copyAccepted;
            } catch (bytes memory err) {
                if (bytes4(err) != IDisputeGameTypes.DisputeGameChallengeNotCommitted.selector) ++ghost_copyAccepted;
            }
        }
        uint256 already = game.openDisputeOf(jobId, step);
        Snap memory s0 = _snap();
        try this.openAs(who, jobId, step, salt) returns (uint256 newId) {
            id = newId;
        } catch {
            return 0;
        }
        if (already != 0) ++ghost_twoOpenOnStep;
        _book(jobId, s0, _snap());
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        DisputeGhost storage dg = _dg[id];
        dg.jobId = jobId;
        dg.honest = who == HONEST_1 || who == HONEST_2;
        dg.side = _isSide(who, provider);
        dg.faultyStep = isFaulty(jobId, step);
        dg.deposit = uint256(d.bond) + d.fees;
        if (dg.honest) ++ghost_honestOpened;
    }

    /// @dev Settles dispute `id` (concede by the provider, or resolve by anyone) and books it. Returns false if the
    /// call reverted.
    function _settle(uint256 id, bool byConcession) internal returns (bool ok) {
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        if (d.status != IDisputeGameTypes.Status.Open) return false;
        uint256 jobId = d.jobId;
        bool wasRefunded = market.getJob(jobId).status == IJobMarket.JobStatus.Refunded;
        uint256 lock = vault.lockedFor(d.provider, jobId);
        uint256 deadline = market.getJob(jobId).deadline;
        uint256 credit0 = game.creditOf(d.challenger);
        Snap memory s0 = _snap();
        if (!_trySettle(id, d, byConcession)) return false;
        ok = true;
        Snap memory s1 = _snap();
        _book(jobId, s0, s1);
        JobGhost storage g = _jg[jobId];
        d = game.getDispute(id);
        // an appealed round or a unanimous Fault waiting out its provider's appeal window: not settled yet
        if (d.status == IDisputeGameTypes.Status.Open) return true;
        bool faultedNow = !wasRefunded && market.getJob(jobId).status == IJobMarket.JobStatus.Refunded;
        if (faultedNow) {
            g.faulted = true;
            g.lock = lock;
            ++ghost_faults;
            _recordShares(id, jobId, lock);
        }
        if (d.outcome == IDisputeGameTypes.Outcome.Superseded) ++ghost_superseded;
        if (d.outcome == IDisputeGameTypes.Outcome.NoDecision && market.getJob(jobId).deadline > deadline) ++ghost_reopens;
        DisputeGhost storage dg = _dg[id];
        if (!dg.side) {
            // What an honest dispute can hand the side: its bond when the challenger was found wrong, and the fees of
            // sybil panel members when they came out of the deposit (a fault pays its panel out of the reward first, and
            // the reward covers a whole panel: AttackFixture's reward condition).
            if (d.outcome == IDisputeGameTypes.Outcome.PanelValid || d.outcome == IDisputeGameTypes.Outcome.Proven) {
                g.allowance += d.bond;
            }
            if (!faultedNow) g.allowance += s1.sybilFees - s0.sybilFees;
        }
        dg.settled = true;
        dg.faultedJob = faultedNow;
        dg.outcome = d.outcome;
        dg.received = game.creditOf(d.challenger) - credit0;
        uint256 sybils;
        for (uint256 i; i < d.panel.length; ++i) {
            if (_isSybilAuditor(d.panel[i])) ++sybils;
        }
        dg.sybilMajority = 2 * sybils > d.panel.length;
    }

    /// @dev The reward rule, from the handler's own records: R = floor(L * challengerBps / 10,000); the deciding panel
    /// takes panelFee per member who revealed Fault, out of R while it lasts; the rest is split equally among the
    /// disputes the handler opened on the job and had not seen settled before this call (this one included).
    function _recordShares(uint256 id, uint256 jobId, uint256 lock) internal {
        JobGhost storage g = _jg[jobId];
        uint256 reward = (lock * g.challengerBps) / BPS;
        uint256 fee = game.params().panelFee;
        uint256 earned;
        address[] memory panel = game.getDispute(id).panel;
        if (game.getDispute(id).outcome == IDisputeGameTypes.Outcome.PanelFault) {
            for (uint256 i; i < panel.length; ++i) {
                (, IDisputeGameTypes.Vote v) = game.ballotOf(id, panel[i]);
                if (v == IDisputeGameTypes.Vote.Fault) earned += fee;
            }
        }
        uint256 coverable = (reward / fee) * fee;
        uint256 pool = reward - (earned < coverable ? earned : coverable);
        uint256 open;
        uint256 n = game.disputeCount();
        for (uint256 d = 1; d <= n; ++d) {
            if (_dg[d].jobId != jobId || (_dg[d].settled && d != id)) continue;
            _dg[d].openAtFault = true;
            ++open;
        }
        g.shareAtFault = pool / open;
    }

    /// @dev what: 0 reportTimeout, 1 acceptJob, 2 finalize, 3 reopenJob; as `who`. Returns whether it succeeded (booked
    /// if so).
    function _marketCall(uint256 jobId, address who, uint256 what) internal returns (bool ok) {
        Snap memory s0 = _snap();
        vm.prank(who);
        if (what == 0) {
            try market.reportTimeout(jobId) {
                ok = true;
            } catch {}
        } else if (what == 1) {
            try market.acceptJob(jobId) {
                ok = true;
            } catch {}
        } else if (what == 2) {
            try market.finalize(jobId) {
                ok = true;
            } catch {}
        } else {
            try market.reopenJob(jobId) {
                ok = true;
            } catch {}
        }
        if (ok && what == 1) ++_jg[jobId].tenures;
        if (ok && what == 0 && market.getJob(jobId).status == IJobMarket.JobStatus.TimedOut) {
            _jg[jobId].timedOutAt = block.timestamp;
        }
        if (ok) _book(jobId, s0, _snap());
    }

    // ---------------------------------------------------------------- internal: time and the keeper

    /// @dev Moves time `secs` ahead, stopping at every open dispute's revealDeadline + 1 on the way so that the keeper
    /// resolves it then.
    function _advance(uint256 secs) internal {
        uint256 target = block.timestamp + secs;
        _keeperPass();
        while (true) {
            uint256 next = type(uint256).max;
            uint256 n = game.disputeCount();
            for (uint256 id = 1; id <= n; ++id) {
                IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
                if (d.status != IDisputeGameTypes.Status.Open) continue;
                uint256 t = uint256(d.revealDeadline) + 1;
                if (t > block.timestamp && t < next) next = t;
                (uint64 appealUntil,) = game.faultAppealOf(id);
                t = uint256(appealUntil) + 1;
                if (appealUntil != 0 && t > block.timestamp && t < next) next = t;
            }
            if (next > target) break;
            vm.warp(next);
            _keeperPass();
        }
        if (target > block.timestamp) vm.warp(target);
        _keeperPass();
    }

    function _anyOpenDispute() internal view returns (bool) {
        uint256 n = game.disputeCount();
        for (uint256 id = 1; id <= n; ++id) {
            if (game.getDispute(id).status == IDisputeGameTypes.Status.Open) return true;
        }
        return false;
    }

    function _keeperPass() internal {
        uint256 n = game.disputeCount();
        for (uint256 id = 1; id <= n; ++id) {
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (d.status != IDisputeGameTypes.Status.Open) continue;
            // a dispute of a faulted job is still decided by its own panel: it resolves at its deadline like any other
            if (block.timestamp <= d.revealDeadline) continue;
            // a unanimous first-round Fault waits out its provider's appeal window (this provider never appeals)
            (uint64 appealUntil,) = game.faultAppealOf(id);
            if (block.timestamp <= appealUntil) continue;
            if (!_settle(id, false)) ++ghost_stuckResolves;
        }
    }

    // ---------------------------------------------------------------- internal: bookkeeping

    function _snap() internal view returns (Snap memory s) {
        address[5] memory side = [provider, SYBIL_CHALLENGER_1, SYBIL_CHALLENGER_2, SYBIL_AUDITOR_1, SYBIL_AUDITOR_2];
        for (uint256 i; i < side.length; ++i) {
            address a = side[i];
            IStakeVault.Account memory acc = vault.accountOf(a);
            s.game += int256(token.balanceOf(a) + game.creditOf(a));
            s.vault += int256(vault.creditOf(a) + acc.free + acc.locked + acc.pendingWithdrawal);
            s.market += int256(market.creditOf(a, address(token)));
            s.bonds += int256(uint256(registry.auditorOf(a).bond));
        }
        s.buyer = int256(
            token.balanceOf(buyer) + market.creditOf(buyer, address(token)) + vault.creditOf(buyer) + game.creditOf(buyer)
        );
        s.sybilFees = game.creditOf(SYBIL_AUDITOR_1) + game.creditOf(SYBIL_AUDITOR_2);
    }

    function _book(uint256 jobId, Snap memory s0, Snap memory s1) internal {
        JobGhost storage g = _jg[jobId];
        g.sideGame += s1.game - s0.game;
        g.sideVault += s1.vault - s0.vault;
        g.sideMarket += s1.market - s0.market;
        g.sideBonds += s1.bonds - s0.bonds;
        g.buyerNet += s1.buyer - s0.buyer;
    }

    function _claimAll() internal {
        address[] memory all = people();
        for (uint256 i; i < all.length; ++i) {
            address a = all[i];
            if (game.creditOf(a) != 0) {
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

    // ---------------------------------------------------------------- internal: picking

    function _challengeArgs(uint256 jobId, uint256 step) internal view returns (ChallengeArgs memory a) {
        a.segment = (step - 1) / K;
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, a.segment, _jg[jobId].badFrom);
        uint256 j = step - a.segment * K;
        a.traceRoot = root(lv);
        a.end = hs[3];
        a.hPrev = hs[j - 1];
        a.proofPrev = proof(lv, j - 1);
        a.hStep = hs[j];
        a.proofStep = proof(lv, j);
    }

    function _jobAt(uint8 seed) internal view returns (uint256) {
        return _jobs[seed % _jobs.length];
    }

    function _pick(uint8 seed) internal view returns (uint256) {
        uint256 n = game.disputeCount();
        return n == 0 ? 0 : 1 + (seed % n);
    }

    /// @dev A committed step of the current tenure (disputable segments), if any.
    function _anyStep(uint256 jobId, uint8 seed) internal view returns (bool, uint256) {
        IJobMarket.JobView memory j = market.getJob(jobId);
        uint256 lo = uint256(j.startSegment) * K + 1;
        uint256 hi = uint256(j.nextSegment) * K;
        if (hi < lo) return (false, 0);
        return (true, lo + (seed % (hi - lo + 1)));
    }

    /// @dev The faulty step of a cheating job, if it is committed in the current tenure.
    function _faultyStep(uint256 jobId) internal view returns (bool, uint256) {
        uint256 step = _jg[jobId].badFrom;
        IJobMarket.JobView memory j = market.getJob(jobId);
        if (step == HONEST_TRACE || step > uint256(j.nextSegment) * K || step <= uint256(j.startSegment) * K) {
            return (false, 0);
        }
        return (true, step);
    }

    function _vote(uint256 kind) internal pure returns (IDisputeGameTypes.Vote) {
        return kind == 1 ? IDisputeGameTypes.Vote.Valid : IDisputeGameTypes.Vote.Fault;
    }

    function _drawn(uint256 id, IDisputeGameTypes.DisputeView memory d) internal returns (bool) {
        if (d.status != IDisputeGameTypes.Status.Open) return false;
        if (d.panel.length != 0) return true;
        if (block.number <= d.seedBlock) VMB.roll(d.seedBlock + 1);
        bytes32 seed = _seedNow(id, d);
        try game.drawPanel(id) returns (bool ok) {
            if (ok) {
                ghost_panelSeed[id] = seed;
                ghost_roundSeed[id][d.round] = seed;
            }
            return ok;
        } catch {
            return false;
        }
    }

    /// @dev The provider concedes, or anyone resolves; a resolve that draws the panel itself records its seed.
    function _trySettle(uint256 id, IDisputeGameTypes.DisputeView memory d, bool byConcession) internal returns (bool ok) {
        bytes32 seed = _seedNow(id, d);
        if (byConcession) {
            vm.prank(provider);
            try game.concede(id) {
                ok = true;
            } catch {}
        } else {
            try game.resolve(id) {
                ok = true;
            } catch {}
        }
        if (ok && seed != bytes32(0) && game.getDispute(id).panel.length != 0) ghost_panelSeed[id] = seed;
        // a resolve that drew the round's panel itself, whatever it decided (an appeal opens the next round)
        if (ok && seed != bytes32(0) && game.roundPanelOf(id, d.round).length != 0) ghost_roundSeed[id][d.round] = seed;
    }

    /// @dev The seed a draw of dispute `id` would use now (DisputeGame._tryDraw), or zero when none can be drawn now.
    function _seedNow(uint256 id, IDisputeGameTypes.DisputeView memory d) internal view returns (bytes32) {
        if (d.panel.length != 0) return bytes32(0);
        bytes32 bh = blockhash(d.seedBlock);
        return bh == bytes32(0) ? bytes32(0) : keccak256(abi.encode(bh, id));
    }
}
