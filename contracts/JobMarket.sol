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
import {JobMarketBase} from "./base/JobMarketBase.sol";
import {JobMarketExtension} from "./JobMarketExtension.sol";

/// @title JobMarket: escrow, trace anchoring, release, refund and abandonment (see IJobMarket)
/// @dev Gas: commitSegment reads and writes one packed job slot and writes one new slot per segment
/// (keccak256(traceRoot, endStateHash)); lossE6 and checkpointCid are only in the event, the leaves only in the
/// calldata of a top-level commit (SegmentLeaves otherwise).
/// Job creation, corpus improvement weights, the data-share split at finalize and retier run in JobMarketExtension
/// (deployed by the constructor, never replaced) by DELEGATECALL on this contract's storage, so that JobMarket's own
/// code stays under the size limit; their events, errors and credits are this contract's.
contract JobMarket is IJobMarket, JobMarketBase {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    string public constant VERSION = "pouw-JobMarket-1";

    /// @dev The JobMarketExtension this market delegates to.
    address private immutable _extension;

    /// @param wirer_ the account that calls `setRegistries` and then `wire` once (the deployer); nobody ever
    /// holds DEFAULT_ADMIN_ROLE
    constructor(IStakeVault vault_, address wirer_) JobMarketBase(vault_, wirer_) {
        _extension = address(new JobMarketExtension(vault_));
    }

    // ---------------------------------------------------------------- buyer (JobMarketExtension)

    /// @inheritdoc IJobMarket
    function createJob(bytes32, string calldata, address, uint128, Policy calldata) external returns (uint256) {
        _delegate();
    }

    /// @inheritdoc IJobMarket
    function createJobWithTerms(bytes32, string calldata, address, uint128, Policy calldata, Terms calldata)
        external
        returns (uint256)
    {
        _delegate();
    }

    /// @inheritdoc IJobMarket
    function createKindJob(bytes32, string calldata, address, uint128, Policy calldata, uint8, bytes32)
        external
        returns (uint256)
    {
        _delegate();
    }

    // ---------------------------------------------------------------- buyer

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
        _endTenure(jobId, j);
    }

    /// @inheritdoc IJobMarket
    function retier(uint256) external {
        _delegate();
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
        // INVARIANT: the timed-out tenure loses its timeout slash only now, its segments beyond dispute (_endTenure).
        _takeTimeoutSlash(jobId, j, provider);
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
            // INVARIANT: a missed deadline is paid for however the job ends: a timed-out provider does not escape its
            // timeout slash by disputing its own segments until the re-opens run out.
            if (status == JobStatus.TimedOut) _takeTimeoutSlash(jobId, j, provider);
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
    function recordImprovement(uint256, uint64, uint32) external {
        _delegate();
    }

    // ---------------------------------------------------------------- views

    /// @notice The JobMarketExtension this market runs job creation, corpus weights and retier in (by DELEGATECALL).
    function extension() external view returns (address) {
        return _extension;
    }

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
    function kindOf(uint256 jobId) external view returns (uint8 kind, bytes32 modelCidHash) {
        return (_jobs[jobId].kind, _models[jobId]);
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
    function stakeMultiplierBps(uint8 tier) external pure returns (uint256) {
        return _stakeMultiplierBps(tier);
    }

    /// @notice The StakeVault holding providers' stake.
    function vault() external view returns (address) {
        return address(_vault);
    }

    // ---------------------------------------------------------------- internal

    /// @dev Runs the current call's calldata in JobMarketExtension on this contract's storage and returns or reverts
    /// with its result (errors and events are this contract's).
    function _delegate() private {
        address target = _extension;
        assembly ("memory-safe") {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), target, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }

    /// @dev Splits the payment by DataShares and credits each corpus's current payout address
    /// (JobMarketExtension.creditCorpora, by DELEGATECALL).
    function _creditCorpora(uint256 jobId, Job storage) private returns (uint256 providerPay, uint256 refund) {
        (bool ok, bytes memory ret) = _extension.delegatecall(abi.encodeCall(JobMarketExtension.creditCorpora, (jobId)));
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
        (providerPay, refund) = abi.decode(ret, (uint256, uint256));
    }

    /// @dev Checks a segment's leaves, computes its root and stores its commitment and end state.
    function _anchor(Job storage j, uint256 jobId, uint256 segment, bytes32[] calldata stateHashes)
        private
        returns (bytes32[2] memory rootAndEnd)
    {
        uint256 k = j.stepsPerSegment;
        // INVARIANT: the leaves are data available by construction: all K+1 state hashes of the segment are in the
        // transaction's input or in SegmentLeaves (_emitCommitted), and the root is computed here, never taken from the
        // provider.
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
        // INVARIANT: every committed leaf can be read by anyone from the chain. A call from a codeless account that is also
        // the transaction's origin is the transaction's top-level call (no frame runs as a codeless account, and an
        // EIP-7702 delegated account has code), so its leaves are the transaction's input, which every node keeps with the
        // block; any other commit (a wallet contract, a multicall, a delegated account) copies them into SegmentLeaves.
        // NOTE: the leaves are not logged on the usual path: a log costs 8 gas a byte, 256 a leaf, on top of their 512 of
        // calldata. Readers recover them by (block hash, transaction index) and check them against traceRoot
        // (chain/getCommittedLeaves.ts).
        // Both events are ABI-encoded by hand, the CID and the leaves copied from calldata in one calldatacopy each.
        // SegmentCommitted's data: root, end, lossE6, offset(cid) = 0x80, cid length and bytes zero-padded to 32.
        // SegmentLeaves' data: offset = 0x20, length, words. Decoded by viem (strict) in every event test.
        bytes32 committedTopic = SegmentCommitted.selector;
        bytes32 leavesTopic = SegmentLeaves.selector;
        assembly ("memory-safe") {
            let p := mload(0x40)
            if iszero(and(eq(caller(), origin()), iszero(extcodesize(caller())))) {
                let n := stateHashes.length
                mstore(p, 0x20)
                mstore(add(p, 0x20), n)
                calldatacopy(add(p, 0x40), stateHashes.offset, shl(5, n))
                log3(p, add(0x40, shl(5, n)), leavesTopic, jobId, segment)
            }
            let cidLen := checkpointCid.length
            let cidPadded := and(add(cidLen, 31), not(31))
            mstore(p, mload(rootAndEnd))
            mstore(add(p, 0x20), mload(add(rootAndEnd, 0x20)))
            mstore(add(p, 0x40), lossE6)
            mstore(add(p, 0x60), 0x80)
            mstore(add(p, 0x80), cidLen)
            // the CID's last word is zeroed first, so its padding is zero after the copy
            if cidPadded { mstore(add(p, add(0x80, cidPadded)), 0) }
            calldatacopy(add(p, 0xa0), checkpointCid.offset, cidLen)
            log3(p, add(0xa0, cidPadded), committedTopic, jobId, segment)
        }
    }
}
