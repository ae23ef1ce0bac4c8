// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {Leaves} from "./test/Leaves.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";

/// @notice The re-open budget (JobMarket.MAX_REOPENS re-opens of the challenge window after undecided disputes, then
/// Unresolved: escrow to the buyer, no pay) belongs to a TENURE: undecided disputes in a timed-out tenure's window do
/// not spend the budget of the provider that takes the re-opened job, so one undecided dispute cannot end an honest
/// successor's job unpaid. The NoDecisions are played by the dispute role (DisputeCaller), as DisputeGame settles them.
contract JobMarketReopensTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant FIRST = address(0xB2); // times out (the griefer, or just an unlucky provider)
    address internal constant HONEST = address(0xB3); // takes the re-opened job and commits the rest honestly
    bytes32 internal constant TAG = keccak256("t");

    function setUp() public {
        vm.warp(1_700_000_000);
        address[3] memory who = [BUYER, FIRST, HONEST];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            vault.deposit(1e24);
            vm.stopPrank();
        }
    }

    function _commit(address who, uint256 id, uint256 s) internal {
        vm.prank(who);
        market.commitSegment(id, s, Leaves.hashes(TAG, id, s, 4), 1, "bafy");
    }

    /// @dev One undecided dispute on `id`: frozen, then settled NoDecision an hour later (a re-open that extends).
    function _noDecision(uint256 id) internal {
        dispute.freeze(id);
        vm.warp(block.timestamp + 1 hours);
        dispute.settleNoFault(id, true);
    }

    function test_reopenBudgetIsPerTenure_successorsOneNoDecisionOnlyReopens() public {
        vm.prank(BUYER);
        uint256 id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 3e18, policy(3, 1e18));
        vm.prank(FIRST);
        market.acceptJob(id);
        _commit(FIRST, id, 0);
        vm.warp(block.timestamp + 1 hours + 1);
        market.reportTimeout(id);
        // two undecided disputes in the TimedOut window spend the first tenure's re-opens
        _noDecision(id);
        _noDecision(id);
        vm.warp(uint256(market.getJob(id).deadline) + 1);
        market.reopenJob(id);

        vm.prank(HONEST);
        market.acceptJob(id);
        _commit(HONEST, id, 1);
        _commit(HONEST, id, 2);
        // ONE undecided dispute on the successor's work re-opens its window (its own budget), it does not end the job
        _noDecision(id);
        assertEq(uint256(market.getJob(id).status), uint256(IJobMarket.JobStatus.Committed), "still Committed");
        vm.warp(uint256(market.getJob(id).deadline) + 1);
        market.finalize(id);
        assertEq(market.creditOf(HONEST, address(token)), 2e18, "the honest successor is paid for its 2 of 3 segments");
    }

    /// A tenure still has its own bound: three undecided disputes on the successor's work end the job Unresolved.
    function test_successorsOwnBudget_exhaustedEndsUnresolved() public {
        vm.prank(BUYER);
        uint256 id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 3e18, policy(3, 1e18));
        vm.prank(HONEST);
        market.acceptJob(id);
        _commit(HONEST, id, 0);
        _commit(HONEST, id, 1);
        _commit(HONEST, id, 2);
        _noDecision(id);
        _noDecision(id);
        _noDecision(id);
        assertEq(uint256(market.getJob(id).status), uint256(IJobMarket.JobStatus.Unresolved), "Unresolved after 3");
    }

    /// The control: the same single undecided dispute on a job the honest provider took fresh only re-opens the window,
    /// and the job then finalizes and pays it.
    function test_control_freshJob_oneNoDecisionOnlyReopens() public {
        vm.prank(BUYER);
        uint256 id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 3e18, policy(3, 1e18));
        vm.prank(HONEST);
        market.acceptJob(id);
        _commit(HONEST, id, 0);
        _commit(HONEST, id, 1);
        _commit(HONEST, id, 2);
        _noDecision(id);
        assertEq(uint256(market.getJob(id).status), uint256(IJobMarket.JobStatus.Committed), "still Committed");
        vm.warp(uint256(market.getJob(id).deadline) + 1);
        market.finalize(id);
        assertEq(market.creditOf(HONEST, address(token)), 3e18, "paid");
    }
}
