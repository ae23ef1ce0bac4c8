// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IDisputeGame, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {Trace} from "./libraries/Trace.sol";
import {PanelTiming} from "./libraries/PanelTiming.sol";
import {TransferIn} from "./libraries/TransferIn.sol";
import {DisputeGameBase} from "./base/DisputeGameBase.sol";
import {DisputeSettlement} from "./DisputeSettlement.sol";
/// @title DisputeGame: one-step challenges settled by concession, a Groth16 proof or a commit-reveal panel
/// (see IDisputeGame and docs/disputes.md)
/// @dev Holds JobMarket.DISPUTE_ROLE (freeze, settle) and AuditorRegistry.DISPUTE_ROLE (panel forfeits). Stake is
/// slashed through JobMarket.settleProviderFault, which applies the job policy's shares, so this contract needs
/// no StakeVault role. How a dispute ends (concede, prove, resolve) and the circuit terms run in DisputeSettlement,
/// deployed by this constructor and called by DELEGATECALL on this contract's storage (DisputeGameBase), so that both
/// contracts keep >= 10% headroom under EIP-170.
contract DisputeGame is DisputeGameBase, IDisputeGame {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    string public constant VERSION = "pouw-DisputeGame-1";

    /// @dev The longest seed delay: the seed block's hash must still be readable (blockhash reaches back 256 blocks)
    /// when the panel is drawn a while after it.
    uint256 private constant _MAX_SEED_DELAY_BLOCKS = 200;

    /// @dev The DisputeSettlement this contract delegates to (deployed by the constructor, never replaced).
    address private immutable _settlement;

    constructor(
        IJobMarket market_,
        IAuditorRegistry registry_,
        IStepVerifier verifier_,
        bytes32 vkeyHash_,
        IERC20 bondToken_,
        Params memory params_
    )
        DisputeGameBase(
            market_, registry_, verifier_, vkeyHash_, _provingModeFor(verifier_, vkeyHash_), bondToken_, IStakeVault(market_.vault())
        )
    {
        _checkParams(params_);
        IStakeVault vault_ = _vault;
        // INVARIANT: the challenger share of a slash (stake token) is paid out with the bonds, so both are one token.
        if (vault_.token() != address(bondToken_)) revert DisputeGameTokenMismatch(vault_.token(), address(bondToken_));
        uint256 seedSeconds = PanelTiming.blocksToSeconds(params_.seedDelayBlocks);
        uint64 activationDelay = registry_.activationDelaySeconds();
        // INVARIANT: a bond posted after a challenge fixed its seed block cannot count before the seed is public (the
        // snapshot at challengedAt already excludes it; this holds even for a draw at the seed's own time).
        if (activationDelay <= seedSeconds) {
            revert DisputeGameActivationDelayTooShort(address(registry_), activationDelay, seedSeconds);
        }
        uint256 commitSeconds = params_.commitWindowSeconds.toUint();
        // The provider's appeal window of a unanimous first-round Fault (commitWindowSeconds) comes on top of the rounds.
        uint256 openSeconds = MAX_ROUNDS * (seedSeconds + commitSeconds + params_.revealWindowSeconds.toUint())
            + commitSeconds + PanelTiming.RESOLVE_MARGIN_SECONDS;
        uint64 exitDelay = registry_.exitDelaySeconds();
        // INVARIANT: a member eligible at challengedAt requests exit after it, so it cannot leave before challengedAt +
        // exitDelay: every member any round's panel can draw stays forfeitable until the dispute is resolved after its
        // last round and a provider's appeal window (within the margin), and every round draws from the snapshot at
        // challengedAt.
        if (exitDelay < openSeconds) revert DisputeGameExitDelayTooShort(address(registry_), exitDelay, openSeconds);
        _params = params_;
        _settlement = address(
            new DisputeSettlement(market_, registry_, verifier_, vkeyHash_, _provingMode, bondToken_, vault_)
        );
        emit ProvingConfigured(address(verifier_), vkeyHash_, _provingMode);
    }

    // ---------------------------------------------------------------- challenge

    /// @inheritdoc IDisputeGame
    function commitChallenge(uint256 jobId, uint256 segment, bytes32 commitment) external {
        if (commitment == bytes32(0)) revert DisputeGameZeroCommitment(0);
        (,, IJobMarket.JobStatus status) = _market.jobParties(jobId);
        // INVARIANT: a commitment names a job that exists and a segment already committed, so nobody holds commitments
        // on steps before their leaves exist; the challenge must name the same segment commitment.
        if (status == IJobMarket.JobStatus.None) revert DisputeGameUnknownJob(jobId);
        bytes32 segmentCommitment = _market.segmentCommitment(jobId, segment);
        if (segmentCommitment == bytes32(0)) revert DisputeGameSegmentNotCommitted(jobId, segment);
        ChallengeCommit storage c = _challengeCommits[msg.sender][commitment];
        // A live commitment keeps its block (its place in the order); an expired one is renewed from this block.
        if (c.blockNumber != 0 && block.number <= c.blockNumber + CHALLENGE_COMMITMENT_TTL_BLOCKS) return;
        c.blockNumber = uint64(block.number);
        c.segmentCommitment = segmentCommitment;
        emit ChallengeCommitted(msg.sender, commitment, jobId, segment);
    }

    /// @inheritdoc IDisputeGame
    function challenge(ChallengeParams calldata p) external returns (uint256 disputeId) {
        IJobMarket.JobView memory j = _checkSegment(p.jobId, p.segment, p.step, p.traceRoot, p.endStateHash);
        // INVARIANT: a dispute is about the provider's own committed leaves h(step-1) and h(step).
        if (!Trace.verifyStateCalldata(p.traceRoot, uint64(p.step - 1), p.prevStateHash, p.prevStateProof)) {
            revert DisputeGameBadLeafProof(p.step - 1, p.prevStateHash);
        }
        if (!Trace.verifyStateCalldata(p.traceRoot, uint64(p.step), p.stateHash, p.stateProof)) {
            revert DisputeGameBadLeafProof(p.step, p.stateHash);
        }
        disputeId = _open(j, p.jobId, p.step, p.prevStateHash, p.stateHash, p.salt);
    }


    // ---------------------------------------------------------------- provider (DisputeSettlement)

    /// @inheritdoc IDisputeGame
    function concede(uint256) external {
        _delegate();
    }

    /// @inheritdoc IDisputeGame
    function prove(
        uint256,
        uint256,
        uint256,
        uint256,
        bytes32[] calldata,
        uint256[2] calldata,
        uint256[2][2] calldata,
        uint256[2] calldata
    ) external {
        _delegate();
    }

    // ---------------------------------------------------------------- panel

    /// @inheritdoc IDisputeGame
    function drawPanel(uint256 disputeId) external returns (bool drawn) {
        Dispute storage d = _openDispute(disputeId);
        if (d.panelDrawn) revert DisputeGamePanelDrawn(disputeId);
        _requireSeed(disputeId, d);
        return _tryDraw(disputeId, d);
    }

    /// @inheritdoc IDisputeGame
    function commitVote(uint256 disputeId, bytes32 commitment) external {
        Dispute storage d = _openDispute(disputeId);
        if (commitment == bytes32(0)) revert DisputeGameZeroCommitment(disputeId);
        // INVARIANT: no commit after the commit phase, so nobody can commit after seeing a revealed vote.
        if (_commitsClosed(d)) {
            revert DisputeGameCommitClosed(disputeId, d.commitDeadline, block.timestamp);
        }
        if (!d.panelDrawn) {
            // each way it cannot draw is its own error, so a caller retries only what time fixes (SeedNotReady)
            _requireSeed(disputeId, d);
            if (!_tryDraw(disputeId, d)) revert DisputeGamePanelUnavailable(disputeId);
        }
        if (!_isMember(d, msg.sender)) revert DisputeGameNotPanelMember(disputeId, msg.sender);
        Ballot storage b = _ballots[_ballotKey(disputeId, d.round)][msg.sender];
        if (b.commitment != bytes32(0)) revert DisputeGameAlreadyCommitted(disputeId, msg.sender);
        b.commitment = commitment;
        unchecked {
            // bound: commits <= panel.length <= MAX_PANEL
            ++d.commits;
        }
        emit VoteCommitted(disputeId, msg.sender, commitment);
    }

    /// @inheritdoc IDisputeGame
    function revealVote(uint256 disputeId, Vote vote, bytes32 salt) external {
        Dispute storage d = _openDispute(disputeId);
        // INVARIANT: reveals start only when no more commits are possible.
        if (!_commitsClosed(d) || block.timestamp > d.revealDeadline) {
            revert DisputeGameRevealClosed(disputeId, d.commitDeadline, d.revealDeadline, block.timestamp);
        }
        Ballot storage b = _ballots[_ballotKey(disputeId, d.round)][msg.sender];
        if (b.commitment == bytes32(0)) {
            if (!d.panelDrawn || !_isMember(d, msg.sender)) revert DisputeGameNotPanelMember(disputeId, msg.sender);
            revert DisputeGameNoCommitment(disputeId, msg.sender);
        }
        if (b.vote != Vote.None) revert DisputeGameAlreadyRevealed(disputeId, msg.sender);
        if (vote != Vote.Valid && vote != Vote.Fault) revert DisputeGameInvalidVote(uint8(vote));
        // INVARIANT: a reveal opens the member's own commitment (the member's address is in the preimage, so a copied
        // commitment or a copied (vote, salt) does not open).
        if (keccak256(abi.encode(uint8(vote), salt, msg.sender)) != b.commitment) {
            revert DisputeGameRevealMismatch(disputeId, msg.sender);
        }
        b.vote = vote;
        unchecked {
            // bound: each counter <= panel.length <= MAX_PANEL
            ++d.reveals;
            if (vote == Vote.Valid) ++d.validVotes;
            else ++d.faultVotes;
        }
        emit VoteRevealed(disputeId, msg.sender, vote);
    }

    /// @inheritdoc IDisputeGame
    function resolve(uint256) external {
        _delegate();
    }

    /// @inheritdoc IDisputeGame
    function appealFault(uint256) external {
        _delegate();
    }

    // ---------------------------------------------------------------- circuit class (DisputeSettlement)

    /// @inheritdoc IDisputeGame
    function setCircuitTerms(uint256, uint256, bytes32, bytes32) external {
        _delegate();
    }

    /// @inheritdoc IDisputeGame
    function circuitManifestHash(bytes32 manifestBody, uint256 lr, bytes32 batchRoot) external pure returns (bytes32) {
        return _circuitManifestHash(manifestBody, lr, batchRoot);
    }

    // ---------------------------------------------------------------- credits

    /// @inheritdoc IDisputeGame
    function claim() external returns (uint256 amount) {
        amount = _credits[msg.sender];
        // INVARIANT: a credit is paid once: it is zeroed before the transfer.
        if (amount == 0) revert DisputeGameNothingToClaim(msg.sender);
        _credits[msg.sender] = 0;
        emit CreditClaimed(msg.sender, amount);
        _send(msg.sender, amount);
    }

    // ---------------------------------------------------------------- views

    /// @inheritdoc IDisputeGame
    function requiredBond(uint256 jobId) public view returns (uint256) {
        IJobMarket.JobView memory j = _job(jobId);
        return _bondFor(j);
    }

    /// @inheritdoc IDisputeGame
    function requiredDeposit(uint256 jobId) external view returns (uint256) {
        return requiredBond(jobId) + _panelFees();
    }

    /// @inheritdoc IDisputeGame
    function challengeCommitment(uint256 jobId, uint256 step, address challenger, bytes32 salt)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(jobId, step, challenger, salt));
    }

    /// @inheritdoc IDisputeGame
    function challengeCommittedAt(address challenger, bytes32 commitment) external view returns (uint256) {
        return _challengeCommits[challenger][commitment].blockNumber;
    }

    /// @inheritdoc IDisputeGame
    function rewardPoolOf(uint256 jobId) external view returns (uint256 amount, uint256 shares) {
        RewardPool storage pool = _pools[jobId];
        return (pool.amount, pool.shares);
    }

    /// @inheritdoc IDisputeGame
    function openDisputesOn(uint256 jobId) external view returns (uint256) {
        return _openCount[jobId];
    }

    /// @inheritdoc IDisputeGame
    function openDisputesBy(uint256 jobId, address challenger) external view returns (uint256) {
        return _openBy[jobId][challenger];
    }

    /// @inheritdoc IDisputeGame
    function pooled() external view returns (uint256) {
        return _pooled;
    }

    /// @inheritdoc IDisputeGame
    function voteCommitment(Vote vote, bytes32 salt, address member) external pure returns (bytes32) {
        return keccak256(abi.encode(uint8(vote), salt, member));
    }

    /// @inheritdoc IDisputeGame
    function getDispute(uint256 disputeId) external view returns (DisputeView memory v) {
        Dispute storage d = _disputes[disputeId];
        v.jobId = d.jobId;
        v.segment = d.segment;
        v.step = d.step;
        v.challenger = d.challenger;
        v.provider = d.provider;
        v.status = d.status;
        v.outcome = d.outcome;
        v.bond = d.bond;
        v.fees = d.fees;
        v.challengedAt = d.challengedAt;
        v.seedBlock = d.seedBlock;
        v.commitDeadline = d.commitDeadline;
        v.revealDeadline = d.revealDeadline;
        v.hPrev = d.hPrev;
        v.hStep = d.hStep;
        v.panel = d.panel;
        v.commits = d.commits;
        v.validVotes = d.validVotes;
        v.faultVotes = d.faultVotes;
        v.round = d.round;
    }

    /// @inheritdoc IDisputeGame
    function ballotOf(uint256 disputeId, address member) external view returns (bytes32 commitment, Vote vote) {
        Ballot storage b = _ballots[_ballotKey(disputeId, _disputes[disputeId].round)][member];
        return (b.commitment, b.vote);
    }

    /// @inheritdoc IDisputeGame
    function roundBallotOf(uint256 disputeId, uint256 round, address member)
        external
        view
        returns (bytes32 commitment, Vote vote)
    {
        Ballot storage b = _ballots[_ballotKey(disputeId, round)][member];
        return (b.commitment, b.vote);
    }

    /// @inheritdoc IDisputeGame
    function roundPanelOf(uint256 disputeId, uint256 round) external view returns (address[] memory) {
        Dispute storage d = _disputes[disputeId];
        return round == d.round ? d.panel : _pastPanels[disputeId][round];
    }

    /// @inheritdoc IDisputeGame
    function faultAppealOf(uint256 disputeId) external view returns (uint64 deadline, uint128 providerBond) {
        Dispute storage d = _disputes[disputeId];
        return (d.appealDeadline, d.providerBond);
    }

    /// @inheritdoc IDisputeGame
    function openDisputeOf(uint256 jobId, uint256 step) external view returns (uint256) {
        return _openByStep[jobId][step];
    }

    /// @inheritdoc IDisputeGame
    function tiedDisputeOf(uint256 jobId, uint256 step) external view returns (uint256) {
        return _tiedByStep[jobId][step];
    }

    /// @inheritdoc IDisputeGame
    function circuitTerms(uint256 jobId) external view returns (CircuitTerms memory) {
        return _terms[jobId];
    }

    /// @inheritdoc IDisputeGame
    function creditOf(address account) external view returns (uint256) {
        return _credits[account];
    }

    /// @inheritdoc IDisputeGame
    function disputeCount() external view returns (uint256) {
        return _disputeCount;
    }

    /// @inheritdoc IDisputeGame
    function openBonds() external view returns (uint256) {
        return _openBonds;
    }

    /// @inheritdoc IDisputeGame
    function openFees() external view returns (uint256) {
        return _openFees;
    }

    /// @inheritdoc IDisputeGame
    function params() external view returns (Params memory) {
        return _params;
    }

    /// @inheritdoc IDisputeGame
    function panelFees() external view returns (uint256) {
        return _panelFees();
    }

    /// @notice The JobMarket whose jobs are disputed.
    function market() external view returns (address) {
        return address(_market);
    }

    /// @notice The AuditorRegistry panels are drawn from.
    function registry() external view returns (address) {
        return address(_registry);
    }

    /// @notice The Groth16 verifier of the circuit model class.
    function verifier() external view returns (address) {
        return address(_verifier);
    }

    /// @inheritdoc IDisputeGame
    function proving() external view returns (address verifier_, bytes32 vkeyHash_, ProvingMode mode) {
        return (address(_verifier), _vkeyHash, _provingMode);
    }

    /// @notice The token challenger bonds are posted in.
    function bondToken() external view returns (address) {
        return address(_bondToken);
    }

    /// @notice The DisputeSettlement contract this game runs concede, prove, resolve and setCircuitTerms in.
    function settlement() external view returns (address) {
        return _settlement;
    }

    // ---------------------------------------------------------------- internal

    /// @dev Runs the current call's calldata in DisputeSettlement on this contract's storage and returns or reverts with
    /// its result (errors and events are this contract's).
    function _delegate() private {
        address target = _settlement;
        assembly ("memory-safe") {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), target, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }

    /// @dev Reverts unless dispute `d`'s seed block is past and its hash still readable (a lapsed seed is never
    /// re-anchored: _tryDraw).
    function _requireSeed(uint256 disputeId, Dispute storage d) private view {
        uint64 seedBlock = d.seedBlock;
        if (block.number <= seedBlock) revert DisputeGameSeedNotReady(disputeId, seedBlock, block.number);
        if (blockhash(seedBlock) == bytes32(0)) revert DisputeGameSeedExpired(disputeId, seedBlock, block.number);
    }

    /// @dev Reverts with the error of the first out-of-range field of `p` (each field has its own, with its value).
    function _checkParams(Params memory p) private pure {
        if (p.minChallengerBond == 0) revert DisputeGameMinChallengerBondZero();
        if (p.panelErrorBps >= _BPS / 2) revert DisputeGamePanelErrorTooHigh(p.panelErrorBps, _BPS / 2);
        if (p.panelSize == 0 || p.panelSize > MAX_PANEL) revert DisputeGamePanelSizeOutOfRange(p.panelSize, 1, MAX_PANEL);
        if (p.panelSize % 2 == 0) revert DisputeGamePanelSizeEven(p.panelSize);
        if (p.seedDelayBlocks == 0 || p.seedDelayBlocks > _MAX_SEED_DELAY_BLOCKS) {
            revert DisputeGameSeedDelayOutOfRange(p.seedDelayBlocks, 1, _MAX_SEED_DELAY_BLOCKS);
        }
        if (p.commitWindowSeconds.toUint() == 0) revert DisputeGameCommitWindowZero();
        if (p.revealWindowSeconds.toUint() == 0) revert DisputeGameRevealWindowZero();
        if (p.panelFee == 0) revert DisputeGamePanelFeeZero();
        // INVARIANT: a dispute's fees (panelFee * panelSize) fit the uint128 it books them in.
        if (uint256(p.panelFee) * p.panelSize > type(uint128).max) {
            revert DisputeGamePanelFeesTooLarge(p.panelFee, p.panelSize, type(uint128).max);
        }
    }

    /// @dev The proving mode of a deployment with `verifier_` named by `vkeyHash_` (0: the development setup).
    function _provingModeFor(IStepVerifier verifier_, bytes32 vkeyHash_) private view returns (ProvingMode) {
        if (address(verifier_) == address(0)) {
            if (vkeyHash_ != bytes32(0)) revert DisputeGameInvalidVerifier(address(0), vkeyHash_);
            return ProvingMode.Disabled;
        }
        if (address(verifier_).code.length == 0) revert DisputeGameInvalidVerifier(address(verifier_), vkeyHash_);
        // INVARIANT: the development setup (no vkey hash, or its own) settles disputes on the local dev chain only;
        // anywhere else a deployment that names no ceremony key cannot prove.
        if (vkeyHash_ == bytes32(0) || vkeyHash_ == DEV_VKEY_HASH) {
            return block.chainid == DEV_CHAIN_ID ? ProvingMode.Development : ProvingMode.Disabled;
        }
        return ProvingMode.Ceremony;
    }

    /// @dev Consumes the caller's live commitment to this challenge, made in an earlier block for segment `segment`'s
    /// commitment (which _checkSegment matched with the challenge's root and end state); returns its block.
    function _useChallengeCommitment(uint256 jobId, uint256 segment, uint256 step, bytes32 salt)
        private
    {
        bytes32 c = challengeCommitment(jobId, step, msg.sender, salt);
        ChallengeCommit storage stored = _challengeCommits[msg.sender][c];
        uint256 at = stored.blockNumber;
        // INVARIANT: a challenge was committed (hidden) in an earlier block by the same address, so whoever copies it
        // from the mempool has no commitment to reveal and cannot take its place.
        if (at == 0 || at >= block.number) revert DisputeGameChallengeNotCommitted(msg.sender, c, at, block.number);
        // INVARIANT: a commitment is used within CHALLENGE_COMMITMENT_TTL_BLOCKS, so none is held indefinitely.
        if (block.number > at + CHALLENGE_COMMITMENT_TTL_BLOCKS) {
            revert DisputeGameChallengeCommitmentExpired(msg.sender, c, at, at + CHALLENGE_COMMITMENT_TTL_BLOCKS, block.number);
        }
        // INVARIANT: the commitment was made for this very segment commitment (after the segment existed).
        if (stored.segmentCommitment != _market.segmentCommitment(jobId, segment)) revert DisputeGameChallengeCommitmentWrongSegment(msg.sender, c, jobId, segment);
        delete _challengeCommits[msg.sender][c];
    }

    /// @dev Checks that `step` is a step of a segment the current provider committed, and that the caller-supplied
    /// (traceRoot, endStateHash) is that segment's commitment.
    function _checkSegment(uint256 jobId, uint256 segment, uint256 step, bytes32 traceRoot, bytes32 endStateHash)
        private
        view
        returns (IJobMarket.JobView memory j)
    {
        j = _job(jobId);
        if (j.status == IJobMarket.JobStatus.None) revert IJobMarket.JobMarketUnknownJob(jobId);
        if (msg.sender == j.provider) revert DisputeGameSelfChallenge(jobId, j.provider);
        // INVARIANT: only the current provider's committed segments are disputable: its lock is what a fault slashes
        // (an earlier provider's lock was released when its job timed out).
        if (segment < j.startSegment || segment >= j.nextSegment) {
            revert DisputeGameSegmentNotDisputable(jobId, segment, j.startSegment, j.nextSegment);
        }
        uint256 k = j.policy.stepsPerSegment;
        // INVARIANT: both h(step-1) and h(step) are leaves of this segment: step in [segment*K + 1, (segment+1)*K].
        if (step <= segment * k || step > (segment + 1) * k) revert DisputeGameStepOutsideSegment(segment, step, k);
        if (!_market.verifySegment(jobId, segment, traceRoot, endStateHash)) {
            revert DisputeGameCommitmentMismatch(jobId, segment);
        }
    }

    /// @dev Consumes the caller's commitment (salt `salt`) and opens a dispute on `step` (of segment (step - 1) / K, which
    /// _checkSegment checked), or hands the open one on that step to an earlier commitment.
    function _open(
        IJobMarket.JobView memory j,
        uint256 jobId,
        uint256 step,
        bytes32 hPrev,
        bytes32 hStep,
        bytes32 salt
    ) private returns (uint256 disputeId) {
        _useChallengeCommitment(jobId, (step - 1) / j.policy.stepsPerSegment, step, salt);
        uint256 existing = _openByStep[jobId][step];
        // INVARIANT: one open dispute per step of a job (the first valid challenge holds it; a copier of a challenge
        // seen in the mempool has no commitment of its own from an earlier block to reveal).
        if (existing != 0) revert DisputeGameDisputeOpen(jobId, step, existing);
        disputeId = _openNew(j, jobId, step, hPrev, hStep);
    }

    /// @dev Opens a new dispute on `step` of segment (step - 1) / K and freezes the job.
    function _openNew(IJobMarket.JobView memory j, uint256 jobId, uint256 step, bytes32 hPrev, bytes32 hStep)
        private
        returns (uint256 disputeId)
    {
        _checkLimits(jobId);
        uint256 segment = (step - 1) / j.policy.stepsPerSegment;
        uint256 bond = _bondFor(j);
        uint256 fees = _checkDeposit(bond);
        Params storage p = _params;

        disputeId = ++_disputeCount;
        Dispute storage d = _disputes[disputeId];
        d.jobId = jobId;
        d.challenger = msg.sender;
        d.segment = uint32(segment); // fits: segment < policy.segments <= type(uint16).max
        d.step = uint64(step); // fits: step <= (segment+1) * uint32 stepsPerSegment < 2^48
        d.provider = j.provider;
        d.status = Status.Open;
        d.round = 1;
        d.seedBlock = uint64(block.number + p.seedDelayBlocks);
        d.bond = bond.toUint128();
        d.fees = uint128(fees); // fits: panelFee * panelSize <= type(uint128).max (constructor)
        d.challengedAt = uint64(block.timestamp);
        uint64 commitDeadline = p.commitWindowSeconds.addTo(block.timestamp);
        d.commitDeadline = commitDeadline;
        d.revealDeadline = p.revealWindowSeconds.addTo(commitDeadline);
        d.hPrev = hPrev;
        d.hStep = hStep;
        _openByStep[jobId][step] = disputeId;
        ++_openCount[jobId];
        ++_openBy[jobId][msg.sender];
        _openBonds += uint128(bond); // fits: d.bond = bond.toUint128() above
        _openFees += uint128(fees); // fits: panelFee * panelSize <= type(uint128).max (constructor)
        emit Challenged(disputeId, jobId, msg.sender, segment, step, hPrev, hStep, bond, fees, d.seedBlock);
        // Reverts (JobMarketChallengeWindowClosed, JobMarketNotDisputable) when the job can no longer be disputed.
        _market.freeze(jobId);
        _pullDeposit(bond + fees);
    }

    /// @dev Pulls a challenge deposit from the caller and refuses a short transfer.
    function _pullDeposit(uint256 amount) private {
        uint256 received = TransferIn.pull(_bondToken, msg.sender, amount);
        // INVARIANT: bonds and fees are booked as deposited; a fee-on-transfer token would leave them unbacked.
        if (received != amount) revert DisputeGameTransferShortfall(address(_bondToken), amount, received);
    }

    /// @dev Reverts when job `jobId`, or the caller on it, already holds the most open disputes allowed.
    function _checkLimits(uint256 jobId) private view {
        uint256 onJob = _openCount[jobId];
        // INVARIANT: a job holds at most MAX_OPEN_PER_JOB open disputes, a challenger at most MAX_OPEN_PER_CHALLENGER
        // of them.
        if (onJob >= MAX_OPEN_PER_JOB) revert DisputeGameJobDisputeLimit(jobId, onJob, MAX_OPEN_PER_JOB);
        uint256 mine = _openBy[jobId][msg.sender];
        if (mine >= MAX_OPEN_PER_CHALLENGER) {
            revert DisputeGameChallengerLimit(jobId, msg.sender, mine, MAX_OPEN_PER_CHALLENGER);
        }
    }

    /// @dev The panel fees a challenge with bond `bond` deposits; reverts unless the caller approved bond + fees.
    function _checkDeposit(uint256 bond) private view returns (uint256 fees) {
        fees = _panelFees();
        uint256 allowed = _bondToken.allowance(msg.sender, address(this));
        // INVARIANT: the challenger pays the bond and every member's fee up front, so that a drawn panel is paid
        // whatever the outcome; a clear error beats whatever the token reverts with.
        if (allowed < bond + fees) revert DisputeGameDepositNotApproved(msg.sender, allowed, bond + fees);
    }

}
