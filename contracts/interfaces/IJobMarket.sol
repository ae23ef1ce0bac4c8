// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAuditorRegistry} from "./IAuditorRegistry.sol";
import {IProviderRegistry} from "./IProviderRegistry.sol";
import {IDataRegistry} from "./IDataRegistry.sol";
import {IFixedRoles} from "./IFixedRoles.sol";

/// @title IJobMarket: escrow, trace anchoring, release, refund and abandonment of training jobs
/// @notice A buyer escrows an ERC-20 payment for a job described by a content-addressed manifest and a
/// policy. A provider accepts (its stake is locked in the StakeVault), then commits one segment at a time:
/// the Merkle root of the segment's state hashes (contracts/libraries/Trace.sol) and its end state hash,
/// each before its deadline. After the last segment the challenge window runs; `finalize` then credits
/// the provider and unlocks its stake. A provider that misses a deadline can be reported by anyone: part of
/// its lock is slashed to the buyer; if it committed segments in its tenure the job is TimedOut for one
/// challenge window (those segments stay disputable with the whole lock behind them) and then `reopenJob`
/// takes that slash and re-opens the job at the next uncommitted segment for another provider. The dispute role (DISPUTE_ROLE, the dispute contract) freezes a job while a challenge is open
/// and settles it: provider at fault (lock slashed by the policy shares, buyer refunded) or not (unfrozen).
/// All payouts are credits claimed with `claim(token)`.
///
/// Terms (`createJobWithTerms`): a minimum attestation tier (ProviderRegistry) and a data share paid at
/// finalize to the registered corpora the job trains on (DataRegistry), weighted by tokens and by
/// improvement weights the evaluator role records. The stake a provider locks scales with its tier:
/// `ceil(policy.requiredStake * stakeMultiplierBps(tier) / 10,000)`, tier 1 50%, 2 62.5%, 3 75%,
/// 4 (no or expired attestation) 100%. Auditors' EIP-712 receipts and the final provider's
/// provenance record are anchored beside the market, in JobRecords (IJobRecords), which reads the jobs from here.
///
/// State machine: None -> Open (createJob) -> Active (acceptJob) -> Committed (last commitSegment)
/// -> Finalized (finalize). Open -> Cancelled (cancelJob). Active -> Open (reportTimeout, tenure with no
/// commit) or Active -> TimedOut (reportTimeout) -> Open (reopenJob, after one challenge window).
/// Active|Committed|TimedOut -> Refunded (settleProviderFault). Committed|TimedOut -> Unresolved (settleNoFault: a
/// dispute without a decision when the re-opens are used up). Freezing is a counter beside the status.
///
/// No admin (IFixedRoles): the deployer (the wirer) sets the registries once (`setRegistries`, optional) and
/// then calls `wire` once, which fixes DISPUTE_ROLE and EVALUATOR_ROLE forever and ends its power: after
/// `wire` nobody can grant a role, change a registry or touch an escrow or credit outside the rules.
interface IJobMarket is IFixedRoles {
    enum JobStatus {
        None,
        Open,
        Active,
        Committed,
        Finalized,
        Cancelled,
        Refunded,
        TimedOut,
        // INVARIANT: appended last, so the earlier values keep their numbers (off-chain enum tables, stored jobs).
        Unresolved
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
    /// @param timeoutSlashBps share of the lock slashed to the buyer when a deadline is missed (MIN_TIMEOUT_SLASH_BPS..10,000)
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

    /// @notice One corpus a job trains on: its DataRegistry id and the tokens of it the manifest declares.
    struct CorpusUse {
        uint64 corpusId;
        uint96 tokens;
    }

    /// @notice Optional terms of a job, fixed at creation.
    /// @param minTier weakest attestation tier accepted: a provider of effective tier t may accept iff
    ///        minTier == 0 or t <= minTier (tier 1 is the strongest, 4 means no attestation)
    /// @param dataShareBps share of the payment credited to the corpora at finalize (needs corpora)
    /// @param corpora registered, unretired corpora in strictly ascending id order (at most MAX_CORPORA)
    struct Terms {
        uint8 minTier;
        uint16 dataShareBps;
        CorpusUse[] corpora;
    }

    /// @notice A corpus of a job as stored: `weightE6` is the recorded improvement weight (1,000,000 = 1.0)
    /// when `weighted`, else the neutral 1.0 applies.
    struct JobCorpus {
        uint64 corpusId;
        uint96 tokens;
        uint32 weightE6;
        bool weighted;
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
    /// @notice Job `jobId` ended Cancelled and `refund` (the whole escrow) was credited to its buyer: the buyer cancelled
    /// it while Open, or its MAX_IDLE_TIMEOUTS-th idle timeout ended it (emitted right after that JobTimedOut).
    event JobCancelled(uint256 indexed jobId, uint256 refund);
    /// @notice `provider` accepted job `jobId` from segment `startSegment`; the first deadline is `deadline`.
    event JobAccepted(uint256 indexed jobId, address indexed provider, uint256 startSegment, uint64 deadline);
    /// @notice Job `jobId` was accepted at an attested tier whose evidence bound `sessionKey`: its segment commits of
    /// this tenure are taken from `sessionKey` only (emitted right after JobAccepted).
    event CommitterBound(uint256 indexed jobId, address indexed sessionKey);
    /// @notice Job `jobId` is an inference job of `kind` (1 evaluate, 2 generate: docs/kinds.md) over the model whose CID
    /// hashes to `modelCidHash`, fixed at creation (createKindJob); KindRecords records its result only for that kind and
    /// model.
    event JobKindSet(uint256 indexed jobId, uint8 kind, bytes32 modelCidHash);
    /// @notice Job `jobId`'s tenure of `provider` was re-priced at the provider's current tier `tier` (retier): either
    /// `addedStake` more was locked (ended false), or the tenure was ended as a timeout ends it (ended true, JobTimedOut
    /// follows) because the free stake could not pay it or the tier no longer meets the job's minimum.
    event TenureRetiered(uint256 indexed jobId, address indexed provider, uint8 tier, uint256 addedStake, bool ended);
    /// @notice `provider`'s segment `segment` of job `jobId` was committed: `traceRoot` is the root the market computed
    /// from its K+1 leaves h(segment*K) .. h((segment+1)*K) and `endStateHash` the last one. Only
    /// keccak256(abi.encode(traceRoot, endStateHash)) is stored per segment; lossE6 and checkpointCid live only here.
    /// The leaves themselves are in the transaction's calldata when the commit is the transaction's top-level call from a
    /// codeless externally owned account (the usual case); any other commit (a smart-contract wallet, a multicall, an
    /// EIP-7702 delegated account) also emits SegmentLeaves right before this event (docs/contracts.md "Leaves").
    /// The event of the last segment (segment == policy.segments - 1) also marks the job Committed: its
    /// challenge window ends at block.timestamp + policy.challengeWindow (getJob().deadline).
    event SegmentCommitted(
        uint256 indexed jobId,
        uint256 indexed segment,
        bytes32 traceRoot,
        bytes32 endStateHash,
        uint64 lossE6,
        string checkpointCid
    );
    /// @notice The K+1 leaves of segment `segment` of job `jobId`, committed by a call that is not its transaction's
    /// top-level call from a codeless account (so they cannot be read from the transaction's input); emitted right before
    /// that commit's SegmentCommitted, in the same transaction.
    event SegmentLeaves(uint256 indexed jobId, uint256 indexed segment, bytes32[] stateHashes);
    /// @notice A dispute on Committed or TimedOut job `jobId` ended with no decision: its challenge window now ends at
    /// `deadline` (re-open number `reopens` of at most MAX_REOPENS).
    event ChallengeWindowReopened(uint256 indexed jobId, uint64 deadline, uint8 reopens);
    /// @notice Job `jobId` ended Unresolved: a dispute ended with no decision after its window had been re-opened
    /// MAX_REOPENS times. `refund` (the whole escrow) was credited to the buyer and `provider`'s lock released: nobody
    /// is paid for the job, nobody is slashed for a fault (a TimedOut job's provider still loses its timeout slash).
    event JobUnresolved(uint256 indexed jobId, address indexed provider, uint256 refund);
    /// @notice `provider` missed the deadline of segment `segment` of job `jobId`. With `disputableUntil` 0 (no segment
    /// committed in its tenure) `slashed` of its stake went to the buyer and the job re-opened (or, at the
    /// MAX_IDLE_TIMEOUTS-th such timeout, ended Cancelled: a JobCancelled follows); otherwise `slashed` is 0 and the
    /// job is TimedOut: the tenure's segments stay disputable and the whole lock locked until then (the timeout slash
    /// is a StakeSlashed of reopenJob's transaction).
    event JobTimedOut(
        uint256 indexed jobId, address indexed provider, uint256 segment, uint256 slashed, uint64 disputableUntil
    );
    /// @notice TimedOut job `jobId` re-opened at segment `segment`: `provider` lost its timeout slash and the rest of
    /// its lock was released.
    event JobReopened(uint256 indexed jobId, address indexed provider, uint256 segment);
    /// @notice Job `jobId` was finalized: `providerPay` credited to the provider, `buyerRefund` to the buyer.
    event JobFinalized(uint256 indexed jobId, address indexed provider, uint256 providerPay, uint256 buyerRefund);
    /// @notice A dispute froze job `jobId`; it now has `openDisputes` open disputes.
    event JobFrozen(uint256 indexed jobId, uint256 openDisputes);
    /// @notice A dispute on job `jobId` ended with the provider not at fault; `openDisputes` remain.
    event JobUnfrozen(uint256 indexed jobId, uint256 openDisputes);
    /// @notice Job `jobId`'s provider was found at fault: `slashed` of its stake split by the policy shares,
    /// `refund` credited to the buyer.
    /// `toChallengers` of it went to `disputeRole`, which splits it among the job's disputes (IDisputeGame).
    event ProviderFaultSettled(
        uint256 indexed jobId,
        address indexed provider,
        address indexed disputeRole,
        uint256 slashed,
        uint256 toChallengers,
        uint256 refund
    );
    /// @notice `account` was credited `amount` of `token`.
    event Credited(address indexed account, address indexed token, uint256 amount);
    /// @notice `account` claimed its whole credit `amount` of `token`.
    event CreditClaimed(address indexed account, address indexed token, uint256 amount);

    /// @notice The admin set the registries JobMarket reads (once).
    event RegistriesSet(address auditors, address providers, address data);
    /// @notice Job `jobId` was created with terms: minimum tier, data share and corpora.
    event JobTermsSet(uint256 indexed jobId, uint8 minTier, uint16 dataShareBps, CorpusUse[] corpora);
    /// @notice The evaluator recorded improvement weight `weightE6` for corpus `corpusId` of job `jobId`.
    event ImprovementRecorded(uint256 indexed jobId, uint64 indexed corpusId, uint32 weightE6);
    /// @notice At finalize, `amount` of job `jobId`'s payment was credited to corpus `corpusId`'s payout address.
    event DataShareCredited(uint256 indexed jobId, uint64 indexed corpusId, address indexed payout, uint256 amount);
    /// @notice Payment is zero.
    error JobMarketZeroPayment();
    /// @notice An escrow of `expected` of `token` delivered only `received` (a fee-on-transfer token): refused.
    error JobMarketTransferShortfall(address token, uint256 expected, uint256 received);
    /// @notice policy.timeoutSlashBps `timeoutSlashBps` is below `min` (MIN_TIMEOUT_SLASH_BPS).
    error JobMarketTimeoutSlashTooLow(uint256 timeoutSlashBps, uint256 min);
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
    /// @notice `caller` is not the session key `sessionKey` that job `jobId`'s attested tier bound: only it commits.
    error JobMarketNotSessionKey(uint256 jobId, address caller, address sessionKey);
    /// @notice Job `jobId`'s current tenure commits from its provider's own address: it has no session key to rebind.
    error JobMarketNoCommitter(uint256 jobId);
    /// @notice `provider`'s current tier `tier` is weaker than the tier `tenureTier` job `jobId`'s tenure was accepted
    /// at (a record that expires before the tenure's last possible commit counts as tier 4): no rebind.
    error JobMarketRebindTierTooLow(uint256 jobId, address provider, uint256 tier, uint256 tenureTier);
    /// @notice An inference job needs a kind (not 0, which is training) and a model CID hash (not zero).
    error JobMarketInvalidKind(uint8 kind, bytes32 modelCidHash);
    /// @notice Job `jobId`'s tenure already locks `locked`, at least the `required` its provider's current tier `tier`
    /// asks, and that tier meets the job's minimum: retier has nothing to do.
    error JobMarketRetierNotNeeded(uint256 jobId, uint256 tier, uint256 locked, uint256 required);
    /// @notice `provider`'s attested record expires at `expiresAt`, before `lastCommitBy` (now + the remaining segments
    /// times segmentTimeout), the last moment a commit of the tenure may land: its tier does not count for job `jobId`,
    /// whose minimum tier needs it.
    error JobMarketRecordExpiresFirst(uint256 jobId, address provider, uint64 expiresAt, uint256 lastCommitBy);
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
    /// @notice commitSegment for segment `segment` of job `jobId` passed `count` state hashes; the segment has `expected`
    /// (stepsPerSegment + 1).
    error JobMarketWrongLeafCount(uint256 jobId, uint256 segment, uint256 count, uint256 expected);
    /// @notice Segment `segment` of job `jobId` starts at `first`, the previous segment ended at `previousEnd`.
    error JobMarketBoundaryMismatch(uint256 jobId, uint256 segment, bytes32 first, bytes32 previousEnd);
    /// @notice Active job `jobId` is past its segment deadline `deadline` (now `nowTs`): it takes no new dispute and
    /// waits for reportTimeout.
    error JobMarketSegmentDeadlinePassed(uint256 jobId, uint64 deadline, uint256 nowTs);
    /// @notice A policy's challenger share `challengerBps` is above `max` (MAX_CHALLENGER_BPS).
    error JobMarketChallengerShareTooHigh(uint256 challengerBps, uint256 max);
    /// @notice `account` has no credit in `token`.
    error JobMarketNothingToClaim(address account, address token);
    /// @notice The registries were already set.
    error JobMarketRegistriesAlreadySet();
    /// @notice A registry address is zero.
    error JobMarketZeroRegistry();
    /// @notice The registries are not set yet (setRegistries).
    error JobMarketRegistriesNotSet();
    /// @notice A minimum tier must be 0 (any) or 1..4.
    error JobMarketInvalidTier(uint256 minTier);
    /// @notice `provider`'s effective tier `tier` is weaker than job `jobId`'s minimum `minTier`.
    error JobMarketTierTooLow(uint256 jobId, address provider, uint256 tier, uint256 minTier);
    /// @notice `provider`'s lock `lock` on job `jobId` would pay a fault's challenger `challengerShare`
    /// (lock * challengerBps / 10,000), less than the panel fees `panelFees` a challenge deposits: catching a cheat
    /// there would cost an honest challenger the difference, so nobody would, and the lock is refused.
    error JobMarketLockCannotPayPanel(
        uint256 jobId, address provider, uint256 lock, uint256 challengerShare, uint256 panelFees
    );
    /// @notice dataShareBps must be <= 10,000, and > 0 only with corpora.
    error JobMarketInvalidDataShare(uint256 dataShareBps, uint256 corpora);
    /// @notice A job references `count` corpora; at most `max` are allowed.
    error JobMarketTooManyCorpora(uint256 count, uint256 max);
    /// @notice Corpus ids must be strictly ascending (so none repeats): `corpusId` follows `previous`.
    error JobMarketCorporaNotAscending(uint64 previous, uint64 corpusId);
    /// @notice Corpus `corpusId` is declared with zero tokens.
    error JobMarketZeroTokens(uint64 corpusId);
    /// @notice Job `jobId` does not reference corpus `corpusId`.
    error JobMarketCorpusNotInJob(uint256 jobId, uint64 corpusId);
    /// @notice An improvement weight for corpus `corpusId` of job `jobId` was already recorded.
    error JobMarketImprovementAlreadyRecorded(uint256 jobId, uint64 corpusId);
    /// @notice An improvement weight must be at most `max` (millionths).
    error JobMarketInvalidWeight(uint256 weightE6, uint256 max);
    /// @notice Job `jobId` is closed (status `status`): its payment was already split or returned.
    error JobMarketJobClosed(uint256 jobId, JobStatus status);
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

    /// @notice `createJob` with terms: a minimum provider tier and a data share paid to corpora at finalize.
    /// Every corpus must be registered and unretired in the DataRegistry (`requireAttachable` reverts with
    /// its own error otherwise).
    function createJobWithTerms(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        Policy calldata policy,
        Terms calldata terms
    ) external returns (uint256 jobId);

    /// @notice Cancel an Open job (never accepted, or re-opened after a timeout) and credit the buyer the
    /// escrow. Buyer only.
    function cancelJob(uint256 jobId) external;

    /// @notice Accept an Open job: lock the caller's tier-scaled stake (`requiredStakeFor`) from its free
    /// stake and start the deadline of the next uncommitted segment. An attested tier counts for the tenure only if its
    /// record expires no earlier than the tenure's last possible commit (now + remaining segments * segmentTimeout);
    /// otherwise the tenure is taken at tier 4 (full lock, no session key), or, for a job with a minimum tier, reverts
    /// with JobMarketRecordExpiresFirst. Reverts with JobMarketTierTooLow when the caller's effective tier is weaker
    /// than the job's minimum, and with JobMarketLockCannotPayPanel when the lock's challenger share
    /// (lock * challengerBps / 10,000) is below `panelFees()`.
    function acceptJob(uint256 jobId) external;

    /// @notice Rebind the current tenure of Active job `jobId` to the session key of the caller's current record (a
    /// restarted machine re-attests with a new key; the old one is gone). Provider only. The record's tier, counted as
    /// at acceptJob (it must outlive the tenure's last possible commit from now), must be the same as or better than
    /// the tier the tenure was accepted at (JobMarketRebindTierTooLow), so the lock's discount stays backed by current
    /// evidence; a tenure without a session key reverts with JobMarketNoCommitter. Emits CommitterBound.
    function rebindCommitter(uint256 jobId) external;

    /// @notice `createJob` for an inference job: its kind (1 evaluate, 2 generate; not 0) and the keccak256 of its model's
    /// CID are fixed with the job (`kindOf`, JobKindSet), so KindRecords records a result only for the kind and model the
    /// buyer posted. Reverts with JobMarketInvalidKind for kind 0 or a zero hash.
    function createKindJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        Policy calldata policy,
        uint8 kind,
        bytes32 modelCidHash
    ) external returns (uint256 jobId);

    /// @notice The kind and model CID hash job `jobId` was created with (0 and zero: a training job, or no such job).
    function kindOf(uint256 jobId) external view returns (uint8 kind, bytes32 modelCidHash);

    /// @notice Re-price Active job `jobId`'s tenure at its provider's current tier (anyone may call): a tier proven false
    /// or revoked mid-job (or a record that no longer outlives the tenure's last possible commit, counted as at
    /// acceptJob) must not keep the stake discount or the session key it bought. When the lock is below the stake the
    /// current tier requires (`requiredStakeFor`), the difference is locked from the provider's free stake and the
    /// tenure commits from the current record's session key (or, without one, from the provider); when the free stake
    /// cannot pay it, or the current tier no longer meets the job's minimum tier, the tenure ends as a missed deadline
    /// ends it (reportTimeout: the timeout slash and nothing more; the job re-opens at once or after the challenge
    /// window of the tenure's segments). Reverts with JobMarketRetierNotNeeded when the lock already covers the current
    /// tier and the tier meets the minimum, and with JobMarketFrozen when the tenure must end while a dispute is open.
    /// Emits TenureRetiered.
    function retier(uint256 jobId) external;

    /// @notice Commit segment `segment` (the next one) of an Active job, before the deadline. Sent by the provider, or,
    /// when the job was accepted at a tier whose evidence bound a session key (`committerOf`), by that key only
    /// (JobMarketNotSessionKey otherwise): an attested tier then means the attested machine commits. The market
    /// computes the segment's trace root from the leaves (Trace.segmentRoot), binds the end state to the last leaf and
    /// requires the first leaf to equal the previous segment's end state.
    /// @param stateHashes h(segment*K) .. h((segment+1)*K): the segment's K+1 state hashes, none zero
    /// @param lossE6 training loss at the end of the segment times 1e6 (event only)
    /// @param checkpointCid content id of the segment's start checkpoint (event only); withholding it is a fault the
    ///        panel judges (a challenge of the segment's first step)
    function commitSegment(
        uint256 jobId,
        uint256 segment,
        bytes32[] calldata stateHashes,
        uint64 lossE6,
        string calldata checkpointCid
    ) external;

    /// @notice Report that an Active job's provider missed its deadline. If the provider committed no segment since it
    /// accepted, slash policy.timeoutSlashBps of its lock to the buyer, release the rest and re-open the job at once;
    /// the MAX_IDLE_TIMEOUTS-th such idle timeout of a job ends it Cancelled instead, crediting the buyer the whole
    /// escrow (a provider that re-accepts in the same block as its timeout would otherwise keep the buyer from ever
    /// cancelling). Otherwise the job becomes TimedOut until now + policy.challengeWindow: the segments of that tenure
    /// stay disputable with the whole lock behind them (a fault slashes it and refunds the buyer), so abandoning a job
    /// neither shortens the time anyone has to dispute a committed segment nor moves the stake behind it to the buyer
    /// (who may be the provider) first; the timeout slash is taken when that window closed (reopenJob). Anyone may call.
    function reportTimeout(uint256 jobId) external;

    /// @notice Re-open a TimedOut job after its window with no dispute open: slash policy.timeoutSlashBps of the
    /// timed-out provider's lock to the buyer (at most down to the panel reserve, ceil(panelFees() * 10,000 /
    /// challengerBps)), release the rest and offer the job again at the next uncommitted segment. Anyone may call.
    function reopenJob(uint256 jobId) external;

    /// @notice After the challenge window with no open dispute: credit the corpora their data share, the
    /// provider its pay (the rest pro rata to the segments it committed, plus rounding dust; the remainder
    /// back to the buyer) and unlock its stake (contracts/libraries/DataShares.sol). Anyone may call.
    function finalize(uint256 jobId) external;

    /// @notice Transfer the caller's whole credit in `token` to it.
    function claim(address token) external returns (uint256 amount);

    /// @notice Open a dispute on an Active job before its segment deadline, or a Committed or TimedOut job before the
    /// end of its window: blocks finalize, reportTimeout and reopenJob. DISPUTE_ROLE only.
    function freeze(uint256 jobId) external;

    /// @notice The StakeVault holding providers' stake (the token of stake, escrow-independent).
    function vault() external view returns (address);

    /// @notice Close a dispute with the provider at fault: slash its whole lock by the policy shares, credit the buyer
    /// the whole escrow, end the job Refunded. The challenger share is credited (in the StakeVault) to the caller, the
    /// dispute contract, which splits it among the job's disputes. DISPUTE_ROLE only.
    /// @return toChallenger the challenger share of the slash credited to the caller
    function settleProviderFault(uint256 jobId) external returns (uint256 toChallenger);

    /// @notice Close one dispute with the provider not at fault. With `reopen` (the dispute ended with no decision), a
    /// Committed or TimedOut job's challenge window is extended to now + policy.challengeWindow, at most MAX_REOPENS times per job.
    /// A no-decision that needs one more re-open after those ends the job Unresolved once its last open dispute closed
    /// (JobUnresolved: escrow to the buyer, lock released, no pay, no slash), unless a fault settles it first.
    /// DISPUTE_ROLE only.
    function settleNoFault(uint256 jobId, bool reopen) external;

    /// @notice Set the AuditorRegistry (panels; JobRecords' receipt signers), ProviderRegistry (tiers) and DataRegistry (corpora)
    /// once. Wirer only, before `wire` (a market wired without registries never gets them). Until then every
    /// provider counts as tier 4 and jobs with corpora (and JobRecords' receipts) are refused.
    function setRegistries(IAuditorRegistry auditors, IProviderRegistry providers, IDataRegistry data) external;

    /// @notice Wire the roles, once, and end wiring: DISPUTE_ROLE to `dispute` (the DisputeGame; not zero) and
    /// EVALUATOR_ROLE to `evaluator` (zero: nobody, so every corpus keeps the neutral weight). Wirer only.
    /// Reads `dispute.panelFees()` when `dispute` has code (`panelFees`).
    /// Afterwards `setRegistries` and `wire` revert with FixedRolesNotWirer for everyone.
    function wire(address dispute, address evaluator) external;

    /// @notice Record improvement weight `weightE6` (0..MAX_WEIGHT_E6; 1,000,000 = neutral) for corpus
    /// `corpusId` of an unfinalized job, once per corpus. EVALUATOR_ROLE only.
    function recordImprovement(uint256 jobId, uint64 corpusId, uint32 weightE6) external;

    /// @notice A job's terms and corpora (with recorded improvement weights).
    function termsOf(uint256 jobId)
        external
        view
        returns (uint8 minTier, uint16 dataShareBps, JobCorpus[] memory corpora);

    /// @notice The panel fees one challenge deposits (the dispute contract's panelSize * panelFee), read once at
    /// `wire` (they are fixed at its deployment; 0 for a dispute role held by an account without code): the least
    /// challenger share of a fault that `acceptJob` takes, so that an honest challenger never pays for a catch.
    function panelFees() external view returns (uint256);

    /// @notice `provider`'s effective tier and the stake it would lock to accept job `jobId` now.
    function requiredStakeFor(uint256 jobId, address provider) external view returns (uint8 tier, uint256 stake);

    /// @notice The AuditorRegistry, ProviderRegistry and DataRegistry (zero until setRegistries).
    function registries() external view returns (address auditors, address providers, address data);

    /// @notice Share of policy.requiredStake a provider of `tier` locks, in basis points (tier 1..4).
    function stakeMultiplierBps(uint8 tier) external pure returns (uint256);

    /// @notice The job's full record.
    function getJob(uint256 jobId) external view returns (JobView memory);

    /// @notice The parties and status of a job (what a dispute contract checks).
    function jobParties(uint256 jobId) external view returns (address buyer, address provider, JobStatus status);

    /// @notice The address whose segment commits job `jobId`'s current tenure takes when it is not the provider: the
    /// session key its provider's attested tier bound at acceptJob (ProviderRegistry.tierAndSessionKey); zero: the
    /// provider commits.
    function committerOf(uint256 jobId) external view returns (address);

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
