// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {InvariantBase} from "./test/TestBase.sol";
import {DisputeHandler} from "./test/DisputeHandler.sol";
import {DisputeFixture} from "./test/DisputeFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";

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
        bytes4[] memory selectors = new bytes4[](8);
        selectors[0] = DisputeHandler.newJob.selector;
        selectors[1] = DisputeHandler.challengeStep.selector;
        selectors[2] = DisputeHandler.concede.selector;
        selectors[3] = DisputeHandler.vote.selector;
        selectors[4] = DisputeHandler.warp.selector;
        selectors[5] = DisputeHandler.resolve.selector;
        selectors[6] = DisputeHandler.claimAll.selector;
        selectors[7] = DisputeHandler.settleAllAndClaim.selector;
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
                    || j.status == IJobMarket.JobStatus.Committed
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
            handler.ghost_claimedFromGame(),
            handler.ghost_bondsDeposited() + handler.ghost_feesDeposited() + handler.ghost_rewards(),
            "claimed from the game = deposits + rewards"
        );
    }
}
