// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {Leaves} from "./test/Leaves.sol";
import {StateOpenings} from "./StateOpenings.sol";
import {IStateOpenings} from "./interfaces/IStateOpenings.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice The opening flood: five bonded addresses ask an honest provider for 65 states of one job in one block. With
/// every deadline at `now + window` a provider that needs a segment replay an opening could answer only window/replay
/// of them and would be slashed for the rest (withheld states). With the provider's queue it answers every one in time
/// at one replay an opening, serving them in deadline order; asking a state twice queues nothing; and an honest
/// auditor who asks after the flood either gets a deadline the provider can meet or is refused (and recomputes the
/// segment instead).
contract RedTeamOpeningsTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant HONEST = address(0xA1);
    bytes32 internal constant TAG = keccak256("honest");
    uint256 internal constant K = 4;
    uint16 internal constant SEGMENTS = 20;
    // the deployment's defaults (chain/deployStateOpenings.ts DEFAULT_OPENING_TERMS)
    uint256 internal constant WINDOW = 6 hours;
    uint256 internal constant REPLAY = 10 minutes;
    uint256 internal constant SYBILS = 5;
    uint256 internal constant FLOOD = 65;

    StateOpenings internal openings;
    uint256 internal id;
    address[SYBILS] internal sybils;

    function setUp() public {
        vm.warp(1_700_000_000);
        openings = new StateOpenings(market, WINDOW, REPLAY);
        token.mint(BUYER, 1e30);
        token.mint(PROVIDER, 1e30);
        vm.prank(BUYER);
        token.approve(address(market), type(uint256).max);
        vm.startPrank(PROVIDER);
        token.approve(address(vault), type(uint256).max);
        vault.deposit(1e24);
        vm.stopPrank();
        _bond(HONEST);
        for (uint256 i; i < SYBILS; ++i) {
            sybils[i] = address(uint160(0x5B00 + i));
            _bond(sybils[i]);
        }
        vm.prank(BUYER);
        id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 1e18, policy(SEGMENTS, 1e18));
        vm.prank(PROVIDER);
        market.acceptJob(id);
        for (uint256 s; s < SEGMENTS - 1; ++s) {
            vm.prank(PROVIDER);
            market.commitSegment(id, s, Leaves.hashes(TAG, id, s, K), 1, "bafy");
        }
    }

    function _bond(address who) internal {
        token.mint(who, 1e30);
        vm.startPrank(who);
        token.approve(address(registry), type(uint256).max);
        registry.postBond(MIN_BOND);
        vm.stopPrank();
    }

    /// @dev The flood's i-th state: spread over the committed segments' pre-states, each a different state.
    function _state(uint256 i) internal pure returns (uint256 segment, uint256 step) {
        step = i;
        segment = i / K;
    }

    function _proof(uint256 segment, uint256 j) internal view returns (bytes32[] memory proof) {
        bytes32[] memory hs = Leaves.hashes(TAG, id, segment, K);
        uint256 n = hs.length;
        bytes32[] memory tree = new bytes32[](2 * n - 1);
        for (uint256 i; i < n; ++i) {
            tree[2 * n - 2 - i] = Trace.leaf(uint64(segment * K + i), hs[i]);
        }
        for (uint256 i = n - 1; i > 0; --i) {
            tree[i - 1] = Hashes.commutativeKeccak256(tree[2 * i - 1], tree[2 * i]);
        }
        uint256 depth;
        for (uint256 x = 2 * n - 2 - j; x > 0; x = (x - 1) / 2) ++depth;
        proof = new bytes32[](depth);
        uint256 idx = 2 * n - 2 - j;
        for (uint256 d; d < depth; ++d) {
            proof[d] = tree[idx % 2 == 1 ? idx + 1 : idx - 1];
            idx = (idx - 1) / 2;
        }
    }

    function _answer(uint256 segment, uint256 step) internal {
        vm.prank(PROVIDER);
        openings.answerOpening(
            id,
            step,
            "bafystate",
            Leaves.root(TAG, id, segment, K),
            Leaves.end(TAG, id, segment, K),
            Leaves.h(TAG, id, step),
            _proof(segment, step - segment * K)
        );
    }

    function _flood() internal returns (uint256[FLOOD] memory deadlines) {
        for (uint256 i; i < FLOOD; ++i) {
            (uint256 segment, uint256 step) = _state(i);
            vm.prank(sybils[i % SYBILS]);
            openings.requestOpening(id, segment, step);
            deadlines[i] = openings.openingOf(id, step).deadline;
        }
    }

    /// The review's exploit, now a regression: 65 openings from 5 addresses in one block, and a provider that spends a
    /// full replay (REPLAY seconds) on each answer, in deadline order. Every answer lands by its deadline; nothing is
    /// withheld, so no panel can slash it.
    function test_flood_honestProviderAnswersEveryOpeningInTime() public {
        uint256 t0 = block.timestamp;
        uint256[FLOOD] memory deadlines = _flood();
        for (uint256 i = 1; i < FLOOD; ++i) {
            assertEq(deadlines[i], deadlines[i - 1] + REPLAY, "deadlines one replay apart, across requesters");
        }
        assertEq(deadlines[0], t0 + WINDOW, "the first: one window");
        uint256 finished = t0;
        for (uint256 i; i < FLOOD; ++i) {
            (uint256 segment, uint256 step) = _state(i);
            finished += REPLAY; // the provider's bounded compute: one replay per opening, one at a time
            vm.warp(finished);
            assertTrue(finished <= deadlines[i], "answered by its deadline");
            _answer(segment, step);
        }
        vm.warp(deadlines[FLOOD - 1] + 1);
        for (uint256 i; i < FLOOD; ++i) {
            (, uint256 step) = _state(i);
            assertTrue(!openings.isWithheld(id, step), "nothing withheld");
        }
    }

    /// The work a flood demands is bounded per unit of time: over any stretch after the first window, at most one
    /// opening falls due per REPLAY seconds (here: 6 an hour), whatever the number of requesters.
    function test_flood_demandsAtMostOneReplayPerSlot() public {
        uint256[FLOOD] memory deadlines = _flood();
        uint256 hourEnd = deadlines[0] + 1 hours;
        uint256 due;
        for (uint256 i; i < FLOOD; ++i) {
            if (deadlines[i] < hourEnd) ++due;
        }
        assertEq(due, 1 hours / REPLAY, "openings due in the flood's first hour");
    }

    /// The same states asked again by every sybil: refused, and the provider's queue does not move.
    function test_flood_sameStatesAgain_queuesNothing() public {
        _flood();
        uint256 tail = openings.queueTail(PROVIDER);
        for (uint256 i; i < FLOOD; ++i) {
            (uint256 segment, uint256 step) = _state(i);
            address again = sybils[(i + 1) % SYBILS];
            vm.expectRevert(
                abi.encodeWithSelector(IStateOpenings.StateOpeningsAlreadyRequested.selector, id, step, openings.openingOf(id, step).deadline)
            );
            vm.prank(again);
            openings.requestOpening(id, segment, step);
        }
        assertEq(openings.queueTail(PROVIDER), tail, "nothing queued");
    }

    /// A flood of a Committed job fills the queue up to the challenge window: the honest auditor's request after it is
    /// refused (it recomputes the segment instead, bot/steps.ts) rather than given a deadline the provider cannot meet.
    /// A cheating provider's own flood therefore buys it no escape: its segments are recomputed.
    function test_flood_fullQueue_refusesTheHonestAuditor() public {
        vm.prank(PROVIDER);
        market.commitSegment(id, SEGMENTS - 1, Leaves.hashes(TAG, id, SEGMENTS - 1, K), 1, "bafy");
        // Committed: the window ends a day after the last commit
        uint256 windowEnd = block.timestamp + 1 days;
        uint256 asked;
        for (uint256 i; i < SEGMENTS * K; ++i) {
            (uint256 segment, uint256 step) = _state(i);
            if (openings.nextAnswerBy(id) + WINDOW > windowEnd) break;
            vm.prank(sybils[i % SYBILS]);
            openings.requestOpening(id, segment, step);
            ++asked;
        }
        // (1 day - 2 windows) / replay + 1 = 73 openings: past the review's 65
        assertEq(asked, (windowEnd - WINDOW - (block.timestamp + WINDOW)) / REPLAY + 1, "what the queue holds");
        assertTrue(asked < 76, "state 76 is left for the honest auditor");
        uint256 next = openings.nextAnswerBy(id);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsWindowTooShort.selector, id, next, windowEnd));
        vm.prank(HONEST);
        openings.requestOpening(id, 19, 76);
    }
}
