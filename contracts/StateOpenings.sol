// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IStateOpenings} from "./interfaces/IStateOpenings.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {Trace} from "./libraries/Trace.sol";

/// @title StateOpenings: auditors ask for the state at any committed step; the provider opens it or withholds it
/// (see IStateOpenings)
/// @dev Ownerless and fundless, beside JobMarket as JobRecords is: everything it checks it reads from its market.
contract StateOpenings is IStateOpenings {
    string public constant VERSION = "pouw-StateOpenings-1";

    /// @notice Upper bound of answerWindowSeconds.
    uint256 public constant MAX_ANSWER_WINDOW_SECONDS = 30 days;

    IJobMarket private immutable _market;
    uint64 private immutable _answerWindow;
    uint64 private immutable _replay;

    mapping(uint256 jobId => mapping(uint256 step => Opening)) private _openings;
    mapping(address provider => uint64 slot) private _tail;
    mapping(uint256 jobId => uint64 deadline) private _activeTail;

    /// @param answerWindowSeconds_ the provider's time to answer an opening asked of an idle queue
    /// @param replaySeconds_ the time granted per opening when openings queue up (one segment replay and one answer)
    constructor(IJobMarket market_, uint256 answerWindowSeconds_, uint256 replaySeconds_) {
        if (address(market_) == address(0)) revert StateOpeningsZeroMarket();
        if (answerWindowSeconds_ == 0 || answerWindowSeconds_ > MAX_ANSWER_WINDOW_SECONDS) {
            revert StateOpeningsInvalidAnswerWindow(answerWindowSeconds_, MAX_ANSWER_WINDOW_SECONDS);
        }
        // INVARIANT: replaySeconds <= answerWindowSeconds: the deadlines of one provider are at least replaySeconds apart
        // and each at least answerWindowSeconds after its request, so a provider serving its queue in deadline order at
        // most replaySeconds an opening finishes opening n by the later of (request n + replay) and (deadline n-1 +
        // replay), both no later than deadline n.
        if (replaySeconds_ == 0 || replaySeconds_ > answerWindowSeconds_) {
            revert StateOpeningsInvalidReplaySeconds(replaySeconds_, answerWindowSeconds_);
        }
        _market = market_;
        _answerWindow = uint64(answerWindowSeconds_);
        _replay = uint64(replaySeconds_);
    }

    /// @inheritdoc IStateOpenings
    function requestOpening(uint256 jobId, uint256 segment, uint256 step) external {
        IJobMarket m = _market;
        (address auditors,,) = m.registries();
        if (auditors == address(0)) revert StateOpeningsRegistriesNotSet();
        // INVARIANT: only a bonded auditor makes a provider work for an opening (a flood needs a bond and pays gas).
        if (!IAuditorRegistry(auditors).isActive(msg.sender)) revert StateOpeningsNotAuditor(msg.sender);
        Opening storage o = _openings[jobId][step];
        // INVARIANT: one opening per (job, state), for every auditor: a second request is refused before it queues
        // anything, so asking an asked state again costs the provider nothing. One opening serves all: its answer binds
        // the provider to its CID for any challenger (a CID that does not serve h(step) is judged a withheld state), so
        // an opening asked by the provider's own address and answered with a CID that serves nothing convicts it.
        if (o.deadline != 0) revert StateOpeningsAlreadyRequested(jobId, step, o.deadline);
        IJobMarket.JobView memory j = m.getJob(jobId);
        _checkOpenable(m, j, jobId, segment, step);
        (, address provider,) = m.jobParties(jobId);
        (uint256 slot, uint256 answerBy) = _nextAnswerBy(provider, jobId, j);
        // INVARIANT: a withheld state can still be disputed: the answer deadline leaves at least one more answer window
        // before the challenge window of a Committed or TimedOut job ends (an Active job's window ends at least
        // challengeWindow after its last commit, which is no earlier than now). A queue pushed this far by a flood
        // refuses the request: the auditor recomputes the segment instead (docs/checks.md).
        uint256 windowEnd = j.status == IJobMarket.JobStatus.Active ? block.timestamp + j.policy.challengeWindow : uint256(j.deadline);
        if (answerBy + _answerWindow > windowEnd) revert StateOpeningsWindowTooShort(jobId, answerBy, windowEnd);
        // INVARIANT: the queue's tail is the slot (the answer-window rule), never the Active job's later deadline: one
        // request on a job with long segments would otherwise push every later opening of this provider's other jobs
        // out by that job's segment timeout (up to months) and refuse them all as too late (StateOpeningsWindowTooShort).
        // Deadlines are at or after their slots, so answering in slot order still meets every deadline.
        _tail[provider] = uint64(slot);
        if (j.status == IJobMarket.JobStatus.Active) _activeTail[jobId] = uint64(answerBy);
        o.deadline = uint64(answerBy);
        o.segment = uint16(segment); // fits: a committed segment < JobMarket's uint16 segment count
        o.requester = msg.sender;
        emit OpeningRequested(jobId, segment, step, msg.sender, uint64(answerBy));
    }

    /// @inheritdoc IStateOpenings
    function answerOpening(
        uint256 jobId,
        uint256 step,
        string calldata checkpointCid,
        bytes32 traceRoot,
        bytes32 endStateHash,
        bytes32 stateHash,
        bytes32[] calldata proof
    ) external {
        Opening storage o = _openings[jobId][step];
        _checkAnswerable(o, jobId, step);
        if (bytes(checkpointCid).length == 0) revert StateOpeningsEmptyCid(jobId, step);
        uint256 segment = o.segment;
        // INVARIANT: the opened state is the committed leaf h(step): the root is the commitment of the segment the opening
        // was asked in (requestOpening checked `step` against it), and the proof shows h(step) under it.
        if (!_market.verifySegment(jobId, segment, traceRoot, endStateHash)) revert StateOpeningsWrongSegment(jobId, segment);
        if (!Trace.verifyStateCalldata(traceRoot, uint64(step), stateHash, proof)) {
            revert StateOpeningsBadProof(jobId, step, stateHash);
        }
        o.answered = true;
        emit OpeningAnswered(jobId, segment, step, stateHash, checkpointCid);
    }

    /// @inheritdoc IStateOpenings
    function openingOf(uint256 jobId, uint256 step) external view returns (Opening memory) {
        return _openings[jobId][step];
    }

    /// @inheritdoc IStateOpenings
    function isWithheld(uint256 jobId, uint256 step) external view returns (bool) {
        Opening storage o = _openings[jobId][step];
        return o.deadline != 0 && !o.answered && block.timestamp > o.deadline;
    }

    /// @inheritdoc IStateOpenings
    function nextAnswerBy(uint256 jobId) external view returns (uint256) {
        IJobMarket m = _market;
        (, address provider,) = m.jobParties(jobId);
        (, uint256 answerBy) = _nextAnswerBy(provider, jobId, m.getJob(jobId));
        return answerBy;
    }

    /// @inheritdoc IStateOpenings
    function queueTail(address provider) external view returns (uint256) {
        return _tail[provider];
    }

    /// @inheritdoc IStateOpenings
    function answerWindowSeconds() external view returns (uint256) {
        return _answerWindow;
    }

    /// @inheritdoc IStateOpenings
    function replaySeconds() external view returns (uint256) {
        return _replay;
    }

    /// @inheritdoc IStateOpenings
    function market() external view returns (address) {
        return address(_market);
    }

    /// @dev The queue slot and the deadline of `provider`'s next opening of a state of job `j`. The slot: one answer
    /// window from now, and no earlier than one replay after its queue's last slot (the work demanded of a provider is at
    /// most one segment replay per replaySeconds). The deadline: the slot, and while the job is Active no earlier than one
    /// segment timeout and one replay from now and one replay after this job's last such deadline.
    function _nextAnswerBy(address provider, uint256 jobId, IJobMarket.JobView memory j) private view returns (uint256 slot, uint256 answerBy) {
        uint256 fromNow = block.timestamp + _answerWindow;
        uint256 afterTail = uint256(_tail[provider]) + _replay;
        slot = fromNow > afterTail ? fromNow : afterTail;
        answerBy = slot;
        // INVARIANT: an honest provider of an Active job meets every deadline even if it answers only between segments
        // (`pouw provider run` does): a request made while it trains a segment is seen at that segment's commit, at most
        // segmentTimeout later, and answered one replay after that. An answer window shorter than the job's segments
        // would otherwise expire inside one legal segment and convict it of withholding.
        // The openings asked during one segment are all seen at its commit, so they are spaced one replay apart per job
        // (the job's own tail; another job's long segments never push this one's openings).
        if (j.status == IJobMarket.JobStatus.Active) {
            uint256 busy = block.timestamp + uint256(j.policy.segmentTimeout) + _replay;
            uint256 afterJob = uint256(_activeTail[jobId]) + _replay;
            if (afterJob > busy) busy = afterJob;
            if (busy > answerBy) answerBy = busy;
        }
    }

    /// @dev Checks that the opening `o` of state `step` may be answered now by the caller.
    function _checkAnswerable(Opening storage o, uint256 jobId, uint256 step) private view {
        uint256 deadline = o.deadline;
        if (deadline == 0) revert StateOpeningsNotRequested(jobId, step);
        (, address provider,) = _market.jobParties(jobId);
        // INVARIANT: only the provider answers: an answer by anyone else could pin a bogus CID on the opening.
        if (msg.sender != provider) revert StateOpeningsNotProvider(jobId, msg.sender, provider);
        // INVARIANT: an opening is answered once; its CID never changes.
        if (o.answered) revert StateOpeningsAlreadyAnswered(jobId, step);
        // INVARIANT: an expired opening stays withheld (the dispute of it may already be under way).
        if (block.timestamp > deadline) revert StateOpeningsAnswerLate(jobId, step, deadline, block.timestamp);
    }

    /// @dev Checks that state `step` is the pre-state of a step of committed segment `segment` (or, in the job's last
    /// segment, its end state: the final model) of a disputable job in the current provider's tenure.
    function _checkOpenable(IJobMarket m, IJobMarket.JobView memory j, uint256 jobId, uint256 segment, uint256 step)
        private
        view
    {
        IJobMarket.JobStatus status = j.status;
        if (status == IJobMarket.JobStatus.None) revert StateOpeningsUnknownJob(jobId);
        if (
            status != IJobMarket.JobStatus.Active && status != IJobMarket.JobStatus.Committed
                && status != IJobMarket.JobStatus.TimedOut
        ) revert StateOpeningsJobNotDisputable(jobId, status);
        if (m.segmentCommitment(jobId, segment) == bytes32(0)) revert StateOpeningsSegmentNotCommitted(jobId, segment);
        // INVARIANT: the provider held to an opening is the one who committed the segment.
        if (segment < j.startSegment) revert StateOpeningsEarlierTenure(jobId, segment, j.startSegment);
        uint256 first = segment * j.policy.stepsPerSegment;
        // NOTE: the job's last segment also opens its end state (the final model, leaf K of its trace): no later
        // segment starts from it, so an auditor screens the final state through this opening instead of recomputing
        // the whole last segment. Every other end state is the next segment's committed start.
        uint256 end = first + j.policy.stepsPerSegment + (segment + 1 == j.policy.segments ? 1 : 0);
        if (step < first || step >= end) revert StateOpeningsStepOutOfSegment(jobId, segment, step, first, end);
    }
}
