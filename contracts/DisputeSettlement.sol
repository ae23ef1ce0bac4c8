// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {Trace} from "./libraries/Trace.sol";
import {TransferIn} from "./libraries/TransferIn.sol";
import {DisputeGameBase} from "./base/DisputeGameBase.sol";

/// @title DisputeSettlement: how a dispute ends (concede, prove, resolve) and who is paid or forfeits
/// @notice Runs only by DELEGATECALL from the DisputeGame that deployed it, on DisputeGame's storage (DisputeGameBase):
/// DisputeGame forwards `concede`, `prove`, `resolve` and `setCircuitTerms` here with their calldata unchanged, so
/// events, errors, credits and token balances are DisputeGame's. A direct call reverts
/// (DisputeSettlementDirectCall): this contract's own storage holds nothing.
contract DisputeSettlement is DisputeGameBase {
    using SafeCast for uint256;
    string public constant VERSION = "pouw-DisputeSettlement-1";

    /// @dev This contract's own address: a call whose storage context is this contract is a direct call.
    address private immutable _self;

    constructor(
        IJobMarket market_,
        IAuditorRegistry registry_,
        IStepVerifier verifier_,
        bytes32 vkeyHash_,
        ProvingMode mode_,
        IERC20 bondToken_,
        IStakeVault vault_
    ) DisputeGameBase(market_, registry_, verifier_, vkeyHash_, mode_, bondToken_, vault_) {
        _self = address(this);
    }

    modifier onlyDelegated() {
        // INVARIANT: settlement runs on DisputeGame's storage only (its bonds, credits and disputes).
        if (address(this) == _self) revert DisputeSettlementDirectCall(_self);
        _;
    }

    // ---------------------------------------------------------------- provider

    /// @notice IDisputeGame.concede, run by DELEGATECALL from DisputeGame.
    function concede(uint256 disputeId) external onlyDelegated {
        Dispute storage d = _openDispute(disputeId);
        if (msg.sender != d.provider) revert DisputeGameNotProvider(disputeId, msg.sender, d.provider);
        // INVARIANT: once the job faulted, the provider has nothing left at stake: its other disputes are settled by their
        // panels (resolve) or a proof, never by a concession that would hand a share of the reward to whoever it names.
        if (_jobFaulted[d.jobId]) revert DisputeGameSuperseded(disputeId, d.jobId);
        // INVARIANT: a concession comes before any vote can be revealed. Conceded counts no vote (no forfeit, no fee), so
        // a provider that could still concede after seeing the reveals would give its own panel members a free vote
        // for Valid (concede when they lose, so nobody forfeits; keep the win when they carry the panel) and deny the
        // honest majority its fees and the forfeits; once the reveal phase is open only resolve settles.
        if (_commitsClosed(d)) revert DisputeGameConcessionClosed(disputeId, d.commitDeadline, block.timestamp);
        _settle(disputeId, d, Outcome.Conceded);
        // INVARIANT: a concession in an appeal round still judges the earlier rounds' votes (the step is conceded
        // faulty), so a provider cannot spare the members that voted Valid for it by conceding once they lost a round.
        _judgePast(disputeId, d, Vote.Fault);
    }

    /// @notice IDisputeGame.prove, run by DELEGATECALL from DisputeGame.
    function prove(
        uint256 disputeId,
        uint256 commitW,
        uint256 commitWNext,
        uint256 commitBatch,
        bytes32[] calldata batchProof,
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC
    ) external onlyDelegated {
        // INVARIANT: a proof settles only under a verifier named at deployment by a ceremony's vkey hash, or under the
        // development setup on the local dev chain (whoever holds a setup's trapdoor forges any proof).
        if (_provingMode == ProvingMode.Disabled) {
            revert DisputeGameProvingDisabled(address(_verifier), _vkeyHash, block.chainid);
        }
        Dispute storage d = _openDispute(disputeId);
        uint256 jobId = d.jobId;
        CircuitTerms storage terms = _terms[jobId];
        if (terms.batchRoot == bytes32(0)) revert DisputeGameNotCircuitJob(jobId);
        uint256 step = d.step;
        // INVARIANT: a proof shows one transition only. The first step of a segment also rests on the segment's first
        // leaf continuing the previous segment (or being the initial state), which only the panel checks; a provider
        // that broke that link must not win with a proof of a correct transition from a wrong start.
        if (_atSegmentStart(d)) revert DisputeGameProofNotAllowed(disputeId, step);
        // INVARIANT: the proof is about the disputed leaves: for the circuit class h(t) binds the Poseidon commitment
        // of W_t as weightsHash, with no optimizer state (docs/disputes.md).
        if (
            Trace.stateHash(jobId, step - 1, bytes32(commitW), bytes32(0)) != d.hPrev
                || Trace.stateHash(jobId, step, bytes32(commitWNext), bytes32(0)) != d.hStep
        ) revert DisputeGameStateMismatch(disputeId);
        // INVARIANT: the batch is the one the job's terms assign to this step.
        if (!Trace.verifyStateCalldata(terms.batchRoot, uint64(step), bytes32(commitBatch), batchProof)) {
            revert DisputeGameBadBatchProof(disputeId, step);
        }
        uint256[4] memory signals = [commitW, commitWNext, commitBatch, terms.lr];
        if (!_verifier.verifyProof(pA, pB, pC, signals)) revert DisputeGameInvalidProof(disputeId);
        _settle(disputeId, d, Outcome.Proven);
        // INVARIANT: a vote the proof shows wrong forfeits whenever the proof lands. A proof after the reveals would
        // otherwise spare every member that revealed Fault (Proven counts no vote), so a challenger's own members could
        // vote Fault for free against a provider that proves; members that had not revealed yet are not judged.
        if (d.panelDrawn) _judgeCurrent(disputeId, d, Vote.Valid, false);
        _judgePast(disputeId, d, Vote.Valid);
    }


    /// @notice IDisputeGame.resolve, run by DELEGATECALL from DisputeGame.
    function resolve(uint256 disputeId) external onlyDelegated {
        Dispute storage d = _openDispute(disputeId);
        uint64 appealUntil = d.appealDeadline;
        if (appealUntil != 0) {
            // INVARIANT: a unanimous first-round Fault settles only once its provider's appeal window passed unused (an
            // appeal clears the window and opens round 2); its votes were counted when the window opened.
            if (block.timestamp <= appealUntil) revert DisputeGameFaultAppealOpen(disputeId, appealUntil, block.timestamp);
            d.appealDeadline = 0;
            _decide(disputeId, d, Outcome.PanelFault);
            return;
        }
        bool allRevealed = d.panelDrawn && d.reveals == d.panel.length;
        // INVARIANT: the vote is counted only when every member revealed or the reveal deadline passed.
        if (!allRevealed && block.timestamp <= d.revealDeadline) {
            revert DisputeGameVotingOpen(disputeId, d.revealDeadline, block.timestamp);
        }
        // A panel nobody drew is drawn now (if its seed is still available) so that its silent members answer for it.
        if (!d.panelDrawn && block.number > d.seedBlock) _tryDraw(disputeId, d);
        if (d.panelDrawn) _voidForfeited(disputeId, d);
        Outcome outcome;
        if (d.faultVotes > d.validVotes) outcome = Outcome.PanelFault;
        else if (d.validVotes > d.faultVotes) outcome = Outcome.PanelValid;
        else outcome = Outcome.NoDecision;
        // INVARIANT: a Fault is final only when every seat of its round voted Fault. A split (a dissenting or silent
        // seat) is appealed to a larger, fresh panel while rounds are left, so a party holding a bare majority of one
        // small panel cannot slash an honest provider; the last round's majority settles the dispute.
        // INVARIANT: a tie of revealed votes never ends a dispute while rounds are left. A panel has an odd number of
        // seats, so a tie always has a silent (or voided) seat: the round is appealed like a split Fault (fresh, larger
        // panel without this round's members where the pool allows), no re-open of the job's window is spent, and this
        // round's silent members forfeit and its revealers are judged by the last round's outcome (_judgePast).
        // INVARIANT: a drawn round with no counted vote (every seat silent or voided) is appealed like a tie while rounds
        // are left: a party holding every seat of a small panel cannot end the dispute NoDecision (and spend a re-open
        // of the job's window) by silence alone; its silent members forfeit by the final outcome and the next, larger
        // panel is drawn without them where the pool allows. Only a round with no panel (seed lapsed, too few
        // eligible auditors) ends NoDecision at once: there is nobody to exclude.
        bool split = outcome == Outcome.PanelFault && d.faultVotes < d.panel.length;
        if ((split || (outcome == Outcome.NoDecision && d.panelDrawn)) && d.round < MAX_ROUNDS) {
            _appeal(disputeId, d);
            return;
        }
        // INVARIANT: a unanimous Fault of the first round does not slash at once: its provider may appeal it to a larger,
        // fresh panel within one commit window (appealFault, with a bond as large as the challenger's), so a first panel
        // that an attacker holding a few of the pool's auditors captured whole cannot slash an honest provider alone.
        // Once the job faulted through another dispute its provider has nothing left at stake: no window.
        if (outcome == Outcome.PanelFault && !split && d.round == 1 && !_jobFaulted[d.jobId]) {
            uint64 until = _params.commitWindowSeconds.addTo(block.timestamp);
            d.appealDeadline = until;
            emit FaultAppealable(disputeId, until);
            return;
        }
        // INVARIANT: a split Fault in an appeal round is final only when that round seats more members than the first
        // panel: a drawable pool too small to widen the appeal (every round capped at the pool) would otherwise let a
        // party holding a bare majority of the first panel's size win by re-rolling same-size panels: NoDecision.
        if (split && d.round > 1 && d.panel.length <= _pastPanels[disputeId][1].length) outcome = Outcome.NoDecision;
        _decide(disputeId, d, outcome);
    }

    /// @notice IDisputeGame.appealFault, run by DELEGATECALL from DisputeGame.
    function appealFault(uint256 disputeId) external onlyDelegated {
        Dispute storage d = _openDispute(disputeId);
        if (msg.sender != d.provider) revert DisputeGameNotProvider(disputeId, msg.sender, d.provider);
        uint64 until = d.appealDeadline;
        if (until == 0 || block.timestamp > until) revert DisputeGameFaultNotAppealable(disputeId, until, block.timestamp);
        uint128 bond = d.bond;
        uint256 allowed = _bondToken.allowance(msg.sender, address(this));
        if (allowed < bond) revert DisputeGameDepositNotApproved(msg.sender, allowed, bond);
        d.appealDeadline = 0;
        // INVARIANT: the provider's bond is booked with the open bonds until _settle credits it (back to the provider,
        // or to the challenger when the appeal ends Conceded or PanelFault).
        d.providerBond = bond;
        _openBonds += bond;
        emit FaultAppealed(disputeId, msg.sender, bond);
        _appeal(disputeId, d);
        uint256 received = TransferIn.pull(_bondToken, msg.sender, bond);
        if (received != bond) revert DisputeGameTransferShortfall(address(_bondToken), bond, received);
    }

    /// @dev Settles dispute `disputeId` on its final `outcome` (resolve's last step): ties are recorded, an undecided
    /// dispute of a faulted job closes as Superseded, and every round's members are judged.
    function _decide(uint256 disputeId, Dispute storage d, Outcome outcome) private {
        // INVARIANT: a tie of revealed votes in the last round is no verdict, so it stays NoDecision (deciding it either
        // way would let one party's members plus silent honest members decide the dispute), but it is recorded for its
        // step, behind every earlier unjudged tie there, and all of them are judged by the next decided outcome on the
        // same step: a member that forced a tie with a wrong vote, in any round, forfeits then.
        if (outcome == Outcome.NoDecision && d.validVotes != 0) _recordTie(disputeId, d);
        // INVARIANT: a dispute whose job already faulted through another dispute still settles on its own panel's
        // decision (a false challenge loses its bond, its Fault voters forfeit); only one its panel did not decide
        // closes as Superseded, and its silent members still forfeit as on any NoDecision.
        if (outcome == Outcome.NoDecision && _jobFaulted[d.jobId]) {
            _settle(disputeId, d, Outcome.Superseded);
            if (d.panelDrawn) _judgeCurrent(disputeId, d, Vote.None, true);
            _judgePast(disputeId, d, Vote.None);
            return;
        }
        _settle(disputeId, d, outcome);
        _penalize(disputeId, d, outcome);
        _judgePast(disputeId, d, _majority(outcome));
    }

    /// @dev Puts tied dispute `disputeId` at the head of its step's chain of unjudged ties (_judgeTie consumes it).
    function _recordTie(uint256 disputeId, Dispute storage d) private {
        mapping(uint256 step => uint256 disputeId) storage tied = _tiedByStep[d.jobId];
        _tieBefore[disputeId] = tied[d.step];
        tied[d.step] = disputeId;
    }

    /// @dev Uncounts the revealed votes of dispute `disputeId`'s current panel cast by members that forfeited bond after
    /// the second the dispute opened (AuditorRegistry.forfeitedAt) and hold less than one panelForfeit of bond: the seat counts as silent for the outcome (a tie or split
    /// it leaves is appealed), the member earns no fee and no share of a forfeit, and a wrong vote still forfeits (so a
    /// forfeit elsewhere is no way out of a losing vote).
    function _voidForfeited(uint256 disputeId, Dispute storage d) private {
        uint256 key = _ballotKey(disputeId, d.round);
        uint64 openedAt = d.challengedAt;
        address[] storage panel = d.panel;
        for (uint256 i; i < panel.length; ++i) {
            address member = panel[i];
            Ballot storage b = _ballots[key][member];
            Vote v = b.vote;
            if (v == Vote.None) continue;
            uint64 at = _registry.forfeitedAt(member);
            // INVARIANT: a vote is uncounted only when its member forfeited since the dispute opened (a later second than
            // challengedAt) AND has less than one panelForfeit of bond left: nothing at stake. A member that lost one
            // meta-audit but can still pay for a wrong vote keeps it (else anyone who can make honest members forfeit once
            // elsewhere, e.g. on silent decoy panels, could void their revealed votes and let one attacker seat decide).
            if (at <= openedAt || _registry.auditorOf(member).bond >= _params.panelForfeit) continue;
            b.voided = true;
            unchecked {
                // bound: v was counted at its reveal, so each counter is >= 1 here
                --d.reveals;
                if (v == Vote.Valid) --d.validVotes;
                else --d.faultVotes;
            }
            emit VoteVoided(disputeId, member, at);
        }
    }

    /// @dev Opens the next round of dispute `disputeId`: its panel becomes an earlier round's (judged when the dispute
    /// settles), and a fresh seed block and fresh deadlines are fixed; the draw (drawPanel or the first commitVote) takes
    /// the larger panel from the same snapshot (challengedAt).
    function _appeal(uint256 disputeId, Dispute storage d) private {
        uint8 round = d.round;
        _pastPanels[disputeId][round] = d.panel;
        uint256 seats = d.panel.length;
        uint8 faultVotes = d.faultVotes;
        delete d.panel;
        unchecked {
            // bound: round < MAX_ROUNDS (checked by the caller)
            ++round;
        }
        d.round = round;
        d.commits = 0;
        d.reveals = 0;
        d.validVotes = 0;
        d.faultVotes = 0;
        d.panelDrawn = false;
        Params storage p = _params;
        uint64 seedBlock = uint64(block.number + p.seedDelayBlocks);
        d.seedBlock = seedBlock;
        uint64 commitDeadline = p.commitWindowSeconds.addTo(block.timestamp);
        d.commitDeadline = commitDeadline;
        d.revealDeadline = p.revealWindowSeconds.addTo(commitDeadline);
        emit DisputeAppealed(disputeId, round, faultVotes, seats, seedBlock);
    }

    /// @dev Judges the current round's panel of dispute `disputeId` by `truth` (see _judge).
    function _judgeCurrent(uint256 disputeId, Dispute storage d, Vote truth, bool silentForfeits) private {
        uint256 round = d.round;
        _judge(disputeId, _ballotKey(disputeId, round), d.panel, truth, silentForfeits, _forfeitOf(round));
    }

    /// @dev Judges the panels of dispute `disputeId`'s earlier rounds by `truth` (the settled outcome; None: no majority):
    /// a member that voted otherwise, or stayed silent, forfeits its round's forfeit to those of its round that voted
    /// `truth` (burned when there are none).
    function _judgePast(uint256 disputeId, Dispute storage d, Vote truth) private {
        uint256 round = d.round;
        for (uint256 r = 1; r < round; ++r) {
            _judge(disputeId, _ballotKey(disputeId, r), _pastPanels[disputeId][r], truth, true, _forfeitOf(r));
        }
    }

    // ---------------------------------------------------------------- circuit class

    /// @notice IDisputeGame.setCircuitTerms, run by DELEGATECALL from DisputeGame.
    function setCircuitTerms(uint256 jobId, uint256 lr, bytes32 batchRoot, bytes32 manifestBody) external onlyDelegated {
        IJobMarket.JobView memory j = _job(jobId);
        if (j.status == IJobMarket.JobStatus.None) revert IJobMarket.JobMarketUnknownJob(jobId);
        if (msg.sender != j.buyer) revert DisputeGameNotBuyer(jobId, msg.sender, j.buyer);
        // INVARIANT: a provider accepts a job knowing its terms; they never change afterwards.
        if (j.status != IJobMarket.JobStatus.Open || j.nextSegment != 0 || _terms[jobId].batchRoot != bytes32(0)) {
            revert DisputeGameTermsLocked(jobId);
        }
        if (lr >= 2 ** 32 || batchRoot == bytes32(0)) revert DisputeGameInvalidTerms(lr, batchRoot);
        bytes32 expected = _circuitManifestHash(manifestBody, lr, batchRoot);
        // INVARIANT: the terms are the ones the manifest hash anchored at createJob commits to, so everyone who audits
        // against the manifest audits against the terms a proof is checked with.
        if (expected != j.manifestHash) revert DisputeGameTermsNotInManifest(jobId, j.manifestHash, expected);
        _terms[jobId] = CircuitTerms({lr: lr, batchRoot: batchRoot});
        emit CircuitTermsSet(jobId, lr, batchRoot, manifestBody);
    }


    // ---------------------------------------------------------------- settlement

    /// @dev Effects of an outcome: the dispute becomes final, the bond and the panel fees are credited, the job is
    /// settled on JobMarket, and on a fault the challenger share of the slash is pooled and this dispute takes its part.
    function _settle(uint256 disputeId, Dispute storage d, Outcome outcome) private {
        uint256 jobId = d.jobId;
        d.status = Status.Resolved;
        d.outcome = outcome;
        delete _openByStep[jobId][d.step];
        uint128 bond = d.bond;
        _openBonds -= bond;
        bool fault = outcome == Outcome.Conceded || outcome == Outcome.PanelFault;
        bool challengerWrong = outcome == Outcome.Proven || outcome == Outcome.PanelValid;
        emit DisputeResolved(disputeId, jobId, outcome);
        // a proof inside the provider's appeal window ends it too
        d.appealDeadline = 0;
        uint128 providerBond = d.providerBond;
        if (providerBond != 0) {
            // INVARIANT: a provider's appeal bond comes back unless the appeal confirmed the fault; then it pays the
            // challenger for the delay the appeal cost it.
            _openBonds -= providerBond;
            _credit(fault ? d.challenger : d.provider, providerBond);
        }
        // INVARIANT: every wei of a bond is credited: to the provider when the challenge was wrong, else back to the
        // challenger; except a wrong challenge of a segment's first step, whose bond is burned. That step is where a
        // withheld start checkpoint is challenged (the panel votes Fault on content it cannot fetch), so a provider
        // that withholds until a bot challenges and then publishes would collect the bond: the burn leaves it nothing
        // to gain; the challenger loses the bond as on any other wrong challenge (docs/disputes.md, availability). An
        // inference job's withheld states file is claimed at its first example whose decision reads the file
        // (_atKindFileClaim), which in segment 0 is example 2, not the segment start: it is burned there too.
        if (challengerWrong && outcome == Outcome.PanelValid && (_atSegmentStart(d) || _atKindFileClaim(d))) {
            emit BondBurned(disputeId, bond);
            _send(BURN_ADDRESS, bond);
        } else {
            _credit(challengerWrong ? d.provider : d.challenger, bond);
        }
        uint256 shares = _openCount[jobId];
        _openCount[jobId] = shares - 1;
        --_openBy[jobId][d.challenger];
        if (outcome != Outcome.Superseded && outcome != Outcome.NoDecision) _judgeTie(d, fault ? Vote.Fault : Vote.Valid);
        if (_jobFaulted[jobId]) {
            _settleAfterFault(disputeId, d, outcome, fault);
            return;
        }
        if (!fault) {
            _payFees(disputeId, d, outcome, 0);
            _market.settleNoFault(jobId, outcome == Outcome.NoDecision);
            return;
        }
        // First fault on the job (its other disputes then settle on their own panels): JobMarket refunds the buyer and
        // slashes the lock; the challenger share comes here and is held until those disputes settled (_closeShare).
        _jobFaulted[jobId] = true;
        uint256 reward = _market.settleProviderFault(jobId);
        if (reward != 0) _vault.claim();
        // The panel that found the fault is paid out of the reward first, so the challenger's deposit comes back whole
        // whenever the reward covers the fees (docs/disputes.md: honest challenger's condition).
        uint256 fromReward = _payFees(disputeId, d, outcome, reward);
        uint256 pool = reward - fromReward;
        // INVARIANT: the pool waits for exactly the disputes open on the job now (this one included); no dispute can
        // open on the job any more (JobMarket refuses to freeze a Refunded job).
        _pools[jobId] = RewardPool({amount: pool.toUint128(), shares: shares.toUint32()});
        _pooled += pool;
        emit RewardPooled(jobId, disputeId, reward, fromReward, shares);
        _closeShare(jobId, disputeId, true);
    }

    /// @dev Whether the disputed step is example 2 of segment 0 of an inference job (JobMarket.kindOf non-zero): where a
    /// bot claims a withheld segment-0 states file (verifier/src/kinds/job.ts fileDependentExample), since a panel decides
    /// example 1 from the job's fixed initial state without the file. Later segments' claims are their segment starts.
    /// INVARIANT: with _atSegmentStart this covers every step at which a withheld file is claimed, so withholding until
    /// a bot challenges and then publishing never pays the provider the bond; a griefer's wrong challenge of a served
    /// correct example there still loses its whole bond (burned).
    function _atKindFileClaim(Dispute storage d) private view returns (bool) {
        if (d.segment != 0 || d.step != 2) return false;
        (uint8 kind,) = _market.kindOf(d.jobId);
        return kind != 0;
    }

    /// @dev Fees and reward of a dispute settled after another dispute faulted its job (JobMarket no longer holds the job:
    /// it was refunded and slashed, so nothing is settled there).
    function _settleAfterFault(uint256 disputeId, Dispute storage d, Outcome outcome, bool fault) private {
        uint256 jobId = d.jobId;
        if (outcome == Outcome.Superseded) {
            // INVARIANT: a dispute that was open when its job faulted and that its panel did not decide costs its
            // challenger nothing but the fees of members that revealed (bond and every other fee back), and earns no
            // part of the reward (else a provider's undecided disputes would dilute the honest challenger's part).
            _payFees(disputeId, d, Outcome.NoDecision, 0);
            _closeShare(jobId, disputeId, false);
        } else if (!fault) {
            // INVARIANT: a challenge decided wrong after its job faulted takes no part of the reward.
            _payFees(disputeId, d, outcome, 0);
            _closeShare(jobId, disputeId, false);
        } else {
            // Another fault: its panel is paid out of what is left of the pooled challenger share first (so a right
            // challenge decided late gets its deposit back as the first one did), then the challenger takes its part.
            RewardPool storage left = _pools[jobId];
            uint256 fromPool = _payFees(disputeId, d, outcome, left.amount);
            left.amount -= uint128(fromPool); // fits: fromPool <= left.amount
            _pooled -= fromPool;
            _closeShare(jobId, disputeId, true);
        }
    }

    /// @dev Dispute `disputeId`, open on job `jobId` when it faulted, settled: a decided fault (`earned`: Conceded or
    /// PanelFault) joins the disputes that may share the pool. When it is the last of them to settle, the pool is split
    /// equally among the faults a panel decided (PanelFault), or among the conceded ones when no panel decided any (the
    /// first paid also takes the rounding remainder).
    function _closeShare(uint256 jobId, uint256 disputeId, bool earned) private {
        RewardPool storage pool = _pools[jobId];
        uint256 left = pool.shares;
        if (left == 0) return;
        uint256[] storage faults = _faultsOf[jobId];
        if (earned) faults.push(disputeId);
        if (left > 1) {
            unchecked {
                // bound: left >= 2
                pool.shares = uint32(left - 1);
            }
            return;
        }
        uint256 amount = pool.amount;
        delete _pools[jobId];
        _pooled -= amount;
        // INVARIANT: n >= 1: the dispute that faulted the job pushed itself when the pool was made, so every wei of the
        // pool is credited to a challenger whose dispute was decided a fault (bounded: n <= MAX_OPEN_PER_JOB).
        // INVARIANT: a concession is the provider's own act, so it earns only when no panel found a fault: a provider
        // that concedes its own address's dispute cannot dilute a fault an honest panel found.
        uint256 n = faults.length;
        uint256 byPanel;
        for (uint256 i; i < n; ++i) {
            if (_disputes[faults[i]].outcome == Outcome.PanelFault) ++byPanel;
        }
        uint256 m = byPanel == 0 ? n : byPanel;
        uint256 part = amount / m;
        uint256 rest = amount - part * m;
        for (uint256 i; i < n; ++i) {
            uint256 id = faults[i];
            if (byPanel != 0 && _disputes[id].outcome != Outcome.PanelFault) continue;
            address to = _disputes[id].challenger;
            emit RewardPaid(id, jobId, to, part + rest);
            _credit(to, part + rest);
            rest = 0;
        }
        delete _faultsOf[jobId];
    }

    /// @dev Panel fees: only a counted vote (resolve, with a drawn panel) earns them. A member earns panelFee by
    /// revealing on the majority side, or by revealing at all when there is no majority (it did the recompute); every
    /// fee nobody earned (conceded, proven, no panel, minority or silent members) goes back to the challenger. Up to
    /// `reward` of the earned fees is paid out of the fault's reward instead of the deposit (returned as `fromReward`),
    /// and the deposit they would have come from goes back to the challenger.
    function _payFees(uint256 disputeId, Dispute storage d, Outcome outcome, uint256 reward)
        private
        returns (uint256 fromReward)
    {
        uint128 deposited = d.fees;
        _openFees -= deposited;
        uint256 fees = deposited;
        bool counted = outcome == Outcome.PanelFault || outcome == Outcome.PanelValid || outcome == Outcome.NoDecision;
        // The deposit pays round 1's panel (appeal rounds are paid out of the forfeits they judge).
        bool appealed = d.round > 1;
        // INVARIANT: an appealed dispute that ends without a decision costs its challenger nothing: round 1's Fault was
        // a split, not a verdict against it, so its deposited fees go back (the job's window re-opens as on any
        // NoDecision).
        if (appealed && _majority(outcome) == Vote.None) counted = false;
        if (counted && (d.panelDrawn || appealed)) {
            Vote majority = _majority(outcome);
            uint256 fee = _params.panelFee;
            address[] storage panel = appealed ? _pastPanels[disputeId][1] : d.panel;
            for (uint256 i; i < panel.length; ++i) {
                Ballot storage b = _ballots[disputeId][panel[i]]; // round 1's ballots: key = disputeId (_ballotKey)
                Vote v = b.vote;
                if (v == Vote.None || b.voided || (majority != Vote.None && v != majority)) continue;
                // INVARIANT: at most panelSize fees are paid (the panel has panelSize members), each out of the fault's
                // reward while it lasts, else out of this dispute's deposit.
                if (reward - fromReward >= fee) fromReward += fee;
                else fees -= fee;
                emit PanelFeePaid(disputeId, panel[i], fee);
                _credit(panel[i], fee);
            }
        }
        if (fees == 0) return fromReward;
        emit PanelFeesRefunded(disputeId, d.challenger, fees);
        _credit(d.challenger, fees);
    }

    /// @dev Meta-audit of a counted panel: members who revealed against the majority, and silent members, forfeit up to
    /// panelForfeit of their auditor bond, split among the majority; with no majority, silent members' forfeits are
    /// burned.
    function _penalize(uint256 disputeId, Dispute storage d, Outcome outcome) private {
        if (!d.panelDrawn || outcome == Outcome.Superseded) return;
        _judgeCurrent(disputeId, d, _majority(outcome), true);
    }

    /// @dev Every dispute on the same (job, step) that ended in a tie and is not judged yet (with the same leaves: they are
    /// the provider's committed ones, never rewritten) is judged by `truth` now that the step is decided: its revealers
    /// on the wrong side, in every round, forfeit to those of their round on the right side (its silent members
    /// forfeited at the tie already).
    function _judgeTie(Dispute storage d, Vote truth) private {
        uint256 tiedId = _tiedByStep[d.jobId][d.step];
        if (tiedId == 0) return;
        delete _tiedByStep[d.jobId][d.step];
        // INVARIANT: every recorded tie of the step is judged once: the chain is consumed here, newest first.
        while (tiedId != 0) {
            uint256 before = _tieBefore[tiedId];
            delete _tieBefore[tiedId];
            Dispute storage t = _disputes[tiedId];
            if (t.hPrev == d.hPrev && t.hStep == d.hStep) {
                emit TieJudged(tiedId, truth);
                uint256 last = t.round;
                _judge(tiedId, _ballotKey(tiedId, last), t.panel, truth, false, _forfeitOf(last));
                for (uint256 r = 1; r < last; ++r) {
                    _judge(tiedId, _ballotKey(tiedId, r), _pastPanels[tiedId][r], truth, false, _forfeitOf(r));
                }
            }
            tiedId = before;
        }
    }

    /// @dev Forfeits of dispute `disputeId`'s panel against `truth` (None: no majority): a member that revealed another
    /// vote than `truth` (voided or not), and a silent member when `silentForfeits`, forfeits min(`forfeit`, bond), split
    /// among the members whose counted vote was `truth` (the first also takes the rounding remainder), burned when there
    /// are none.
    function _judge(
        uint256 disputeId,
        uint256 ballotKey,
        address[] memory panel,
        Vote truth,
        bool silentForfeits,
        uint256 forfeit
    ) private {
        if (forfeit == 0) return;
        address[] memory winners = new address[](panel.length);
        uint256 nWinners;
        for (uint256 i; i < panel.length; ++i) {
            Ballot storage b = _ballots[ballotKey][panel[i]];
            if (truth != Vote.None && b.vote == truth && !b.voided) winners[nWinners++] = panel[i];
        }
        for (uint256 i; i < panel.length; ++i) {
            Vote v = _ballots[ballotKey][panel[i]].vote;
            bool wrong = v == Vote.None ? silentForfeits : truth != Vote.None && v != truth;
            if (!wrong) continue;
            _forfeitShared(disputeId, panel[i], forfeit, winners, nWinners);
        }
    }

    /// @dev `member` forfeits min(`forfeit`, its bond), split equally among the first `nWinners` of `winners` (the first
    /// also takes the rounding remainder, so the whole amount is credited), burned when there are none.
    function _forfeitShared(
        uint256 disputeId,
        address member,
        uint256 forfeit,
        address[] memory winners,
        uint256 nWinners
    ) private {
        uint256 bond = _registry.auditorOf(member).bond;
        uint256 amount = forfeit < bond ? forfeit : bond;
        if (amount == 0) return;
        if (nWinners == 0) {
            _forfeit(disputeId, member, amount, BURN_ADDRESS);
            return;
        }
        uint256 share = amount / nWinners;
        _forfeit(disputeId, member, amount - share * (nWinners - 1), winners[0]);
        if (share == 0) return;
        for (uint256 w = 1; w < nWinners; ++w) {
            _forfeit(disputeId, member, share, winners[w]);
        }
    }

    function _forfeit(uint256 disputeId, address member, uint256 amount, address to) private {
        emit PanelMemberPenalized(disputeId, member, to, amount);
        _registry.forfeit(member, amount, to);
    }
}
