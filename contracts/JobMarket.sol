// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {Trace} from "./libraries/Trace.sol";

/// @title JobMarket: escrow, trace anchoring, release, refund and abandonment (see IJobMarket)
/// @dev Gas: commitSegment reads and writes one packed job slot and writes one new slot per segment
/// (keccak256(traceRoot, endStateHash)); lossE6 and checkpointCid are only in the event.
contract JobMarket is IJobMarket, AccessControl {
    using SafeERC20 for IERC20;

    /// @dev Storage layout of a job; slot 0 is the only one commitSegment touches on its usual path.
    struct Job {
        // slot 0
        address provider;
        JobStatus status;
        uint16 segments;
        uint16 nextSegment;
        uint32 deadline; // NOTE: uint32 seconds last until 2106
        uint24 segmentTimeout;
        // slot 1
        address buyer;
        uint32 stepsPerSegment;
        uint32 challengeWindow;
        uint16 startSegment;
        uint16 openDisputes;
        // slot 2
        address token;
        uint16 challengerBps;
        uint16 buyerBps;
        uint16 burnBps;
        uint16 timeoutSlashBps;
        // slot 3
        uint128 payment;
        uint128 requiredStake;
        // slot 4
        bytes32 manifestHash;
    }

    /// @notice Held by the dispute contract: freeze and settle jobs.
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");
    /// @notice Upper bound of segmentTimeout and challengeWindow, in seconds.
    uint256 public constant MAX_WINDOW_SECONDS = 180 days;
    uint256 private constant _BPS = 10_000;

    IStakeVault private immutable _vault;

    uint256 private _jobCount;
    mapping(uint256 jobId => Job) private _jobs;
    mapping(uint256 jobId => mapping(uint256 segment => bytes32 commitment)) private _segments;
    mapping(address token => mapping(address account => uint256 amount)) private _credits;

    constructor(IStakeVault vault_, address admin) {
        _vault = vault_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // ---------------------------------------------------------------- buyer

    /// @inheritdoc IJobMarket
    function createJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        Policy calldata policy
    ) external returns (uint256 jobId) {
        if (payment == 0) revert JobMarketZeroPayment();
        if (token == address(0)) revert JobMarketZeroToken();
        _checkPolicy(policy);

        jobId = ++_jobCount;
        Job storage j = _jobs[jobId];
        j.status = JobStatus.Open;
        j.segments = policy.segments;
        j.segmentTimeout = uint24(policy.segmentTimeout); // fits: <= MAX_WINDOW_SECONDS < 2^24
        j.buyer = msg.sender;
        j.stepsPerSegment = policy.stepsPerSegment;
        j.challengeWindow = policy.challengeWindow;
        j.token = token;
        j.challengerBps = policy.challengerBps;
        j.buyerBps = policy.buyerBps;
        j.burnBps = policy.burnBps;
        j.timeoutSlashBps = policy.timeoutSlashBps;
        j.payment = payment;
        j.requiredStake = policy.requiredStake;
        j.manifestHash = manifestHash;
        emit JobCreated(jobId, msg.sender, manifestHash, manifestUri, token, payment, policy);
        IERC20(token).safeTransferFrom(msg.sender, address(this), payment);
    }

    /// @inheritdoc IJobMarket
    function cancelJob(uint256 jobId) external {
        Job storage j = _known(jobId);
        if (j.status != JobStatus.Open) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Open);
        if (msg.sender != j.buyer) revert JobMarketNotBuyer(jobId, msg.sender, j.buyer);
        // INVARIANT: an Open job has no provider and no lock; the whole escrow goes back to the buyer.
        j.status = JobStatus.Cancelled;
        uint256 refund = j.payment;
        emit JobCancelled(jobId, refund);
        _credit(j.token, j.buyer, refund);
    }

    // ---------------------------------------------------------------- provider

    /// @inheritdoc IJobMarket
    function acceptJob(uint256 jobId) external {
        Job storage j = _known(jobId);
        // INVARIANT: one provider at a time; a job is accepted only while Open.
        if (j.status != JobStatus.Open) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Open);
        // NOTE: a later ProviderRegistry check (minimum attestation tier) goes here.
        uint16 next = j.nextSegment;
        uint32 deadline = uint32(block.timestamp + j.segmentTimeout);
        j.provider = msg.sender;
        j.status = JobStatus.Active;
        j.deadline = deadline;
        if (j.startSegment != next) j.startSegment = next;
        emit JobAccepted(jobId, msg.sender, next, deadline);
        _vault.lock(msg.sender, jobId, j.requiredStake);
    }

    /// @inheritdoc IJobMarket
    function commitSegment(
        uint256 jobId,
        uint256 segment,
        bytes32 traceRoot,
        bytes32 endStateHash,
        uint64 lossE6,
        string calldata checkpointCid
    ) external {
        Job storage j = _known(jobId);
        address provider = j.provider;
        if (msg.sender != provider) revert JobMarketNotProvider(jobId, msg.sender, provider);
        uint256 next = j.nextSegment;
        // INVARIANT: a segment is committed once and never rewritten.
        if (segment < next) revert JobMarketSegmentAlreadyCommitted(jobId, segment);
        if (j.status != JobStatus.Active) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Active);
        // INVARIANT: segments are committed in order, so every committed segment's start state is anchored.
        if (segment != next) revert JobMarketSegmentOutOfOrder(jobId, segment, next);
        uint32 deadline = j.deadline;
        // INVARIANT: a commit after its deadline is rejected (the job can be reported instead).
        if (block.timestamp > deadline) revert JobMarketSegmentLate(jobId, segment, deadline, block.timestamp);
        if (traceRoot == bytes32(0) || endStateHash == bytes32(0)) revert JobMarketZeroCommitment(jobId, segment);

        _segments[jobId][segment] = Trace.commitment(traceRoot, endStateHash);
        unchecked {
            // bound: next < segments <= type(uint16).max
            ++next;
        }
        j.nextSegment = uint16(next);
        emit SegmentCommitted(jobId, segment, traceRoot, endStateHash, lossE6, checkpointCid);
        if (next == j.segments) {
            // The SegmentCommitted event of the last segment marks the status change (see IJobMarket).
            j.status = JobStatus.Committed;
            j.deadline = uint32(block.timestamp + j.challengeWindow);
        } else {
            j.deadline = uint32(block.timestamp + j.segmentTimeout);
        }
    }

    // ---------------------------------------------------------------- anyone

    /// @inheritdoc IJobMarket
    function reportTimeout(uint256 jobId) external {
        Job storage j = _known(jobId);
        if (j.status != JobStatus.Active) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Active);
        // INVARIANT: a job under dispute is not re-opened; the dispute settles first.
        if (j.openDisputes != 0) revert JobMarketFrozen(jobId, j.openDisputes);
        // INVARIANT: only a missed deadline is punished.
        if (block.timestamp <= j.deadline) revert JobMarketDeadlineNotPassed(jobId, j.deadline, block.timestamp);

        address provider = j.provider;
        address buyer = j.buyer;
        // NOTE: the lock, not policy.requiredStake: the dispute role may have slashed part of it directly.
        uint256 locked = _vault.lockedFor(provider, jobId);
        uint256 slashed = (locked * j.timeoutSlashBps) / _BPS;
        uint256 segment = j.nextSegment;
        j.provider = address(0);
        j.status = JobStatus.Open;
        j.deadline = 0;
        emit JobTimedOut(jobId, provider, segment, slashed);
        if (slashed != 0) {
            address[] memory recipients = new address[](1);
            uint256[] memory amounts = new uint256[](1);
            recipients[0] = buyer;
            amounts[0] = slashed;
            _vault.slash(provider, jobId, slashed, recipients, amounts);
        }
        _vault.unlock(provider, jobId);
    }

    /// @inheritdoc IJobMarket
    function finalize(uint256 jobId) external {
        Job storage j = _known(jobId);
        if (j.status != JobStatus.Committed) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Committed);
        // INVARIANT: no payment is released while a dispute is open.
        if (j.openDisputes != 0) revert JobMarketFrozen(jobId, j.openDisputes);
        // INVARIANT: the challenge window runs in full before payment is released.
        if (block.timestamp <= j.deadline) revert JobMarketChallengeWindowOpen(jobId, j.deadline, block.timestamp);

        address provider = j.provider;
        address token = j.token;
        uint256 payment = j.payment;
        uint256 segments = j.segments;
        // The provider is paid for the segments it committed; segments of a timed-out predecessor go back
        // to the buyer (the predecessor forfeited them by abandoning the job).
        uint256 providerPay = (payment * (segments - j.startSegment)) / segments;
        uint256 refund = payment - providerPay;
        j.status = JobStatus.Finalized;
        emit JobFinalized(jobId, provider, providerPay, refund);
        _credit(token, provider, providerPay);
        if (refund != 0) _credit(token, j.buyer, refund);
        _vault.unlock(provider, jobId);
    }

    /// @inheritdoc IJobMarket
    function claim(address token) external returns (uint256 amount) {
        amount = _credits[token][msg.sender];
        // INVARIANT: a credit is paid once: it is zeroed before the transfer.
        if (amount == 0) revert JobMarketNothingToClaim(msg.sender, token);
        _credits[token][msg.sender] = 0;
        emit CreditClaimed(msg.sender, token, amount);
        IERC20(token).safeTransfer(msg.sender, amount);
    }

    // ---------------------------------------------------------------- dispute role

    /// @inheritdoc IJobMarket
    function freeze(uint256 jobId) external onlyRole(DISPUTE_ROLE) {
        Job storage j = _known(jobId);
        JobStatus status = j.status;
        if (status != JobStatus.Active && status != JobStatus.Committed) revert JobMarketNotDisputable(jobId, status);
        // INVARIANT: once the challenge window has passed, the job can no longer be frozen.
        if (status == JobStatus.Committed && block.timestamp > j.deadline) {
            revert JobMarketChallengeWindowClosed(jobId, j.deadline, block.timestamp);
        }
        uint16 open = j.openDisputes + 1;
        j.openDisputes = open;
        emit JobFrozen(jobId, open);
    }

    /// @inheritdoc IJobMarket
    function settleProviderFault(uint256 jobId, address challenger) external onlyRole(DISPUTE_ROLE) {
        Job storage j = _known(jobId);
        if (challenger == address(0)) revert JobMarketZeroChallenger();
        // INVARIANT: only a frozen (hence Active or Committed) job is settled.
        if (j.openDisputes == 0) revert JobMarketNotFrozen(jobId);

        address provider = j.provider;
        address buyer = j.buyer;
        uint256 locked = _vault.lockedFor(provider, jobId);
        uint256 toChallenger = (locked * j.challengerBps) / _BPS;
        uint256 toBuyer = (locked * j.buyerBps) / _BPS;
        uint256 refund = j.payment;
        j.status = JobStatus.Refunded;
        j.openDisputes = 0;
        emit ProviderFaultSettled(jobId, provider, challenger, locked, refund);
        _credit(j.token, buyer, refund);
        if (locked != 0) {
            address[] memory recipients = new address[](3);
            uint256[] memory amounts = new uint256[](3);
            recipients[0] = challenger;
            recipients[1] = buyer;
            recipients[2] = address(0); // burn
            amounts[0] = toChallenger;
            amounts[1] = toBuyer;
            amounts[2] = locked - toChallenger - toBuyer; // rounding dust is burned
            _vault.slash(provider, jobId, locked, recipients, amounts);
        }
    }

    /// @inheritdoc IJobMarket
    function settleNoFault(uint256 jobId) external onlyRole(DISPUTE_ROLE) {
        Job storage j = _known(jobId);
        if (j.openDisputes == 0) revert JobMarketNotFrozen(jobId);
        uint16 open = j.openDisputes - 1;
        j.openDisputes = open;
        emit JobUnfrozen(jobId, open);
    }

    // ---------------------------------------------------------------- views

    /// @inheritdoc IJobMarket
    function getJob(uint256 jobId) external view returns (JobView memory v) {
        Job storage j = _jobs[jobId];
        v.buyer = j.buyer;
        v.provider = j.provider;
        v.token = j.token;
        v.status = j.status;
        v.nextSegment = j.nextSegment;
        v.startSegment = j.startSegment;
        v.openDisputes = j.openDisputes;
        v.deadline = j.deadline;
        v.payment = j.payment;
        v.manifestHash = j.manifestHash;
        v.policy = Policy({
            segments: j.segments,
            stepsPerSegment: j.stepsPerSegment,
            requiredStake: j.requiredStake,
            segmentTimeout: j.segmentTimeout,
            challengeWindow: j.challengeWindow,
            challengerBps: j.challengerBps,
            buyerBps: j.buyerBps,
            burnBps: j.burnBps,
            timeoutSlashBps: j.timeoutSlashBps
        });
    }

    /// @inheritdoc IJobMarket
    function jobParties(uint256 jobId) external view returns (address buyer, address provider, JobStatus status) {
        Job storage j = _jobs[jobId];
        return (j.buyer, j.provider, j.status);
    }

    /// @inheritdoc IJobMarket
    function segmentCommitment(uint256 jobId, uint256 segment) external view returns (bytes32) {
        return _segments[jobId][segment];
    }

    /// @inheritdoc IJobMarket
    function verifySegment(uint256 jobId, uint256 segment, bytes32 traceRoot, bytes32 endStateHash)
        external
        view
        returns (bool)
    {
        bytes32 c = _segments[jobId][segment];
        return c != bytes32(0) && c == Trace.commitment(traceRoot, endStateHash);
    }

    /// @inheritdoc IJobMarket
    function creditOf(address account, address token) external view returns (uint256) {
        return _credits[token][account];
    }

    /// @inheritdoc IJobMarket
    function jobCount() external view returns (uint256) {
        return _jobCount;
    }

    /// @notice The StakeVault holding providers' stake.
    function vault() external view returns (address) {
        return address(_vault);
    }

    // ---------------------------------------------------------------- internal

    function _known(uint256 jobId) private view returns (Job storage j) {
        j = _jobs[jobId];
        if (j.status == JobStatus.None) revert JobMarketUnknownJob(jobId);
    }

    function _credit(address token, address account, uint256 amount) private {
        _credits[token][account] += amount;
        emit Credited(account, token, amount);
    }

    function _checkPolicy(Policy calldata p) private pure {
        if (p.segments == 0 || p.stepsPerSegment == 0) revert JobMarketInvalidShape(p.segments, p.stepsPerSegment);
        if (p.requiredStake == 0) revert JobMarketZeroStake();
        if (
            p.segmentTimeout == 0 || p.segmentTimeout > MAX_WINDOW_SECONDS || p.challengeWindow == 0
                || p.challengeWindow > MAX_WINDOW_SECONDS
        ) revert JobMarketInvalidWindows(p.segmentTimeout, p.challengeWindow);
        if (
            uint256(p.challengerBps) + p.buyerBps + p.burnBps != _BPS || p.timeoutSlashBps > _BPS
        ) revert JobMarketInvalidShares(p.challengerBps, p.buyerBps, p.burnBps, p.timeoutSlashBps);
    }
}
