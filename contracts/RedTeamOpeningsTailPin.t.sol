// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {Leaves} from "./test/Leaves.sol";
import {StateOpenings} from "./StateOpenings.sol";
import {IStateOpenings} from "./interfaces/IStateOpenings.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";

/// @notice Regression: ONE opening request on a provider's own long-segment job must not pin its opening queue for
/// every one of its jobs. An Active job's opening is due no earlier than now + segmentTimeout + replay (segmentTimeout is
/// the buyer's choice, up to 180 days); when that deadline was also the provider's queue tail, a provider faking job B
/// made itself a job A with ~180-day segments, asked one opening of it from a bonded address it owns, and every later
/// request on B was refused (StateOpeningsWindowTooShort) for the rest of B's window: no state of B could be opened or
/// found withheld. The tail is now the queue slot (now + answerWindow, or one replay after the last slot), so the pin
/// request moves it by one answer window only, and the honest request on B is accepted one replay after it.
contract RedTeamOpeningsTailPinTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant PROVIDER_BUYER = address(0xB3); // the provider's second address, buyer of the pin job
    address internal constant PINNER = address(0xB4); // the provider's bonded third address
    address internal constant HONEST = address(0xA1);
    bytes32 internal constant TAG = keccak256("fake");
    uint256 internal constant K = 4;
    uint256 internal constant WINDOW = 6 hours;
    uint256 internal constant REPLAY = 10 minutes;

    StateOpenings internal openings;
    uint256 internal victim;
    uint256 internal pin;

    function setUp() public {
        vm.warp(1_700_000_000);
        openings = new StateOpenings(market, WINDOW, REPLAY);
        token.mint(BUYER, 1e30);
        token.mint(PROVIDER_BUYER, 1e30);
        token.mint(PROVIDER, 1e30);
        vm.prank(BUYER);
        token.approve(address(market), type(uint256).max);
        vm.prank(PROVIDER_BUYER);
        token.approve(address(market), type(uint256).max);
        vm.startPrank(PROVIDER);
        token.approve(address(vault), type(uint256).max);
        vault.deposit(1e24);
        vm.stopPrank();
        _bond(HONEST);
        _bond(PINNER);
        // the victim job: an ordinary buyer, the fixture's terms (1 h segments, 1 day window), both segments faked
        vm.prank(BUYER);
        victim = market.createJob(keccak256("victim"), "ipfs://v", address(token), 10e18, policy(2, 1e18));
        vm.prank(PROVIDER);
        market.acceptJob(victim);
        for (uint256 s; s < 2; ++s) {
            vm.prank(PROVIDER);
            market.commitSegment(victim, s, Leaves.hashes(TAG, victim, s, K), 1, "bafy-fake");
        }
        // the pin job: the provider's own buyer address, the longest segment timeout that still takes an opening
        IJobMarket.Policy memory p = policy(2, 1e18);
        p.challengeWindow = uint32(180 days);
        p.segmentTimeout = uint32(180 days - WINDOW - REPLAY);
        vm.prank(PROVIDER_BUYER);
        pin = market.createJob(keccak256("pin"), "ipfs://p", address(token), 1, p);
        vm.prank(PROVIDER);
        market.acceptJob(pin);
        vm.prank(PROVIDER);
        market.commitSegment(pin, 0, Leaves.hashes(TAG, pin, 0, K), 1, "bafy-pin");
    }

    function _bond(address who) internal {
        token.mint(who, 1e30);
        vm.startPrank(who);
        token.approve(address(registry), type(uint256).max);
        registry.postBond(MIN_BOND);
        vm.stopPrank();
    }

    /// Control: without the pin the honest auditor's request on the victim job is accepted (one answer window out).
    function test_control_withoutPin_honestRequestAccepted() public {
        vm.prank(HONEST);
        openings.requestOpening(victim, 1, 5);
        assertEq(openings.openingOf(victim, 5).deadline, block.timestamp + WINDOW, "one answer window");
    }

    /// The pin request on the provider's own long job moves the queue by one slot, not by that job's segment timeout:
    /// the honest auditor's requests on the faked job are accepted, and a withheld one convicts it.
    function test_oneRequestOnOwnLongJob_doesNotBlockTheOtherJobs() public {
        uint256 windowEnd = block.timestamp + 1 days; // the victim job is Committed: its window ends a day after its last commit
        vm.prank(PINNER);
        openings.requestOpening(pin, 0, 0);
        assertEq(openings.openingOf(pin, 0).deadline, block.timestamp + 180 days - WINDOW, "the pin job's own opening: one segment timeout + replay out");
        assertEq(openings.queueTail(PROVIDER), block.timestamp + WINDOW, "the tail: one answer window, the slot");

        vm.prank(HONEST);
        openings.requestOpening(victim, 1, 4);
        uint256 due = openings.openingOf(victim, 4).deadline;
        assertEq(due, block.timestamp + WINDOW + REPLAY, "one replay after the pin's slot");
        assertLe(due + WINDOW, windowEnd, "inside the victim's window, with an answer window to spare");
        vm.warp(due + 1);
        assertTrue(openings.isWithheld(victim, 4), "left unanswered: withheld, so disputable");
    }
}
