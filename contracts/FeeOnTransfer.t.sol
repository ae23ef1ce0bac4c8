// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {Leaves} from "./test/Leaves.sol";
import {Trace} from "./libraries/Trace.sol";
import {FeeToken} from "./mocks/FeeToken.sol";
import {StakeVault} from "./StakeVault.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {JobMarket} from "./JobMarket.sol";
import {DisputeGame} from "./DisputeGame.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IDisputeGameTypes, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {Seconds} from "./libraries/Seconds.sol";

/// @notice Fee-on-transfer tokens: every transfer in (escrow, stake, auditor bond, challenge deposit) is checked by its
/// balance delta, and a short one is refused with the contract's TransferShortfall error naming the token, the amount
/// asked and the amount received, so no contract ever books more than it holds. The token's fee is switched on after
/// the set-up (a token whose fee can be turned on later is the realistic case; one with a fee from the start cannot
/// even be staked).
contract FeeOnTransferTest is TestBase {
    uint256 internal constant FEE_BPS = 100; // 1%
    address internal constant BUYER = address(0xB0B);
    address internal constant PROVIDER = address(0x9000);
    address internal constant AUDITOR = address(0xA0D1);
    address internal constant CHALLENGER = address(0xC4A1);

    FeeToken internal token;
    StakeVault internal vault;
    AuditorRegistry internal registry;
    JobMarket internal market;
    DisputeGame internal game;

    function setUp() public {
        token = new FeeToken(0);
        vault = new StakeVault(token, 7 days, address(this));
        registry = new AuditorRegistry(token, 100e18, 14 days, 1 hours, address(this));
        market = new JobMarket(vault, address(this));
        game = new DisputeGame(
            market,
            registry,
            IStepVerifier(address(0)),
            bytes32(0),
            token,
            IDisputeGameTypes.Params({
                minChallengerBond: 1e18,
                panelErrorBps: 1_000,
                panelSize: 3,
                seedDelayBlocks: 2,
                commitWindowSeconds: Seconds.wrap(1 days),
                revealWindowSeconds: Seconds.wrap(1 days),
                panelForfeit: 20e18,
                panelFee: 5e16
            })
        );
        vault.wire(address(market), address(0));
        registry.wire(address(game));
        market.wire(address(game), address(0));
        address[4] memory who = [BUYER, PROVIDER, AUDITOR, CHALLENGER];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e24);
            vm.startPrank(who[i]);
            token.approve(address(vault), type(uint256).max);
            token.approve(address(registry), type(uint256).max);
            token.approve(address(market), type(uint256).max);
            token.approve(address(game), type(uint256).max);
            vm.stopPrank();
        }
    }

    function _policy() internal pure returns (IJobMarket.Policy memory) {
        return IJobMarket.Policy({
            segments: 2,
            stepsPerSegment: 3,
            requiredStake: 10e18,
            segmentTimeout: 1 hours,
            challengeWindow: 1 days,
            challengerBps: 5_000,
            buyerBps: 3_000,
            burnBps: 2_000,
            timeoutSlashBps: 1_000
        });
    }

    /// @dev Merkle proof of leaf j of segment 0 (4 leaves, sorted-pair hashing as in Trace.segmentRoot).
    function _proof(bytes32 seed, uint256 jobId, uint256 j) internal pure returns (bytes32[] memory p) {
        bytes32[4] memory lv;
        for (uint256 i; i < 4; ++i) lv[i] = Trace.leaf(uint64(i), Leaves.h(seed, jobId, i));
        p = new bytes32[](2);
        p[0] = lv[j ^ 1];
        p[1] = j < 2 ? _pair(lv[2], lv[3]) : _pair(lv[0], lv[1]);
    }

    function _pair(bytes32 a, bytes32 b) internal pure returns (bytes32) {
        return a < b ? keccak256(abi.encode(a, b)) : keccak256(abi.encode(b, a));
    }

    function test_createJob_feeOnTransfer_reverts() public {
        token.setFeeBps(FEE_BPS);
        vm.prank(BUYER);
        vm.expectRevert(
            abi.encodeWithSelector(IJobMarket.JobMarketTransferShortfall.selector, address(token), 5e18, 5e18 - 5e16)
        );
        market.createJob(keccak256("m"), "ipfs://m", address(token), 5e18, _policy());
        assertEq(market.jobCount(), 0, "no job");
    }

    function test_stakeDeposit_feeOnTransfer_reverts() public {
        token.setFeeBps(FEE_BPS);
        vm.prank(PROVIDER);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeVault.StakeVaultTransferShortfall.selector, address(token), 10e18, 10e18 - 1e17)
        );
        vault.deposit(10e18);
    }

    function test_postBond_feeOnTransfer_reverts() public {
        token.setFeeBps(FEE_BPS);
        vm.prank(AUDITOR);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAuditorRegistry.AuditorRegistryTransferShortfall.selector, address(token), 100e18, 100e18 - 1e18
            )
        );
        registry.postBond(100e18);
    }

    /// Without a fee every transfer in books exactly what arrived (the checks pass through).
    function test_noFee_transfersIn_booked() public {
        vm.prank(PROVIDER);
        vault.deposit(10e18);
        vm.prank(AUDITOR);
        registry.postBond(100e18);
        vm.prank(BUYER);
        market.createJob(keccak256("m"), "ipfs://m", address(token), 5e18, _policy());
        assertEq(token.balanceOf(address(vault)), 10e18, "stake held");
        assertEq(token.balanceOf(address(registry)), 100e18, "bond held");
        assertEq(token.balanceOf(address(market)), 5e18, "escrow held");
    }

    function test_challenge_feeOnTransfer_reverts() public {
        vm.prank(PROVIDER);
        vault.deposit(10e18);
        vm.prank(BUYER);
        uint256 jobId = market.createJob(keccak256("m"), "ipfs://m", address(token), 5e18, _policy());
        vm.prank(PROVIDER);
        market.acceptJob(jobId);
        bytes32 seed = keccak256("t");
        vm.prank(PROVIDER);
        market.commitSegment(jobId, 0, Leaves.hashes(seed, jobId, 0, 3), 1, "cid");
        bytes32 salt = keccak256("salt");
        bytes32 c = game.challengeCommitment(jobId, 2, CHALLENGER, salt);
        vm.prank(CHALLENGER);
        game.commitChallenge(jobId, 0, c);
        vm.roll(block.number + 1);
        token.setFeeBps(FEE_BPS);
        uint256 deposit = game.requiredDeposit(jobId);
        vm.prank(CHALLENGER);
        vm.expectRevert(
            abi.encodeWithSelector(
                IDisputeGameTypes.DisputeGameTransferShortfall.selector, address(token), deposit, deposit - (deposit * FEE_BPS) / 10_000
            )
        );
        _challengeStep2(seed, jobId, salt);
    }

    /// @dev Challenges step 2 of segment 0 of the made-up trace `seed` (one external call: expectRevert-friendly).
    function _challengeStep2(bytes32 seed, uint256 jobId, bytes32 salt) internal {
        bytes32[] memory proofPrev = _proof(seed, jobId, 1);
        bytes32[] memory proofStep = _proof(seed, jobId, 2);
        game.challenge(IDisputeGameTypes.ChallengeParams(
            jobId,
            0,
            2,
            Leaves.root(seed, jobId, 0, 3),
            Leaves.end(seed, jobId, 0, 3),
            Leaves.h(seed, jobId, 1),
            proofPrev,
            Leaves.h(seed, jobId, 2),
            proofStep,
            salt
        ));
    }
}
