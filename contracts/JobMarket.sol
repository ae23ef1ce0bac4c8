// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {IDataRegistry} from "./interfaces/IDataRegistry.sol";
import {IDisputeGame} from "./interfaces/IDisputeGame.sol";
import {Trace} from "./libraries/Trace.sol";
import {DataShares} from "./libraries/DataShares.sol";
import {TransferIn} from "./libraries/TransferIn.sol";
import {FixedRoles} from "./access/FixedRoles.sol";

/// @title JobMarket: escrow, trace anchoring, release, refund and abandonment (see IJobMarket)
/// @dev Gas: commitSegment reads and writes one packed job slot and writes one new slot per segment
/// (keccak256(traceRoot, endStateHash)); lossE6 and checkpointCid are only in the event.
contract JobMarket is IJobMarket, FixedRoles {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    string public constant VERSION = "pouw-JobMarket-1";

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
    uint256 private constant _BPS = 10_000;
    uint8 private constant _TIER_NONE = 4;

    IStakeVault private immutable _vault;

    uint256 private _jobCount;
    mapping(uint256 jobId => Job) private _jobs;
    mapping(uint256 jobId => mapping(uint256 segment => bytes32 commitment)) private _segments;
    mapping(address token => mapping(address account => uint256 amount)) private _credits;
    // NOTE: set once by the wirer (setRegistries, before `wire`) rather than in the constructor, so existing
    // deployments and deploy scripts keep their constructor; acceptJob pays one SLOAD for it.
    IAuditorRegistry private _auditors;
    IProviderRegistry private _providers;
    /// @dev panelFees(), packed with _providers: acceptJob reads both in one slot.
    uint96 private _panelFees;
    IDataRegistry private _data;
    mapping(uint256 jobId => JobCorpus[]) private _corpora;

    /// @param wirer_ the account that calls `setRegistries` and then `wire` once (the deployer); nobody ever
    /// holds DEFAULT_ADMIN_ROLE
    constructor(IStakeVault vault_, address wirer_) FixedRoles(wirer_) {
        _vault = vault_;
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
        jobId = _createJob(manifestHash, manifestUri, token, payment, policy);
    }

    /// @inheritdoc IJobMarket
    function createJobWithTerms(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        Policy calldata policy,
        Terms calldata terms
    ) external returns (uint256 jobId) {
        uint256 n = terms.corpora.length;
        if (terms.minTier > _TIER_NONE) revert JobMarketInvalidTier(terms.minTier);
        if (terms.dataShareBps > _BPS || (terms.dataShareBps != 0 && n == 0)) {
            revert JobMarketInvalidDataShare(terms.dataShareBps, n);
        }
        if (n > MAX_CORPORA) revert JobMarketTooManyCorpora(n, MAX_CORPORA);
        IDataRegistry data = _data;
        if (n != 0 && address(data) == address(0)) revert JobMarketRegistriesNotSet();
        uint64 previous;
        for (uint256 i; i < n; ++i) {
            CorpusUse calldata c = terms.corpora[i];
            if (c.corpusId <= previous) revert JobMarketCorporaNotAscending(previous, c.corpusId);
            if (c.tokens == 0) revert JobMarketZeroTokens(c.corpusId);
            // INVARIANT: jobs reference registered, unretired corpora only (reverts with the registry's error).
            data.requireAttachable(c.corpusId);
            previous = c.corpusId;
        }
        jobId = _createJob(manifestHash, manifestUri, token, payment, policy);
        Job storage j = _jobs[jobId];
        j.minTier = terms.minTier;
        j.dataShareBps = terms.dataShareBps;
        j.corpusCount = uint8(n); // fits: n <= MAX_CORPORA
        JobCorpus[] storage stored = _corpora[jobId];
        for (uint256 i; i < n; ++i) {
            stored.push(JobCorpus({corpusId: terms.corpora[i].corpusId, tokens: terms.corpora[i].tokens, weightE6: 0, weighted: false}));
        }
        emit JobTermsSet(jobId, terms.minTier, terms.dataShareBps, terms.corpora);
    }

    function _createJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        Policy calldata policy
    ) private returns (uint256 jobId) {
        if (payment == 0) revert JobMarketZeroPayment();
        if (token == address(0)) revert JobMarketZeroToken();
        _checkPolicy(policy);

        jobId = ++_jobCount;
        Job storage j = _jobs[jobId];
        j.status = JobStatus.Open;
        j.segments = policy.segments;
        j.segmentTimeout = uint24(policy.segmentTimeout); // fits: <= MAX_WINDOW_SECONDS < 2^24
        j.buyer = msg.sender;
        j.stepsPerSegment = uint16(policy.stepsPerSegment); // fits: <= MAX_STEPS_PER_SEGMENT (_checkPolicy)
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
        uint256 received = TransferIn.pull(IERC20(token), msg.sender, payment);
        // INVARIANT: the escrow booked is the escrow held: a fee-on-transfer token would leave the market owing more.
        if (received != payment) revert JobMarketTransferShortfall(token, payment, received);
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
        uint8 minTier = j.minTier;
        (uint8 tier, address sessionKey) = _tenureTier(jobId, j, msg.sender, minTier);
        // INVARIANT: a provider weaker than the job's minimum tier never holds the job.
        if (minTier != 0 && tier > minTier) revert JobMarketTierTooLow(jobId, msg.sender, tier, minTier);
        uint16 next = j.nextSegment;
        uint32 deadline = uint32(block.timestamp + j.segmentTimeout);
        uint256 lock = _scaledStake(j.requiredStake, tier);
        uint256 share = (lock * j.challengerBps) / _BPS;
        uint256 fees = _panelFees;
        // INVARIANT: a fault's challenger share pays the panel that finds it, so an honest challenger never loses by
        // proving a cheat (the panel's fees come out of the share first, docs/disputes.md); a tier discount or a tiny
        // policy stake that breaks this would leave the cheat unchallenged, so the lock is refused.
        if (share < fees) revert JobMarketLockCannotPayPanel(jobId, msg.sender, lock, share, fees);
        j.provider = msg.sender;
        j.status = JobStatus.Active;
        j.deadline = deadline;
        if (j.startSegment != next) j.startSegment = next;
        // INVARIANT: the re-open budget (MAX_REOPENS) is a tenure's: undecided disputes in an earlier tenure's window
        // must not leave an honest successor one NoDecision away from Unresolved (no pay for its segments).
        if (j.reopens != 0) j.reopens = 0;
        // INVARIANT: a tenure whose (discounted) lock rests on evidence that bound a session key commits from that key
        // only, so the tier is used by the machine that holds the attested key; a later tenure binds its own (or none).
        // NOTE: the flag sits in slot 1, which commitSegment reads anyway (stepsPerSegment), so a tenure without a key
        // pays no extra storage read per commit; a stale `committer` of an earlier tenure is ignored while unbound.
        bool bound = sessionKey != address(0);
        if (bound) (j.committer, j.tenureTier) = (sessionKey, tier);
        if (j.committerBound != bound) j.committerBound = bound;
        emit JobAccepted(jobId, msg.sender, next, deadline);
        if (sessionKey != address(0)) emit CommitterBound(jobId, sessionKey);
        _vault.lock(msg.sender, jobId, lock);
    }

    /// @inheritdoc IJobMarket
    function rebindCommitter(uint256 jobId) external {
        Job storage j = _known(jobId);
        if (j.status != JobStatus.Active) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Active);
        if (msg.sender != j.provider) revert JobMarketNotProvider(jobId, msg.sender, j.provider);
        if (!j.committerBound) revert JobMarketNoCommitter(jobId);
        uint8 was = j.tenureTier;
        (uint8 tier, address key) = _tenureTier(jobId, j, msg.sender, was);
        // INVARIANT: the tenure's lock was sized at `was`; a new key takes the commits only with a record at least as
        // strong that stands through the tenure's last possible commit, so a rebind never keeps a discount (or a
        // minimum tier) that current evidence does not carry.
        if (tier > was) revert JobMarketRebindTierTooLow(jobId, msg.sender, tier, was);
        j.committer = key;
        // a keyless tier-3 record: the provider commits itself, as a tenure accepted on that record would
        if (key == address(0)) j.committerBound = false;
        emit CommitterBound(jobId, key);
    }

    /// @inheritdoc IJobMarket
    function commitSegment(
        uint256 jobId,
        uint256 segment,
        bytes32[] calldata stateHashes,
        uint64 lossE6,
        string calldata checkpointCid
    ) external {
        Job storage j = _known(jobId);
        if (j.committerBound) {
            address committer = j.committer;
            if (msg.sender != committer) revert JobMarketNotSessionKey(jobId, msg.sender, committer);
        } else if (msg.sender != j.provider) {
            revert JobMarketNotProvider(jobId, msg.sender, j.provider);
        }
        uint256 next = j.nextSegment;
        // INVARIANT: a segment is committed once and never rewritten.
        if (segment < next) revert JobMarketSegmentAlreadyCommitted(jobId, segment);
        if (j.status != JobStatus.Active) revert JobMarketWrongStatus(jobId, j.status, JobStatus.Active);
        // INVARIANT: segments are committed in order, so every committed segment's start state is anchored.
        if (segment != next) revert JobMarketSegmentOutOfOrder(jobId, segment, next);
        // INVARIANT: a commit after its deadline is rejected (the job can be reported instead).
        if (block.timestamp > j.deadline) revert JobMarketSegmentLate(jobId, segment, j.deadline, block.timestamp);
        _emitCommitted(jobId, segment, _anchor(j, jobId, segment, stateHashes), lossE6, checkpointCid, stateHashes);
        unchecked {
            // bound: next < segments <= type(uint16).max
            ++next;
        }
        j.nextSegment = uint16(next);
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
        uint256 segment = j.nextSegment;
        uint256 slashed = _timeoutSlash(j, _vault.lockedFor(provider, jobId), segment != j.startSegment);
        uint32 until;
        bool ended;
        if (segment == j.startSegment) {
            // Nothing committed in this tenure: nothing to dispute, the job re-opens at once.
            j.provider = address(0);
            j.deadline = 0;
            uint8 idle = j.idleTimeouts + 1;
            j.idleTimeouts = idle;
            // INVARIANT: a job spends at most MAX_IDLE_TIMEOUTS tenures that commit nothing. A re-opened job can be
            // re-accepted in the same block (or transaction) that re-opens it, before the buyer's cancelJob lands, so
            // without this cap a provider could hold the escrow forever (for free with timeoutSlashBps 0); tenures that
            // commit are bounded by the segment count.
            ended = idle >= MAX_IDLE_TIMEOUTS;
            j.status = ended ? JobStatus.Cancelled : JobStatus.Open;
        } else {
            // INVARIANT: a committed segment stays disputable for at least one challenge window after its commit,
            // whatever the provider does next: abandoning the job keeps the tenure's segments (and the rest of the
            // lock that a fault slashes) in reach until now + challengeWindow, after every commit of the tenure.
            until = uint32(block.timestamp + j.challengeWindow);
            j.status = JobStatus.TimedOut;
            j.deadline = until;
        }
        emit JobTimedOut(jobId, provider, segment, slashed, until);
        if (ended) {
            // INVARIANT: a job ended by the cap owes nobody but the buyer: timed-out providers forfeit their pay.
            uint256 refund = j.payment;
            emit JobCancelled(jobId, refund);
            _credit(j.token, buyer, refund);
        }
        if (slashed != 0) {
            address[] memory recipients = new address[](1);
            uint256[] memory amounts = new uint256[](1);
            recipients[0] = buyer;
            amounts[0] = slashed;
            _vault.slash(provider, jobId, slashed, recipients, amounts);
        }
        if (until == 0) _vault.unlock(provider, jobId);
    }

    /// @inheritdoc IJobMarket
    function reopenJob(uint256 jobId) external {
        Job storage j = _known(jobId);
        if (j.status != JobStatus.TimedOut) revert JobMarketWrongStatus(jobId, j.status, JobStatus.TimedOut);
        // INVARIANT: a job under dispute is not re-opened; the dispute settles first.
        if (j.openDisputes != 0) revert JobMarketFrozen(jobId, j.openDisputes);
        // INVARIANT: the timed-out tenure's window runs in full before its lock is released.
        if (block.timestamp <= j.deadline) revert JobMarketChallengeWindowOpen(jobId, j.deadline, block.timestamp);
        address provider = j.provider;
        j.provider = address(0);
        j.status = JobStatus.Open;
        j.deadline = 0;
        emit JobReopened(jobId, provider, j.nextSegment);
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
        j.status = JobStatus.Finalized;
        uint256 providerPay;
        uint256 refund;
        if (j.corpusCount == 0 || j.dataShareBps == 0) {
            // The provider is paid for the segments it committed; segments of a timed-out predecessor go
            // back to the buyer (the predecessor forfeited them by abandoning the job).
            providerPay = (payment * (segments - j.startSegment)) / segments;
            refund = payment - providerPay;
        } else {
            // INVARIANT: contributor credits + provider pay + refund == payment, to the wei (DataShares).
            (providerPay, refund) = _creditCorpora(jobId, j);
        }
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
        if (status != JobStatus.Active && status != JobStatus.Committed && status != JobStatus.TimedOut) {
            revert JobMarketNotDisputable(jobId, status);
        }
        // INVARIANT: once the challenge window has passed, the job can no longer be frozen.
        if (status != JobStatus.Active && block.timestamp > j.deadline) {
            revert JobMarketChallengeWindowClosed(jobId, j.deadline, block.timestamp);
        }
        // INVARIANT: an Active job past its segment deadline takes no new dispute, so the disputes that hold it resolve
        // within one dispute duration and reportTimeout can then re-open it: nobody holds the escrow by keeping a
        // dispute open at all times.
        if (status == JobStatus.Active && block.timestamp > j.deadline) {
            revert JobMarketSegmentDeadlinePassed(jobId, j.deadline, block.timestamp);
        }
        uint16 open = j.openDisputes + 1;
        j.openDisputes = open;
        emit JobFrozen(jobId, open);
    }

    /// @inheritdoc IJobMarket
    function settleProviderFault(uint256 jobId) external onlyRole(DISPUTE_ROLE) returns (uint256 toChallenger) {
        Job storage j = _known(jobId);
        // INVARIANT: only a frozen (hence Active or Committed) job is settled.
        if (j.openDisputes == 0) revert JobMarketNotFrozen(jobId);

        address provider = j.provider;
        address buyer = j.buyer;
        uint256 locked = _vault.lockedFor(provider, jobId);
        toChallenger = (locked * j.challengerBps) / _BPS;
        uint256 toBuyer = (locked * j.buyerBps) / _BPS;
        uint256 refund = j.payment;
        j.status = JobStatus.Refunded;
        j.openDisputes = 0;
        emit ProviderFaultSettled(jobId, provider, msg.sender, locked, toChallenger, refund);
        _credit(j.token, buyer, refund);
        if (locked != 0) {
            address[] memory recipients = new address[](3);
            uint256[] memory amounts = new uint256[](3);
            // NOTE: the challenger share goes to the dispute role, which splits it among every dispute that was open on
            // the job (IDisputeGame: reward rule), so that a concession to the provider's own address cannot take it all.
            recipients[0] = msg.sender;
            recipients[1] = buyer;
            recipients[2] = address(0); // burn
            amounts[0] = toChallenger;
            amounts[1] = toBuyer;
            amounts[2] = locked - toChallenger - toBuyer; // rounding dust is burned
            _vault.slash(provider, jobId, locked, recipients, amounts);
        }
    }

    /// @inheritdoc IJobMarket
    function settleNoFault(uint256 jobId, bool reopen) external onlyRole(DISPUTE_ROLE) {
        Job storage j = _known(jobId);
        if (j.openDisputes == 0) revert JobMarketNotFrozen(jobId);
        uint16 open = j.openDisputes - 1;
        j.openDisputes = open;
        emit JobUnfrozen(jobId, open);
        // INVARIANT: a dispute nobody decided leaves a Committed (or TimedOut) job open to a new challenge for a full
        // window, at most MAX_REOPENS times, so a silent or unavailable panel neither pays a cheater nor holds the
        // escrow forever.
        JobStatus status = j.status;
        uint8 reopens = j.reopens;
        if (reopen && (status == JobStatus.Committed || status == JobStatus.TimedOut)) {
            uint32 until = uint32(block.timestamp + j.challengeWindow);
            if (until > j.deadline) {
                // INVARIANT: a job whose disputes used up their re-opens is never paid by default: the next no-decision
                // that would need a re-open marks it (reopens = MAX_REOPENS + 1) to end Unresolved, whoever it favours.
                // The window is not extended, so no new dispute opens; a Fault of a dispute still open settles first.
                reopens = reopens < MAX_REOPENS ? reopens + 1 : uint8(MAX_REOPENS + 1);
                j.reopens = reopens;
                if (reopens <= MAX_REOPENS) {
                    j.deadline = until;
                    emit ChallengeWindowReopened(jobId, until, reopens);
                }
            }
        }
        // NOTE: the job ends when its last open dispute closed, so no open dispute is left on a job that no longer exists.
        if (open == 0 && reopens > MAX_REOPENS) {
            address provider = j.provider;
            uint256 refund = j.payment;
            j.status = JobStatus.Unresolved;
            emit JobUnresolved(jobId, provider, refund);
            _credit(j.token, j.buyer, refund);
            _vault.unlock(provider, jobId);
        }
    }

    // ---------------------------------------------------------------- wiring (once), evaluator

    /// @inheritdoc IJobMarket
    function setRegistries(IAuditorRegistry auditors, IProviderRegistry providers, IDataRegistry data)
        external
        onlyWirer
    {
        // INVARIANT: the registries never change once set (a job's tier and corpora rules stay fixed).
        if (address(_auditors) != address(0)) revert JobMarketRegistriesAlreadySet();
        if (address(auditors) == address(0) || address(providers) == address(0) || address(data) == address(0)) {
            revert JobMarketZeroRegistry();
        }
        _auditors = auditors;
        _providers = providers;
        _data = data;
        emit RegistriesSet(address(auditors), address(providers), address(data));
    }

    /// @inheritdoc IJobMarket
    function wire(address dispute, address evaluator) external onlyWirer {
        // INVARIANT: the role that freezes, settles and slashes has exactly one holder, fixed here forever;
        // so has the evaluator role (or it has none), and after this the registries can never be set.
        if (dispute == address(0)) revert FixedRolesZeroHolder(DISPUTE_ROLE);
        _wireRole(DISPUTE_ROLE, dispute);
        // NOTE: the DisputeGame's panel is fixed at its deployment, so one read here is exact forever. A holder without
        // code (tests and the gas bench wire an account) draws no panel, so no lock needs to pay one.
        if (dispute.code.length != 0) _panelFees = IDisputeGame(dispute).panelFees().toUint96();
        if (evaluator != address(0)) _wireRole(EVALUATOR_ROLE, evaluator);
        _endWiring();
    }

    /// @inheritdoc IJobMarket
    function recordImprovement(uint256 jobId, uint64 corpusId, uint32 weightE6) external onlyRole(EVALUATOR_ROLE) {
        Job storage j = _known(jobId);
        JobStatus status = j.status;
        // INVARIANT: weights only change a split that has not happened yet.
        if (
            status != JobStatus.Open && status != JobStatus.Active && status != JobStatus.Committed
                && status != JobStatus.TimedOut
        ) {
            revert JobMarketJobClosed(jobId, status);
        }
        if (weightE6 > MAX_WEIGHT_E6) revert JobMarketInvalidWeight(weightE6, MAX_WEIGHT_E6);
        JobCorpus[] storage corpora = _corpora[jobId];
        uint256 n = corpora.length;
        for (uint256 i; i < n; ++i) {
            JobCorpus storage c = corpora[i];
            if (c.corpusId != corpusId) continue;
            // INVARIANT: one improvement weight per corpus of a job; it is never rewritten.
            if (c.weighted) revert JobMarketImprovementAlreadyRecorded(jobId, corpusId);
            c.weightE6 = weightE6;
            c.weighted = true;
            emit ImprovementRecorded(jobId, corpusId, weightE6);
            return;
        }
        revert JobMarketCorpusNotInJob(jobId, corpusId);
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
    function committerOf(uint256 jobId) external view returns (address) {
        Job storage j = _jobs[jobId];
        return j.committerBound ? j.committer : address(0);
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

    /// @inheritdoc IJobMarket
    function termsOf(uint256 jobId)
        external
        view
        returns (uint8 minTier, uint16 dataShareBps, JobCorpus[] memory corpora)
    {
        Job storage j = _jobs[jobId];
        return (j.minTier, j.dataShareBps, _corpora[jobId]);
    }

    /// @inheritdoc IJobMarket
    function panelFees() external view returns (uint256) {
        return _panelFees;
    }

    /// @inheritdoc IJobMarket
    function requiredStakeFor(uint256 jobId, address provider) external view returns (uint8 tier, uint256 stake) {
        Job storage j = _jobs[jobId];
        (tier,) = _tenureTier(jobId, j, provider, 0);
        stake = _scaledStake(j.requiredStake, tier);
    }

    /// @inheritdoc IJobMarket
    function registries() external view returns (address auditors, address providers, address data) {
        return (address(_auditors), address(_providers), address(_data));
    }

    /// @inheritdoc IJobMarket
    function stakeMultiplierBps(uint8 tier) public pure returns (uint256) {
        if (tier == 1) return 5_000;
        if (tier == 2) return 6_250;
        if (tier == 3) return 7_500;
        if (tier == 4) return _BPS;
        revert JobMarketInvalidTier(tier);
    }

    /// @notice The StakeVault holding providers' stake.
    function vault() external view returns (address) {
        return address(_vault);
    }

    // ---------------------------------------------------------------- internal

    /// @dev Checks a segment's leaves, computes its root and stores its commitment and end state.
    function _anchor(Job storage j, uint256 jobId, uint256 segment, bytes32[] calldata stateHashes)
        private
        returns (bytes32[2] memory rootAndEnd)
    {
        uint256 k = j.stepsPerSegment;
        // INVARIANT: the leaves are data available by construction: all K+1 state hashes of the segment are in the
        // calldata (and the event), and the root is computed here, never taken from the provider.
        if (stateHashes.length != k + 1) revert JobMarketWrongLeafCount(jobId, segment, stateHashes.length, k + 1);
        (bytes32 traceRoot, bool anyZero) = Trace.segmentRootCalldata(segment * k, stateHashes);
        // INVARIANT: no committed state hash is zero (zero marks "nothing committed" everywhere else).
        if (anyZero) revert JobMarketZeroCommitment(jobId, segment);
        // INVARIANT: the trajectory is one chain of states: a segment starts where the previous one ended (for segment 0
        // the first leaf is h(0), which the panel checks against the manifest's initial state).
        if (segment != 0 && stateHashes[0] != j.lastEndState) {
            revert JobMarketBoundaryMismatch(jobId, segment, stateHashes[0], j.lastEndState);
        }
        // INVARIANT: the end state is the segment's last leaf, so no state outside the committed steps can be bound.
        bytes32 endStateHash = stateHashes[k];
        j.lastEndState = endStateHash;
        _segments[jobId][segment] = Trace.commitment(traceRoot, endStateHash);
        rootAndEnd = [traceRoot, endStateHash];
    }

    function _emitCommitted(
        uint256 jobId,
        uint256 segment,
        bytes32[2] memory rootAndEnd,
        uint64 lossE6,
        string calldata checkpointCid,
        bytes32[] calldata stateHashes
    ) private {
        // NOTE: emit SegmentCommitted(jobId, segment, root, end, lossE6, checkpointCid, stateHashes), ABI-encoded by hand:
        // the leaves and the CID are copied from calldata in one calldatacopy each (measured: 162 gas a commit less than
        // the compiler's encoder, 45 bytes of code less; the per-leaf cost is the log's 8 gas a byte either way).
        // Layout: root, end, lossE6, offset(cid) = 0xa0, offset(hashes), cid length and bytes zero-padded to 32, hashes
        // length and words. Decoded by viem (strict) in every event test.
        bytes32 topic0 = SegmentCommitted.selector;
        assembly ("memory-safe") {
            let p := mload(0x40)
            let cidLen := checkpointCid.length
            let cidPadded := and(add(cidLen, 31), not(31))
            mstore(p, mload(rootAndEnd))
            mstore(add(p, 0x20), mload(add(rootAndEnd, 0x20)))
            mstore(add(p, 0x40), lossE6)
            mstore(add(p, 0x60), 0xa0)
            mstore(add(p, 0x80), add(0xc0, cidPadded))
            mstore(add(p, 0xa0), cidLen)
            // the CID's last word is zeroed first, so its padding is zero after the copy
            if cidPadded { mstore(add(p, add(0xa0, cidPadded)), 0) }
            calldatacopy(add(p, 0xc0), checkpointCid.offset, cidLen)
            let h := add(add(p, 0xc0), cidPadded)
            let n := stateHashes.length
            mstore(h, n)
            calldatacopy(add(h, 0x20), stateHashes.offset, shl(5, n))
            log3(p, sub(add(h, add(0x20, shl(5, n))), p), topic0, jobId, segment)
        }
    }

    function _known(uint256 jobId) private view returns (Job storage j) {
        j = _jobs[jobId];
        if (j.status == JobStatus.None) revert JobMarketUnknownJob(jobId);
    }

    /// @dev The tier a tenure of `provider` on job `jobId` starting now counts at, and its record's session key (4 and
    /// none while no ProviderRegistry is set). Reverts JobMarketRecordExpiresFirst when the record's tier would meet
    /// `minTier` (1..3; 0 and 4: none) but lapses too early.
    function _tenureTier(uint256 jobId, Job storage j, address provider, uint8 minTier)
        private
        view
        returns (uint8 tier, address key)
    {
        IProviderRegistry providers = _providers;
        if (address(providers) == address(0)) return (_TIER_NONE, address(0));
        uint64 expiresAt;
        (tier, key, expiresAt) = providers.tierAndSessionKey(provider);
        uint256 lastCommitBy = block.timestamp + uint256(j.segments - j.nextSegment) * j.segmentTimeout;
        // INVARIANT: a tier (its discount, its minimum-tier access, its session key) counts for a tenure only if its
        // record stands through the tenure's last possible commit (every remaining segment committed at its deadline):
        // a record that lapses mid-tenure never leaves a discounted lock behind it.
        if (tier != _TIER_NONE && expiresAt < lastCommitBy) {
            if (tier <= minTier && minTier < _TIER_NONE) {
                revert JobMarketRecordExpiresFirst(jobId, provider, expiresAt, lastCommitBy);
            }
            (tier, key) = (_TIER_NONE, address(0));
        }
    }

    /// @dev The timeout slash of a lock `locked`: policy.timeoutSlashBps of it (the lock, not policy.requiredStake: the
    /// dispute role may have slashed part of it directly), capped at what is above the panel reserve when the tenure
    /// leaves disputable segments behind.
    function _timeoutSlash(Job storage j, uint256 locked, bool disputable) private view returns (uint256 slashed) {
        slashed = (locked * j.timeoutSlashBps) / _BPS;
        if (!disputable) return slashed;
        // INVARIANT: the lock that stays behind a TimedOut job's disputable segments still pays a panel: its challenger
        // share covers panelFees (as acceptJob checked for the whole lock), so an honest challenger of a timed-out
        // cheat never pays for the catch; the timeout slash takes only what is above that reserve.
        uint256 keep = _panelReserve(j.challengerBps);
        uint256 room = locked > keep ? locked - keep : 0;
        if (slashed > room) slashed = room;
    }

    /// @dev The least lock whose challenger share (lock * challengerBps / 10,000) covers panelFees: ceil(panelFees *
    /// 10,000 / challengerBps); 0 without panel fees. acceptJob refuses a lock below it.
    function _panelReserve(uint256 challengerBps) private view returns (uint256) {
        uint256 fees = _panelFees;
        if (fees == 0) return 0;
        return (fees * _BPS + challengerBps - 1) / challengerBps;
    }

    /// @dev ceil(requiredStake * multiplier / 10,000): at least 1 for any requiredStake >= 1.
    function _scaledStake(uint256 requiredStake, uint8 tier) private pure returns (uint256) {
        return (requiredStake * stakeMultiplierBps(tier) + _BPS - 1) / _BPS;
    }

    /// @dev Splits the payment by DataShares and credits each corpus's current payout address.
    function _creditCorpora(uint256 jobId, Job storage j) private returns (uint256 providerPay, uint256 refund) {
        JobCorpus[] storage corpora = _corpora[jobId];
        uint256 n = corpora.length;
        uint256[] memory weights = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            JobCorpus storage c = corpora[i];
            weights[i] = uint256(c.tokens) * (c.weighted ? c.weightE6 : DataShares.WEIGHT_ONE);
        }
        uint256[] memory credits;
        (credits, providerPay, refund) = DataShares.split(j.payment, j.dataShareBps, j.segments, j.startSegment, weights);
        _payCorpora(jobId, j.token, corpora, credits);
    }

    function _payCorpora(uint256 jobId, address token, JobCorpus[] storage corpora, uint256[] memory credits) private {
        IDataRegistry data = _data;
        for (uint256 i; i < credits.length; ++i) {
            uint256 amount = credits[i];
            if (amount == 0) continue;
            uint64 corpusId = corpora[i].corpusId;
            // NOTE: a corpus retired after the job was created is still paid (IDataRegistry: retirement rule).
            address payout = data.payoutOf(corpusId);
            emit DataShareCredited(jobId, corpusId, payout, amount);
            _credit(token, payout, amount);
        }
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
        // INVARIANT: the provider side loses at least half of the lock on any fault (MAX_CHALLENGER_BPS).
        if (p.challengerBps > MAX_CHALLENGER_BPS) revert JobMarketChallengerShareTooHigh(p.challengerBps, MAX_CHALLENGER_BPS);
        // INVARIANT: a timeout always costs the provider (MIN_TIMEOUT_SLASH_BPS), so idle tenures are no free grief.
        if (p.timeoutSlashBps < MIN_TIMEOUT_SLASH_BPS) {
            revert JobMarketTimeoutSlashTooLow(p.timeoutSlashBps, MIN_TIMEOUT_SLASH_BPS);
        }
        if (p.stepsPerSegment > MAX_STEPS_PER_SEGMENT) revert JobMarketInvalidShape(p.segments, p.stepsPerSegment);
    }
}
