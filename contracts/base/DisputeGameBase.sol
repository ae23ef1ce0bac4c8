// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IDisputeGameTypes, IStepVerifier} from "../interfaces/IDisputeGame.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";
import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";
import {IStakeVault} from "../interfaces/IStakeVault.sol";
import {DrawGuard} from "../libraries/DrawGuard.sol";

/// @title DisputeGameBase: the storage, constants and shared helpers of DisputeGame and DisputeSettlement
/// @notice DisputeGame is deployed as two contracts so that each keeps >= 10% headroom under EIP-170: DisputeGame
/// (challenges, panel draws, votes, claims, views) and DisputeSettlement (concede, prove, resolve, circuit terms and
/// every payout and forfeit), which DisputeGame deploys in its constructor and runs by DELEGATECALL. Both inherit this
/// contract, so they share one storage layout; DisputeSettlement's own storage is never used.
/// @dev IMPORTANT: state variables are declared here only (never in DisputeGame or DisputeSettlement), so that the
/// layout both contracts see is the same by construction.
abstract contract DisputeGameBase is IDisputeGameTypes {
    using SafeERC20 for IERC20;

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
        uint8 round;
        uint128 fees;
        // slots 5, 6
        bytes32 hPrev;
        bytes32 hStep;
        address[] panel;
        // slot 8: the provider's appeal of a unanimous first-round Fault (appealFault)
        uint64 appealDeadline; // 0: no appeal window open
        uint128 providerBond; // posted by the provider's appeal; settled with the bond (_settle)
    }

    /// @dev A challenge commitment: the block it was made in and the segment commitment it is bound to.
    struct ChallengeCommit {
        uint64 blockNumber;
        bytes32 segmentCommitment;
    }

    /// @dev `voided`: the member forfeited bond at or after the dispute opened, so its vote was not counted and earns
    /// nothing (no fee, no share of a forfeit); a wrong vote still forfeits.
    struct Ballot {
        bytes32 commitment;
        Vote vote;
        bool voided;
    }

    /// @dev The challenger share of a faulted job: held until every dispute open on the job when it faulted has settled,
    /// then split equally among those that ended Conceded or PanelFault (`_faultsOf`).
    struct RewardPool {
        uint128 amount; // not yet paid out
        uint32 shares; // disputes open on the job when it faulted that are still to settle
    }

    /// @notice Largest panel (votes are counted in uint8; forfeits loop over the panel).
    uint256 public constant MAX_PANEL = 15;
    /// @notice Most panel rounds of one dispute. A Fault that not every seat of its round voted for (a split, including
    /// silent seats) does not settle: it is appealed to the next round, a fresh panel of 2 * panelSize + 1 members, then
    /// of MAX_PANEL (each as large as the snapshot's pool allows, earlier members excluded where the pool still fills
    /// the round); the last round's majority settles the dispute and every earlier round's members are judged by it.
    uint256 public constant MAX_ROUNDS = 3;
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
    uint256 internal constant _BPS = 10_000;
    /// @dev blockhash(n) is only available for the 256 most recent blocks.
    uint256 internal constant _BLOCKHASH_RANGE = 256;
    /// @notice The local development chain (Hardhat, Anvil): the only chain on which the committed development setup
    /// may settle a dispute.
    uint256 public constant DEV_CHAIN_ID = 31337;
    /// @notice vkey hash (verifier/src/zk/vkey.ts) of the committed development setup, circuits/keys/step.vkey.json.
    /// Whoever ran that setup could forge proofs, so this hash never counts as a ceremony key.
    bytes32 public constant DEV_VKEY_HASH = 0x851b95ddd267b95c19364ccc66025f731fe7597762668c56559f0d89f422f11d;
    /// @notice Domain of a circuit-class manifest hash (circuitManifestHash).
    bytes32 public constant CIRCUIT_MANIFEST_TYPEHASH =
        keccak256("PoUWCircuitManifest(bytes32 manifestBody,uint256 lr,bytes32 batchRoot)");

    IJobMarket internal immutable _market;
    IAuditorRegistry internal immutable _registry;
    IStepVerifier internal immutable _verifier;
    bytes32 internal immutable _vkeyHash;
    ProvingMode internal immutable _provingMode;
    IERC20 internal immutable _bondToken;
    IStakeVault internal immutable _vault;

    Params internal _params;
    uint256 internal _disputeCount;
    /// @dev Sums over open disputes, packed in one slot so that a challenge writes one word for both. Each bond and
    /// fee deposit is a uint128; a sum past uint128 reverts the challenge (checked arithmetic), never wraps.
    uint128 internal _openBonds;
    uint128 internal _openFees;
    mapping(uint256 disputeId => Dispute) internal _disputes;
    mapping(uint256 disputeId => mapping(address member => Ballot)) internal _ballots;
    mapping(uint256 jobId => mapping(uint256 step => uint256 disputeId)) internal _openByStep;
    /// @dev Set once a dispute found the provider of the job at fault: JobMarket has refunded the job and slashed the
    /// lock, so later disputes on it settle their bonds without calling JobMarket again.
    mapping(uint256 jobId => bool) internal _jobFaulted;
    mapping(uint256 jobId => CircuitTerms) internal _terms;
    mapping(address account => uint256 amount) internal _credits;
    mapping(uint256 jobId => uint256 count) internal _openCount;
    mapping(uint256 jobId => mapping(address challenger => uint256 count)) internal _openBy;
    mapping(uint256 jobId => RewardPool) internal _pools;
    /// @dev `challenger`'s live commitment to a challenge (challengeCommitment); blockNumber 0: none.
    mapping(address challenger => mapping(bytes32 commitment => ChallengeCommit)) internal _challengeCommits;
    /// @dev Sum of the undistributed reward pools (held by this contract besides bonds, fees and credits).
    uint256 internal _pooled;
    /// @dev The last dispute on (job, step) that ended in a tie of revealed votes: its revealers are judged by the next
    /// decided outcome on the same step (a tie is no verdict on them, the step's truth is).
    mapping(uint256 jobId => mapping(uint256 step => uint256 disputeId)) internal _tiedByStep;
    /// @dev The panels of a dispute's earlier rounds (round 1 .. round - 1); the current round's panel is `panel`.
    mapping(uint256 disputeId => mapping(uint256 round => address[] panel)) internal _pastPanels;
    /// @dev The tie recorded on the same (job, step) before dispute `disputeId`'s (0: none): every unjudged tie of a step
    /// is in one chain from `_tiedByStep`, judged together by the step's next decided outcome.
    mapping(uint256 disputeId => uint256 tiedBefore) internal _tieBefore;
    /// @dev The disputes of a faulted job that ended Conceded or PanelFault while its reward pool was held: they share it.
    mapping(uint256 jobId => uint256[] disputeIds) internal _faultsOf;

    constructor(
        IJobMarket market_,
        IAuditorRegistry registry_,
        IStepVerifier verifier_,
        bytes32 vkeyHash_,
        ProvingMode mode_,
        IERC20 bondToken_,
        IStakeVault vault_
    ) {
        _market = market_;
        _registry = registry_;
        _verifier = verifier_;
        _vkeyHash = vkeyHash_;
        _provingMode = mode_;
        _bondToken = bondToken_;
        _vault = vault_;
    }

    /// @dev IDisputeGame.circuitManifestHash.
    function _circuitManifestHash(bytes32 manifestBody, uint256 lr, bytes32 batchRoot) internal pure returns (bytes32) {
        return keccak256(abi.encode(CIRCUIT_MANIFEST_TYPEHASH, manifestBody, lr, batchRoot));
    }

    /// @dev Fees a challenge deposits: one panelFee per panel member (constructor bounds the product by uint128).
    function _panelFees() internal view returns (uint256) {
        return uint256(_params.panelFee) * _params.panelSize;
    }

    function _bondFor(IJobMarket.JobView memory j) internal view returns (uint256) {
        Params storage p = _params;
        uint256 eps = p.panelErrorBps;
        // B >= (eps * lam * S + grief) / (1 - eps): minChallengerBond covers grief / (1 - eps); rounded up.
        uint256 num = uint256(j.policy.requiredStake) * j.policy.challengerBps * eps;
        uint256 den = _BPS * (_BPS - eps);
        return p.minChallengerBond + (num + den - 1) / den;
    }

    function _openDispute(uint256 disputeId) internal view returns (Dispute storage d) {
        d = _disputes[disputeId];
        if (d.status == Status.None) revert DisputeGameUnknownDispute(disputeId);
        // INVARIANT: a resolved dispute is final.
        if (d.status == Status.Resolved) revert DisputeGameAlreadyResolved(disputeId, d.outcome);
    }

    /// @dev The commit phase is over (the reveal phase may open): the commit deadline passed, or every member committed.
    function _commitsClosed(Dispute storage d) internal view returns (bool) {
        return block.timestamp > d.commitDeadline || (d.panelDrawn && d.commits == d.panel.length);
    }

    function _isMember(Dispute storage d, address who) internal view returns (bool) {
        address[] storage panel = d.panel;
        for (uint256 i; i < panel.length; ++i) {
            if (panel[i] == who) return true;
        }
        return false;
    }

    /// @dev Draws the panel from blockhash(seedBlock). Returns false when the seed block left blockhash range or too few
    /// auditors are eligible.
    function _tryDraw(uint256 disputeId, Dispute storage d) internal returns (bool) {
        bytes32 bh = blockhash(d.seedBlock);
        // INVARIANT: a round draws from its one seed block or not at all. Whoever sees the panel a public seed would
        // draw may let it lapse (256 blocks) instead of drawing it; a re-anchored seed would then be a second, independent
        // panel chosen by the party the first one did not favour (best of two). A lapsed round has no panel: NoDecision.
        if (bh == bytes32(0)) return false;
        bytes32 seed = keccak256(abi.encode(bh, disputeId));
        (address buyer,,) = _market.jobParties(d.jobId);
        (address[] memory exclude, uint256 k) = _drawTerms(disputeId, d, buyer);
        // The pool is the registry's snapshot at the challenge: fixed before blockhash(seedBlock) existed, and no bond,
        // exit or re-bond after it changes it (AuditorRegistry.drawPanel reverts once the snapshot is older than the
        // exit delay; the catch below then leaves the dispute without a panel).
        try _registry.drawPanel(seed, k, exclude, d.challengedAt) returns (address[] memory panel) {
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

    function _majority(Outcome outcome) internal pure returns (Vote) {
        if (outcome == Outcome.PanelFault) return Vote.Fault;
        if (outcome == Outcome.PanelValid) return Vote.Valid;
        return Vote.None;
    }

    /// @dev Whether the disputed step is its segment's first (its start state is the segment's committed checkpoint).
    function _atSegmentStart(Dispute storage d) internal view returns (bool) {
        return d.step - 1 == uint256(d.segment) * _job(d.jobId).policy.stepsPerSegment;
    }

    /// @dev Who a draw of dispute `disputeId`'s current round excludes and how many members it draws. Round 1: panelSize
    /// members, never the provider, the challenger or the buyer. An appeal round: 2 * panelSize + 1, then MAX_PANEL
    /// members, as many as the snapshot's pool holds (odd), and the earlier rounds' members are excluded as well when the
    /// pool without them still fills the round.
    function _drawTerms(uint256 disputeId, Dispute storage d, address buyer)
        internal
        view
        returns (address[] memory exclude, uint256 k)
    {
        exclude = new address[](3);
        exclude[0] = d.provider;
        exclude[1] = d.challenger;
        exclude[2] = buyer;
        k = _params.panelSize;
        uint256 round = d.round;
        if (round < 2) return (exclude, k);
        k = round < MAX_ROUNDS ? 2 * k + 1 : MAX_PANEL;
        if (k > MAX_PANEL) k = MAX_PANEL;
        uint256 n = 3;
        for (uint256 r = 1; r < round; ++r) n += _pastPanels[disputeId][r].length;
        address[] memory wide = new address[](n);
        n = 3;
        for (uint256 i; i < 3; ++i) wide[i] = exclude[i];
        for (uint256 r = 1; r < round; ++r) {
            address[] storage past = _pastPanels[disputeId][r];
            for (uint256 i; i < past.length; ++i) wide[n++] = past[i];
        }
        // A pool the registry cannot size (a snapshot too old or not yet past) leaves k as it is: the draw then fails by
        // the same named error and the round has no panel.
        try _registry.poolSize(d.challengedAt, wide) returns (uint256 freshPool) {
            if (freshPool >= k) return (wide, k);
        } catch {
            return (exclude, k);
        }
        try _registry.poolSize(d.challengedAt, exclude) returns (uint256 pool) {
            // INVARIANT: an appeal panel has an odd number of seats and never more than the pool (a tie needs silence).
            if (pool < k && pool != 0) k = pool % 2 == 0 ? pool - 1 : pool;
        } catch {}
    }

    /// @dev The ballots of round `round` of dispute `disputeId` (round 1's key is the dispute id itself).
    function _ballotKey(uint256 disputeId, uint256 round) internal pure returns (uint256) {
        return round < 2 ? disputeId : disputeId | ((round - 1) << 128);
    }

    /// @dev The auditor-bond amount a wrong or silent member of round `round` forfeits: panelForfeit doubled per round.
    function _forfeitOf(uint256 round) internal view returns (uint256) {
        return round < 2 ? _params.panelForfeit : uint256(_params.panelForfeit) << (round - 1);
    }

    /// @dev The market's view of job `jobId` (one decoder of JobView for every caller).
    function _job(uint256 jobId) internal view returns (IJobMarket.JobView memory) {
        return _market.getJob(jobId);
    }

    /// @dev The one transfer out of the contract: claims and burns.
    function _send(address to, uint256 amount) internal {
        _bondToken.safeTransfer(to, amount);
    }

    function _credit(address account, uint256 amount) internal {
        if (amount == 0) return;
        _credits[account] += amount;
        emit Credited(account, amount);
    }
}
