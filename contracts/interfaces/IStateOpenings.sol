// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IJobMarket} from "./IJobMarket.sol";

/// @title IStateOpenings: state openings of JobMarket's committed segments
/// @notice Any active auditor may ask for the state before any step of a committed segment (`requestOpening`); the
/// job's provider must publish that state's checkpoint and name its content id on chain (`answerOpening`) by the
/// opening's deadline, with a Merkle proof that the state hash it opens is the committed leaf h(step). An opening left
/// unanswered past its deadline is a withheld state (`isWithheld`), judged as a withheld start checkpoint is: a
/// challenge of step `step + 1` (whose pre-state is the withheld one), on which the panel votes Fault
/// (docs/disputes.md, "Data availability"). The contract holds no funds and no role: it reads jobs and commitments from
/// its JobMarket and auditors from the market's AuditorRegistry.
/// Flood bound (docs/checks.md, "State openings: the queue"): openings are kept per (job, state), so one answer serves
/// every auditor and a second request of a pending or answered state is refused before it costs the provider anything;
/// and each provider has one queue of deadlines: a new opening's deadline is the later of `now + answerWindowSeconds`
/// (`now + segmentTimeout + replaySeconds` instead while the job is Active and its segmentTimeout plus one replay is
/// longer: the provider may be training a segment and answer at its commit) and the provider's previous deadline plus
/// `replaySeconds` (the time to replay one segment). A provider that answers
/// in deadline order and needs at most `replaySeconds` an opening meets every deadline, whatever the number of
/// requesters; a flood only pushes later deadlines out, until a request would no longer leave time to dispute a
/// withholding inside the challenge window and is refused (the auditor then recomputes the segment instead).
/// @custom:semver 2.0.0
interface IStateOpenings {
    /// @notice The opening of one state of a job (one slot). `deadline` 0: never requested. `requester`: who asked first.
    struct Opening {
        uint64 deadline;
        uint16 segment;
        bool answered;
        address requester;
    }

    /// @notice `requester` asked job `jobId`'s provider to open the state `step` of segment `segment` by `deadline`.
    event OpeningRequested(
        uint256 indexed jobId, uint256 indexed segment, uint256 step, address indexed requester, uint64 deadline
    );
    /// @notice The provider opened state `step` of job `jobId` (to every auditor): its hash `stateHash` is the committed
    /// leaf, its checkpoint is at `checkpointCid`.
    event OpeningAnswered(
        uint256 indexed jobId, uint256 indexed segment, uint256 step, bytes32 stateHash, string checkpointCid
    );

    /// @notice A constructor address is zero.
    error StateOpeningsZeroMarket();
    /// @notice answerWindowSeconds must be in 1 .. `max`.
    error StateOpeningsInvalidAnswerWindow(uint256 answerWindowSeconds, uint256 max);
    /// @notice replaySeconds must be in 1 .. answerWindowSeconds (a provider must be able to answer the first opening of
    /// an empty queue in its window).
    error StateOpeningsInvalidReplaySeconds(uint256 replaySeconds, uint256 answerWindowSeconds);
    /// @notice The market's registries are not set (no AuditorRegistry to check a requester against).
    error StateOpeningsRegistriesNotSet();
    /// @notice `requester` is not an active auditor.
    error StateOpeningsNotAuditor(address requester);
    /// @notice No job `jobId` exists on the market.
    error StateOpeningsUnknownJob(uint256 jobId);
    /// @notice Job `jobId` is in `status`: openings are asked only while its segments are disputable (Active,
    /// Committed, TimedOut).
    error StateOpeningsJobNotDisputable(uint256 jobId, IJobMarket.JobStatus status);
    /// @notice Segment `segment` of job `jobId` is not committed.
    error StateOpeningsSegmentNotCommitted(uint256 jobId, uint256 segment);
    /// @notice Segment `segment` of job `jobId` was committed in an earlier tenure (before `startSegment`): its
    /// provider is gone, so nobody can be held to open it.
    error StateOpeningsEarlierTenure(uint256 jobId, uint256 segment, uint256 startSegment);
    /// @notice State `step` is not a state segment `segment` opens (`first` .. `last` - 1: its pre-states, and in the
    /// job's last segment its end state too).
    error StateOpeningsStepOutOfSegment(uint256 jobId, uint256 segment, uint256 step, uint256 first, uint256 last);
    /// @notice The answer deadline `answerBy` (the provider's queue puts it there) would leave less than one answer
    /// window before the job's challenge window ends at `windowEnd`, so a withheld state could no longer be disputed.
    error StateOpeningsWindowTooShort(uint256 jobId, uint256 answerBy, uint256 windowEnd);
    /// @notice State `step` of job `jobId` was already asked for (its opening, due at `deadline`, is pending or
    /// answered): the one opening serves every auditor.
    error StateOpeningsAlreadyRequested(uint256 jobId, uint256 step, uint256 deadline);
    /// @notice Nobody asked to open state `step` of job `jobId`.
    error StateOpeningsNotRequested(uint256 jobId, uint256 step);
    /// @notice `caller` is not job `jobId`'s provider `provider`.
    error StateOpeningsNotProvider(uint256 jobId, address caller, address provider);
    /// @notice The opening of state `step` of job `jobId` was already answered.
    error StateOpeningsAlreadyAnswered(uint256 jobId, uint256 step);
    /// @notice The opening of state `step` of job `jobId` expired at `deadline` (now `nowTs`): the state is withheld.
    error StateOpeningsAnswerLate(uint256 jobId, uint256 step, uint256 deadline, uint256 nowTs);
    /// @notice (traceRoot, endStateHash) is not the commitment of segment `segment`, the one the opening was asked in.
    error StateOpeningsWrongSegment(uint256 jobId, uint256 segment);
    /// @notice `proof` does not show `stateHash` as leaf h(`step`) of the committed trace root.
    error StateOpeningsBadProof(uint256 jobId, uint256 step, bytes32 stateHash);
    /// @notice The checkpoint content id is empty.
    error StateOpeningsEmptyCid(uint256 jobId, uint256 step);

    /// @notice Ask job `jobId`'s provider to open state `step` of committed segment `segment` (the state before step
    /// `step + 1`; segment i holds states i*K .. (i+1)*K - 1 as pre-states, and the job's last segment also its end
    /// state, the final model, which the auditors screen instead of recomputing the last segment). Caller: an active
    /// auditor; once per (job, step) for everyone. The deadline is `nextAnswerBy(jobId)` at the time of the call; it must
    /// leave one more answer window before the challenge window ends.
    function requestOpening(uint256 jobId, uint256 segment, uint256 step) external;

    /// @notice Open state `step` of job `jobId`: `stateHash` with `proof` must be leaf h(step) of the committed trace
    /// root of the segment the opening was asked in (`traceRoot`, `endStateHash` from its SegmentCommitted event), and
    /// `checkpointCid` the content id of the state's checkpoint file (whose state hash auditors check off chain: a CID
    /// that does not hold h(step) is a withheld state, whoever asked). Caller: the job's provider, by the deadline, once.
    function answerOpening(
        uint256 jobId,
        uint256 step,
        string calldata checkpointCid,
        bytes32 traceRoot,
        bytes32 endStateHash,
        bytes32 stateHash,
        bytes32[] calldata proof
    ) external;

    /// @notice The opening of state `step` of job `jobId` (deadline 0: never requested).
    function openingOf(uint256 jobId, uint256 step) external view returns (Opening memory);

    /// @notice Whether state `step` of job `jobId` is withheld: requested, unanswered, and its deadline passed. Once
    /// true it stays true (a late answer reverts).
    function isWithheld(uint256 jobId, uint256 step) external view returns (bool);

    /// @notice The deadline a request for a state of job `jobId` would get now (its provider's queue): the later of
    /// `now + answerWindowSeconds` (while the job is Active, `now + max(answerWindowSeconds, segmentTimeout +
    /// replaySeconds)`, and one replay after the job's last such deadline) and the provider's last queue slot plus
    /// `replaySeconds`.
    function nextAnswerBy(uint256 jobId) external view returns (uint256);

    /// @notice The latest queue slot of `provider`'s openings (0: none yet): the later of `now + answerWindowSeconds` and
    /// the previous slot plus `replaySeconds` at each request. An Active job's opening may be due later than its slot
    /// (one segment timeout and one replay out); the slot is what the next request queues behind.
    function queueTail(address provider) external view returns (uint256);

    /// @notice The provider's time to answer an opening asked of an idle queue, in seconds.
    function answerWindowSeconds() external view returns (uint256);

    /// @notice Seconds between two consecutive deadlines of one provider: the time it is granted per opening (one
    /// segment replay, one answer transaction).
    function replaySeconds() external view returns (uint256);

    /// @notice The JobMarket whose segments are opened.
    function market() external view returns (address);
}
