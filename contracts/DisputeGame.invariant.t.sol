// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {InvariantBase, TestBase} from "./test/TestBase.sol";
import {DisputeHandler} from "./test/DisputeHandler.sol";
import {DisputeBase, DisputeFixture} from "./test/DisputeFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {IDisputeGameTypes} from "./interfaces/IDisputeGame.sol";
import {AttackFixture} from "./test/AttackFixture.sol";
import {AttackHandler} from "./test/AttackHandler.sol";
import {MassDisputeHandler} from "./test/MassDisputeHandler.sol";
import {ForfeitVoidHandler} from "./test/ForfeitVoidHandler.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice DisputeGame pays out every wei it holds (as Optimism's FaultDisputeGame invariant asks): under random
/// challenges, concessions, votes, deadlines and claims, DisputeGame holds exactly its open bonds plus open panel fees
/// plus the undistributed reward pools (pooled()) plus unclaimed credits; after every dispute settles and every credit is claimed it holds nothing; and no token ever
/// leaves the system except to a claimant or the burn address (bonds, fees and slashed stake are credited to someone
/// or burnt). After each run, the panel members have claimed exactly the fees the fee rule gives them.
contract DisputeGameInvariantTest is InvariantBase, DisputeFixture {
    DisputeHandler internal handler;
    uint256 internal _supply;

    function setUp() public {
        handler = new DisputeHandler(this);
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](9);
        selectors[0] = DisputeHandler.newJob.selector;
        selectors[1] = DisputeHandler.challengeStep.selector;
        selectors[2] = DisputeHandler.concede.selector;
        selectors[3] = DisputeHandler.vote.selector;
        selectors[4] = DisputeHandler.warp.selector;
        selectors[5] = DisputeHandler.resolve.selector;
        selectors[6] = DisputeHandler.claimAll.selector;
        selectors[7] = DisputeHandler.settleAllAndClaim.selector;
        selectors[8] = DisputeHandler.appealFault.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
        _supply = handler.token().totalSupply();
    }

    function invariant_gameHoldsExactlyBondsAndCredits() public view {
        address[] memory all = handler.people();
        // pooled(): the challenger shares of faulted jobs not yet paid to their Superseded disputes
        uint256 owed = handler.game().openBonds() + handler.game().openFees() + handler.game().pooled();
        for (uint256 i; i < all.length; ++i) {
            owed += handler.game().creditOf(all[i]);
        }
        assertEq(
            handler.token().balanceOf(address(handler.game())), owed, "game = open bonds + open fees + pooled + credits"
        );
        // the game claims its vault credit (the challenger share) in the same call that earns it
        assertEq(handler.vault().creditOf(address(handler.game())), 0, "no reward left in the vault");
        uint256 pools;
        uint256 jobs = handler.market().jobCount();
        for (uint256 id = 1; id <= jobs; ++id) {
            (uint256 amount, uint256 shares) = handler.game().rewardPoolOf(id);
            pools += amount;
            // INVARIANT: a pool with money left has a dispute left to pay it to (the last share takes the dust)
            if (amount != 0) assertGe(shares, 1, "pool left without shares");
            assertLe(shares, handler.game().openDisputesOn(id), "shares <= the job's open disputes");
        }
        assertEq(handler.game().pooled(), pools, "pooled = sum of the jobs' pools");
        assertEq(handler.ghost_strandedTokens(), 0, "nothing left after all disputes settled and claimed");
        assertEq(handler.ghost_stuckResolves(), 0, "every dispute resolvable after its deadlines");
    }

    function invariant_everyWeiCreditedOrBurnt() public view {
        address[] memory all = handler.people();
        address burn = handler.game().BURN_ADDRESS();
        // nothing is minted after setUp, so the supply is fixed: every token sits with a person, a contract or burn
        uint256 held = handler.token().balanceOf(burn) + handler.token().balanceOf(address(handler.game()))
            + handler.token().balanceOf(address(handler.vault())) + handler.token().balanceOf(address(handler.registry()))
            + handler.token().balanceOf(address(handler.market()));
        for (uint256 i; i < all.length; ++i) {
            held += handler.token().balanceOf(all[i]);
        }
        assertEq(held, _supply, "no token vanished");

        // the vault and the registry hold exactly what they owe (slashes and forfeits became credits or burns)
        uint256 vaultOwed = handler.vault().creditOf(burn) + handler.vault().creditOf(address(handler.game()));
        uint256 registryOwed = handler.registry().creditOf(burn);
        for (uint256 i; i < all.length; ++i) {
            IStakeVault.Account memory a = handler.vault().accountOf(all[i]);
            vaultOwed += uint256(a.free) + a.locked + a.pendingWithdrawal + handler.vault().creditOf(all[i]);
            registryOwed += handler.registry().auditorOf(all[i]).bond + handler.registry().creditOf(all[i]);
        }
        assertEq(handler.token().balanceOf(address(handler.vault())), vaultOwed, "vault solvency");
        assertEq(handler.token().balanceOf(address(handler.registry())), registryOwed, "registry solvency");

        uint256 marketOwed;
        uint256 jobs = handler.market().jobCount();
        for (uint256 id = 1; id <= jobs; ++id) {
            IJobMarket.JobView memory j = handler.market().getJob(id);
            if (
                j.status == IJobMarket.JobStatus.Open || j.status == IJobMarket.JobStatus.Active
                    || j.status == IJobMarket.JobStatus.Committed || j.status == IJobMarket.JobStatus.TimedOut
            ) marketOwed += j.payment;
        }
        for (uint256 i; i < all.length; ++i) {
            marketOwed += handler.market().creditOf(all[i], address(handler.token()));
        }
        assertEq(handler.token().balanceOf(address(handler.market())), marketOwed, "market solvency");
    }

    /// @notice Runs once after each invariant run: the fuzzer drove the handler; then every dispute is settled and
    /// every credit claimed, and the members got exactly the fees the rule gives them: a fault's panel out of the
    /// reward first, every other earned fee out of the deposits; the game paid out exactly what came in.
    function afterInvariant() public {
        assertGe(handler.ghost_calls(), 1, "handler was called");
        handler.settleAllAndClaim();
        assertEq(handler.token().balanceOf(address(handler.game())), 0, "game empty after settle-all");
        assertEq(handler.game().openFees(), 0, "no open fees after settle-all");
        assertEq(handler.game().pooled(), 0, "every pool paid out after settle-all");
        assertEq(handler.ghost_memberFeesClaimed(), handler.ghost_expectedMemberFees(), "members paid by the fee rule");
        assertLe(handler.ghost_feesFromReward(), handler.ghost_rewards(), "fees from rewards <= rewards");
        assertLe(
            handler.ghost_expectedMemberFees() - handler.ghost_feesFromReward(),
            handler.ghost_feesDeposited(),
            "the rest of the fees paid out of deposits"
        );
        assertEq(
            handler.ghost_claimedFromGame() + handler.ghost_bondsBurned(),
            handler.ghost_bondsDeposited() + handler.ghost_feesDeposited() + handler.ghost_rewards(),
            "claimed from the game + bonds burned = deposits + rewards"
        );
    }
}

/// @notice The panel-draw reference of the invariant tests: every drawn round of every dispute, re-drawn from the
/// registry's pool as of the dispute's challengedAt with the seed the handler recorded at that round's draw, is the
/// panel the dispute holds for that round (while the snapshot is drawable: within the exit delay of challengedAt). An
/// appeal round's terms are the documented rule (docs/disputes.md, "Appeals"): 2k + 1 seats in round 2 and MAX_PANEL
/// in the last, the earlier rounds' members excluded too when the pool without them still fills the round, otherwise
/// as many seats as the pool holds (odd).
abstract contract RoundPanelCheck is TestBase, DisputeBase {
    function _checkRoundPanels(function(uint256, uint256) external view returns (bytes32) seedOf) internal view {
        uint256 n = game.disputeCount();
        uint256 horizon = registry.exitDelaySeconds();
        for (uint256 id = 1; id <= n; ++id) {
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (block.timestamp <= d.challengedAt || d.challengedAt + horizon < block.timestamp) continue;
            for (uint256 r = 1; r <= d.round; ++r) {
                bytes32 seed = seedOf(id, r);
                if (seed == bytes32(0)) continue;
                (address[] memory exclude, uint256 k) = _roundTerms(id, d, r);
                address[] memory again = registry.drawPanel(seed, k, exclude, d.challengedAt);
                assertEq(
                    keccak256(abi.encode(again)),
                    keccak256(abi.encode(game.roundPanelOf(id, r))),
                    "round panel = draw(snapshot at challengedAt, the round's seed, the round's terms)"
                );
            }
        }
    }

    /// @dev Who round `r` of dispute `id` excludes and how many seats it draws, by the documented appeal rule.
    function _roundTerms(uint256 id, IDisputeGameTypes.DisputeView memory d, uint256 r)
        internal
        view
        virtual
        returns (address[] memory exclude, uint256 k)
    {
        (address buyer,,) = market.jobParties(d.jobId);
        exclude = new address[](3);
        exclude[0] = d.provider;
        exclude[1] = d.challenger;
        exclude[2] = buyer;
        k = game.params().panelSize;
        if (r == 1) return (exclude, k);
        uint256 maxPanel = game.MAX_PANEL();
        k = r < game.MAX_ROUNDS() ? 2 * k + 1 : maxPanel;
        if (k > maxPanel) k = maxPanel;
        uint256 count = 3;
        for (uint256 q = 1; q < r; ++q) count += game.roundPanelOf(id, q).length;
        address[] memory wide = new address[](count);
        count = 0;
        for (uint256 i; i < 3; ++i) wide[count++] = exclude[i];
        for (uint256 q = 1; q < r; ++q) {
            address[] memory past = game.roundPanelOf(id, q);
            for (uint256 i; i < past.length; ++i) wide[count++] = past[i];
        }
        if (registry.poolSize(d.challengedAt, wide) >= k) return (wide, k);
        uint256 pool = registry.poolSize(d.challengedAt, exclude);
        if (pool < k && pool != 0) k = pool % 2 == 0 ? pool - 1 : pool;
    }
}

/// @notice The same game against an adversary (AttackHandler): the provider controls two more challengers and two
/// bonded auditors, concedes whatever suits it, front-runs and copies honest challenges, votes its sybils any way,
/// stops committing, reports its own timeouts and picks the clock; honest challengers dispute only the faulty step,
/// honest auditors vote the truth, and a keeper resolves each dispute one second after its reveal deadline.
///
/// Accounting of "the provider side loses at least (1 - challengerShare) * L on any fault", per faulted job J
/// (AttackHandler books every call that touches J, never a claim):
///   side(J) = change of the provider side's wealth over J's calls: tokens + DisputeGame, StakeVault and JobMarket
///             credits + vault free/locked/pending stake + sybil auditor bonds (AuditorRegistry credits, which only
///             forfeits create, are left out). A lock moved from free to locked changes nothing; the fault's slash
///             counts -L; a sybil challenge counts -(bond + fees) and what comes back +; a timeout slash counts -.
///   R(J)    = floor(L * challengerBps / 10,000), L = the provider's lock on J just before the call that faulted J.
///   A(J)    = what honest parties can hand the side on J outside the reward: the bond of every non-side dispute on J
///             that ended challenger-wrong (credited to the provider) plus the fees sybil auditors earned on non-side
///             disputes of J out of the deposit (every such fee except on the faulting call, whose panel the reward pays).
///   Claim: side(J) <= R(J) - L + A(J), i.e. what the side got back from J's lock and disputes is at most the
///   challenger share plus its own deposits (plus A, which honest parties lost to it). With no honest loss (A = 0) this
///   is exactly "side gets back <= challengerBps/10,000 * L + the bonds and fees it deposited". Checked once J has no
///   open dispute (the pool is then fully paid out). Also: the buyer's net on J is at least floor(L * buyerBps / 10,000)
///   (escrow back plus its share, plus any timeout slash).
contract DisputeGameAttackInvariantTest is InvariantBase, AttackFixture, RoundPanelCheck {
    AttackHandler internal handler;

    error AssertLeInt(string what, int256 left, int256 right);

    function setUp() public {
        // the honest challenger's condition (see AttackFixture): the smallest share used pays a whole panel
        assertTrue(rewardCoversPanel(STAKE, 1_000), "reward covers the panel");
        handler = new AttackHandler(this);
        targetContract(address(handler));
        bytes4[] memory s = new bytes4[](21);
        s[0] = AttackHandler.newJob.selector;
        s[1] = AttackHandler.commitNext.selector;
        s[2] = AttackHandler.badCommit.selector;
        s[3] = AttackHandler.sybilChallenge.selector;
        s[4] = AttackHandler.concede.selector;
        s[5] = AttackHandler.sybilRace.selector;
        s[6] = AttackHandler.frontRun.selector;
        s[7] = AttackHandler.reportTimeout.selector;
        s[8] = AttackHandler.reaccept.selector;
        s[9] = AttackHandler.warp.selector;
        s[10] = AttackHandler.honestChallenge.selector;
        s[11] = AttackHandler.recklessChallenge.selector;
        s[12] = AttackHandler.vote.selector;
        s[13] = AttackHandler.resolve.selector;
        s[14] = AttackHandler.finalize.selector;
        s[15] = AttackHandler.claimAll.selector;
        s[16] = AttackHandler.honestChallenge.selector; // twice: honest challenges are the point of the game
        s[17] = AttackHandler.vote.selector; // twice: panels that vote reach PanelFault / PanelValid
        s[18] = AttackHandler.stall.selector;
        s[19] = AttackHandler.holdEscrow.selector;
        s[20] = AttackHandler.auditorChurn.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: s}));
    }

    function invariant_attack_gameSolvent() public view {
        address[] memory all = handler.people();
        uint256 owed = game.openBonds() + game.openFees() + game.pooled();
        for (uint256 i; i < all.length; ++i) {
            owed += game.creditOf(all[i]);
        }
        assertEq(token.balanceOf(address(game)), owed, "game = open bonds + open fees + pooled + credits");
        assertEq(vault.creditOf(address(game)), 0, "the game claims its reward at once");
        uint256 pools;
        uint256 n = market.jobCount();
        for (uint256 id = 1; id <= n; ++id) {
            (uint256 amount,) = game.rewardPoolOf(id);
            pools += amount;
        }
        assertEq(game.pooled(), pools, "pooled = sum of the pools");
    }

    /// @notice Panel membership depends only on the snapshot and the seed, in every round: each drawn panel (round 1
    /// and every appeal round), re-drawn now from the registry's pool as of its dispute's challengedAt with the seed
    /// recorded at that round's draw, is the panel the dispute holds for that round, whatever the provider's auditors did
    /// since (bonds, exit requests, leaves, re-bonds: auditorChurn), while the snapshot is still drawable (within the
    /// exit delay of challengedAt, by design).
    function invariant_panelDependsOnlyOnSnapshotAndSeed() public view {
        _checkRoundPanels(handler.ghost_roundSeed);
    }

    /// @notice No rule-breaking move of the attacker ever got through.
    function invariant_attack_rulesHold() public view {
        assertEq(handler.ghost_badCommitAccepted(), 0, "malformed commit accepted");
        assertEq(handler.ghost_badCommitWrongError(), 0, "malformed commit rejected for another reason");
        assertEq(handler.ghost_copyAccepted(), 0, "copied challenge opened");
        assertEq(handler.ghost_twoOpenOnStep(), 0, "two open disputes on one step");
        assertEq(handler.ghost_stuckResolves(), 0, "resolvable dispute did not resolve");
        assertEq(handler.ghost_goodCommitRejected(), 0, "well-formed commit refused");
    }

    /// @notice On every faulted job whose disputes are all closed: side(J) <= R(J) - L + A(J) (contract comment), and
    /// the buyer got its escrow back plus at least its share of the lock.
    function invariant_providerSideLosesNonChallengerShare() public view {
        _checkFaultedJobs(false);
    }

    /// @notice Every dispute an honest challenger opened on the truly faulty step, once settled, credited it at least
    /// its deposit (bond + fees), unless its panel was captured (a sybil majority) or voted in chaos: the reward pays
    /// the deciding panel (reward condition), a Superseded or conceded dispute returns everything plus a share, and a
    /// NoDecision with honest members revealing Fault needs as many sybil Valid votes (a sybil majority). One that was
    /// open when its job faulted (whichever dispute faulted it) got at least deposit + floor(pool / disputes open at the
    /// fault), pool = R minus the deciding panel's fees (AttackHandler._recordShares, from the handler's own records).
    function invariant_honestChallengerNeverLoses() public view {
        _checkHonestDisputes(false);
    }

    /// @notice A job has at most segments + MAX_IDLE_TIMEOUTS tenures: each tenure that commits commits a new segment,
    /// and the MAX_IDLE_TIMEOUTS-th idle timeout ends the job Cancelled, however the provider times its re-accepts
    /// (AttackHandler.holdEscrow re-accepts in the block of its own timeout).
    function invariant_tenuresBounded() public view {
        uint256[] memory ids = handler.jobs();
        for (uint256 i; i < ids.length; ++i) {
            IJobMarket.JobView memory j = market.getJob(ids[i]);
            assertLe(handler.jobGhost(ids[i]).tenures, uint256(j.policy.segments) + market.MAX_IDLE_TIMEOUTS(), "tenures");
        }
    }

    /// @notice Every job is terminal by its stated bound (AttackHandler.boundOf): past it, a Committed job has no open
    /// dispute and its window has closed (finalize succeeds), an Active job has no open dispute (reportTimeout succeeds).
    function invariant_jobsEndByBound() public view {
        uint256[] memory ids = handler.jobs();
        for (uint256 i; i < ids.length; ++i) {
            uint256 b = handler.boundOf(ids[i]);
            if (b == 0 || block.timestamp < b) continue;
            IJobMarket.JobView memory j = market.getJob(ids[i]);
            assertEq(j.openDisputes, 0, "open dispute past the bound");
            assertTrue(j.deadline < block.timestamp, "window open past the bound");
        }
    }

    /// @notice No job whose leaves were never on chain is paid: every committed segment's stored commitment is the one
    /// of the K+1 leaves the handler passed in calldata (root by Trace.segmentRoot and, independently, by the fixture's
    /// hand-built 4-leaf tree; end state = last leaf), and a Finalized job's every segment was committed that way.
    function invariant_paidJobsHaveOnChainLeaves() public view {
        uint256[] memory ids = handler.jobs();
        for (uint256 i; i < ids.length; ++i) {
            IJobMarket.JobView memory j = market.getJob(ids[i]);
            bool paid = j.status == IJobMarket.JobStatus.Finalized;
            for (uint256 s; s < j.policy.segments; ++s) {
                if (!handler.ghost_committedByHandler(ids[i], s)) {
                    assertTrue(!paid, "finalized job with a segment never committed through calldata");
                    assertEq(market.segmentCommitment(ids[i], s), bytes32(0), "commitment without calldata leaves");
                    continue;
                }
                bytes32[4] memory hs = handler.leavesSent(ids[i], s);
                bytes32 c = market.segmentCommitment(ids[i], s);
                assertEq(c, Trace.commitment(Trace.segmentRoot(s * K, dyn(hs)), hs[3]), "commitment = calldata leaves");
                bytes32[4] memory lv;
                for (uint256 t; t < 4; ++t) lv[t] = Trace.leaf(uint64(s * K + t), hs[t]);
                assertEq(c, Trace.commitment(root(lv), hs[3]), "commitment = independent root of the leaves");
            }
        }
    }

    /// @notice After the run: every job ends at its bound (Finalized, Refunded, Cancelled by its idle-timeout cap,
    /// Unresolved once its disputes exhausted the re-opens, or re-opened by reportTimeout), every
    /// dispute settles, the game pays out every wei, and the two economic invariants hold for every job and dispute.
    function afterInvariant() public {
        assertGe(handler.ghost_calls(), 1, "handler was called");
        handler.settleAll();
        assertEq(handler.ghost_notTerminal(), 0, "a job did not end at its bound");
        assertEq(handler.ghost_stuckResolves(), 0, "resolvable dispute did not resolve");
        assertEq(handler.ghost_strandedTokens(), 0, "game empty after settle-all");
        assertEq(game.pooled(), 0, "pools paid out");
        uint256[] memory ids = handler.jobs();
        for (uint256 i; i < ids.length; ++i) {
            IJobMarket.JobStatus st = market.getJob(ids[i]).status;
            assertTrue(
                st == IJobMarket.JobStatus.Finalized || st == IJobMarket.JobStatus.Refunded || st == IJobMarket.JobStatus.Open
                    || st == IJobMarket.JobStatus.Cancelled || st == IJobMarket.JobStatus.Unresolved,
                "job terminal (or re-opened after its timeout)"
            );
            // an Unresolved job was neither paid nor slashed: its lock went back whole
            if (st == IJobMarket.JobStatus.Unresolved) {
                assertEq(vault.lockedFor(market.getJob(ids[i]).provider, ids[i]), 0, "Unresolved job's lock released");
            }
        }
        for (uint256 id = 1; id <= game.disputeCount(); ++id) {
            assertTrue(game.getDispute(id).status == IDisputeGameTypes.Status.Resolved, "every dispute resolved");
        }
        _checkFaultedJobs(true);
        _checkHonestDisputes(true);
    }

    function _checkFaultedJobs(bool all) internal view {
        uint256[] memory ids = handler.jobs();
        for (uint256 i; i < ids.length; ++i) {
            AttackHandler.JobGhost memory g = handler.jobGhost(ids[i]);
            if (!g.faulted) continue;
            if (!all && game.openDisputesOn(ids[i]) != 0) continue;
            int256 lock = int256(g.lock);
            int256 reward = int256((g.lock * g.challengerBps) / 10_000);
            int256 side = g.sideGame + g.sideVault + g.sideMarket + g.sideBonds;
            _assertLeInt(side, reward - lock + int256(g.allowance), "side got back more than the challenger share");
            assertTrue(g.sideMarket <= 0, "provider side paid by the market on a faulted job");
            _assertLeInt(int256((g.lock * g.buyerBps) / 10_000), g.buyerNet, "buyer got less than its share");
        }
    }

    function _checkHonestDisputes(bool all) internal view {
        uint256 n = game.disputeCount();
        for (uint256 id = 1; id <= n; ++id) {
            AttackHandler.DisputeGhost memory d = handler.disputeGhost(id);
            if (!d.honest) continue;
            assertTrue(d.faultyStep, "honest challengers dispute only the faulty step");
            if (!d.settled) {
                assertTrue(!all, "honest dispute left unsettled");
                continue;
            }
            if (d.faultedJob) {
                // it faulted the job: the whole deposit back at once (the deciding panel is paid out of the reward
                // first); its part of the reward follows when the job's last dispute open at the fault settles
                assertGe(d.received, d.deposit, "honest challenger that faulted the job lost");
                continue;
            }
            if (d.openAtFault && d.outcome == IDisputeGameTypes.Outcome.Superseded && !d.chaos) {
                // open at the fault and undecided by its panel: bond and unearned fees back, no part of the reward
                assertGe(d.received + game.panelFees(), d.deposit, "superseded honest challenger lost more than the fees");
                continue;
            }
            // open when the job faulted and decided later by its own panel: that panel is paid out of the pool first
            if (d.chaos || d.sybilMajority) continue;
            assertGe(d.received, d.deposit, "honest challenger on the faulty step lost");
        }
    }

    function _assertLeInt(int256 left, int256 right, string memory what) internal pure {
        if (left > right) revert AssertLeInt(what, left, right);
    }
}

/// @notice Mass disputes against an honest provider (MassDisputeHandler): the attacker holds a fuzzed subset of 1, 2 or
/// 3 of 7 bonded auditors, or 3 of 12, disputes every step of honest jobs from its own challenger addresses, and its
/// auditors vote Fault (or stay silent) on every panel they are drawn for, in every appeal round; honest members vote
/// Valid whenever they vote (time jumps make whole panels miss their deadlines: silent members forfeit). The stated
/// bound (docs/disputes.md, "The bound", MassDisputeHandler.belowStatedBound), judged on each dispute's snapshot: an
/// honest provider is never slashed while the attacker holds fewer auditors than the first panel has seats (a < k)
/// and fewer than half of the last round's seats. Whenever the attacker holds less than half of the last round, a
/// Fault needs it to hold every seat of the first panel: appeals close every split capture.
contract DisputeGameMassDisputeInvariantTest is InvariantBase, DisputeFixture, RoundPanelCheck {
    MassDisputeHandler internal handler;

    function setUp() public {
        handler = new MassDisputeHandler(this);
        targetContract(address(handler));
        bytes4[] memory s = new bytes4[](7);
        s[0] = MassDisputeHandler.massDispute.selector;
        s[1] = MassDisputeHandler.vote.selector;
        s[2] = MassDisputeHandler.vote.selector; // three times: panels that vote reach their last round
        s[3] = MassDisputeHandler.vote.selector;
        s[4] = MassDisputeHandler.warp.selector;
        s[5] = MassDisputeHandler.resolveLapsed.selector;
        s[6] = MassDisputeHandler.massDispute.selector; // twice: many disputes open at once
        targetSelector(FuzzSelector({addr: address(handler), selectors: s}));
    }

    /// @notice An honest provider is never slashed while the attacker holds less than the stated part of the pool: no
    /// dispute whose snapshot had the attacker below the bound ends PanelFault, and with no Fault at all no job is
    /// Refunded and the provider's stake never falls. Below half of the last round, every Fault came from a first
    /// panel the attacker held entirely.
    function invariant_honestProviderNeverSlashedBelowStatedFraction() public view {
        _checkHonestProvider();
    }

    /// @notice A round with a drawn panel and no counted vote (the attacker's members silent on a first panel they hold
    /// whole, or every member silent in the time jumps) never ends a dispute before its last round: it is appealed like
    /// a tie, so silence alone spends none of the job's re-opens.
    function invariant_silentRoundNeverEndsBeforeLastRound() public view {
        assertEq(handler.ghost_silentRoundsEnded(), 0, "a silent round ended its dispute NoDecision before the last round");
    }

    /// @notice After the run every dispute is played to its end (honest members voting in every round) and the same
    /// holds; no dispute got stuck.
    function afterInvariant() public {
        assertGe(handler.ghost_calls(), 1, "handler was called");
        handler.settleAll();
        assertEq(handler.ghost_stuckResolves(), 0, "resolvable dispute did not resolve");
        uint256[] memory ids = handler.disputes();
        for (uint256 i; i < ids.length; ++i) {
            assertTrue(game.getDispute(ids[i]).status == IDisputeGameTypes.Status.Resolved, "every dispute resolved");
        }
        _checkHonestProvider();
    }

    /// @notice Every round's panel, appeal rounds included (most mass disputes with 2 or 3 attacker auditors reach one),
    /// is the reference draw from the snapshot at challengedAt with that round's seed.
    function invariant_massPanelsDependOnlyOnSnapshotAndSeed() public view {
        _checkRoundPanels(handler.ghost_roundSeed);
    }

    function _checkHonestProvider() internal view {
        assertEq(handler.ghost_faultsBelowBound(), 0, "a false dispute decided Fault with the attacker below the stated bound");
        assertEq(handler.ghost_faultsWithoutUnanimousCapture(), 0, "a Fault without a first panel held entirely by the attacker");
        if (handler.ghost_faults() != 0) return;
        uint256[] memory jobIds = handler.jobs();
        for (uint256 i; i < jobIds.length; ++i) {
            assertTrue(market.getJob(jobIds[i]).status != IJobMarket.JobStatus.Refunded, "honest job faulted without a Fault");
        }
        assertGe(handler.providerStake(), handler.providerStake0(), "honest provider's stake fell without a Fault");
    }
}

/// @notice The forfeit-voiding edge (docs/disputes.md, "Forfeited members"): a vote counts only while its member holds at
/// least one panelForfeit or has not forfeited since the dispute opened, so whoever makes honest members forfeit takes
/// their votes out of the count. ForfeitVoidHandler plays the mass-dispute attacker (1..3 of 7, 3 of 12 auditors, every
/// step of honest jobs disputed, its members voting Fault or silent, decoys included) with honest members that vote in
/// every round they are drawn for: then no honest auditor ever forfeits, so no honest vote is ever voided and no Fault
/// is decided. What is left of the edge is the honest members' own silence (MassDisputeHandler counts it apart).
contract DisputeGameForfeitVoidInvariantTest is InvariantBase, DisputeFixture, RoundPanelCheck {
    ForfeitVoidHandler internal handler;

    function setUp() public {
        handler = new ForfeitVoidHandler(this);
        targetContract(address(handler));
        bytes4[] memory s = new bytes4[](4);
        s[0] = MassDisputeHandler.massDispute.selector;
        s[1] = ForfeitVoidHandler.voteAll.selector;
        s[2] = ForfeitVoidHandler.voteAll.selector; // three times: panels reach their last round
        s[3] = ForfeitVoidHandler.voteAll.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: s}));
    }

    /// @notice Below half of round 2's seats (every configuration here: at most 3 attacker auditors, round 2 seats 7)
    /// the attacker cannot make an honest member forfeit, hence cannot void an honest vote, and no dispute ends Fault.
    function invariant_attackerCannotVoidHonestVotes() public view {
        assertEq(handler.ghost_honestForfeits(), 0, "an honest auditor that always voted forfeited");
        assertEq(handler.ghost_honestVoided(), 0, "an honest vote was voided");
        assertEq(handler.ghost_faults(), 0, "a false dispute decided Fault");
        assertEq(handler.ghost_stuckResolves(), 0, "resolvable dispute did not resolve");
    }

    function invariant_forfeitVoidPanelsDependOnlyOnSnapshotAndSeed() public view {
        _checkRoundPanels(handler.ghost_roundSeed);
    }
}
