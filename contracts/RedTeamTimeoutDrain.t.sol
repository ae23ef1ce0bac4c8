// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IKindRecords} from "./interfaces/IKindRecords.sol";
import {KindRecords} from "./KindRecords.sol";

/// @notice Red team, now a regression: a self-dealer laundered a fake score onto KindRecords with nothing at stake
/// behind the fake. The timeout slash was paid at once, to the buyer, at any policy.timeoutSlashBps up to 100% (capped
/// only at the panel reserve, 0 in this fixture). So: the attacker's buyer address posts an evaluate job with
/// timeoutSlashBps 10,000 and a requiredStake that passes minStake; its provider address commits a faked first segment
/// (the aggregate in every later leaf chains from it) and lets the deadline pass; reportTimeout moved the whole lock to
/// the attacker's own buyer address, and for the TimedOut window the faked segment was disputable with nothing behind
/// it. After the window a second attacker address finished from the anchored (faked) state and the score was recorded.
/// The rule now: a tenure that committed segments keeps its whole lock behind them until their window closed with no
/// fault; the timeout slash (the same amount) is taken at reopenJob, or when the job ends Unresolved.
contract RedTeamTimeoutDrainTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1); // the attacker
    address internal constant PROVIDER = address(0xB2); // the attacker's provider address
    uint8 internal constant EVALUATE = 1;
    uint16 internal constant K = 4;
    string internal constant MODEL = "bafy-model";

    KindRecords internal kinds;

    function setUp() public {
        vm.warp(1_700_000_000);
        kinds = new KindRecords(market, 5e18);
        address[2] memory who = [BUYER, PROVIDER];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            vm.stopPrank();
        }
        vm.prank(PROVIDER);
        vault.deposit(10e18);
    }

    function _commit(address from, uint256 id, uint256 s, bytes32[] memory leaves) internal {
        vm.prank(from);
        market.commitSegment(id, s, leaves, 1, "bafy-states");
    }

    /// The attacker's job up to its timeout: the provider address committed faked segment 0 and walked away.
    function _timedOut() internal returns (uint256 id) {
        IJobMarket.Policy memory p = policy(2, 10e18);
        p.timeoutSlashBps = 10_000;
        vm.prank(BUYER);
        id = market.createKindJob(keccak256("eval-manifest"), "cid:m", address(token), 1e18, p, EVALUATE, keccak256(bytes(MODEL)));
        bytes32[] memory s0 = new bytes32[](K + 1);
        for (uint256 i; i <= K; ++i) {
            s0[i] = keccak256(abi.encode("faked state", id, i));
        }
        vm.prank(PROVIDER);
        market.acceptJob(id);
        _commit(PROVIDER, id, 0, s0);
        vm.warp(block.timestamp + 1 hours + 1);
        vm.expectEmit(true, true, true, true, address(market));
        emit IJobMarket.JobTimedOut(id, PROVIDER, 1, 0, uint64(block.timestamp + 1 days));
        market.reportTimeout(id);
    }

    /// While the faked segment is disputable, the whole lock is behind it: nothing has gone to the attacker's buyer
    /// address, and a fault found in the window slashes all 10 tokens by the fault shares (no record follows).
    function test_timeoutSlashToOwnBuyer_wholeLockBehindFakeWhileDisputable() public {
        uint256 id = _timedOut();
        (,, IJobMarket.JobStatus status) = market.jobParties(id);
        assertEq(uint256(status), uint256(IJobMarket.JobStatus.TimedOut), "timed out");
        assertEq(vault.lockedFor(PROVIDER, id), 10e18, "the whole lock behind the faked segment while it is disputable");
        assertEq(vault.creditOf(BUYER), 0, "nothing to the attacker's buyer address yet");

        vm.warp(block.timestamp + 1 days - 1);
        dispute.freeze(id);
        dispute.settleProviderFault(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0, "the lock is slashed");
        assertEq(vault.creditOf(address(dispute)), 5e18, "the challenger share of the whole lock");
        assertEq(vault.creditOf(BUYER), 3e18, "the buyer share only: the attacker nets -7 tokens");
        vm.expectRevert(
            abi.encodeWithSelector(
                IKindRecords.KindRecordsWrongStatus.selector, id, IJobMarket.JobStatus.Refunded, IJobMarket.JobStatus.Finalized
            )
        );
        IKindRecords.EndState memory e;
        kinds.recordResult(id, bytes32(0), e, MODEL, "bafy-result");
    }

    /// With nobody at fault the timed-out tenure loses the same slash, once its window closed: the timeout costs an
    /// honest provider what it always did.
    function test_timeoutSlash_takenAtReopen_sameAmount() public {
        uint256 id = _timedOut();
        vm.warp(block.timestamp + 1 days + 1);
        market.reopenJob(id);
        assertEq(vault.lockedFor(PROVIDER, id), 0, "released");
        assertEq(vault.creditOf(BUYER), 10e18, "timeoutSlashBps 10,000 of the lock, above the panel reserve (0 here)");
        assertEq(vault.accountOf(PROVIDER).free + vault.accountOf(PROVIDER).locked, 0, "the provider address lost it all");
    }

    /// A timed-out provider does not escape its timeout slash by keeping its own segments in dispute until the job
    /// ends Unresolved.
    function test_timeoutSlash_takenWhenTimedOutJobEndsUnresolved() public {
        uint256 id = _timedOut();
        for (uint256 i; i <= market.MAX_REOPENS(); ++i) {
            vm.warp(block.timestamp + 1 hours); // each no-decision then ends after the window's end: a re-open
            dispute.freeze(id);
            dispute.settleNoFault(id, true);
        }
        (,, IJobMarket.JobStatus status) = market.jobParties(id);
        assertEq(uint256(status), uint256(IJobMarket.JobStatus.Unresolved), "ended Unresolved");
        assertEq(vault.lockedFor(PROVIDER, id), 0, "released");
        assertEq(vault.creditOf(BUYER), 10e18, "the timeout slash still went to the buyer");
        assertEq(market.creditOf(BUYER, address(token)), 1e18, "and the escrow back");
    }
}
