// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IJobMarket} from "../interfaces/IJobMarket.sol";
import {IStakeVault} from "../interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";
import {IProviderRegistry} from "../interfaces/IProviderRegistry.sol";
import {IDataRegistry} from "../interfaces/IDataRegistry.sol";
import {FixedRoles} from "../access/FixedRoles.sol";

/// @title JobMarketBase: the storage, constants and shared rules of JobMarket and of JobMarketExtension
/// @dev JobMarket runs JobMarketExtension's functions by DELEGATECALL on its own storage, so both contracts inherit
/// this one contract and nothing else that holds state.
/// INVARIANT: nothing declares a state variable after this contract in either linearization, so the two storage layouts
/// are the same by construction.
abstract contract JobMarketBase is FixedRoles {
    /// @dev Storage layout of a job; slot 0 is the only one commitSegment touches on its usual path.
    struct Job {
        // slot 0
        address provider;
        IJobMarket.JobStatus status;
        uint16 segments;
        uint16 nextSegment;
        uint32 deadline; // NOTE: uint32 seconds last until 2106
        uint24 segmentTimeout;
        // slot 1
        address buyer;
        uint16 stepsPerSegment; // <= MAX_STEPS_PER_SEGMENT (_checkPolicy)
        bool committerBound; // the tenure commits from `committer` (slot 6), read only when set
        uint32 challengeWindow;
        uint16 startSegment;
        uint16 openDisputes;
        // slot 2
        address token;
        uint16 challengerBps;
        uint16 buyerBps;
        uint16 burnBps;
        uint16 timeoutSlashBps;
        uint8 minTier; // Terms.minTier (0: any)
        uint16 dataShareBps; // Terms.dataShareBps
        uint8 corpusCount; // length of _corpora[jobId] (<= MAX_CORPORA)
        // slot 3
        uint128 payment;
        uint128 requiredStake;
        // slot 4
        bytes32 manifestHash;
        // slot 5: h of the last committed state (the next segment's first leaf must equal it)
        bytes32 lastEndState;
        // slot 6
        uint8 reopens; // this tenure's challenge windows re-opened after a NoDecision (<= MAX_REOPENS; MAX_REOPENS + 1: ends Unresolved)
        uint8 idleTimeouts; // timeouts of tenures that committed nothing (< MAX_IDLE_TIMEOUTS while the job lives)
        address committer; // the session key the tenure's attested tier bound (counts only while committerBound)
        uint8 tenureTier; // the tier the bound tenure was accepted at (read only while committerBound)
        uint8 kind; // 0: training; an inference job's kind, fixed at createKindJob (its model: _models)
    }

    /// @notice Held by the dispute contract: freeze and settle jobs. Wired once (`wire`).
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");
    /// @notice Held by the evaluator named at deployment (`wire`; possibly nobody): records corpus
    /// improvement weights.
    bytes32 public constant EVALUATOR_ROLE = keccak256("EVALUATOR_ROLE");
    /// @notice Most corpora one job may reference (bounds finalize's loop).
    uint256 public constant MAX_CORPORA = 16;
    /// @notice Largest improvement weight, in millionths (10.0).
    uint256 public constant MAX_WEIGHT_E6 = 10_000_000;
    /// @notice Upper bound of segmentTimeout and challengeWindow, in seconds.
    uint256 public constant MAX_WINDOW_SECONDS = 180 days;
    /// @notice Largest challenger share of a fault slash: the rest (buyer and burn) is what the provider side loses
    /// whatever it does with other addresses, so at least half of every lock is lost on a fault (docs/disputes.md).
    uint256 public constant MAX_CHALLENGER_BPS = 5_000;
    /// @notice How many times a NoDecision re-opens a Committed job's challenge window (bounds the job's lifetime).
    uint256 public constant MAX_REOPENS = 2;
    /// @notice Timeouts of tenures that committed nothing a job survives: the MAX_IDLE_TIMEOUTS-th ends it Cancelled
    /// (escrow back to the buyer), so nobody holds an escrow by re-accepting a job the moment its timeout re-opens it.
    uint256 public constant MAX_IDLE_TIMEOUTS = 3;
    /// @notice Most steps one segment may have: its K+1 state hashes travel in one commitSegment's calldata.
    uint256 public constant MAX_STEPS_PER_SEGMENT = 4_096;
    /// @notice Least policy.timeoutSlashBps: a tenure that commits nothing costs its provider at least this share of
    /// its lock, so accepting a job only to let it time out (MAX_IDLE_TIMEOUTS times, which cancels it) is never free.
    uint256 public constant MIN_TIMEOUT_SLASH_BPS = 500;
    uint256 internal constant _BPS = 10_000;
    uint8 internal constant _TIER_NONE = 4;

    IStakeVault internal immutable _vault;

    uint256 internal _jobCount;
    mapping(uint256 jobId => Job) internal _jobs;
    mapping(uint256 jobId => mapping(uint256 segment => bytes32 commitment)) internal _segments;
    mapping(address token => mapping(address account => uint256 amount)) internal _credits;
    // NOTE: set once by the wirer (setRegistries, before `wire`) rather than in the constructor, so existing
    // deployments and deploy scripts keep their constructor; acceptJob pays one SLOAD for it.
    IAuditorRegistry internal _auditors;
    IProviderRegistry internal _providers;
    /// @dev panelFees(), packed with _providers: acceptJob reads both in one slot.
    uint96 internal _panelFees;
    IDataRegistry internal _data;
    mapping(uint256 jobId => IJobMarket.JobCorpus[]) internal _corpora;
    /// @dev keccak256 of an inference job's model CID, fixed at createKindJob (zero for training jobs).
    mapping(uint256 jobId => bytes32 modelCidHash) internal _models;

    constructor(IStakeVault vault_, address wirer_) FixedRoles(wirer_) {
        _vault = vault_;
    }

    /// @dev IJobMarket.stakeMultiplierBps.
    function _stakeMultiplierBps(uint8 tier) internal pure returns (uint256) {
        if (tier == 1) return 5_000;
        if (tier == 2) return 6_250;
        if (tier == 3) return 7_500;
        if (tier == 4) return _BPS;
        revert IJobMarket.JobMarketInvalidTier(tier);
    }

    function _known(uint256 jobId) internal view returns (Job storage j) {
        j = _jobs[jobId];
        if (j.status == IJobMarket.JobStatus.None) revert IJobMarket.JobMarketUnknownJob(jobId);
    }

    /// @dev The tier a tenure of `provider` on job `jobId` starting now counts at, and its record's session key (4 and
    /// none while no ProviderRegistry is set). Reverts JobMarketRecordExpiresFirst when the record's tier would meet
    /// `minTier` (1..3; 0 and 4: none) but lapses too early.
    function _tenureTier(uint256 jobId, Job storage j, address provider, uint8 minTier)
        internal
        view
        returns (uint8 tier, address key)
    {
        IProviderRegistry providers = _providers;
        if (address(providers) == address(0)) return (_TIER_NONE, address(0));
        uint64 expiresAt;
        (tier, key, expiresAt) = providers.tierAndSessionKey(provider);
        uint256 lastCommitBy = _lastCommitBy(j, provider);
        // INVARIANT: a tier (its discount, its minimum-tier access, its session key) counts for a tenure only if its
        // record stands through the tenure's last possible commit (every remaining segment committed at its deadline):
        // a record that lapses mid-tenure never leaves a discounted lock behind it.
        if (tier != _TIER_NONE && expiresAt < lastCommitBy) {
            if (tier <= minTier && minTier < _TIER_NONE) {
                revert IJobMarket.JobMarketRecordExpiresFirst(jobId, provider, expiresAt, lastCommitBy);
            }
            (tier, key) = (_TIER_NONE, address(0));
        }
    }

    /// @dev The last possible commit of `provider`'s tenure on `j`: its running tenure's (the next commit is due at the
    /// deadline, each later one a segmentTimeout after the one before; counting from now would overstate it by the time
    /// since the last commit and end an on-schedule tenure), or one starting now.
    function _lastCommitBy(Job storage j, address provider) internal view returns (uint256) {
        uint256 remaining = j.segments - j.nextSegment;
        return j.status == IJobMarket.JobStatus.Active && j.provider == provider
            ? uint256(j.deadline) + (remaining - 1) * j.segmentTimeout
            : block.timestamp + remaining * j.segmentTimeout;
    }

    /// @dev ceil(requiredStake * multiplier / 10,000): at least 1 for any requiredStake >= 1.
    function _scaledStake(uint256 requiredStake, uint8 tier) internal pure returns (uint256) {
        return (requiredStake * _stakeMultiplierBps(tier) + _BPS - 1) / _BPS;
    }

    function _credit(address token, address account, uint256 amount) internal {
        _credits[token][account] += amount;
        emit IJobMarket.Credited(account, token, amount);
    }

    /// @dev Ends job `jobId`'s tenure as a missed deadline does (reportTimeout; retier when the tier cannot be paid
    /// for): a tenure that committed nothing loses the timeout slash and re-opens the job at once (or, the
    /// MAX_IDLE_TIMEOUTS-th, cancels it); one that committed segments leaves them disputable for one challenge window
    /// with its whole lock behind them, and loses the timeout slash only when that window closed with no fault
    /// (_takeTimeoutSlash, at reopenJob or an Unresolved end). The caller checks the job is Active and not frozen.
    function _endTenure(uint256 jobId, Job storage j) internal {
        address provider = j.provider;
        address buyer = j.buyer;
        uint256 segment = j.nextSegment;
        uint256 slashed;
        uint32 until;
        bool ended;
        if (segment == j.startSegment) {
            // Nothing committed in this tenure: nothing to dispute, the slash is taken and the job re-opens at once.
            slashed = _timeoutSlash(j, _vault.lockedFor(provider, jobId), false);
            j.provider = address(0);
            j.deadline = 0;
            uint8 idle = j.idleTimeouts + 1;
            j.idleTimeouts = idle;
            // INVARIANT: a job spends at most MAX_IDLE_TIMEOUTS tenures that commit nothing. A re-opened job can be
            // re-accepted in the same block (or transaction) that re-opens it, before the buyer's cancelJob lands, so
            // without this cap a provider could hold the escrow forever (for free with timeoutSlashBps 0); tenures that
            // commit are bounded by the segment count.
            ended = idle >= MAX_IDLE_TIMEOUTS;
            j.status = ended ? IJobMarket.JobStatus.Cancelled : IJobMarket.JobStatus.Open;
        } else {
            // INVARIANT: a committed segment stays disputable for at least one challenge window after its commit,
            // whatever the provider does next: abandoning the job keeps the tenure's segments (and the rest of the
            // lock that a fault slashes) in reach until now + challengeWindow, after every commit of the tenure.
            // INVARIANT: the whole lock stays behind those segments until their window closed: the timeout slash waits
            // for it. Paid now, it would go to the buyer, which may be the provider's own address (up to 100% of the
            // lock with timeoutSlashBps 10,000), and leave a faked segment disputable with nothing behind it.
            until = uint32(block.timestamp + j.challengeWindow);
            j.status = IJobMarket.JobStatus.TimedOut;
            j.deadline = until;
        }
        emit IJobMarket.JobTimedOut(jobId, provider, segment, slashed, until);
        if (ended) {
            // INVARIANT: a job ended by the cap owes nobody but the buyer: timed-out providers forfeit their pay.
            uint256 refund = j.payment;
            emit IJobMarket.JobCancelled(jobId, refund);
            _credit(j.token, buyer, refund);
        }
        if (slashed != 0) _slashToBuyer(provider, jobId, slashed, buyer);
        if (until == 0) _vault.unlock(provider, jobId);
    }

    /// @dev Takes a TimedOut tenure's timeout slash once its segments can no longer be disputed (the window closed with
    /// no fault: reopenJob, or an Unresolved end): the amount it would have lost at the timeout itself, so an honest
    /// provider's timeout costs what it always did, only later. The caller releases the rest of the lock.
    function _takeTimeoutSlash(uint256 jobId, Job storage j, address provider) internal {
        uint256 slashed = _timeoutSlash(j, _vault.lockedFor(provider, jobId), true);
        if (slashed != 0) _slashToBuyer(provider, jobId, slashed, j.buyer);
    }

    function _slashToBuyer(address provider, uint256 jobId, uint256 amount, address buyer) private {
        address[] memory recipients = new address[](1);
        uint256[] memory amounts = new uint256[](1);
        recipients[0] = buyer;
        amounts[0] = amount;
        _vault.slash(provider, jobId, amount, recipients, amounts);
    }

    /// @dev The timeout slash of a lock `locked`: policy.timeoutSlashBps of it (the lock, not policy.requiredStake: the
    /// dispute role may have slashed part of it directly), capped at what is above the panel reserve when the tenure
    /// committed segments.
    function _timeoutSlash(Job storage j, uint256 locked, bool committed) internal view returns (uint256 slashed) {
        slashed = (locked * j.timeoutSlashBps) / _BPS;
        if (!committed) return slashed;
        // NOTE: a tenure that committed segments keeps the panel reserve ceil(panelFees * 10,000 / challengerBps) out of
        // its timeout slash, the terms its provider accepted (docs/contracts.md); its segments' window runs with the
        // whole lock behind them (_endTenure), so the reserve is not what pays their panel.
        uint256 keep = _panelReserve(j.challengerBps);
        uint256 room = locked > keep ? locked - keep : 0;
        if (slashed > room) slashed = room;
    }

    /// @dev The least lock whose challenger share (lock * challengerBps / 10,000) covers panelFees: ceil(panelFees *
    /// 10,000 / challengerBps); 0 without panel fees. acceptJob refuses a lock below it.
    function _panelReserve(uint256 challengerBps) internal view returns (uint256) {
        uint256 fees = _panelFees;
        if (fees == 0) return 0;
        return (fees * _BPS + challengerBps - 1) / challengerBps;
    }
}
