// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IKindRecords} from "./interfaces/IKindRecords.sol";
import {KindRecords} from "./KindRecords.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice Red team: a self-dealer launders a fake score onto KindRecords with nothing at stake behind the fake.
/// KindRecords promises (minStake) that "a score anyone cites was exposed to a slash worth a challenge for as long as
/// its window ran". But the timeout slash is paid at once, to the buyer, at any policy.timeoutSlashBps up to 100%
/// (capped only at the panel reserve: panelFees * 10,000 / challengerBps, which leaves a challenger exactly its panel's
/// fees and nothing more). So: the attacker's buyer address posts an evaluate job with timeoutSlashBps 10,000 and a
/// requiredStake that passes minStake; its provider address commits the first segment with a faked example (the
/// aggregate in every later leaf chains from it) and lets the deadline pass; reportTimeout moves the whole lock above the
/// reserve to the attacker's own buyer address. For the TimedOut window the faked segment is disputable with only the
/// reserve behind it (zero here: this fixture's panel fees are 0): a challenger would earn nothing. After the window the
/// segment is beyond dispute (an earlier tenure's), a second attacker address finishes the last segment honestly from the
/// anchored (faked) state, the job finalizes and the faked aggregate is recorded. The attacker's addresses end where
/// they started, but for gas (the stake moved from its provider address to its buyer address; the payment split
/// between its buyer and second provider).
/// Fix: keep a TimedOut tenure's lock whole while its segments are disputable: take the timeout slash at reopenJob
/// (after the window, when no Fault took the lock) instead of at the timeout; or have KindRecords require that no
/// tenure of the job ended by timeout (only a job one tenure committed carries minStake behind every segment).
contract RedTeamTimeoutDrainTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1); // the attacker
    address internal constant PROVIDER = address(0xB2); // the attacker's provider address
    address internal constant FINISHER = address(0xB3); // the attacker's second provider address
    uint8 internal constant EVALUATE = 1;
    uint16 internal constant K = 4;
    string internal constant MODEL = "bafy-model";

    KindRecords internal kinds;

    function setUp() public {
        vm.warp(1_700_000_000);
        kinds = new KindRecords(market, 5e18);
        address[3] memory who = [BUYER, PROVIDER, FINISHER];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            vm.stopPrank();
        }
        vm.prank(PROVIDER);
        vault.deposit(10e18);
        vm.prank(FINISHER);
        vault.deposit(10e18);
    }

    function _hN(uint256 jobId, uint256 n, IKindRecords.EndState memory e) internal pure returns (bytes32) {
        return keccak256(
            bytes.concat(
                abi.encode(jobId, n, e.kind, keccak256(bytes(MODEL)), e.item),
                abi.encode(e.score, e.hit, e.total, e.hits, e.chain)
            )
        );
    }

    function _commit(address from, uint256 id, uint256 s, bytes32[] memory leaves) internal {
        vm.prank(from);
        market.commitSegment(id, s, leaves, 1, "bafy-states");
    }

    function test_timeoutSlashToOwnBuyer_fakeSegmentUnbacked_thenRecorded() public {
        IJobMarket.Policy memory p = policy(2, 10e18);
        p.timeoutSlashBps = 10_000;
        vm.prank(BUYER);
        uint256 id = market.createKindJob(keccak256("eval-manifest"), "cid:m", address(token), 1e18, p, EVALUATE, keccak256(bytes(MODEL)));

        // segment 0: the faked examples (any leaves: the aggregate chains from them)
        bytes32[] memory s0 = new bytes32[](K + 1);
        for (uint256 i; i <= K; ++i) {
            s0[i] = keccak256(abi.encode("faked state", id, i));
        }
        vm.prank(PROVIDER);
        market.acceptJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 10e18, "the full lock while Active");
        _commit(PROVIDER, id, 0, s0);

        // the provider address walks away; the timeout slash pays the attacker's own buyer address
        vm.warp(block.timestamp + 1 hours + 1);
        market.reportTimeout(id);
        (,, IJobMarket.JobStatus status) = market.jobParties(id);
        assertEq(uint256(status), uint256(IJobMarket.JobStatus.TimedOut), "timed out");
        assertEq(vault.lockedFor(PROVIDER, id), 0, "nothing behind the faked segment while it is disputable");
        assertEq(vault.creditOf(BUYER), 10e18, "the whole lock went to the attacker's buyer address");
        assertEq(market.getJob(id).deadline, block.timestamp + 1 days, "the faked segment's whole challenge window");

        // after the window: the faked segment is an earlier tenure's, beyond dispute; the finisher commits the rest
        vm.warp(block.timestamp + 1 days + 1);
        market.reopenJob(id);
        vm.prank(FINISHER);
        market.acceptJob(id);
        IKindRecords.EndState memory e;
        e.kind = EVALUATE;
        e.item = keccak256("item 8");
        e.score = 1;
        e.hit = 1;
        e.total = 8;
        e.hits = 8; // 8/8: the score the attacker wants on record
        e.chain = keccak256("chain");
        bytes32[] memory s1 = new bytes32[](K + 1);
        s1[0] = s0[K];
        for (uint256 i = 1; i < K; ++i) {
            s1[i] = keccak256(abi.encode("state", id, K + i));
        }
        s1[K] = _hN(id, 2 * K, e);
        _commit(FINISHER, id, 1, s1);
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);

        kinds.recordResult(id, Trace.segmentRoot(K, s1), e, MODEL, "bafy-result");
        assertEq(kinds.resultOf(id).hits, 8, "the laundered score is on record");
        assertEq(kinds.minStake(), 5e18, "although minStake is 5 tokens");

        // the attacker's books: its stake moved from PROVIDER to BUYER; the payment split between BUYER and FINISHER
        vm.prank(BUYER);
        vault.claim();
        assertEq(vault.accountOf(PROVIDER).free + vault.accountOf(PROVIDER).locked, 0, "provider address: -10");
        assertEq(token.balanceOf(BUYER), 1e30 - 1e18 + 10e18 + 0, "buyer address: +10 stake, -1 payment");
        assertEq(market.creditOf(BUYER, address(token)) + market.creditOf(FINISHER, address(token)), 1e18, "+1 payment back");
    }
}
