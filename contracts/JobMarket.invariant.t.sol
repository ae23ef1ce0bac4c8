// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {InvariantBase} from "./test/TestBase.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {MarketHandler} from "./test/MarketHandler.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";

/// @notice Invariants of the contract set under random sequences of handler calls (MarketHandler):
/// solvency of every contract, no credit paid twice, no slash above a lock, locks add up.
contract JobMarketInvariantTest is InvariantBase, MarketFixture {
    MarketHandler internal handler;

    function setUp() public {
        handler = new MarketHandler(token, vault, registry, market, dispute);
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](24);
        selectors[0] = MarketHandler.createJob.selector;
        selectors[1] = MarketHandler.cancelJob.selector;
        selectors[2] = MarketHandler.acceptJob.selector;
        selectors[3] = MarketHandler.commitSegment.selector;
        selectors[4] = MarketHandler.reportTimeout.selector;
        selectors[5] = MarketHandler.finalize.selector;
        selectors[6] = MarketHandler.freeze.selector;
        selectors[7] = MarketHandler.settleProviderFault.selector;
        selectors[8] = MarketHandler.settleNoFault.selector;
        selectors[9] = MarketHandler.slash.selector;
        selectors[10] = MarketHandler.claimMarket.selector;
        selectors[11] = MarketHandler.deposit.selector;
        selectors[12] = MarketHandler.requestWithdrawal.selector;
        selectors[13] = MarketHandler.withdraw.selector;
        selectors[14] = MarketHandler.claimVault.selector;
        selectors[15] = MarketHandler.postBond.selector;
        selectors[16] = MarketHandler.requestExit.selector;
        selectors[17] = MarketHandler.leave.selector;
        selectors[18] = MarketHandler.forfeit.selector;
        selectors[19] = MarketHandler.claimRegistry.selector;
        selectors[20] = MarketHandler.warp.selector;
        selectors[21] = MarketHandler.advance.selector;
        selectors[22] = MarketHandler.disputeJob.selector;
        selectors[23] = MarketHandler.claimAll.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
        // Jobs need stake and commits to get far; seed two so short runs reach finalize and disputes.
        handler.createJob(0, 1e18, 2, 1e18, 1_000);
        handler.createJob(1, 5e18, 1, 2e18, 10_000);
        handler.advance(0, 1, 1); // job 1 Active
        handler.advance(1, 2, 1); // job 2 Active (its timeout slash is 100% of the lock)
    }

    /// @notice Every contract holds exactly what it owes, no credit was paid twice, no slash exceeded a lock,
    /// and each provider's locked balance is the sum of its per-job locks.
    function invariant_solvencyAndAccounting() public view {
        address[] memory actors = handler.actors();
        uint256 jobs = market.jobCount();

        // JobMarket: escrow of live jobs + credits.
        uint256 owed;
        for (uint256 id = 1; id <= jobs; ++id) {
            IJobMarket.JobView memory j = market.getJob(id);
            if (
                j.status == IJobMarket.JobStatus.Open || j.status == IJobMarket.JobStatus.Active
                    || j.status == IJobMarket.JobStatus.Committed || j.status == IJobMarket.JobStatus.TimedOut
            ) owed += j.payment;
        }
        for (uint256 i; i < actors.length; ++i) {
            owed += market.creditOf(actors[i], address(token));
        }
        assertEq(token.balanceOf(address(market)), owed, "market solvency");

        // StakeVault: free + locked + pending of every provider + credits.
        owed = 0;
        for (uint256 i; i < actors.length; ++i) {
            IStakeVault.Account memory a = vault.accountOf(actors[i]);
            owed += uint256(a.free) + a.locked + a.pendingWithdrawal + vault.creditOf(actors[i]);
            uint256 lockSum;
            for (uint256 id = 1; id <= jobs; ++id) {
                lockSum += vault.lockedFor(actors[i], id);
            }
            assertEq(a.locked, lockSum, "locked == sum of per-job locks");
        }
        // the challenger share of every fault slash is credited to the dispute role (the game splits it)
        owed += vault.creditOf(address(handler.dispute()));
        assertEq(token.balanceOf(address(vault)), owed, "vault solvency");

        // AuditorRegistry: bonds + credits.
        owed = 0;
        for (uint256 i; i < actors.length; ++i) {
            IAuditorRegistry.Auditor memory r = registry.auditorOf(actors[i]);
            owed += uint256(r.bond) + registry.creditOf(actors[i]);
            if (registry.isActive(actors[i])) assertGe(r.bond, registry.minBond(), "active bond >= min");
        }
        assertEq(token.balanceOf(address(registry)), owed, "registry solvency");

        assertEq(handler.ghost_doubleClaims(), 0, "no credit claimed twice");
        assertEq(handler.ghost_overSlashes(), 0, "no slash above the lock");
        assertEq(handler.ghost_unexpectedReverts(), 0, "no call with met preconditions reverted");
    }

    /// @notice Runs once after each invariant run: the fuzzer actually drove the handler.
    function afterInvariant() public view {
        assertGe(handler.ghost_calls(), 3, "handler was called");
    }
}
