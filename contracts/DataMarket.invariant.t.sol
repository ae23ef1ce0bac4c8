// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {InvariantBase} from "./test/TestBase.sol";
import {TermsFixture} from "./test/TermsFixture.sol";
import {DataMarketHandler} from "./test/DataMarketHandler.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";

/// @notice Invariants of jobs with data shares under random handler sequences: JobMarket holds exactly the
/// escrow of live jobs plus every credit (contributors' included), DataRegistry holds nothing, and every
/// finalize split its payment exactly (contributors + provider + refund == payment).
contract DataMarketInvariantTest is InvariantBase, TermsFixture {
    DataMarketHandler internal handler;

    function setUp() public {
        handler = new DataMarketHandler(token, vault, market, data, address(this));
        // NOTE: roles are fixed at deployment: the fixture wired this contract as evaluator, and the handler
        // records weights by pranking as it.
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](6);
        selectors[0] = DataMarketHandler.createJob.selector;
        selectors[1] = DataMarketHandler.advance.selector;
        selectors[2] = DataMarketHandler.recordImprovement.selector;
        selectors[3] = DataMarketHandler.retire.selector;
        selectors[4] = DataMarketHandler.setPayout.selector;
        selectors[5] = DataMarketHandler.claim.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
        // Seed jobs so short runs reach finalize with data shares.
        handler.createJob(0, 1e18 + 7, 2, 2_500, 7, 1_000);
        handler.createJob(1, 3e18 + 1, 1, 10_000, 3, 17);
        handler.advance(0, 1, 4, false);
    }

    function invariant_solvencyWithContributorCredits() public view {
        uint256 owed;
        uint256 jobs = market.jobCount();
        for (uint256 id = 1; id <= jobs; ++id) {
            IJobMarket.JobView memory j = market.getJob(id);
            if (
                j.status == IJobMarket.JobStatus.Open || j.status == IJobMarket.JobStatus.Active
                    || j.status == IJobMarket.JobStatus.Committed || j.status == IJobMarket.JobStatus.TimedOut
            ) owed += j.payment;
        }
        address[] memory all = handler.accounts();
        for (uint256 i; i < all.length; ++i) {
            owed += market.creditOf(all[i], address(token));
        }
        assertEq(token.balanceOf(address(market)), owed, "market: escrow + provider, buyer and contributor credits");
        assertEq(token.balanceOf(address(data)), 0, "data registry holds no tokens");
        assertEq(handler.ghost_conservationViolations(), 0, "every finalize split its payment exactly");
        assertEq(handler.ghost_unexpectedReverts(), 0, "no call with met preconditions reverted");
    }

    function afterInvariant() public view {
        assertGe(handler.ghost_calls(), 1, "handler was called");
        assertGe(handler.ghost_finalizedWithData(), 1, "a job with a data share was finalized");
    }
}
