// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Seconds} from "../libraries/Seconds.sol";

/// @title IStepVerifier: the generated Groth16 verifier of circuits/step.circom (contracts/verifiers/StepVerifier.sol)
/// @notice Public signals, in order: [commitW, commitWNext, commitBatch, lr] (docs/zk.md).
interface IStepVerifier {
    function verifyProof(
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC,
        uint256[4] calldata pubSignals
    ) external view returns (bool);
}

/// @title IDisputeGameTypes: one-step disputes over committed training traces (types, events and errors; the functions
/// are in IDisputeGame below)
/// @notice Every state hash h(t) of a job is a leaf of a segment root committed on JobMarket before any audit, so a
/// dispute names one step s and proves the provider's own leaves h(s-1) and h(s) against the committed root; the only
/// question left is whether h(s) = step(h(s-1), batch(s)). No bisection is needed.
///
/// Life of a dispute (docs/disputes.md has the full state machine and economics):
///  1. `challenge` (anyone but the provider, before the job's challenge window closes): posts the challenger bond
///     `requiredBond(jobId)` plus the panel's fees `panelSize * panelFee` (together `requiredDeposit(jobId)`, one
///     transfer) in the bond token, freezes the job on JobMarket (no finalize, no timeout report) and fixes
///     the panel seed block `block.number + seedDelayBlocks`. Voting deadlines start at once:
///     commitDeadline = challengedAt + commitWindowSeconds, revealDeadline = commitDeadline + revealWindowSeconds.
///  2. The provider may at any time before resolution `concede` (provider at fault at once) or, for a job registered
///     as circuit class (`setCircuitTerms`), `prove` the step with a Groth16 proof (provider not at fault at once).
///     Doing nothing is "defend": the panel decides.
///  3. Panel: `panelSize` auditors from AuditorRegistry.drawPanel(seed, k, [provider, challenger, buyer], challengedAt)
///     with seed = keccak256(blockhash(seedBlock), disputeId), drawn by `drawPanel` or by the first `commitVote`: the
///     pool is the registry's snapshot at the challenge, fixed before the seed is known, so bonds posted, exits
///     requested or re-bonds made afterwards change nothing (docs/panels.md). Members
///     commit keccak256(abi.encode(uint8 vote, bytes32 salt, address member)) until commitDeadline, then reveal until
///     revealDeadline (the reveal phase opens early once every member has committed).
///  4. `resolve` (anyone) after revealDeadline, or once every member has revealed: more Fault than Valid votes:
///     provider at fault; more Valid: challenger wrong; a tie (no reveals included) or no panel: no decision.
/// Settlement: provider at fault -> JobMarket.settleProviderFault (lock slashed by the job policy's shares to
/// challenger, buyer and burn; buyer refunded), challenger bond back to the challenger. Challenger wrong -> bond
/// credited to the provider, job unfrozen. No decision -> bond back to the challenger, job unfrozen. Panel members in
/// the minority or silent forfeit min(panelForfeit, bond) of their auditor bond, split among the majority (burned when
/// there is no majority). Panel fees: when `resolve` counts a drawn panel's votes, each member who revealed on the
/// winning side (every member who revealed, on no decision) is credited panelFee; the fees of the other members, and
/// all fees of a dispute that is conceded, proven or never gets a panel, go back to the challenger. Every payout is a credit its owner claims (`claim` here, `claim` on JobMarket, StakeVault
/// and AuditorRegistry). A resolved dispute is final: every call on it reverts with DisputeGameAlreadyResolved.
interface IDisputeGameTypes {
    /// @notice Open: challenged and not yet resolved. Resolved: final.
    enum Status {
        None,
        Open,
        Resolved
    }

    /// @notice How a dispute ended. Conceded and PanelFault: provider at fault. Proven and PanelValid: challenger
    /// wrong. NoDecision: tie, no reveals, or no panel could be drawn. Superseded: the job faulted through another
    /// dispute while this one was open and its own panel did not decide it (bond and unearned fees back, no part of
    /// the reward: a part is earned by a decided fault only); a dispute whose panel decided ends PanelFault or PanelValid even after the job faulted.
    enum Outcome {
        None,
        Conceded,
        Proven,
        PanelFault,
        PanelValid,
        NoDecision,
        Superseded
    }

    /// @notice A panel member's vote: Valid (h(s) = step(h(s-1), batch(s))) or Fault.
    enum Vote {
        None,
        Valid,
        Fault
    }

    /// @notice Parameters fixed at deployment.
    /// @param minChallengerBond bond floor in bond-token units: covers what a griefer gains from delay alone
    ///        (grief / (1 - eps) in docs/economics.md); must be > 0
    /// @param panelErrorBps eps, the assumed probability that the panel decides wrongly (basis points, < 5,000);
    ///        the bond adds eps/(1-eps) of the challenger's share of the job's stake
    /// @param panelSize k, number of panel members (odd, 1..MAX_PANEL)
    /// @param seedDelayBlocks blocks between the challenge and the block whose hash seeds the panel (1..200)
    /// @param commitWindowSeconds seconds from the challenge until commits close (> 0)
    /// @param revealWindowSeconds seconds from commitDeadline until reveals close (> 0)
    /// @param panelForfeit auditor-bond amount a minority or silent member forfeits (bond-token units of the registry)
    /// @param panelFee bond-token amount the challenger pays per panel member at `challenge`, earned by a member who
    ///        reveals on the winning side (or reveals at all, on no decision); should cover one step's recompute;
    ///        must be > 0 (docs/disputes.md)
    struct Params {
        uint128 minChallengerBond;
        uint16 panelErrorBps;
        uint8 panelSize;
        uint16 seedDelayBlocks;
        Seconds commitWindowSeconds;
        Seconds revealWindowSeconds;
        uint128 panelForfeit;
        uint128 panelFee;
    }

    /// @notice What `challenge` names: step `step` of committed segment `segment` of job `jobId`, the segment's
    /// on-chain commitment (`traceRoot`, `endStateHash`), the provider's own leaves h(step-1) and h(step) with their
    /// Merkle proofs against `traceRoot`, and the salt of the caller's earlier `commitChallenge`.
    /// @param jobId the job
    /// @param segment the committed segment that holds both leaves (step in segment*K + 1 .. (segment+1)*K)
    /// @param step the disputed step s
    /// @param traceRoot the segment's committed trace root
    /// @param endStateHash the segment's committed end state hash (its last leaf)
    /// @param prevStateHash h(step-1), the state the step starts from
    /// @param prevStateProof Merkle proof of leaf(step-1, prevStateHash) against traceRoot
    /// @param stateHash h(step), the state the provider says the step produced
    /// @param stateProof Merkle proof of leaf(step, stateHash) against traceRoot
    /// @param salt the salt of the caller's commitChallenge (challengeCommitment(jobId, step, msg.sender, salt))
    struct ChallengeParams {
        uint256 jobId;
        uint256 segment;
        uint256 step;
        bytes32 traceRoot;
        bytes32 endStateHash;
        bytes32 prevStateHash;
        bytes32[] prevStateProof;
        bytes32 stateHash;
        bytes32[] stateProof;
        bytes32 salt;
    }

    /// @notice A dispute as `getDispute` returns it.
    struct DisputeView {
        uint256 jobId;
        uint32 segment;
        uint64 step;
        address challenger;
        address provider;
        Status status;
        Outcome outcome;
        uint128 bond;
        uint128 fees;
        uint64 challengedAt;
        uint64 seedBlock;
        uint64 commitDeadline;
        uint64 revealDeadline;
        bytes32 hPrev;
        bytes32 hStep;
        address[] panel;
        uint8 commits;
        uint8 validVotes;
        uint8 faultVotes;
        /// @dev 1 for the first panel; each appeal of a split Fault adds one (at most MAX_ROUNDS)
        uint8 round;
    }

    /// @notice Which Groth16 verifier `prove` may use, fixed at deployment: Disabled (no verifier, or the development
    /// verifier on a chain other than DEV_CHAIN_ID: `prove` reverts DisputeGameProvingDisabled), Development (the
    /// committed development setup, vkeyHash 0 or DEV_VKEY_HASH, only on DEV_CHAIN_ID) or Ceremony (a verifier
    /// named by the vkey hash of a multi-party setup, docs/zk.md).
    enum ProvingMode {
        Disabled,
        Development,
        Ceremony
    }

    /// @notice Circuit-class terms of a job: the learning rate (16 fraction bits) and the Merkle root of the batch
    /// commitments, leaf(t) = keccak256(abi.encodePacked(uint64 t, bytes32 commitBatch(t))) for t = 1..N in order.
    struct CircuitTerms {
        uint256 lr;
        bytes32 batchRoot;
    }

    /// @notice A split Fault of round `round - 1` (`faultVotes` of `seats` seats voted Fault, the others Valid or
    /// silent) was appealed: round `round` draws a larger, fresh panel from the same snapshot with seed block `seedBlock`.
    event DisputeAppealed(uint256 indexed disputeId, uint8 round, uint8 faultVotes, uint256 seats, uint64 seedBlock);

    /// @notice `challenger` disputed step `step` (segment `segment`) of job `jobId`, posting `bond` and the panel's
    /// fees `fees` (panelSize * panelFee).
    event Challenged(
        uint256 indexed disputeId,
        uint256 indexed jobId,
        address indexed challenger,
        uint256 segment,
        uint256 step,
        bytes32 hPrev,
        bytes32 hStep,
        uint256 bond,
        uint256 fees,
        uint64 seedBlock
    );
    /// @notice `challenger` committed to a challenge (challengeCommitment) on a step of segment `segment` of job `jobId`;
    /// it can open it from the next block on, up to this block + CHALLENGE_COMMITMENT_TTL_BLOCKS.
    event ChallengeCommitted(address indexed challenger, bytes32 commitment, uint256 indexed jobId, uint256 segment);
    /// @notice Dispute `disputeId` found job `jobId`'s provider at fault: `reward` (the slash's challenger share) came
    /// in, `toPanel` of it paid the panel's fees, and the rest waits for the `shares` disputes open on the job (this one
    /// included) to settle; it is then split equally among those of them a panel decided PanelFault (the conceded ones
    /// when no panel decided one).
    event RewardPooled(uint256 indexed jobId, uint256 indexed disputeId, uint256 reward, uint256 toPanel, uint256 shares);
    /// @notice Dispute `disputeId`'s challenger `challenger` was credited `amount`, its part of job `jobId`'s reward.
    event RewardPaid(uint256 indexed disputeId, uint256 indexed jobId, address indexed challenger, uint256 amount);
    /// @notice Round 1 of dispute `disputeId` ended in a unanimous Fault: it settles PanelFault once `deadline` passes,
    /// unless its provider appeals it before (`appealFault`).
    event FaultAppealable(uint256 indexed disputeId, uint64 deadline);
    /// @notice The provider `provider` of dispute `disputeId` appealed its unanimous first-round Fault, posting `bond`.
    event FaultAppealed(uint256 indexed disputeId, address indexed provider, uint256 bond);
    /// @notice The tie that ended dispute `disputeId` was judged by a later decided outcome on the same step: `truth`
    /// (its revealers of the other vote forfeited, see `resolve`).
    event TieJudged(uint256 indexed disputeId, Vote truth);
    /// @notice `member`'s revealed vote in dispute `disputeId` was not counted: it forfeited bond at `forfeitedAt`, after the
    /// second the dispute opened (its seat counts as silent; a wrong vote still forfeits).
    event VoteVoided(uint256 indexed disputeId, address indexed member, uint64 forfeitedAt);
    /// @notice The panel of dispute `disputeId` was drawn from `seed`.
    event PanelDrawn(uint256 indexed disputeId, bytes32 seed, address[] panel);
    /// @notice No panel could be drawn for dispute `disputeId` (too few eligible auditors).
    event PanelUnavailable(uint256 indexed disputeId);
    /// @notice `member` committed its vote on dispute `disputeId`.
    event VoteCommitted(uint256 indexed disputeId, address indexed member, bytes32 commitment);
    /// @notice `member` revealed `vote` on dispute `disputeId`.
    event VoteRevealed(uint256 indexed disputeId, address indexed member, Vote vote);
    /// @notice `member` of dispute `disputeId`'s panel forfeited `amount` of its auditor bond to `to`.
    event PanelMemberPenalized(uint256 indexed disputeId, address indexed member, address indexed to, uint256 amount);
    /// @notice Panel member `member` of dispute `disputeId` earned its fee `amount` (credited).
    event PanelFeePaid(uint256 indexed disputeId, address indexed member, uint256 amount);
    /// @notice The fees `amount` of dispute `disputeId` that no member earned went back to `challenger` (credited).
    event PanelFeesRefunded(uint256 indexed disputeId, address indexed challenger, uint256 amount);
    /// @notice Dispute `disputeId` ended with `outcome`.
    event DisputeResolved(uint256 indexed disputeId, uint256 indexed jobId, Outcome outcome);
    /// @notice The buyer of job `jobId` registered it as circuit class with learning rate `lr` and batch root `batchRoot`,
    /// the terms its manifest hash commits to with manifest body `manifestBody` (circuitManifestHash).
    event CircuitTermsSet(uint256 indexed jobId, uint256 lr, bytes32 batchRoot, bytes32 manifestBody);
    /// @notice Deployed with step verifier `verifier` named by `vkeyHash` (0: the development setup); `mode` says
    /// whether `prove` is enabled and with which kind of setup.
    event ProvingConfigured(address verifier, bytes32 vkeyHash, ProvingMode mode);
    /// @notice `account` was credited `amount` of the bond token.
    event Credited(address indexed account, uint256 amount);
    /// @notice A wrong challenge of a segment's first step (PanelValid) had its bond burned, not paid to the provider:
    /// that is the step a withheld start checkpoint is challenged at, and a provider that withholds until challenged and
    /// then publishes must gain nothing.
    event BondBurned(uint256 indexed disputeId, uint256 amount);
    /// @notice `account` claimed its whole credit `amount`.
    event CreditClaimed(address indexed account, uint256 amount);

    /// @notice Params.minChallengerBond is 0: the bond floor must be > 0 (it covers what a griefer gains from delay).
    error DisputeGameMinChallengerBondZero();
    /// @notice Params.panelErrorBps `panelErrorBps` is not below `limitBps` (5,000: a panel wrong half the time or
    /// more decides nothing, and the bond formula eps/(1-eps) needs eps < 1/2).
    error DisputeGamePanelErrorTooHigh(uint256 panelErrorBps, uint256 limitBps);
    /// @notice Params.panelSize `panelSize` is outside `min`..`max` (1..MAX_PANEL).
    error DisputeGamePanelSizeOutOfRange(uint256 panelSize, uint256 min, uint256 max);
    /// @notice Params.panelSize `panelSize` is even: a panel must be odd so that a full reveal never ties.
    error DisputeGamePanelSizeEven(uint256 panelSize);
    /// @notice Params.seedDelayBlocks `seedDelayBlocks` is outside `min`..`max` (1..200: blockhash reaches back 256
    /// blocks, and the panel is drawn from the hash of the seed block).
    error DisputeGameSeedDelayOutOfRange(uint256 seedDelayBlocks, uint256 min, uint256 max);
    /// @notice Params.commitWindowSeconds is 0: members need time to commit.
    error DisputeGameCommitWindowZero();
    /// @notice Params.revealWindowSeconds is 0: members need time to reveal.
    error DisputeGameRevealWindowZero();
    /// @notice Params.panelFee is 0: a member's fee pays for its recompute (docs/disputes.md).
    error DisputeGamePanelFeeZero();
    /// @notice The panel's fees `panelFee` * `panelSize` exceed `max` (type(uint128).max): a dispute books them in
    /// 128 bits.
    error DisputeGamePanelFeesTooLarge(uint256 panelFee, uint256 panelSize, uint256 max);
    /// @notice The registry `registry`'s activation delay `activationDelaySeconds` is not longer than the seed delay,
    /// `seedDelaySeconds` = seedDelayBlocks * 12 s (PanelTiming.MAX_SECONDS_PER_BLOCK): a bond posted once the seed
    /// is fixed must not count before the seed is public.
    error DisputeGameActivationDelayTooShort(address registry, uint64 activationDelaySeconds, uint256 seedDelaySeconds);
    /// @notice The registry `registry`'s exit delay `exitDelaySeconds` is shorter than `minExitDelaySeconds`, the
    /// longest a dispute's panel must stay forfeitable (seed delay + commit window + reveal window + 1 day to resolve,
    /// PanelTiming.RESOLVE_MARGIN_SECONDS).
    error DisputeGameExitDelayTooShort(address registry, uint64 exitDelaySeconds, uint256 minExitDelaySeconds);
    /// @notice No dispute `disputeId` exists.
    error DisputeGameUnknownDispute(uint256 disputeId);
    /// @notice Dispute `disputeId` is final (ended with `outcome`); nothing touches it any more.
    error DisputeGameAlreadyResolved(uint256 disputeId, Outcome outcome);
    /// @notice The provider `provider` of job `jobId` cannot challenge its own trace.
    error DisputeGameSelfChallenge(uint256 jobId, address provider);
    /// @notice Segment `segment` of job `jobId` was committed by an earlier provider (current provider's first
    /// segment is `startSegment`) or is not committed; only the current provider's committed segments are disputable.
    error DisputeGameSegmentNotDisputable(uint256 jobId, uint256 segment, uint256 startSegment, uint256 nextSegment);
    /// @notice Step `step` is not a step of segment `segment` (K = `stepsPerSegment`): both h(step-1) and h(step)
    /// must be leaves of the segment.
    error DisputeGameStepOutsideSegment(uint256 segment, uint256 step, uint256 stepsPerSegment);
    /// @notice (traceRoot, endStateHash) is not what the provider committed for segment `segment` of job `jobId`.
    error DisputeGameCommitmentMismatch(uint256 jobId, uint256 segment);
    /// @notice The Merkle proof of state `t` with hash `h` does not verify against the committed root.
    error DisputeGameBadLeafProof(uint256 t, bytes32 h);
    /// @notice Step `step` of job `jobId` already has open dispute `disputeId`.
    error DisputeGameDisputeOpen(uint256 jobId, uint256 step, uint256 disputeId);
    /// @notice `challenger` already holds `open` open disputes on job `jobId`, the most one challenger may (`max`).
    error DisputeGameChallengerLimit(uint256 jobId, address challenger, uint256 open, uint256 max);
    /// @notice Job `jobId` already has `open` open disputes, the most one job may (`max`).
    error DisputeGameJobDisputeLimit(uint256 jobId, uint256 open, uint256 max);
    /// @notice `caller` is not the provider `provider` of dispute `disputeId`.
    error DisputeGameNotProvider(uint256 disputeId, address caller, address provider);
    /// @notice `caller` is not on dispute `disputeId`'s panel.
    error DisputeGameNotPanelMember(uint256 disputeId, address caller);
    /// @notice The panel seed block `seedBlock` of dispute `disputeId` is not yet past (block `blockNumber`).
    error DisputeGameSeedNotReady(uint256 disputeId, uint64 seedBlock, uint256 blockNumber);
    /// @notice Dispute `disputeId`'s panel is already drawn.
    error DisputeGamePanelDrawn(uint256 disputeId);
    /// @notice The seed block `seedBlock` of dispute `disputeId`'s current round left blockhash range (now block
    /// `blockNumber`) before anyone drew the panel. A seed is never re-anchored (a second draw would be a second look for
    /// whichever party let the first lapse): this round gets no panel and resolves NoDecision after its reveal deadline.
    error DisputeGameSeedExpired(uint256 disputeId, uint64 seedBlock, uint256 blockNumber);
    /// @notice Dispute `disputeId`'s unanimous first-round Fault waits for its provider's appeal until `deadline` (now
    /// `nowTs`): resolve settles it after that.
    error DisputeGameFaultAppealOpen(uint256 disputeId, uint64 deadline, uint256 nowTs);
    /// @notice Dispute `disputeId` has no unanimous first-round Fault open to appeal (`deadline` 0), or its appeal window
    /// closed at `deadline` (now `nowTs`).
    error DisputeGameFaultNotAppealable(uint256 disputeId, uint64 deadline, uint256 nowTs);
    /// @notice Dispute `disputeId`'s panel cannot be drawn: too few eligible auditors in the snapshot at the challenge
    /// (or the snapshot is older than the exit delay). It resolves NoDecision after its reveal deadline.
    error DisputeGamePanelUnavailable(uint256 disputeId);
    /// @notice Commits to dispute `disputeId` closed: deadline `commitDeadline` passed or everyone committed (now `nowTs`).
    error DisputeGameCommitClosed(uint256 disputeId, uint64 commitDeadline, uint256 nowTs);
    /// @notice Dispute `disputeId`'s commit phase is over (its commit deadline `commitDeadline` passed, or every member
    /// committed) at `nowTs`: it can no longer be conceded, the panel's vote decides it.
    error DisputeGameConcessionClosed(uint256 disputeId, uint64 commitDeadline, uint256 nowTs);
    /// @notice `member` already committed to dispute `disputeId`.
    error DisputeGameAlreadyCommitted(uint256 disputeId, address member);
    /// @notice The commitment is zero.
    error DisputeGameZeroCommitment(uint256 disputeId);
    /// @notice Reveals on dispute `disputeId` are not open: they open at `commitDeadline` (or once everyone
    /// committed) and close at `revealDeadline` (now `nowTs`).
    error DisputeGameRevealClosed(uint256 disputeId, uint64 commitDeadline, uint64 revealDeadline, uint256 nowTs);
    /// @notice `member` never committed to dispute `disputeId`.
    error DisputeGameNoCommitment(uint256 disputeId, address member);
    /// @notice `member` already revealed on dispute `disputeId`.
    error DisputeGameAlreadyRevealed(uint256 disputeId, address member);
    /// @notice The vote must be Valid or Fault.
    error DisputeGameInvalidVote(uint8 vote);
    /// @notice (vote, salt, member) does not hash to `member`'s commitment on dispute `disputeId`.
    error DisputeGameRevealMismatch(uint256 disputeId, address member);
    /// @notice Dispute `disputeId` cannot be resolved before `revealDeadline` while reveals are missing (now `nowTs`).
    error DisputeGameVotingOpen(uint256 disputeId, uint64 revealDeadline, uint256 nowTs);
    /// @notice `caller` is not the buyer `buyer` of job `jobId`.
    error DisputeGameNotBuyer(uint256 jobId, address caller, address buyer);
    /// @notice Circuit terms can only be set once, on a job that is Open and has no committed segment.
    error DisputeGameTermsLocked(uint256 jobId);
    /// @notice lr must be in 0..2^32-1 (the circuit's range) and batchRoot non-zero.
    error DisputeGameInvalidTerms(uint256 lr, bytes32 batchRoot);
    /// @notice Job `jobId` is not registered as circuit class; its disputes are decided by the panel.
    error DisputeGameNotCircuitJob(uint256 jobId);
    /// @notice The claimed weights commitments do not reproduce the disputed leaves of dispute `disputeId`
    /// (h(step-1) = stateHash(jobId, step-1, bytes32(commitW), 0), h(step) likewise with commitWNext).
    error DisputeGameStateMismatch(uint256 disputeId);
    /// @notice commitBatch is not the batch commitment of step `step` under the job's batch root.
    error DisputeGameBadBatchProof(uint256 disputeId, uint256 step);
    /// @notice Step `step` is the first step of its segment: whether its pre-state continues the previous segment (or
    /// is the job's initial state) is not something a step proof shows, so the panel decides it.
    error DisputeGameProofNotAllowed(uint256 disputeId, uint256 step);
    /// @notice The registered terms (`lr`, `batchRoot`) with manifest body `manifestBody` give manifest hash `expected`,
    /// not the manifest hash `manifestHash` job `jobId` was created with: the terms are not the manifest's.
    error DisputeGameTermsNotInManifest(uint256 jobId, bytes32 manifestHash, bytes32 expected);
    /// @notice This deployment cannot settle disputes with proofs (mode Disabled): no verifier, or the development
    /// verifier (`vkeyHash` 0 or DEV_VKEY_HASH) on chain `chainId`, which is not the local dev chain. The panel decides.
    error DisputeGameProvingDisabled(address verifier, bytes32 vkeyHash, uint256 chainId);
    /// @notice A step verifier `verifier` with vkey hash `vkeyHash` cannot be deployed with: a vkey hash names no
    /// verifier (address 0), or the verifier has no code.
    error DisputeGameInvalidVerifier(address verifier, bytes32 vkeyHash);
    /// @notice The Groth16 verifier rejected the proof for dispute `disputeId`.
    error DisputeGameInvalidProof(uint256 disputeId);
    /// @notice `challenger` allowed this contract only `allowance` of the bond token; a challenge pulls `deposit`
    /// (requiredDeposit: the bond plus panelSize * panelFee).
    error DisputeGameDepositNotApproved(address challenger, uint256 allowance, uint256 deposit);
    /// @notice `account` has nothing to claim.
    error DisputeGameNothingToClaim(address account);
    /// @notice The StakeVault's token `stakeToken` is not the bond token `bondToken` (rewards are paid with bonds).
    error DisputeGameTokenMismatch(address stakeToken, address bondToken);
    /// @notice Job `jobId` of dispute `disputeId` already faulted through another dispute: it cannot be conceded any more
    /// (its panel, or a proof, decides it).
    error DisputeGameSuperseded(uint256 disputeId, uint256 jobId);
    /// @notice `challenger` has no commitment `commitment` from an earlier block (committed in block `committedAt`,
    /// 0: never; now block `blockNumber`).
    error DisputeGameChallengeNotCommitted(address challenger, bytes32 commitment, uint256 committedAt, uint256 blockNumber);
    /// @notice `challenger`'s commitment `commitment` of block `committedAt` expired after block `expiredAt` (now block
    /// `blockNumber`): commit again.
    error DisputeGameChallengeCommitmentExpired(
        address challenger, bytes32 commitment, uint256 committedAt, uint256 expiredAt, uint256 blockNumber
    );
    /// @notice `challenger`'s commitment `commitment` was made for another segment than segment `segment` of job `jobId`.
    error DisputeGameChallengeCommitmentWrongSegment(address challenger, bytes32 commitment, uint256 jobId, uint256 segment);
    /// @notice No job `jobId` exists on the market.
    error DisputeGameUnknownJob(uint256 jobId);
    /// @notice Segment `segment` of job `jobId` is not committed: no challenge commitment can name it yet.
    error DisputeGameSegmentNotCommitted(uint256 jobId, uint256 segment);
    /// @notice A deposit of `expected` of `token` delivered only `received` (a fee-on-transfer token): refused.
    error DisputeGameTransferShortfall(address token, uint256 expected, uint256 received);
    /// @notice DisputeSettlement was called directly; it runs only by DELEGATECALL from the DisputeGame that deployed it
    /// (its own storage holds no dispute).
    error DisputeSettlementDirectCall(address settlement);
}

/// @title IDisputeGame: the functions of DisputeGame (types, events and errors: IDisputeGameTypes)
interface IDisputeGame is IDisputeGameTypes {
    /// @notice Commit to a challenge of a step of committed segment `segment` of existing job `jobId` before opening
    /// it: `commitment` = challengeCommitment(jobId, step, msg.sender, salt) (the step stays hidden). The challenge
    /// itself (`challenge` with the same salt and segment) must come in a later block and within
    /// CHALLENGE_COMMITMENT_TTL_BLOCKS blocks, so a copy of it taken from the mempool has no commitment and reverts, and
    /// a commitment made in advance on every step lapses unless renewed. The commitment is bound to the segment's
    /// on-chain commitment (trace root and end state). Committing again while the commitment lives is a no-op (it keeps
    /// its block); after it expired it is renewed. The first valid challenge of a step holds it. Anyone.
    function commitChallenge(uint256 jobId, uint256 segment, bytes32 commitment) external;

    /// @notice Dispute step `p.step` of segment `p.segment` of job `p.jobId` (ChallengeParams): h(step-1) =
    /// `p.prevStateHash` and h(step) = `p.stateHash` are the provider's committed leaves (proofs against `p.traceRoot`,
    /// which with `p.endStateHash` must match the segment's on-chain commitment). Consumes the caller's
    /// `commitChallenge` from an earlier block for (jobId, step, salt).
    /// Pulls `requiredDeposit(jobId)` (the bond plus the panel's fees) of the bond token from the caller in one
    /// transfer (approve it first: DisputeGameDepositNotApproved) and freezes the job.
    /// Reward rule: when the job is found at fault (by any of its disputes), the slash's challenger share (after paying
    /// the deciding panel's fees) is pooled until every dispute open on the job at that moment has settled, then split
    /// equally among those of them that a panel decided PanelFault, or, when none, among the conceded ones (rewards by
    /// fault, not by dispute count). Every other open dispute is still decided by its own panel (or a proof): a Fault
    /// earns a part (its panel paid out of the pool first), a Valid or Proven one loses its bond to the provider and
    /// earns nothing, one its panel did not decide closes as Superseded with its bond and unearned fees back and earns
    /// nothing. So the provider's own disputes (a concession, false challenges) take nothing from an honest challenger's
    /// panel-decided fault, unless their own panels decide Fault. The provider's own addresses take at
    /// most the challenger share (at most MAX_CHALLENGER_BPS of the lock). At most MAX_OPEN_PER_CHALLENGER open disputes per challenger and MAX_OPEN_PER_JOB per job
    /// (DisputeGameChallengerLimit, DisputeGameJobDisputeLimit).
    /// @return disputeId the new dispute's id (1, 2, ...)
    function challenge(ChallengeParams calldata p) external returns (uint256 disputeId);

    /// @notice The provider admits the fault: settles at once with the provider at fault. Provider only, and only
    /// while the commit phase is open (DisputeGameConcessionClosed): a concession after the reveals could be timed to
    /// spare the provider's own panel members the forfeit of a losing vote.
    function concede(uint256 disputeId) external;

    /// @notice Settle for the provider with a Groth16 proof that W' = step(W, batch) (circuit-class jobs only).
    /// Checks h(step-1) = stateHash(jobId, step-1, bytes32(commitW), 0), h(step) = stateHash(jobId, step,
    /// bytes32(commitWNext), 0), commitBatch against the job's batch root (`batchProof`), lr from the job's terms,
    /// then calls the verifier with [commitW, commitWNext, commitBatch, lr]. Anyone may submit it. Not for the first step
    /// of a segment (DisputeGameProofNotAllowed): its pre-state's link to the previous segment is the panel's question.
    /// Reverts DisputeGameProvingDisabled unless the deployment's proving mode is Development or Ceremony. Panel members
    /// that already revealed Fault forfeit min(panelForfeit, bond) to those that revealed Valid (burned when there are
    /// none), whenever the proof lands: a proof after the reveals does not spare a wrong vote.
    function prove(
        uint256 disputeId,
        uint256 commitW,
        uint256 commitWNext,
        uint256 commitBatch,
        bytes32[] calldata batchProof,
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC
    ) external;

    /// @notice Draw the panel once block seedBlock has passed. Anyone. A seed block that left blockhash range reverts
    /// DisputeGameSeedExpired: a seed is never re-anchored, so nobody gets a second panel by letting the first seed lapse
    /// (the round has no panel and resolves NoDecision).
    /// @return drawn whether a panel now exists
    function drawPanel(uint256 disputeId) external returns (bool drawn);

    /// @notice Commit a panel vote: keccak256(abi.encode(uint8 vote, bytes32 salt, address member)). Draws the panel
    /// first if needed: before the seed block DisputeGameSeedNotReady, a lapsed seed DisputeGameSeedExpired, too few
    /// eligible auditors DisputeGamePanelUnavailable. Panel members only, until commitDeadline.
    function commitVote(uint256 disputeId, bytes32 commitment) external;

    /// @notice Reveal a committed vote. Panel members only, from commitDeadline (or once all committed) to revealDeadline.
    function revealVote(uint256 disputeId, Vote vote, bytes32 salt) external;

    /// @notice Resolve after revealDeadline, or earlier once every panel member has revealed. Anyone. A vote of a member
    /// that forfeited bond after the second the dispute opened is not counted (VoteVoided). A tie of revealed votes is
    /// appealed like a split Fault while rounds are left (DisputeAppealed); in the last round it ends NoDecision and is
    /// recorded for its step (`tiedDisputeOf`, every such tie kept): the next dispute on the same step that ends
    /// Conceded, Proven, PanelFault or PanelValid judges each of them (TieJudged), and the tied dispute's revealers of the
    /// other vote, in every round, forfeit to its revealers of the decided one (burned when there are none).
    /// A unanimous Fault of round 1 (on a job not yet faulted) does not settle at once: it opens the provider's appeal
    /// window of commitWindowSeconds (FaultAppealable); a resolve in that window reverts DisputeGameFaultAppealOpen, one
    /// after it settles PanelFault.
    function resolve(uint256 disputeId) external;

    /// @notice Appeal dispute `disputeId`'s unanimous first-round Fault to a larger, fresh panel (round 2, as a split
    /// Fault is). Its provider only, within the window resolve opened, posting a bond equal to the challenger's (pulled
    /// in the bond token: approve it first). The bond goes back to the provider unless the dispute ends Conceded or
    /// PanelFault, when it goes to the challenger (for the delay). So a first panel held by an attacker cannot slash an
    /// honest provider alone: the appeal panel excludes the first panel's members.
    function appealFault(uint256 disputeId) external;

    /// @notice Dispute `disputeId`'s provider appeal: the end of its window (0: none open) and the bond it posted (0: none).
    function faultAppealOf(uint256 disputeId) external view returns (uint64 deadline, uint128 providerBond);

    /// @notice The last dispute on (`jobId`, `step`) that ended in a tie of revealed votes and is not judged yet (0: none);
    /// earlier unjudged ties on the step are chained behind it and judged with it.
    function tiedDisputeOf(uint256 jobId, uint256 step) external view returns (uint256);

    /// @notice Register job `jobId` as circuit class (docs/zk.md): learning rate `lr` (16 fraction bits) and the
    /// Merkle root of its per-step batch commitments. Buyer only, once, while the job is Open with nothing committed.
    /// The terms must be the ones the job's manifest hash commits to: manifestHash == circuitManifestHash(manifestBody,
    /// lr, batchRoot), with manifestBody the keccak256 of the manifest document (DisputeGameTermsNotInManifest).
    function setCircuitTerms(uint256 jobId, uint256 lr, bytes32 batchRoot, bytes32 manifestBody) external;

    /// @notice The manifest hash of a circuit-class job with manifest document hash `manifestBody` and terms (`lr`,
    /// `batchRoot`): keccak256(abi.encode(CIRCUIT_MANIFEST_TYPEHASH, manifestBody, lr, batchRoot)).
    function circuitManifestHash(bytes32 manifestBody, uint256 lr, bytes32 batchRoot) external pure returns (bytes32);

    /// @notice The proving configuration fixed at deployment: the step verifier, its vkey hash (0: development setup)
    /// and the mode (`prove` works only in Development, on the dev chain, or Ceremony).
    function proving() external view returns (address verifier, bytes32 vkeyHash, ProvingMode mode);

    /// @notice Transfer the caller's whole bond-token credit to it.
    function claim() external returns (uint256 amount);

    /// @notice The bond the next challenge on job `jobId` must post:
    /// minChallengerBond + ceil(requiredStake * challengerBps/10,000 * eps/(1-eps)).
    function requiredBond(uint256 jobId) external view returns (uint256);

    /// @notice What the next challenge on job `jobId` pulls from the challenger: requiredBond(jobId) + panelSize *
    /// panelFee. Approve this much.
    function requiredDeposit(uint256 jobId) external view returns (uint256);

    /// @notice The challenge commitment `challenger` posts with commitChallenge: keccak256(abi.encode(jobId, step,
    /// challenger, salt)).
    function challengeCommitment(uint256 jobId, uint256 step, address challenger, bytes32 salt)
        external
        pure
        returns (bytes32);

    /// @notice Block in which `challenger` committed `commitment` (0: not committed, or already used; it may have
    /// expired: usable up to that block + CHALLENGE_COMMITMENT_TTL_BLOCKS).
    function challengeCommittedAt(address challenger, bytes32 commitment) external view returns (uint256);

    /// @notice What is left of job `jobId`'s reward pool and how many of its disputes are still to take a part.
    function rewardPoolOf(uint256 jobId) external view returns (uint256 amount, uint256 shares);

    /// @notice Number of open disputes on job `jobId`.
    function openDisputesOn(uint256 jobId) external view returns (uint256);

    /// @notice Number of open disputes `challenger` holds on job `jobId` (at most MAX_OPEN_PER_CHALLENGER).
    function openDisputesBy(uint256 jobId, address challenger) external view returns (uint256);

    /// @notice Sum of undistributed reward pools. The token balance is openBonds() + openFees() + pooled() + credits.
    function pooled() external view returns (uint256);

    /// @notice The vote commitment a member posts (the same hash the contract checks at reveal).
    function voteCommitment(Vote vote, bytes32 salt, address member) external pure returns (bytes32);

    /// @notice A dispute's full record.
    function getDispute(uint256 disputeId) external view returns (DisputeView memory);

    /// @notice `member`'s commitment and revealed vote on dispute `disputeId`, in the dispute's current round.
    function ballotOf(uint256 disputeId, address member) external view returns (bytes32 commitment, Vote vote);

    /// @notice `member`'s commitment and revealed vote in round `round` (1..MAX_ROUNDS) of dispute `disputeId`.
    function roundBallotOf(uint256 disputeId, uint256 round, address member)
        external
        view
        returns (bytes32 commitment, Vote vote);

    /// @notice The panel of round `round` of dispute `disputeId` (the current round's is getDispute's `panel`).
    function roundPanelOf(uint256 disputeId, uint256 round) external view returns (address[] memory);

    /// @notice The open dispute on step `step` of job `jobId` (0 if none).
    function openDisputeOf(uint256 jobId, uint256 step) external view returns (uint256);

    /// @notice A job's circuit terms (lr, batchRoot); batchRoot 0 when the job is not circuit class.
    function circuitTerms(uint256 jobId) external view returns (CircuitTerms memory);

    /// @notice Claimable bond-token credit of `account`.
    function creditOf(address account) external view returns (uint256);

    /// @notice Number of disputes opened so far (the last dispute id).
    function disputeCount() external view returns (uint256);

    /// @notice Sum of the bonds of open disputes (held by this contract besides credits).
    function openBonds() external view returns (uint256);

    /// @notice Sum of the panel fees of open disputes. The contract's token balance is always openBonds() +
    /// openFees() + the sum of unclaimed credits.
    function openFees() external view returns (uint256);

    /// @notice The deployment parameters.
    function params() external view returns (Params memory);

    /// @notice The panel fees one challenge deposits besides its bond: panelSize * panelFee (fixed at deployment).
    function panelFees() external view returns (uint256);
}
