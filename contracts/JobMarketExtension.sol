// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {IDataRegistry} from "./interfaces/IDataRegistry.sol";
import {DataShares} from "./libraries/DataShares.sol";
import {TransferIn} from "./libraries/TransferIn.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {JobMarketBase} from "./base/JobMarketBase.sol";

/// @title JobMarketExtension: job creation, corpus improvement weights, the data-share split and retier of JobMarket
/// @notice Runs only by DELEGATECALL from the JobMarket that deployed it, on JobMarket's storage (JobMarketBase):
/// JobMarket forwards `createJob`, `createJobWithTerms`, `createKindJob`, `recordImprovement` and `retier` here with their calldata
/// unchanged, and calls `creditCorpora` from finalize, so events, errors, credits and token balances are JobMarket's. A
/// direct call reverts (JobMarketExtensionDirectCall): this contract's own storage holds nothing.
contract JobMarketExtension is JobMarketBase {
    string public constant VERSION = "pouw-JobMarketExtension-1";

    /// @notice A function of this contract was called directly rather than by DELEGATECALL from its JobMarket.
    error JobMarketExtensionDirectCall(address extension);

    /// @dev This contract's own address: a call whose storage context is this contract is a direct call.
    address private immutable _self;

    /// @param vault_ the StakeVault of the JobMarket deploying this contract (the deployer is this contract's wirer,
    /// which never wires anything: roles are read from JobMarket's storage)
    constructor(IStakeVault vault_) JobMarketBase(vault_, msg.sender) {
        _self = address(this);
    }

    modifier onlyDelegated() {
        // INVARIANT: this code runs on JobMarket's storage only (its jobs, escrow credits and corpora).
        if (address(this) == _self) revert JobMarketExtensionDirectCall(_self);
        _;
    }

    // ---------------------------------------------------------------- buyer

    /// @dev As IJobMarket declares it.
    function createJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        IJobMarket.Policy calldata policy
    ) external onlyDelegated returns (uint256 jobId) {
        jobId = _createJob(manifestHash, manifestUri, token, payment, policy);
    }

    /// @dev As IJobMarket declares it.
    function createJobWithTerms(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        IJobMarket.Policy calldata policy,
        IJobMarket.Terms calldata terms
    ) external onlyDelegated returns (uint256 jobId) {
        uint256 n = terms.corpora.length;
        if (terms.minTier > _TIER_NONE) revert IJobMarket.JobMarketInvalidTier(terms.minTier);
        if (terms.dataShareBps > _BPS || (terms.dataShareBps != 0 && n == 0)) {
            revert IJobMarket.JobMarketInvalidDataShare(terms.dataShareBps, n);
        }
        if (n > MAX_CORPORA) revert IJobMarket.JobMarketTooManyCorpora(n, MAX_CORPORA);
        IDataRegistry data = _data;
        if (n != 0 && address(data) == address(0)) revert IJobMarket.JobMarketRegistriesNotSet();
        uint64 previous;
        for (uint256 i; i < n; ++i) {
            IJobMarket.CorpusUse calldata c = terms.corpora[i];
            if (c.corpusId <= previous) revert IJobMarket.JobMarketCorporaNotAscending(previous, c.corpusId);
            if (c.tokens == 0) revert IJobMarket.JobMarketZeroTokens(c.corpusId);
            // INVARIANT: jobs reference registered, unretired corpora only (reverts with the registry's error).
            data.requireAttachable(c.corpusId);
            previous = c.corpusId;
        }
        jobId = _createJob(manifestHash, manifestUri, token, payment, policy);
        Job storage j = _jobs[jobId];
        j.minTier = terms.minTier;
        j.dataShareBps = terms.dataShareBps;
        j.corpusCount = uint8(n); // fits: n <= MAX_CORPORA
        IJobMarket.JobCorpus[] storage stored = _corpora[jobId];
        for (uint256 i; i < n; ++i) {
            stored.push(IJobMarket.JobCorpus({corpusId: terms.corpora[i].corpusId, tokens: terms.corpora[i].tokens, weightE6: 0, weighted: false}));
        }
        emit IJobMarket.JobTermsSet(jobId, terms.minTier, terms.dataShareBps, terms.corpora);
    }

    function _createJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        IJobMarket.Policy calldata policy
    ) private returns (uint256 jobId) {
        if (payment == 0) revert IJobMarket.JobMarketZeroPayment();
        if (token == address(0)) revert IJobMarket.JobMarketZeroToken();
        _checkPolicy(policy);

        jobId = ++_jobCount;
        Job storage j = _jobs[jobId];
        j.status = IJobMarket.JobStatus.Open;
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
        emit IJobMarket.JobCreated(jobId, msg.sender, manifestHash, manifestUri, token, payment, policy);
        uint256 received = TransferIn.pull(IERC20(token), msg.sender, payment);
        // INVARIANT: the escrow booked is the escrow held: a fee-on-transfer token would leave the market owing more.
        if (received != payment) revert IJobMarket.JobMarketTransferShortfall(token, payment, received);
    }

    /// @dev As IJobMarket declares it.
    function createKindJob(
        bytes32 manifestHash,
        string calldata manifestUri,
        address token,
        uint128 payment,
        IJobMarket.Policy calldata policy,
        uint8 kind,
        bytes32 modelCidHash
    ) external onlyDelegated returns (uint256 jobId) {
        if (kind == 0 || modelCidHash == bytes32(0)) revert IJobMarket.JobMarketInvalidKind(kind, modelCidHash);
        jobId = _createJob(manifestHash, manifestUri, token, payment, policy);
        // INVARIANT: an inference job's kind and model are fixed with its escrow and never change, so a result recorded
        // for it (KindRecords) is for the kind and model its buyer posted, not whatever its provider's last leaf names.
        _jobs[jobId].kind = kind;
        _models[jobId] = modelCidHash;
        emit IJobMarket.JobKindSet(jobId, kind, modelCidHash);
    }

    // ---------------------------------------------------------------- anyone

    /// @dev As IJobMarket declares it.
    function retier(uint256 jobId) external onlyDelegated {
        Job storage j = _known(jobId);
        if (j.status != IJobMarket.JobStatus.Active) {
            revert IJobMarket.JobMarketWrongStatus(jobId, j.status, IJobMarket.JobStatus.Active);
        }
        address provider = j.provider;
        // the tier as acceptJob would count it now (a record that lapses before the last possible commit counts as 4)
        (uint8 tier, address key) = _tenureTier(jobId, j, provider, 0);
        // a record acceptJob no longer counts only because a signer asked to exit still holds a running tenure
        if (tier == _TIER_NONE) (tier, key) = _heldTier(j, provider);
        uint256 required = _scaledStake(j.requiredStake, tier);
        uint256 locked = _vault.lockedFor(provider, jobId);
        uint8 minTier = j.minTier;
        bool meetsMin = minTier == 0 || tier <= minTier;
        // NOTE: the lock is compared with what the current tier requires, not the tier remembered at acceptJob (kept only
        // for bound tenures): an Active tenure's lock is the one acceptJob took (only the market slashes a live lock), so
        // it is below `required` exactly when the tier fell.
        if (locked >= required && meetsMin) revert IJobMarket.JobMarketRetierNotNeeded(jobId, tier, locked, required);
        uint256 missing = locked >= required ? 0 : required - locked;
        // INVARIANT: a tenure never runs on a discount (or a minimum-tier access, or a session key) that current evidence
        // does not carry: it pays the current tier's stake, or it ends as a missed deadline ends it (no slash beyond the
        // timeout slash, so a provider whose statement fell is not punished as a cheat for it).
        if (meetsMin && _vault.accountOf(provider).free >= missing) {
            emit IJobMarket.TenureRetiered(jobId, provider, tier, missing, false);
            _vault.topUp(provider, jobId, missing);
            // the commits follow the current record: its session key, or the provider itself without one
            bool bound = key != address(0);
            bool wasBound = j.committerBound;
            if (bound) (j.committer, j.tenureTier) = (key, tier);
            if (wasBound != bound) j.committerBound = bound;
            if (bound || wasBound) emit IJobMarket.CommitterBound(jobId, key);
            return;
        }
        // INVARIANT: a job under dispute is not re-opened; the dispute settles first (the lock stays as it is).
        if (j.openDisputes != 0) revert IJobMarket.JobMarketFrozen(jobId, j.openDisputes);
        emit IJobMarket.TenureRetiered(jobId, provider, tier, 0, true);
        _endTenure(jobId, j);
    }

    /// @dev The tier of `provider`'s record for its running tenure on `j` when the record still stands through the
    /// tenure's last possible commit (unexpired, not revoked or upheld by a statement dispute) and a quorum of its
    /// signers still holds a forfeitable bond: active, or exiting with at least the minimum bond before its exit time
    /// (until then `leave` is refused, so an upheld dispute still takes the bond). (4, none) otherwise.
    /// INVARIANT: a signer's exit request alone never ends or re-prices a running tenure (it is free and takes effect at
    /// once: an accomplice signer would end an honest tenure on schedule and hand its buyer the timeout slash); a
    /// running discount still never outlives a quorum of forfeitable signer bonds (the reason effectiveTier counts
    /// backing), so once the exit delay has run out retier re-prices it.
    function _heldTier(Job storage j, address provider) private view returns (uint8, address) {
        IProviderRegistry providers = _providers;
        if (address(providers) == address(0)) return (_TIER_NONE, address(0));
        IProviderRegistry.Attestation memory a = providers.attestationOf(provider);
        // the record must stand through the running tenure's last possible commit, as _tenureTier counts it
        if (a.tier == 0 || a.tier >= _TIER_NONE || a.expiresAt < _lastCommitBy(j, provider)) return (_TIER_NONE, address(0));
        IAuditorRegistry auditors = IAuditorRegistry(providers.auditors());
        uint256 minBond = auditors.minBond();
        address[] memory signers = providers.signersOf(provider);
        uint256 held;
        for (uint256 i; i < signers.length; ++i) {
            IAuditorRegistry.Auditor memory r = auditors.auditorOf(signers[i]);
            if (
                r.status == IAuditorRegistry.AuditorStatus.Active
                    || (r.status == IAuditorRegistry.AuditorStatus.Exiting && r.bond >= minBond && block.timestamp < r.exitableAt)
            ) ++held;
        }
        if (held < providers.quorum()) return (_TIER_NONE, address(0));
        return (a.tier, providers.sessionKeyOf(a.requestId));
    }

    // ---------------------------------------------------------------- evaluator, finalize

    /// @dev As IJobMarket declares it.
    function recordImprovement(uint256 jobId, uint64 corpusId, uint32 weightE6) external onlyDelegated onlyRole(EVALUATOR_ROLE) {
        Job storage j = _known(jobId);
        IJobMarket.JobStatus status = j.status;
        // INVARIANT: weights only change a split that has not happened yet.
        if (
            status != IJobMarket.JobStatus.Open && status != IJobMarket.JobStatus.Active && status != IJobMarket.JobStatus.Committed
                && status != IJobMarket.JobStatus.TimedOut
        ) {
            revert IJobMarket.JobMarketJobClosed(jobId, status);
        }
        if (weightE6 > MAX_WEIGHT_E6) revert IJobMarket.JobMarketInvalidWeight(weightE6, MAX_WEIGHT_E6);
        IJobMarket.JobCorpus[] storage corpora = _corpora[jobId];
        uint256 n = corpora.length;
        for (uint256 i; i < n; ++i) {
            IJobMarket.JobCorpus storage c = corpora[i];
            if (c.corpusId != corpusId) continue;
            // INVARIANT: one improvement weight per corpus of a job; it is never rewritten.
            if (c.weighted) revert IJobMarket.JobMarketImprovementAlreadyRecorded(jobId, corpusId);
            c.weightE6 = weightE6;
            c.weighted = true;
            emit IJobMarket.ImprovementRecorded(jobId, corpusId, weightE6);
            return;
        }
        revert IJobMarket.JobMarketCorpusNotInJob(jobId, corpusId);
    }

    /// @notice Splits job `jobId`'s payment by DataShares and credits each corpus's current payout address; returns the
    /// provider's pay and the buyer's refund. Run by JobMarket's finalize only (a direct call reverts).
    function creditCorpora(uint256 jobId) external onlyDelegated returns (uint256 providerPay, uint256 refund) {
        Job storage j = _jobs[jobId];
        IJobMarket.JobCorpus[] storage corpora = _corpora[jobId];
        uint256 n = corpora.length;
        uint256[] memory weights = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            IJobMarket.JobCorpus storage c = corpora[i];
            weights[i] = uint256(c.tokens) * (c.weighted ? c.weightE6 : DataShares.WEIGHT_ONE);
        }
        uint256[] memory credits;
        (credits, providerPay, refund) = DataShares.split(j.payment, j.dataShareBps, j.segments, j.startSegment, weights);
        _payCorpora(jobId, j.token, corpora, credits);
    }

    function _payCorpora(uint256 jobId, address token, IJobMarket.JobCorpus[] storage corpora, uint256[] memory credits) private {
        IDataRegistry data = _data;
        for (uint256 i; i < credits.length; ++i) {
            uint256 amount = credits[i];
            if (amount == 0) continue;
            uint64 corpusId = corpora[i].corpusId;
            // NOTE: a corpus retired after the job was created is still paid (IDataRegistry: retirement rule).
            address payout = data.payoutOf(corpusId);
            emit IJobMarket.DataShareCredited(jobId, corpusId, payout, amount);
            _credit(token, payout, amount);
        }
    }

    function _checkPolicy(IJobMarket.Policy calldata p) private pure {
        if (p.segments == 0 || p.stepsPerSegment == 0) revert IJobMarket.JobMarketInvalidShape(p.segments, p.stepsPerSegment);
        if (p.requiredStake == 0) revert IJobMarket.JobMarketZeroStake();
        if (
            p.segmentTimeout == 0 || p.segmentTimeout > MAX_WINDOW_SECONDS || p.challengeWindow == 0
                || p.challengeWindow > MAX_WINDOW_SECONDS
        ) revert IJobMarket.JobMarketInvalidWindows(p.segmentTimeout, p.challengeWindow);
        if (
            uint256(p.challengerBps) + p.buyerBps + p.burnBps != _BPS || p.timeoutSlashBps > _BPS
        ) revert IJobMarket.JobMarketInvalidShares(p.challengerBps, p.buyerBps, p.burnBps, p.timeoutSlashBps);
        // INVARIANT: the provider side loses at least half of the lock on any fault (MAX_CHALLENGER_BPS).
        if (p.challengerBps > MAX_CHALLENGER_BPS) revert IJobMarket.JobMarketChallengerShareTooHigh(p.challengerBps, MAX_CHALLENGER_BPS);
        // INVARIANT: a timeout always costs the provider (MIN_TIMEOUT_SLASH_BPS), so idle tenures are no free grief.
        if (p.timeoutSlashBps < MIN_TIMEOUT_SLASH_BPS) {
            revert IJobMarket.JobMarketTimeoutSlashTooLow(p.timeoutSlashBps, MIN_TIMEOUT_SLASH_BPS);
        }
        if (p.stepsPerSegment > MAX_STEPS_PER_SEGMENT) revert IJobMarket.JobMarketInvalidShape(p.segments, p.stepsPerSegment);
    }
}
