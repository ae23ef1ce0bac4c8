// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IJobMarket: escrow, trace anchoring, release, refund and abandonment of training jobs
/// @notice A buyer escrows an ERC-20 payment for a job described by a content-addressed manifest and a
/// policy. A provider accepts (its stake is locked in the StakeVault), then commits one segment at a time:
/// the Merkle root of the segment's state hashes (contracts/libraries/Trace.sol) and its end state hash,
/// each before its deadline. After the last segment the challenge window runs; `finalize` then credits
/// the provider and unlocks its stake. A provider that misses a deadline can be reported by anyone: part of
/// its lock is slashed to the buyer and the job re-opens at the next uncommitted segment for another
/// provider. The dispute role (DISPUTE_ROLE, the dispute contract) freezes a job while a challenge is open
/// and settles it: provider at fault (lock slashed by the policy shares, buyer refunded) or not (unfrozen).
/// All payouts are credits claimed with `claim(token)`.
///
/// State machine: None -> Open (createJob) -> Active (acceptJob) -> Committed (last commitSegment)
/// -> Finalized (finalize). Open -> Cancelled (cancelJob). Active -> Open (reportTimeout).
/// Active|Committed -> Refunded (settleProviderFault). Freezing is a counter beside the status.
interface IJobMarket {
    enum JobStatus {
        None,
        Open,
        Active,
        Committed,
        Finalized,
        Cancelled,
        Refunded
    }

    /// @notice What the buyer asks for and how faults are punished.
    /// @param segments number of segments (1..65535)
    /// @param stepsPerSegment training steps per segment, K (a segment's trace has K+1 leaves)
    /// @param requiredStake stake locked from the provider for this job (stake token units, > 0)
    /// @param segmentTimeout seconds the provider has for each segment, counted from acceptance or the
    ///        previous commit (1..MAX_SEGMENT_TIMEOUT)
    /// @param challengeWindow seconds after the last commit during which a dispute can freeze the job (> 0)
    /// @param challengerBps share of a fault slash credited to the challenger (basis points)
    /// @param buyerBps share of a fault slash credited to the buyer
    /// @param burnBps share of a fault slash burned; challengerBps + buyerBps + burnBps == 10,000
    /// @param timeoutSlashBps share of the lock slashed to the buyer when a deadline is missed (<= 10,000)
    struct Policy {
        uint16 segments;
        uint32 stepsPerSegment;
        uint128 requiredStake;
        uint32 segmentTimeout;
        uint32 challengeWindow;
        uint16 challengerBps;
        uint16 buyerBps;
        uint16 burnBps;
        uint16 timeoutSlashBps;
    }

    /// @notice A job as the views return it.
    /// @param deadline while Active: the current segment's deadline; while Committed: end of the challenge window
    /// @param nextSegment the next segment to commit (== policy.segments once all are committed)
    /// @param startSegment first segment committed by the current provider (non-zero after a re-open)
    /// @param openDisputes number of open disputes; finalize and reportTimeout need 0
    struct JobView {
        address buyer;
        address provider;
        address token;
        JobStatus status;
        uint16 nextSegment;
        uint16 startSegment;
        uint16 openDisputes;
        uint64 deadline;
        uint128 payment;
        bytes32 manifestHash;
        Policy policy;
    }

    /// @notice `buyer` created job `jobId` and escrowed `payment` of `token`.
    event JobCreated(
        uint256 indexed jobId,
        address indexed buyer,
        bytes32 manifestHash,
        string manifestUri,
        address token,
        uint256 payment,
        Policy policy
    );
    /// @notice The buyer cancelled job `jobId` before acceptance; `refund` was credited to it.
    event JobCancelled(uint256 indexed jobId, uint256 refund);
    /// @notice `provider` accepted job `jobId` from segment `startSegment`; the first deadline is `deadline`.
    event JobAccepted(uint256 indexed jobId, address indexed provider, uint256 startSegment, uint64 deadline);
    /// @notice `provider`'s segment `segment` of job `jobId` was committed. Only
    /// keccak256(abi.encode(traceRoot, endStateHash)) is stored; lossE6 and checkpointCid live only here.
    /// The event of the last segment (segment == policy.segments - 1) also marks the job Committed: its
    /// challenge window ends at block.timestamp + policy.challengeWindow (getJob().deadline). There is no
    /// separate event for that, to keep the last commit under 60,000 gas.
    event SegmentCommitted(
        uint256 indexed jobId,
        uint256 indexed segment,
        bytes32 traceRoot,
        bytes32 endStateHash,
        uint64 lossE6,
        string checkpointCid
    );
    /// @notice `provider` missed the deadline of segment `segment` of job `jobId`; `slashed` of its stake
    /// went to the buyer and the job re-opened.
    event JobTimedOut(uint256 indexed jobId, address indexed provider, uint256 segment, uint256 slashed);
    /// @notice Job `jobId` was finalized: `providerPay` credited to the provider, `buyerRefund` to the buyer.
    event JobFinalized(uint256 indexed jobId, address indexed provider, uint256 providerPay, uint256 buyerRefund);
    /// @notice A dispute froze job `jobId`; it now has `openDisputes` open disputes.
    event JobFrozen(uint256 indexed jobId, uint256 openDisputes);
    /// @notice A dispute on job `jobId` ended with the provider not at fault; `openDisputes` remain.
    event JobUnfrozen(uint256 indexed jobId, uint256 openDisputes);
    /// @notice Job `jobId`'s provider was found at fault: `slashed` of its stake split by the policy shares,
    /// `refund` credited to the buyer.
    event ProviderFaultSettled(
        uint256 indexed jobId, address indexed provider, address indexed challenger, uint256 slashed, uint256 refund
    );
    /// @notice `account` was credited `amount` of `token`.
    event Credited(address indexed account, address indexed token, uint256 amount);
    /// @notice `account` claimed its whole credit `amount` of `token`.
    event CreditClaimed(address indexed account, address indexed token, uint256 amount);

    /// @notice Payment is zero.
    error JobMarketZeroPayment();
    /// @notice The payment token is the zero address.
    error JobMarketZeroToken();
    /// @notice A job needs segments >= 1 and stepsPerSegment >= 1.
    error JobMarketInvalidShape(uint256 segments, uint256 stepsPerSegment);
    /// @notice The policy's required stake is zero.
    error JobMarketZeroStake();
    /// @notice segmentTimeout must be in 1..MAX_SEGMENT_TIMEOUT and challengeWindow > 0.
    error JobMarketInvalidWindows(uint256 segmentTimeout, uint256 challengeWindow);
    /// @notice Fault shares must sum to 10,000 and timeoutSlashBps must be <= 10,000.
    error JobMarketInvalidShares(uint256 challengerBps, uint256 buyerBps, uint256 burnBps, uint256 timeoutSlashBps);
    /// @notice No job `jobId` exists.
    error JobMarketUnknownJob(uint256 jobId);
    /// @notice Job `jobId` is in `status`, but `expected` is needed.
    error JobMarketWrongStatus(uint256 jobId, JobStatus status, JobStatus expected);
    /// @notice `caller` is not job `jobId`'s buyer `buyer`.
    error JobMarketNotBuyer(uint256 jobId, address caller, address buyer);
    /// @notice `caller` is not job `jobId`'s provider `provider`.
    error JobMarketNotProvider(uint256 jobId, address caller, address provider);
    /// @notice Segment `segment` of job `jobId` is already committed.
    error JobMarketSegmentAlreadyCommitted(uint256 jobId, uint256 segment);
    /// @notice Segment `segment` is not the next one (`expected`) of job `jobId`.
    error JobMarketSegmentOutOfOrder(uint256 jobId, uint256 segment, uint256 expected);
    /// @notice Segment `segment` of job `jobId` came after its deadline `deadline` (now `nowTs`).
    error JobMarketSegmentLate(uint256 jobId, uint256 segment, uint64 deadline, uint256 nowTs);
    /// @notice The trace root or end state hash is zero.
    error JobMarketZeroCommitment(uint256 jobId, uint256 segment);
    /// @notice Job `jobId`'s deadline `deadline` has not passed (now `nowTs`).
    error JobMarketDeadlineNotPassed(uint256 jobId, uint64 deadline, uint256 nowTs);
    /// @notice Job `jobId`'s challenge window runs until `windowEnd` (now `nowTs`).
    error JobMarketChallengeWindowOpen(uint256 jobId, uint64 windowEnd, uint256 nowTs);
    /// @notice Job `jobId`'s challenge window ended at `windowEnd` (now `nowTs`); it can no longer be frozen.
    error JobMarketChallengeWindowClosed(uint256 jobId, uint64 windowEnd, uint256 nowTs);
    /// @notice Job `jobId` has `openDisputes` open disputes.
    error JobMarketFrozen(uint256 jobId, uint256 openDisputes);
    /// @notice Job `jobId` has no open dispute.
    error JobMarketNotFrozen(uint256 jobId);
    /// @notice Job `jobId` cannot be frozen or settled in status `status`.
    error JobMarketNotDisputable(uint256 jobId, JobStatus status);
    /// @notice The challenger is the zero address.
    error JobMarketZeroChallenger();
    /// @notice `account` has no credit in `token`.
    error JobMarketNothingToClaim(address account, address token);

    /// @notice Create a job and escrow `payment` of `token` from the caller (needs an allowance).
    /// @param manifestHash keccak256 of the canonical manifest JSON
    /// @param manifestUri where the manifest can be fetched (content address); only in the event
    /// @return jobId the new job's id (1, 2, ...)
    function createJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        Policy calldata policy
    ) external returns (uint256 jobId);

    /// @notice Cancel an Open job (never accepted, or re-opened after a timeout) and credit the buyer the
    /// escrow. Buyer only.
    function cancelJob(uint256 jobId) external;

    /// @notice Accept an Open job: lock policy.requiredStake of the caller's free stake and start the
    /// deadline of the next uncommitted segment.
    function acceptJob(uint256 jobId) external;

    /// @notice Commit segment `segment` (the next one) of an Active job. Provider only, before the deadline.
    /// @param traceRoot OpenZeppelin Merkle root of the segment's K+1 leaves (Trace.leaf)
    /// @param endStateHash h of the segment's last state, (segment+1)*K
    /// @param lossE6 training loss at the end of the segment times 1e6 (event only)
    /// @param checkpointCid content id of the segment's start checkpoint (event only)
    function commitSegment(
        uint256 jobId,
        uint256 segment,
        bytes32 traceRoot,
        bytes32 endStateHash,
        uint64 lossE6,
        string calldata checkpointCid
    ) external;

    /// @notice Report that an Active job's provider missed its deadline: slash policy.timeoutSlashBps of its
    /// lock to the buyer, release the rest, and re-open the job at the next segment. Anyone may call.
    function reportTimeout(uint256 jobId) external;

    /// @notice After the challenge window with no open dispute: credit the provider its pay (the payment
    /// pro rata to the segments it committed; the rest back to the buyer) and unlock its stake. Anyone may call.
    function finalize(uint256 jobId) external;

    /// @notice Transfer the caller's whole credit in `token` to it.
    function claim(address token) external returns (uint256 amount);

    /// @notice Open a dispute on an Active or Committed job: blocks finalize and reportTimeout. DISPUTE_ROLE only.
    function freeze(uint256 jobId) external;

    /// @notice Close a dispute with the provider at fault: slash its whole lock by the policy shares
    /// (challenger, buyer, burn), credit the buyer the whole escrow, end the job Refunded. DISPUTE_ROLE only.
    function settleProviderFault(uint256 jobId, address challenger) external;

    /// @notice Close one dispute with the provider not at fault. DISPUTE_ROLE only.
    function settleNoFault(uint256 jobId) external;

    /// @notice The job's full record.
    function getJob(uint256 jobId) external view returns (JobView memory);

    /// @notice The parties and status of a job (what a dispute contract checks).
    function jobParties(uint256 jobId) external view returns (address buyer, address provider, JobStatus status);

    /// @notice The stored commitment keccak256(abi.encode(traceRoot, endStateHash)) of a segment, 0 if none.
    function segmentCommitment(uint256 jobId, uint256 segment) external view returns (bytes32);

    /// @notice Whether (traceRoot, endStateHash) is what the provider committed for `segment` of `jobId`.
    function verifySegment(uint256 jobId, uint256 segment, bytes32 traceRoot, bytes32 endStateHash)
        external
        view
        returns (bool);

    /// @notice Claimable credit of `account` in `token`.
    function creditOf(address account, address token) external view returns (uint256);

    /// @notice Number of jobs created so far (the last job id).
    function jobCount() external view returns (uint256);
}
