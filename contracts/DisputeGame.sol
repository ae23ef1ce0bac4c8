// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IDisputeGame, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {DrawGuard} from "./libraries/DrawGuard.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {Trace} from "./libraries/Trace.sol";
import {PanelTiming} from "./libraries/PanelTiming.sol";
import {TransferIn} from "./libraries/TransferIn.sol";

/// @title DisputeGame: one-step challenges settled by concession, a Groth16 proof or a commit-reveal panel
/// (see IDisputeGame and docs/disputes.md)
/// @dev Holds JobMarket.DISPUTE_ROLE (freeze, settle) and AuditorRegistry.DISPUTE_ROLE (panel forfeits). Stake is
/// slashed through JobMarket.settleProviderFault, which applies the job policy's shares, so this contract needs
/// no StakeVault role.
contract DisputeGame is IDisputeGame {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;

    struct Dispute {
        // slot 0
        uint256 jobId;
        // slot 1
        address challenger;
        uint32 segment;
        uint64 step;
        // slot 2
        address provider;
        Status status;
        Outcome outcome;
        uint64 seedBlock;
        uint8 commits;
        uint8 reveals;
        // slot 3
        uint128 bond;
        uint64 challengedAt;
        uint64 commitDeadline;
        // slot 4
        uint64 revealDeadline;
        uint8 validVotes;
        uint8 faultVotes;
        bool panelDrawn;
        uint8 reseeds;
        uint128 fees;
        // slots 5, 6
        bytes32 hPrev;
        bytes32 hStep;
        address[] panel;
    }

    /// @dev A challenge commitment: the block it was made in and the segment commitment it is bound to.
    struct ChallengeCommit {
        uint64 blockNumber;
        bytes32 segmentCommitment;
    }

    struct Ballot {
        bytes32 commitment;
        Vote vote;
    }

    /// @dev The challenger share of a faulted job, split equally among the disputes open on the job when it faulted.
    struct RewardPool {
        uint128 amount; // not yet paid out
        uint32 shares; // disputes of the job still to be paid
    }

    /// @notice Largest panel (votes are counted in uint8; forfeits loop over the panel).
    uint256 public constant MAX_PANEL = 15;
    /// @notice How many times a dispute's seed block may be re-anchored after it left blockhash range. Each reseed is a
    /// fresh panel draw that whoever let the seed lapse can wait for; more than one would let a party re-roll the panel
    /// until its own auditors are drawn, simply by waiting out each seed while the honest bots are offline.
    uint256 public constant MAX_RESEEDS = 1;
    /// @notice Most disputes one challenger may hold open on one job. One right challenge is enough to fault a job, so
    /// the limit costs an honest challenger nothing; with MAX_OPEN_PER_JOB it bounds the panels (and the draws, forfeits
    /// and gas) one job can tie up, whoever opens them.
    uint256 public constant MAX_OPEN_PER_CHALLENGER = 4;
    /// @notice Most disputes open on one job at once (far above what honest challengers need: one per faulty step
    /// found). A party that fills the job's slots to keep an honest challenger out pays a bond and a panel per slot and,
    /// as its panels decide Valid, loses every bond (docs/disputes.md, "Limits on open disputes").
    uint256 public constant MAX_OPEN_PER_JOB = 32;
    /// @notice Blocks a challenge commitment stays usable after the block it was made in: an older one reverts
    /// (DisputeGameChallengeCommitmentExpired), so holding a commitment on every step costs a renewal per step every
    /// this many blocks.
    uint256 public constant CHALLENGE_COMMITMENT_TTL_BLOCKS = 256;
    /// @notice Forfeits without a majority to credit go here (never claimed: burned), and the bonds of wrong challenges
    /// of a segment's first step are sent here.
    address public constant BURN_ADDRESS = 0x000000000000000000000000000000000000dEaD;
    uint256 private constant _BPS = 10_000;
    /// @dev blockhash(n) is only available for the 256 most recent blocks.
    uint256 private constant _BLOCKHASH_RANGE = 256;
    /// @notice The local development chain (Hardhat, Anvil): the only chain on which the committed development setup
    /// may settle a dispute.
    uint256 public constant DEV_CHAIN_ID = 31337;
    /// @notice vkey hash (verifier/src/zk/vkey.ts) of the committed development setup, circuits/keys/step.vkey.json.
    /// Whoever ran that setup could forge proofs, so this hash never counts as a ceremony key.
    bytes32 public constant DEV_VKEY_HASH = 0x851b95ddd267b95c19364ccc66025f731fe7597762668c56559f0d89f422f11d;
    /// @notice Domain of a circuit-class manifest hash (circuitManifestHash).
    bytes32 public constant CIRCUIT_MANIFEST_TYPEHASH =
        keccak256("PoUWCircuitManifest(bytes32 manifestBody,uint256 lr,bytes32 batchRoot)");

    IJobMarket private immutable _market;
    IAuditorRegistry private immutable _registry;
    IStepVerifier private immutable _verifier;
    bytes32 private immutable _vkeyHash;
    ProvingMode private immutable _provingMode;
    IERC20 private immutable _bondToken;
    IStakeVault private immutable _vault;

    Params private _params;
    uint256 private _disputeCount;
    /// @dev Sums over open disputes, packed in one slot so that a challenge writes one word for both. Each bond and
    /// fee deposit is a uint128; a sum past uint128 reverts the challenge (checked arithmetic), never wraps.
    uint128 private _openBonds;
    uint128 private _openFees;
    mapping(uint256 disputeId => Dispute) private _disputes;
    mapping(uint256 disputeId => mapping(address member => Ballot)) private _ballots;
    mapping(uint256 jobId => mapping(uint256 step => uint256 disputeId)) private _openByStep;
    /// @dev Set once a dispute found the provider of the job at fault: JobMarket has refunded the job and slashed the
    /// lock, so later disputes on it settle their bonds without calling JobMarket again.
    mapping(uint256 jobId => bool) private _jobFaulted;
    mapping(uint256 jobId => CircuitTerms) private _terms;
    mapping(address account => uint256 amount) private _credits;
    mapping(uint256 jobId => uint256 count) private _openCount;
    mapping(uint256 jobId => mapping(address challenger => uint256 count)) private _openBy;
    mapping(uint256 jobId => RewardPool) private _pools;
    /// @dev `challenger`'s live commitment to a challenge (challengeCommitment); blockNumber 0: none.
    mapping(address challenger => mapping(bytes32 commitment => ChallengeCommit)) private _challengeCommits;
    /// @dev Sum of the undistributed reward pools (held by this contract besides bonds, fees and credits).
    uint256 private _pooled;
    /// @dev The last dispute on (job, step) that ended in a tie of revealed votes: its revealers are judged by the next
    /// decided outcome on the same step (a tie is no verdict on them, the step's truth is).
    mapping(uint256 jobId => mapping(uint256 step => uint256 disputeId)) private _tiedByStep;

    constructor(
        IJobMarket market_,
        IAuditorRegistry registry_,
        IStepVerifier verifier_,
        bytes32 vkeyHash_,
        IERC20 bondToken_,
        Params memory params_
    ) {
        if (
            params_.minChallengerBond == 0 || params_.panelErrorBps >= _BPS / 2 || params_.panelSize == 0
                || params_.panelSize % 2 == 0 || params_.panelSize > MAX_PANEL || params_.seedDelayBlocks == 0
                || params_.seedDelayBlocks > 200 || params_.commitWindowSeconds == 0 || params_.revealWindowSeconds == 0
                || params_.panelFee == 0 || uint256(params_.panelFee) * params_.panelSize > type(uint128).max
        ) revert DisputeGameInvalidParams();
        IStakeVault vault_ = IStakeVault(market_.vault());
        // INVARIANT: the challenger share of a slash (stake token) is paid out with the bonds, so both are one token.
        if (vault_.token() != address(bondToken_)) revert DisputeGameTokenMismatch(vault_.token(), address(bondToken_));
        uint256 seedSeconds = PanelTiming.blocksToSeconds(params_.seedDelayBlocks);
        uint64 activationDelay = registry_.activationDelaySeconds();
        // INVARIANT: a bond posted after a challenge fixed its seed block cannot count before the seed is public (the
        // snapshot at challengedAt already excludes it; this holds even for a draw at the seed's own time).
        if (activationDelay <= seedSeconds) {
            revert DisputeGameActivationDelayTooShort(address(registry_), activationDelay, seedSeconds);
        }
        uint256 openSeconds = seedSeconds + params_.commitWindowSeconds + params_.revealWindowSeconds
            + PanelTiming.RESOLVE_MARGIN_SECONDS;
        uint64 exitDelay = registry_.exitDelaySeconds();
        // INVARIANT: a member eligible at challengedAt requests exit after it, so it cannot leave before challengedAt +
        // exitDelay: every member a panel can draw stays forfeitable until the dispute is resolved (within the margin).
        if (exitDelay < openSeconds) revert DisputeGameExitDelayTooShort(address(registry_), exitDelay, openSeconds);
        ProvingMode mode = _provingModeFor(verifier_, vkeyHash_);
        _market = market_;
        _registry = registry_;
        _verifier = verifier_;
        _vkeyHash = vkeyHash_;
        _provingMode = mode;
        _bondToken = bondToken_;
        _vault = vault_;
        _params = params_;
        emit ProvingConfigured(address(verifier_), vkeyHash_, mode);
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
    function challenge(
        uint256 jobId,
        uint256 segment,
        uint256 step,
        bytes32 traceRoot,
        bytes32 endStateHash,
        bytes32 hPrev,
        bytes32[] calldata proofPrev,
        bytes32 hStep,
        bytes32[] calldata proofStep,
        bytes32 salt
    ) external returns (uint256 disputeId) {
        IJobMarket.JobView memory j = _checkSegment(jobId, segment, step, traceRoot, endStateHash);
        // INVARIANT: a dispute is about the provider's own committed leaves h(step-1) and h(step).
        if (!Trace.verifyStateCalldata(traceRoot, uint64(step - 1), hPrev, proofPrev)) {
            revert DisputeGameBadLeafProof(step - 1, hPrev);
        }
        if (!Trace.verifyStateCalldata(traceRoot, uint64(step), hStep, proofStep)) {
            revert DisputeGameBadLeafProof(step, hStep);
        }
        disputeId = _open(j, jobId, step, hPrev, hStep, salt);
    }

    // ---------------------------------------------------------------- provider

    /// @inheritdoc IDisputeGame
    function concede(uint256 disputeId) external {
        Dispute storage d = _openDispute(disputeId);
        if (msg.sender != d.provider) revert DisputeGameNotProvider(disputeId, msg.sender, d.provider);
        // INVARIANT: once the job faulted, the provider has nothing left at stake: its other disputes are settled by their
        // panels (resolve) or a proof, never by a concession that would hand a share of the reward to whoever it names.
        if (_jobFaulted[d.jobId]) revert DisputeGameSuperseded(disputeId, d.jobId);
        // INVARIANT: a concession comes before any vote can be revealed. Conceded counts no vote (no forfeit, no fee), so
        // a provider that could still concede after seeing the reveals would give its own panel members a free vote
        // for Valid (concede when they lose, so nobody forfeits; keep the win when they carry the panel) and deny the
        // honest majority its fees and the forfeits; once the reveal phase is open only resolve settles.
        if (_commitsClosed(d)) revert DisputeGameConcessionClosed(disputeId, d.commitDeadline, block.timestamp);
        _settle(disputeId, d, Outcome.Conceded);
    }

    /// @inheritdoc IDisputeGame
    function prove(
        uint256 disputeId,
        uint256 commitW,
        uint256 commitWNext,
        uint256 commitBatch,
        bytes32[] calldata batchProof,
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC
    ) external {
        // INVARIANT: a proof settles only under a verifier named at deployment by a ceremony's vkey hash, or under the
        // development setup on the local dev chain (whoever holds a setup's trapdoor forges any proof).
        if (_provingMode == ProvingMode.Disabled) {
            revert DisputeGameProvingDisabled(address(_verifier), _vkeyHash, block.chainid);
        }
        Dispute storage d = _openDispute(disputeId);
        uint256 jobId = d.jobId;
        CircuitTerms storage terms = _terms[jobId];
        if (terms.batchRoot == bytes32(0)) revert DisputeGameNotCircuitJob(jobId);
        uint256 step = d.step;
        // INVARIANT: a proof shows one transition only. The first step of a segment also rests on the segment's first
        // leaf continuing the previous segment (or being the initial state), which only the panel checks; a provider
        // that broke that link must not win with a proof of a correct transition from a wrong start.
        if (_atSegmentStart(d)) revert DisputeGameProofNotAllowed(disputeId, step);
        // INVARIANT: the proof is about the disputed leaves: for the circuit class h(t) binds the Poseidon commitment
        // of W_t as weightsHash, with no optimizer state (docs/disputes.md).
        if (
            Trace.stateHash(jobId, step - 1, bytes32(commitW), bytes32(0)) != d.hPrev
                || Trace.stateHash(jobId, step, bytes32(commitWNext), bytes32(0)) != d.hStep
        ) revert DisputeGameStateMismatch(disputeId);
        // INVARIANT: the batch is the one the job's terms assign to this step.
        if (!Trace.verifyStateCalldata(terms.batchRoot, uint64(step), bytes32(commitBatch), batchProof)) {
            revert DisputeGameBadBatchProof(disputeId, step);
        }
        uint256[4] memory signals = [commitW, commitWNext, commitBatch, terms.lr];
        if (!_verifier.verifyProof(pA, pB, pC, signals)) revert DisputeGameInvalidProof(disputeId);
        _settle(disputeId, d, Outcome.Proven);
        // INVARIANT: a vote the proof shows wrong forfeits whenever the proof lands. A proof after the reveals would
        // otherwise spare every member that revealed Fault (Proven counts no vote), so a challenger's own members could
        // vote Fault for free against a provider that proves; members that had not revealed yet are not judged.
        if (d.panelDrawn) _judge(disputeId, d.panel, Vote.Valid, false);
    }

    // ---------------------------------------------------------------- panel

    /// @inheritdoc IDisputeGame
    function drawPanel(uint256 disputeId) external returns (bool drawn) {
        Dispute storage d = _openDispute(disputeId);
        if (d.panelDrawn) revert DisputeGamePanelDrawn(disputeId);
        if (block.number <= d.seedBlock) revert DisputeGameSeedNotReady(disputeId, d.seedBlock, block.number);
        return _tryDraw(disputeId, d, true);
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
            if (block.number <= d.seedBlock) revert DisputeGameSeedNotReady(disputeId, d.seedBlock, block.number);
            // INVARIANT: commitVote never re-anchors a lapsed seed (only drawPanel does, MAX_RESEEDS times); each way it
            // cannot draw is its own error, so a caller retries only what time fixes (SeedNotReady)
            if (blockhash(d.seedBlock) == bytes32(0)) {
                if (d.reseeds >= MAX_RESEEDS) revert DisputeGameSeedExpired(disputeId, d.seedBlock, d.reseeds);
                revert DisputeGameSeedLapsed(disputeId, d.seedBlock, block.number);
            }
            if (!_tryDraw(disputeId, d, false)) revert DisputeGamePanelUnavailable(disputeId);
        }
        if (!_isMember(d, msg.sender)) revert DisputeGameNotPanelMember(disputeId, msg.sender);
        Ballot storage b = _ballots[disputeId][msg.sender];
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
        Ballot storage b = _ballots[disputeId][msg.sender];
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
    function resolve(uint256 disputeId) external {
        Dispute storage d = _openDispute(disputeId);
        bool allRevealed = d.panelDrawn && d.reveals == d.panel.length;
        // INVARIANT: the vote is counted only when every member revealed or the reveal deadline passed.
        if (!allRevealed && block.timestamp <= d.revealDeadline) {
            revert DisputeGameVotingOpen(disputeId, d.revealDeadline, block.timestamp);
        }
        // A panel nobody drew is drawn now (if its seed is still available) so that its silent members answer for it.
        if (!d.panelDrawn && block.number > d.seedBlock) _tryDraw(disputeId, d, false);
        Outcome outcome;
        if (d.faultVotes > d.validVotes) outcome = Outcome.PanelFault;
        else if (d.validVotes > d.faultVotes) outcome = Outcome.PanelValid;
        else outcome = Outcome.NoDecision;
        // INVARIANT: a tie of revealed votes is no verdict, so it stays NoDecision (deciding it either way would let one
        // party's member plus one silent honest member decide the dispute), but its revealers are judged by the next
        // decided outcome on the same step: a member that forced the tie with a wrong vote forfeits then.
        if (outcome == Outcome.NoDecision && d.validVotes != 0) _tiedByStep[d.jobId][d.step] = disputeId;
        // INVARIANT: a dispute whose job already faulted through another dispute still settles on its own panel's
        // decision (a false challenge loses its bond, its Fault voters forfeit); only one its panel did not decide
        // closes as Superseded, and its silent members still forfeit as on any NoDecision.
        if (outcome == Outcome.NoDecision && _jobFaulted[d.jobId]) {
            _settle(disputeId, d, Outcome.Superseded);
            if (d.panelDrawn) _judge(disputeId, d.panel, Vote.None, true);
            return;
        }
        _settle(disputeId, d, outcome);
        _penalize(disputeId, d, outcome);
    }

    // ---------------------------------------------------------------- circuit class

    /// @inheritdoc IDisputeGame
    function setCircuitTerms(uint256 jobId, uint256 lr, bytes32 batchRoot, bytes32 manifestBody) external {
        IJobMarket.JobView memory j = _job(jobId);
        if (j.status == IJobMarket.JobStatus.None) revert IJobMarket.JobMarketUnknownJob(jobId);
        if (msg.sender != j.buyer) revert DisputeGameNotBuyer(jobId, msg.sender, j.buyer);
        // INVARIANT: a provider accepts a job knowing its terms; they never change afterwards.
        if (j.status != IJobMarket.JobStatus.Open || j.nextSegment != 0 || _terms[jobId].batchRoot != bytes32(0)) {
            revert DisputeGameTermsLocked(jobId);
        }
        if (lr >= 2 ** 32 || batchRoot == bytes32(0)) revert DisputeGameInvalidTerms(lr, batchRoot);
        bytes32 expected = circuitManifestHash(manifestBody, lr, batchRoot);
        // INVARIANT: the terms are the ones the manifest hash anchored at createJob commits to, so everyone who audits
        // against the manifest audits against the terms a proof is checked with.
        if (expected != j.manifestHash) revert DisputeGameTermsNotInManifest(jobId, j.manifestHash, expected);
        _terms[jobId] = CircuitTerms({lr: lr, batchRoot: batchRoot});
        emit CircuitTermsSet(jobId, lr, batchRoot, manifestBody);
    }

    /// @inheritdoc IDisputeGame
    function circuitManifestHash(bytes32 manifestBody, uint256 lr, bytes32 batchRoot) public pure returns (bytes32) {
        return keccak256(abi.encode(CIRCUIT_MANIFEST_TYPEHASH, manifestBody, lr, batchRoot));
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
    }

    /// @inheritdoc IDisputeGame
    function ballotOf(uint256 disputeId, address member) external view returns (bytes32 commitment, Vote vote) {
        Ballot storage b = _ballots[disputeId][member];
        return (b.commitment, b.vote);
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

    // ---------------------------------------------------------------- internal

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
        d.seedBlock = uint64(block.number + p.seedDelayBlocks);
        d.bond = bond.toUint128();
        d.fees = uint128(fees); // fits: panelFee * panelSize <= type(uint128).max (constructor)
        d.challengedAt = uint64(block.timestamp);
        uint64 commitDeadline = uint64(block.timestamp + p.commitWindowSeconds);
        d.commitDeadline = commitDeadline;
        d.revealDeadline = commitDeadline + p.revealWindowSeconds;
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

    /// @dev Fees a challenge deposits: one panelFee per panel member (constructor bounds the product by uint128).
    function _panelFees() private view returns (uint256) {
        return uint256(_params.panelFee) * _params.panelSize;
    }

    function _bondFor(IJobMarket.JobView memory j) private view returns (uint256) {
        Params storage p = _params;
        uint256 eps = p.panelErrorBps;
        // B >= (eps * lam * S + grief) / (1 - eps): minChallengerBond covers grief / (1 - eps); rounded up.
        uint256 num = uint256(j.policy.requiredStake) * j.policy.challengerBps * eps;
        uint256 den = _BPS * (_BPS - eps);
        return p.minChallengerBond + (num + den - 1) / den;
    }

    function _openDispute(uint256 disputeId) private view returns (Dispute storage d) {
        d = _disputes[disputeId];
        if (d.status == Status.None) revert DisputeGameUnknownDispute(disputeId);
        // INVARIANT: a resolved dispute is final.
        if (d.status == Status.Resolved) revert DisputeGameAlreadyResolved(disputeId, d.outcome);
    }

    /// @dev The commit phase is over (the reveal phase may open): the commit deadline passed, or every member committed.
    function _commitsClosed(Dispute storage d) private view returns (bool) {
        return block.timestamp > d.commitDeadline || (d.panelDrawn && d.commits == d.panel.length);
    }

    function _isMember(Dispute storage d, address who) private view returns (bool) {
        address[] storage panel = d.panel;
        for (uint256 i; i < panel.length; ++i) {
            if (panel[i] == who) return true;
        }
        return false;
    }

    /// @dev Draws the panel from blockhash(seedBlock). Returns false when the seed block left blockhash range (then,
    /// if `reseed` and commits are still open, the seed moves to a future block) or too few auditors are eligible.
    function _tryDraw(uint256 disputeId, Dispute storage d, bool reseed) private returns (bool) {
        bytes32 bh = blockhash(d.seedBlock);
        if (bh == bytes32(0)) {
            // NOTE: more than 256 blocks since the seed block: its hash is gone. Re-anchoring to a new future block
            // keeps the seed unpredictable at the time it is fixed.
            if (reseed && block.timestamp <= d.commitDeadline) {
                // INVARIANT: a dispute sees at most 1 + MAX_RESEEDS seeds. Whoever is online when a seed lapses chooses
                // between drawing its panel and letting it lapse, so unlimited reseeds would let a party re-roll the
                // panel until its own auditors hold it; past the limit the dispute has no panel (NoDecision).
                if (d.reseeds >= MAX_RESEEDS) revert DisputeGameSeedExpired(disputeId, d.seedBlock, d.reseeds);
                uint64 next = uint64(block.number + _params.seedDelayBlocks);
                d.seedBlock = next;
                unchecked {
                    // bound: reseeds < MAX_RESEEDS (checked above)
                    ++d.reseeds;
                }
                emit PanelReseeded(disputeId, next);
            }
            return false;
        }
        bytes32 seed = keccak256(abi.encode(bh, disputeId));
        (address buyer,,) = _market.jobParties(d.jobId);
        address[] memory exclude = new address[](3);
        exclude[0] = d.provider;
        exclude[1] = d.challenger;
        exclude[2] = buyer;
        // The pool is the registry's snapshot at the challenge: fixed before blockhash(seedBlock) existed, and no bond,
        // exit or re-bond after it changes it (AuditorRegistry.drawPanel reverts once the snapshot is older than the
        // exit delay; the catch below then leaves the dispute without a panel).
        try _registry.drawPanel(seed, _params.panelSize, exclude, d.challengedAt) returns (address[] memory panel) {
            d.panel = panel;
            d.panelDrawn = true;
            emit PanelDrawn(disputeId, seed, panel);
            return true;
        } catch (bytes memory reason) {
            // INVARIANT: only a draw the registry refuses by name (too few eligible auditors, a snapshot too old or not
            // yet past) leaves a dispute without a panel (resolve ends it NoDecision); a draw starved of gas reverts the
            // caller, so no caller skips the forfeits of a panel that could be drawn.
            DrawGuard.requireNoPanel(reason);
            emit PanelUnavailable(disputeId);
            return false;
        }
    }

    /// @dev Effects of an outcome: the dispute becomes final, the bond and the panel fees are credited, the job is
    /// settled on JobMarket, and on a fault the challenger share of the slash is pooled and this dispute takes its part.
    function _settle(uint256 disputeId, Dispute storage d, Outcome outcome) private {
        uint256 jobId = d.jobId;
        d.status = Status.Resolved;
        d.outcome = outcome;
        delete _openByStep[jobId][d.step];
        uint128 bond = d.bond;
        _openBonds -= bond;
        bool fault = outcome == Outcome.Conceded || outcome == Outcome.PanelFault;
        bool challengerWrong = outcome == Outcome.Proven || outcome == Outcome.PanelValid;
        emit DisputeResolved(disputeId, jobId, outcome);
        // INVARIANT: every wei of a bond is credited: to the provider when the challenge was wrong, else back to the
        // challenger; except a wrong challenge of a segment's first step, whose bond is burned. That step is where a
        // withheld start checkpoint is challenged (the panel votes Fault on content it cannot fetch), so a provider
        // that withholds until a bot challenges and then publishes would collect the bond: the burn leaves it nothing
        // to gain; the challenger loses the bond as on any other wrong challenge (docs/disputes.md, availability).
        if (challengerWrong && outcome == Outcome.PanelValid && _atSegmentStart(d)) {
            emit BondBurned(disputeId, bond);
            _send(BURN_ADDRESS, bond);
        } else {
            _credit(challengerWrong ? d.provider : d.challenger, bond);
        }
        uint256 shares = _openCount[jobId];
        _openCount[jobId] = shares - 1;
        --_openBy[jobId][d.challenger];
        if (outcome != Outcome.Superseded && outcome != Outcome.NoDecision) _judgeTie(d, fault ? Vote.Fault : Vote.Valid);
        if (_jobFaulted[jobId]) {
            _settleAfterFault(disputeId, d, outcome, fault);
            return;
        }
        if (!fault) {
            _payFees(disputeId, d, outcome, 0);
            _market.settleNoFault(jobId, outcome == Outcome.NoDecision);
            return;
        }
        // First fault on the job (its other disputes then settle on their own panels): JobMarket refunds the buyer and
        // slashes the lock; the challenger share comes here.
        _jobFaulted[jobId] = true;
        uint256 reward = _market.settleProviderFault(jobId);
        if (reward != 0) _vault.claim();
        // The panel that found the fault is paid out of the reward first, so the challenger's deposit comes back whole
        // whenever the reward covers the fees (docs/disputes.md: honest challenger's condition).
        uint256 fromReward = _payFees(disputeId, d, outcome, reward);
        uint256 pool = reward - fromReward;
        // INVARIANT: the pool is shared by exactly the disputes open on the job now (this one included); no dispute can
        // open on the job any more (JobMarket refuses to freeze a Refunded job).
        _pools[jobId] = RewardPool({amount: pool.toUint128(), shares: shares.toUint32()});
        _pooled += pool;
        emit RewardPooled(jobId, disputeId, reward, fromReward, shares);
        _payShare(disputeId, jobId, d.challenger);
    }

    /// @dev Fees and reward of a dispute settled after another dispute faulted its job (JobMarket no longer holds the job:
    /// it was refunded and slashed, so nothing is settled there).
    function _settleAfterFault(uint256 disputeId, Dispute storage d, Outcome outcome, bool fault) private {
        uint256 jobId = d.jobId;
        if (outcome == Outcome.Superseded) {
            // INVARIANT: a dispute that was open when its job faulted and that its panel did not decide costs its
            // challenger nothing but the fees of members that revealed (bond and every other fee back), and takes an
            // equal part of the pooled challenger share.
            _payFees(disputeId, d, Outcome.NoDecision, 0);
            _payShare(disputeId, jobId, d.challenger);
        } else if (!fault) {
            // INVARIANT: a challenge decided wrong after its job faulted takes no part of the reward: its part is left
            // to the job's other disputes.
            _payFees(disputeId, d, outcome, 0);
            _forgoShare(disputeId, jobId);
        } else {
            // Another fault: its panel is paid out of what is left of the pooled challenger share first (so a right
            // challenge decided late gets its deposit back as the first one did), then the challenger takes its part.
            RewardPool storage left = _pools[jobId];
            uint256 fromPool = _payFees(disputeId, d, outcome, left.amount);
            left.amount -= uint128(fromPool); // fits: fromPool <= left.amount
            _pooled -= fromPool;
            _payShare(disputeId, jobId, d.challenger);
        }
    }

    /// @dev Pays one equal part of job `jobId`'s pool to `to`; the last share takes the rounding remainder.
    function _payShare(uint256 disputeId, uint256 jobId, address to) private {
        RewardPool storage pool = _pools[jobId];
        uint256 shares = pool.shares;
        if (shares == 0) return;
        uint256 amount = pool.amount / shares;
        if (shares == 1) amount = pool.amount;
        unchecked {
            // bound: amount <= pool.amount, shares >= 1
            pool.amount -= uint128(amount);
            pool.shares = uint32(shares - 1);
        }
        _pooled -= amount;
        emit RewardPaid(disputeId, jobId, to, amount);
        _credit(to, amount);
    }

    /// @dev Dispute `disputeId` gives up its part of job `jobId`'s pool (its challenge was decided wrong): the part stays
    /// with the disputes still to be paid; when it was the last part, the remainder is burned (no party can route it).
    function _forgoShare(uint256 disputeId, uint256 jobId) private {
        RewardPool storage pool = _pools[jobId];
        uint256 shares = pool.shares;
        if (shares == 0) return;
        if (shares == 1) {
            uint256 amount = pool.amount;
            delete _pools[jobId];
            _pooled -= amount;
            emit RewardPaid(disputeId, jobId, BURN_ADDRESS, amount);
            if (amount != 0) _send(BURN_ADDRESS, amount);
            return;
        }
        unchecked {
            // bound: shares >= 2
            pool.shares = uint32(shares - 1);
        }
    }

    /// @dev Panel fees: only a counted vote (resolve, with a drawn panel) earns them. A member earns panelFee by
    /// revealing on the majority side, or by revealing at all when there is no majority (it did the recompute); every
    /// fee nobody earned (conceded, proven, no panel, minority or silent members) goes back to the challenger. Up to
    /// `reward` of the earned fees is paid out of the fault's reward instead of the deposit (returned as `fromReward`),
    /// and the deposit they would have come from goes back to the challenger.
    function _payFees(uint256 disputeId, Dispute storage d, Outcome outcome, uint256 reward)
        private
        returns (uint256 fromReward)
    {
        uint128 deposited = d.fees;
        _openFees -= deposited;
        uint256 fees = deposited;
        bool counted = outcome == Outcome.PanelFault || outcome == Outcome.PanelValid || outcome == Outcome.NoDecision;
        if (counted && d.panelDrawn) {
            Vote majority = _majority(outcome);
            uint256 fee = _params.panelFee;
            address[] storage panel = d.panel;
            for (uint256 i; i < panel.length; ++i) {
                Vote v = _ballots[disputeId][panel[i]].vote;
                if (v == Vote.None || (majority != Vote.None && v != majority)) continue;
                // INVARIANT: at most panelSize fees are paid (the panel has panelSize members), each out of the fault's
                // reward while it lasts, else out of this dispute's deposit.
                if (reward - fromReward >= fee) fromReward += fee;
                else fees -= fee;
                emit PanelFeePaid(disputeId, panel[i], fee);
                _credit(panel[i], fee);
            }
        }
        if (fees == 0) return fromReward;
        emit PanelFeesRefunded(disputeId, d.challenger, fees);
        _credit(d.challenger, fees);
    }

    function _majority(Outcome outcome) private pure returns (Vote) {
        if (outcome == Outcome.PanelFault) return Vote.Fault;
        if (outcome == Outcome.PanelValid) return Vote.Valid;
        return Vote.None;
    }

    /// @dev Meta-audit of a counted panel: members who revealed against the majority, and silent members, forfeit up to
    /// panelForfeit of their auditor bond, split among the majority; with no majority, silent members' forfeits are
    /// burned.
    function _penalize(uint256 disputeId, Dispute storage d, Outcome outcome) private {
        if (!d.panelDrawn || outcome == Outcome.Superseded) return;
        _judge(disputeId, d.panel, _majority(outcome), true);
    }

    /// @dev The dispute on the same (job, step) that last ended in a tie, if any (with the same leaves: they are the
    /// provider's committed ones, never rewritten), is judged by `truth` now that the step is decided: its revealers on
    /// the wrong side forfeit to those on the right side (its silent members forfeited at the tie already).
    function _judgeTie(Dispute storage d, Vote truth) private {
        uint256 tiedId = _tiedByStep[d.jobId][d.step];
        if (tiedId == 0) return;
        delete _tiedByStep[d.jobId][d.step];
        Dispute storage t = _disputes[tiedId];
        if (t.hPrev != d.hPrev || t.hStep != d.hStep) return;
        emit TieJudged(tiedId, truth);
        _judge(tiedId, t.panel, truth, false);
    }

    /// @dev Forfeits of dispute `disputeId`'s panel against `truth` (None: no majority): a member that revealed another
    /// vote than `truth`, and a silent member when `silentForfeits`, forfeits min(panelForfeit, bond), split among the
    /// members that revealed `truth` (the first also takes the rounding remainder), burned when there are none.
    function _judge(uint256 disputeId, address[] memory panel, Vote truth, bool silentForfeits) private {
        uint256 forfeit = _params.panelForfeit;
        if (forfeit == 0) return;
        address[] memory winners = new address[](panel.length);
        uint256 nWinners;
        for (uint256 i; i < panel.length; ++i) {
            if (truth != Vote.None && _ballots[disputeId][panel[i]].vote == truth) winners[nWinners++] = panel[i];
        }
        for (uint256 i; i < panel.length; ++i) {
            Vote v = _ballots[disputeId][panel[i]].vote;
            bool wrong = v == Vote.None ? silentForfeits : truth != Vote.None && v != truth;
            if (!wrong) continue;
            uint256 bond = _registry.auditorOf(panel[i]).bond;
            uint256 amount = forfeit < bond ? forfeit : bond;
            if (amount == 0) continue;
            if (nWinners == 0) {
                _forfeit(disputeId, panel[i], amount, BURN_ADDRESS);
                continue;
            }
            uint256 share = amount / nWinners;
            // The first winner also takes the rounding remainder, so the whole amount is credited.
            uint256 first = amount - share * (nWinners - 1);
            _forfeit(disputeId, panel[i], first, winners[0]);
            if (share == 0) continue;
            for (uint256 w = 1; w < nWinners; ++w) {
                _forfeit(disputeId, panel[i], share, winners[w]);
            }
        }
    }

    function _forfeit(uint256 disputeId, address member, uint256 amount, address to) private {
        emit PanelMemberPenalized(disputeId, member, to, amount);
        _registry.forfeit(member, amount, to);
    }

    /// @dev Whether the disputed step is its segment's first (its start state is the segment's committed checkpoint).
    function _atSegmentStart(Dispute storage d) private view returns (bool) {
        return d.step - 1 == uint256(d.segment) * _job(d.jobId).policy.stepsPerSegment;
    }

    /// @dev The market's view of job `jobId` (one decoder of JobView for every caller).
    function _job(uint256 jobId) private view returns (IJobMarket.JobView memory) {
        return _market.getJob(jobId);
    }

    /// @dev The one transfer out of the contract: claims and burns.
    function _send(address to, uint256 amount) private {
        _bondToken.safeTransfer(to, amount);
    }

    function _credit(address account, uint256 amount) private {
        if (amount == 0) return;
        _credits[account] += amount;
        emit Credited(account, amount);
    }
}
