// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {Leaves} from "./test/Leaves.sol";
import {StateOpenings} from "./StateOpenings.sol";
import {JobMarket} from "./JobMarket.sol";
import {IStateOpenings} from "./interfaces/IStateOpenings.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice Every guard of StateOpenings: who may ask (bonded auditors, once per state for everyone), when the answer is
/// due (the provider's queue), what may be opened (a committed segment's pre-states, of a disputable job, in the current
/// tenure, with time left to dispute), and the answer (the provider only, once, before the deadline, with a proof of the
/// committed leaf).
contract StateOpeningsTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant AUDITOR = address(0xA1);
    address internal constant AUDITOR2 = address(0xA2);
    address internal constant STRANGER = address(0xE1);
    bytes32 internal constant TAG = keccak256("honest");
    uint256 internal constant K = 4;
    uint256 internal constant WINDOW = 2 hours;
    uint256 internal constant REPLAY = 30 minutes;

    StateOpenings internal openings;
    uint256 internal id;

    function setUp() public {
        vm.warp(1_700_000_000);
        openings = new StateOpenings(market, WINDOW, REPLAY);
        address[4] memory who = [BUYER, PROVIDER, AUDITOR, AUDITOR2];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            token.approve(address(registry), type(uint256).max);
            vm.stopPrank();
        }
        vm.prank(PROVIDER);
        vault.deposit(1e24);
        vm.prank(AUDITOR);
        registry.postBond(MIN_BOND);
        vm.prank(AUDITOR2);
        registry.postBond(MIN_BOND);
        vm.prank(BUYER);
        id = market.createJob(keccak256("manifest"), "ipfs://m", address(token), 1e18, policy(3, 1e18));
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commit(0);
        _commit(1);
    }

    function _commit(uint256 s) internal {
        vm.prank(PROVIDER);
        market.commitSegment(id, s, Leaves.hashes(TAG, id, s, K), 1, "bafy");
    }

    /// @dev OpenZeppelin tree layout (leaf j at 2n-2-j), built independently of Trace: the proof of leaf `j`.
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

    function _request(address who, uint256 segment, uint256 step) internal {
        vm.prank(who);
        openings.requestOpening(id, segment, step);
    }

    function _answer(address who, uint256 segment, uint256 step) internal {
        _answerWith(who, segment, step, "bafystate");
    }

    function _answerWith(address who, uint256 segment, uint256 step, string memory cid) internal {
        vm.prank(who);
        openings.answerOpening(
            id,
            step,
            cid,
            Leaves.root(TAG, id, segment, K),
            Leaves.end(TAG, id, segment, K),
            Leaves.h(TAG, id, step),
            _proof(segment, step - segment * K)
        );
    }

    // ---------------------------------------------------------------- happy paths

    function test_requestThenAnswer_opensTheCommittedLeaf() public {
        _request(AUDITOR, 1, 6);
        IStateOpenings.Opening memory o = openings.openingOf(id, 6);
        assertEq(o.deadline, block.timestamp + WINDOW, "deadline");
        assertEq(o.requester, AUDITOR, "requester");
        assertEq(o.segment, 1, "segment");
        assertEq(openings.queueTail(PROVIDER), block.timestamp + WINDOW, "queued");
        _answer(PROVIDER, 1, 6);
        assertTrue(openings.openingOf(id, 6).answered, "answered");
        vm.warp(block.timestamp + WINDOW + 1);
        assertTrue(!openings.isWithheld(id, 6), "an answered opening is never withheld");
    }

    function test_unanswered_isWithheldOnlyAfterTheDeadline() public {
        _request(AUDITOR, 0, 0);
        vm.warp(block.timestamp + WINDOW);
        assertTrue(!openings.isWithheld(id, 0), "not before the deadline");
        vm.warp(block.timestamp + 1);
        assertTrue(openings.isWithheld(id, 0), "withheld after it");
        assertTrue(!openings.isWithheld(id, 1), "a state nobody asked for is not withheld");
    }

    // ---------------------------------------------------------------- constructor

    function test_constructor_zeroMarket_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsZeroMarket.selector));
        new StateOpenings(IJobMarket(address(0)), WINDOW, REPLAY);
    }

    function test_constructor_badWindow_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsInvalidAnswerWindow.selector, 0, 30 days));
        new StateOpenings(market, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsInvalidAnswerWindow.selector, 30 days + 1, 30 days));
        new StateOpenings(market, 30 days + 1, 1);
    }

    function test_constructor_badReplay_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsInvalidReplaySeconds.selector, 0, WINDOW));
        new StateOpenings(market, WINDOW, 0);
        // a replay longer than the window: the first opening of an idle queue could not be answered in time
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsInvalidReplaySeconds.selector, WINDOW + 1, WINDOW));
        new StateOpenings(market, WINDOW, WINDOW + 1);
        new StateOpenings(market, WINDOW, WINDOW);
    }

    // ---------------------------------------------------------------- request guards (spam, scope, timing)

    function test_request_notAuditor_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsNotAuditor.selector, STRANGER));
        _request(STRANGER, 0, 1);
    }

    function test_request_exitingAuditor_reverts() public {
        vm.prank(AUDITOR);
        registry.requestExit();
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsNotAuditor.selector, AUDITOR));
        _request(AUDITOR, 0, 1);
    }

    function test_request_marketWithoutRegistries_reverts() public {
        JobMarket bare = new JobMarket(vault, address(this));
        StateOpenings o = new StateOpenings(bare, WINDOW, REPLAY);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsRegistriesNotSet.selector));
        vm.prank(AUDITOR);
        o.requestOpening(1, 0, 0);
    }

    /// Deadlines queue per provider: each is the later of one window from now and one replay after the previous one,
    /// across requesters and across the provider's jobs; an idle queue starts again at one window from now.
    function test_request_deadlinesQueuePerProvider() public {
        uint256 t0 = block.timestamp;
        _request(AUDITOR, 0, 1);
        _request(AUDITOR2, 0, 2);
        _request(AUDITOR, 1, 5);
        assertEq(openings.openingOf(id, 1).deadline, t0 + WINDOW, "first: one window");
        assertEq(openings.openingOf(id, 2).deadline, t0 + WINDOW + REPLAY, "second: one replay later");
        assertEq(openings.openingOf(id, 5).deadline, t0 + WINDOW + 2 * REPLAY, "third: two replays later");
        assertEq(openings.nextAnswerBy(id), t0 + WINDOW + 3 * REPLAY, "the next one's");
        // another job of the same provider joins the same queue
        vm.prank(BUYER);
        uint256 id2 = market.createJob(keccak256("manifest2"), "ipfs://m2", address(token), 1e18, policy(3, 1e18));
        vm.prank(PROVIDER);
        market.acceptJob(id2);
        vm.prank(PROVIDER);
        market.commitSegment(id2, 0, Leaves.hashes(TAG, id2, 0, K), 1, "bafy");
        vm.prank(AUDITOR);
        openings.requestOpening(id2, 0, 1);
        assertEq(openings.openingOf(id2, 1).deadline, t0 + WINDOW + 3 * REPLAY, "the provider's other job queues behind");
        // once the queue's last deadline is more than a replay before now + window, a request gets a full window again
        vm.warp(t0 + 4 * REPLAY);
        _request(AUDITOR, 1, 6);
        assertEq(openings.openingOf(id, 6).deadline, block.timestamp + WINDOW, "an idle queue: one window from now");
    }

    /// One opening per state for everyone: a second request, pending or answered, by anyone, is refused and queues
    /// nothing (the provider's tail does not move).
    function test_request_sameStateTwice_reverts() public {
        _request(AUDITOR, 0, 1);
        uint256 deadline = block.timestamp + WINDOW;
        uint256 tail = openings.queueTail(PROVIDER);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsAlreadyRequested.selector, id, 1, deadline));
        _request(AUDITOR, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsAlreadyRequested.selector, id, 1, deadline));
        _request(AUDITOR2, 0, 1);
        assertEq(openings.queueTail(PROVIDER), tail, "nothing queued");
        _answer(PROVIDER, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsAlreadyRequested.selector, id, 1, deadline));
        _request(AUDITOR2, 0, 1);
    }

    /// The squat: a bonded address of the provider's asks for a state first and the provider "answers" it with a CID
    /// that serves nothing. The answer is the state's, for every auditor: its CID binds the provider (a panel judges a
    /// CID that does not serve h(step) as a withheld state, checks/decide.ts), so the squat convicts the squatter.
    function test_request_squattedByProviderSybil_answerBindsTheProviderForAll() public {
        address sybil = address(0x5B);
        token.mint(sybil, 1e30);
        vm.startPrank(sybil);
        token.approve(address(registry), type(uint256).max);
        registry.postBond(MIN_BOND);
        openings.requestOpening(id, 1, 6);
        vm.stopPrank();
        _answerWith(PROVIDER, 1, 6, "bafy-serves-nothing");
        assertTrue(openings.openingOf(id, 6).answered, "answered");
        assertEq(openings.openingOf(id, 6).requester, sybil, "asked by the sybil");
        // another auditor cannot re-open it (the answer is the state's) nor have it withheld: the answered CID is what
        // every panel member reads for a challenge of step 7
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsAlreadyRequested.selector, id, 6, block.timestamp + WINDOW));
        _request(AUDITOR, 1, 6);
        vm.warp(block.timestamp + WINDOW + 1);
        assertTrue(!openings.isWithheld(id, 6), "answered: not withheld on chain; its CID is judged off chain");
    }

    function test_request_unknownJob_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsUnknownJob.selector, 99));
        vm.prank(AUDITOR);
        openings.requestOpening(99, 0, 0);
    }

    function test_request_uncommittedSegment_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsSegmentNotCommitted.selector, id, 2));
        _request(AUDITOR, 2, 9);
    }

    function test_request_stepOutsideSegment_reverts() public {
        // segment 1 holds pre-states 4 .. 7; 8 is segment 2's start (and segment 1's end state)
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsStepOutOfSegment.selector, id, 1, 8, 4, 8));
        _request(AUDITOR, 1, 8);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsStepOutOfSegment.selector, id, 1, 3, 4, 8));
        _request(AUDITOR, 1, 3);
    }

    function test_request_finalState_opensInTheLastSegmentOnly() public {
        _commit(2);
        // segment 2 is the job's last (3 segments of 4): its end state 12 is the final model, openable and answerable
        // with the proof of its leaf K; one past it is not
        _request(AUDITOR, 2, 12);
        _answer(PROVIDER, 2, 12);
        assertTrue(openings.openingOf(id, 12).answered, "final state answered");
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsStepOutOfSegment.selector, id, 2, 13, 8, 13));
        _request(AUDITOR, 2, 13);
    }

    function test_request_finalizedJob_reverts() public {
        _commit(2);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);
        vm.expectRevert(
            abi.encodeWithSelector(IStateOpenings.StateOpeningsJobNotDisputable.selector, id, IJobMarket.JobStatus.Finalized)
        );
        _request(AUDITOR, 0, 1);
    }

    /// A Committed job's window (1 day) must leave one more answer window after the deadline to dispute a withholding.
    function test_request_tooCloseToWindowEnd_reverts() public {
        _commit(2);
        uint256 windowEnd = block.timestamp + 1 days;
        vm.warp(windowEnd - 2 * WINDOW);
        _request(AUDITOR, 0, 1); // exactly enough time left
        // the next one queues one replay behind it: past the last deadline that leaves a window to dispute
        vm.expectRevert(
            abi.encodeWithSelector(IStateOpenings.StateOpeningsWindowTooShort.selector, id, block.timestamp + WINDOW + REPLAY, windowEnd)
        );
        _request(AUDITOR, 0, 2);
        // an idle queue too: one second too late for a full window and one to dispute
        vm.warp(block.timestamp + REPLAY + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IStateOpenings.StateOpeningsWindowTooShort.selector, id, block.timestamp + WINDOW, windowEnd)
        );
        _request(AUDITOR, 0, 2);
    }

    /// A segment of an earlier (timed-out) tenure has no provider to answer for it.
    function test_request_earlierTenure_reverts() public {
        vm.warp(block.timestamp + 1 hours + 1);
        market.reportTimeout(id);
        vm.warp(block.timestamp + 1 days + 1);
        market.reopenJob(id);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsEarlierTenure.selector, id, 1, 2));
        _request(AUDITOR, 1, 5);
    }

    // ---------------------------------------------------------------- answer guards

    function test_answer_notRequested_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsNotRequested.selector, id, 5));
        _answer(PROVIDER, 1, 5);
    }

    function test_answer_notProvider_reverts() public {
        _request(AUDITOR, 1, 5);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsNotProvider.selector, id, STRANGER, PROVIDER));
        _answer(STRANGER, 1, 5);
    }

    function test_answer_twice_reverts() public {
        _request(AUDITOR, 1, 5);
        _answer(PROVIDER, 1, 5);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsAlreadyAnswered.selector, id, 5));
        _answer(PROVIDER, 1, 5);
    }

    function test_answer_late_reverts() public {
        _request(AUDITOR, 1, 5);
        uint256 deadline = block.timestamp + WINDOW;
        vm.warp(deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IStateOpenings.StateOpeningsAnswerLate.selector, id, 5, deadline, deadline + 1)
        );
        _answer(PROVIDER, 1, 5);
        assertTrue(openings.isWithheld(id, 5), "still withheld");
    }

    function test_answer_atDeadline_succeeds() public {
        _request(AUDITOR, 1, 5);
        vm.warp(block.timestamp + WINDOW);
        _answer(PROVIDER, 1, 5);
        assertTrue(openings.openingOf(id, 5).answered, "answered on the last second");
    }

    function test_answer_wrongProof_reverts() public {
        _request(AUDITOR, 1, 5);
        bytes32 root = Leaves.root(TAG, id, 1, K);
        bytes32 end = Leaves.end(TAG, id, 1, K);
        // the proof of step 6 does not open step 5
        bytes32[] memory proof = _proof(1, 2);
        bytes32 h5 = Leaves.h(TAG, id, 5);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsBadProof.selector, id, 5, h5));
        vm.prank(PROVIDER);
        openings.answerOpening(id, 5, "bafystate", root, end, h5, proof);
        // a state hash that is not the committed one, with the right proof
        bytes32 other = keccak256("other state");
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsBadProof.selector, id, 5, other));
        vm.prank(PROVIDER);
        openings.answerOpening(id, 5, "bafystate", root, end, other, _proof(1, 1));
    }

    function test_answer_wrongSegmentRoot_reverts() public {
        _request(AUDITOR, 1, 5);
        // segment 0's root and end state, or segment 1's root with a wrong end state, are not segment 1's commitment
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsWrongSegment.selector, id, 1));
        vm.prank(PROVIDER);
        openings.answerOpening(
            id, 5, "bafystate", Leaves.root(TAG, id, 0, K), Leaves.end(TAG, id, 0, K), Leaves.h(TAG, id, 5), _proof(1, 1)
        );
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsWrongSegment.selector, id, 1));
        vm.prank(PROVIDER);
        openings.answerOpening(
            id, 5, "bafystate", Leaves.root(TAG, id, 1, K), bytes32(uint256(1)), Leaves.h(TAG, id, 5), _proof(1, 1)
        );
    }

    function test_answer_emptyCid_reverts() public {
        _request(AUDITOR, 1, 5);
        vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsEmptyCid.selector, id, 5));
        vm.prank(PROVIDER);
        openings.answerOpening(
            id, 5, "", Leaves.root(TAG, id, 1, K), Leaves.end(TAG, id, 1, K), Leaves.h(TAG, id, 5), _proof(1, 1)
        );
    }

    /// Any requested step of any committed segment opens with the proof of its own leaf, and with no other.
    function testFuzz_answer_opensOnlyItsOwnLeaf(uint256 segment, uint256 j, uint256 other) public {
        segment = bound(segment, 0, 1);
        j = bound(j, 0, K - 1);
        other = bound(other, 0, K);
        uint256 step = segment * K + j;
        _request(AUDITOR, segment, step);
        if (other != j) {
            bytes32 h = Leaves.h(TAG, id, step);
            vm.expectRevert(abi.encodeWithSelector(IStateOpenings.StateOpeningsBadProof.selector, id, step, h));
            vm.prank(PROVIDER);
            openings.answerOpening(
                id, step, "bafystate", Leaves.root(TAG, id, segment, K), Leaves.end(TAG, id, segment, K), h, _proof(segment, other)
            );
        }
        _answer(PROVIDER, segment, step);
        assertTrue(openings.openingOf(id, step).answered, "answered");
    }

    // ---------------------------------------------------------------- long segments

    /// @dev Makes `id` a fresh Active job of PROVIDER whose segments may legally take `segmentTimeout`, and commits its
    /// segment 0.
    function _longJob(uint32 segmentTimeout, uint32 challengeWindow) internal {
        IJobMarket.Policy memory p = policy(3, 1e18);
        p.segmentTimeout = segmentTimeout;
        p.challengeWindow = challengeWindow;
        vm.prank(BUYER);
        id = market.createJob(keccak256("long"), "ipfs://long", address(token), 1e18, p);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commit(0);
    }

    /// A bonded auditor asks an opening one second after a commit of a job whose segments legally take six answer
    /// windows; the honest provider answers only between segments (as `pouw provider run` does), commits the next segment
    /// at the last second it may, then replays and answers: the opening is still open, so it is never judged withheld.
    function test_request_longSegment_deadlineOutlivesTheNextCommit() public {
        _longJob(uint32(6 * WINDOW), 3 days);
        uint256 t0 = block.timestamp;
        vm.warp(t0 + 1);
        _request(AUDITOR, 0, 2);
        assertEq(openings.openingOf(id, 2).deadline, t0 + 1 + 6 * WINDOW + REPLAY, "one segment timeout and one replay");
        assertEq(openings.nextAnswerBy(id), t0 + 1 + 6 * WINDOW + 2 * REPLAY, "the next one queues one replay behind");
        vm.warp(t0 + 6 * WINDOW); // segment 1's deadline: the last second its commit is on time
        _commit(1);
        vm.warp(block.timestamp + REPLAY);
        _answer(PROVIDER, 0, 2);
        assertTrue(openings.openingOf(id, 2).answered, "answered after the next commit");
        vm.warp(t0 + 3 days);
        assertTrue(!openings.isWithheld(id, 2), "never withheld");
    }

    /// A Committed job trains nothing more: its openings get one answer window, however long its segments were.
    function test_request_longSegment_committedJobGetsOneWindow() public {
        _longJob(uint32(6 * WINDOW), 3 days);
        _commit(1);
        _commit(2);
        _request(AUDITOR, 1, 5);
        assertEq(openings.openingOf(id, 5).deadline, block.timestamp + WINDOW, "one window");
    }

    /// An Active job whose challenge window cannot hold one segment timeout, one replay and one more answer window (to
    /// dispute a withholding) takes no openings: the request reverts with the deadline it would get, and the auditor
    /// recomputes the segment instead (bot/steps.ts openingAskable).
    function test_request_longSegment_windowTooShort_reverts() public {
        _longJob(uint32(6 * WINDOW), uint32(6 * WINDOW + REPLAY + WINDOW - 1));
        uint256 answerBy = block.timestamp + 6 * WINDOW + REPLAY;
        vm.expectRevert(
            abi.encodeWithSelector(IStateOpenings.StateOpeningsWindowTooShort.selector, id, answerBy, answerBy + WINDOW - 1)
        );
        _request(AUDITOR, 0, 2);
    }
}
