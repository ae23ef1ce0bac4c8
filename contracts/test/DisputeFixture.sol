// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {TestToken} from "../mocks/TestToken.sol";
import {StakeVault} from "../StakeVault.sol";
import {AuditorRegistry} from "../AuditorRegistry.sol";
import {JobMarket} from "../JobMarket.sol";
import {DisputeGame} from "../DisputeGame.sol";
import {Groth16Verifier} from "../verifiers/StepVerifier.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";
import {IDisputeGameTypes, IStepVerifier} from "../interfaces/IDisputeGame.sol";
import {Seconds} from "../libraries/Seconds.sol";
import {Trace} from "../libraries/Trace.sol";

/// @notice Cheatcodes the dispute tests need beyond Vm.sol (exercised by DisputeGame.t.sol under EDR).
// solhint-disable-next-line interface-starts-with-i
interface VmBlocks {
    function roll(uint256 newHeight) external;
}

/// @notice State and helpers of the dispute tests: actors, made-up traces for segments of K = 3 steps (4 leaves, so
/// OpenZeppelin's tree is a plain balanced tree), job set-up, challenges and votes. DisputeFixture deploys the set;
/// DisputeHandler reuses one deployment (deploying it again inside a handler would exceed the initcode size limit).
abstract contract DisputeBase {
    uint64 internal constant UNBONDING = 7 days;
    uint256 internal constant MIN_BOND = 100e18;
    uint64 internal constant EXIT_DELAY = 14 days;
    /// @dev A bond counts for panel snapshots this long after it is posted (the deployment default).
    uint64 internal constant ACTIVATION_DELAY = 1 hours;
    uint32 internal constant K = 3;
    uint128 internal constant STAKE = 10e18;
    uint128 internal constant PAYMENT = 5e18;
    uint256 internal constant AUDITOR_BOND = 150e18;
    VmBlocks internal constant VMB = VmBlocks(address(uint160(uint256(keccak256("hevm cheat code")))));

    TestToken public token;
    StakeVault public vault;
    AuditorRegistry public registry;
    JobMarket public market;
    DisputeGame public game;
    Groth16Verifier public verifier;

    address public buyer = address(0xB0B);
    address public provider = address(0x9000);
    address public challenger = address(0xC4A1);
    address public stranger = address(0x5757);
    address[] public auditors;

    function defaultParams() public pure returns (IDisputeGameTypes.Params memory) {
        return IDisputeGameTypes.Params({
            minChallengerBond: 1e18,
            panelErrorBps: 1_000,
            panelSize: 3,
            seedDelayBlocks: 2,
            commitWindowSeconds: Seconds.wrap(1 days),
            revealWindowSeconds: Seconds.wrap(1 days),
            panelForfeit: 20e18,
            panelFee: 5e16
        });
    }

    function policy(uint16 segments) public pure returns (IJobMarket.Policy memory) {
        return IJobMarket.Policy({
            segments: segments,
            stepsPerSegment: K,
            requiredStake: STAKE,
            segmentTimeout: 1 hours,
            challengeWindow: 1 days,
            challengerBps: 5_000,
            buyerBps: 3_000,
            burnBps: 2_000,
            timeoutSlashBps: 1_000
        });
    }

    // ---------------------------------------------------------------- traces

    /// @notice h(t) of a made-up trace: weightsHash = `w(t)` (a tag per trace variant), no optimizer state.
    function h(uint256 jobId, uint256 t, uint256 variant) public pure returns (bytes32) {
        return Trace.stateHash(jobId, t, bytes32(weights(t, variant)), bytes32(0));
    }

    /// @notice A small field element standing for the weights commitment of state t (circuit-class form).
    function weights(uint256 t, uint256 variant) public pure returns (uint256) {
        return uint256(keccak256(abi.encode("w", t, variant))) >> 8;
    }

    function _hashPair(bytes32 a, bytes32 b) internal pure returns (bytes32) {
        return a < b ? keccak256(abi.encode(a, b)) : keccak256(abi.encode(b, a));
    }

    /// @notice Leaves of segment `segment` (states 3s..3s+3): variant 0 everywhere, except states >= `badFrom` use
    /// variant 1 (a cheat that diverges at step badFrom).
    function leaves(uint256 jobId, uint256 segment, uint256 badFrom) public pure returns (bytes32[4] memory lv, bytes32[4] memory hs) {
        for (uint256 j; j < 4; ++j) {
            uint256 t = segment * K + j;
            hs[j] = h(jobId, t, t >= badFrom ? 1 : 0);
            lv[j] = Trace.leaf(uint64(t), hs[j]);
        }
    }

    function root(bytes32[4] memory lv) public pure returns (bytes32) {
        return _hashPair(_hashPair(lv[0], lv[1]), _hashPair(lv[2], lv[3]));
    }

    function proof(bytes32[4] memory lv, uint256 j) public pure returns (bytes32[] memory p) {
        p = new bytes32[](2);
        p[0] = lv[j ^ 1];
        p[1] = j < 2 ? _hashPair(lv[2], lv[3]) : _hashPair(lv[0], lv[1]);
    }

    // ---------------------------------------------------------------- job set-up

    function _fund(address a) internal {
        token.mint(a, 1e24);
        vm.startPrank(a);
        token.approve(address(vault), type(uint256).max);
        token.approve(address(registry), type(uint256).max);
        token.approve(address(market), type(uint256).max);
        token.approve(address(game), type(uint256).max);
        vm.stopPrank();
    }

    /// @notice Creates and accepts a job and commits `commits` segments whose leaves diverge from step `badFrom`.
    function _job(uint16 segments, uint256 commits, uint256 badFrom) internal returns (uint256 jobId) {
        vm.prank(buyer);
        jobId = market.createJob(keccak256("manifest"), "ipfs://m", address(token), PAYMENT, policy(segments));
        vm.prank(provider);
        market.acceptJob(jobId);
        _commit(jobId, commits, badFrom);
    }

    function _commit(uint256 jobId, uint256 commits, uint256 badFrom) internal {
        for (uint256 s; s < commits; ++s) {
            (, bytes32[4] memory hs) = leaves(jobId, s, badFrom);
            vm.prank(provider);
            market.commitSegment(jobId, s, dyn(hs), 1, "cid");
        }
    }

    /// @notice Challenges step `step` (in segment step-1 / K) of job `jobId` as `who`.
    function _challenge(address who, uint256 jobId, uint256 step, uint256 badFrom) internal returns (uint256) {
        _commitChallenge(who, jobId, step);
        return _challengeCommitted(who, jobId, step, badFrom);
    }

    /// @notice Opens the challenge `who` committed to with _commitChallenge (one external call: expectRevert-friendly).
    function _challengeCommitted(address who, uint256 jobId, uint256 step, uint256 badFrom) internal returns (uint256) {
        uint256 segment = (step - 1) / K;
        (bytes32[4] memory lv, bytes32[4] memory hs) = leaves(jobId, segment, badFrom);
        uint256 j = step - segment * K;
        bytes32 salt = keccak256(abi.encode("challenge", who, jobId, step));
        vm.prank(who);
        return game.challenge(IDisputeGameTypes.ChallengeParams(jobId, segment, step, root(lv), hs[3], hs[j - 1], proof(lv, j - 1), hs[j], proof(lv, j), salt));
    }

    /// @notice `who` commits to challenging `step` of `jobId` and the chain moves one block on; returns the salt.
    function _commitChallenge(address who, uint256 jobId, uint256 step) internal returns (bytes32 salt) {
        salt = keccak256(abi.encode("challenge", who, jobId, step));
        bytes32 c = game.challengeCommitment(jobId, step, who, salt);
        vm.prank(who);
        game.commitChallenge(jobId, (step - 1) / K, c);
        VMB.roll(block.number + 1);
    }

    function dyn(bytes32[4] memory hs) public pure returns (bytes32[] memory out) {
        out = new bytes32[](4);
        for (uint256 i; i < 4; ++i) out[i] = hs[i];
    }

    function _salt(address member) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", member));
    }

    /// @notice Rolls past the seed block (and one second past the challenge: the panel is the registry's snapshot at
    /// challengedAt, drawable only once that second is over) and draws the panel.
    function _draw(uint256 disputeId) internal returns (address[] memory) {
        VMB.roll(block.number + defaultParams().seedDelayBlocks + 1);
        _pastChallenge(disputeId);
        game.drawPanel(disputeId);
        return game.getDispute(disputeId).panel;
    }

    /// @notice Moves time one second past the challenge if it has not moved since (blocks in these tests share a
    /// timestamp unless warped; on a chain each block is later than its parent).
    function _pastChallenge(uint256 disputeId) internal {
        uint256 at = game.getDispute(disputeId).challengedAt;
        if (block.timestamp <= at) vm.warp(at + 1);
    }

    function _commitVote(uint256 disputeId, address member, IDisputeGameTypes.Vote v) internal {
        bytes32 c = game.voteCommitment(v, _salt(member), member);
        vm.prank(member);
        game.commitVote(disputeId, c);
    }

    function _reveal(uint256 disputeId, address member, IDisputeGameTypes.Vote v) internal {
        vm.prank(member);
        game.revealVote(disputeId, v, _salt(member));
    }

    /// @notice Plays an appealed dispute's later rounds to the end: each round's whole panel votes `v`, then resolve. A
    /// unanimous first-round Fault waiting for the provider's appeal settles unappealed (_settleUnappealed).
    function _appealRounds(uint256 disputeId, IDisputeGameTypes.Vote v) internal {
        while (game.getDispute(disputeId).status == IDisputeGameTypes.Status.Open) {
            if (_settleUnappealed(disputeId)) return;
            address[] memory p = _draw(disputeId);
            for (uint256 i; i < p.length; ++i) _commitVote(disputeId, p[i], v);
            for (uint256 i; i < p.length; ++i) _reveal(disputeId, p[i], v);
            game.resolve(disputeId);
        }
    }

    /// @notice Resolves dispute `disputeId` with every round's panel silent: a silent round with a panel is appealed
    /// like a tie while rounds are left, so this resolves round after round until the dispute ends.
    function _resolveSilent(uint256 disputeId) internal {
        while (game.getDispute(disputeId).status == IDisputeGameTypes.Status.Open) {
            VMB.roll(block.number + defaultParams().seedDelayBlocks + 1);
            uint256 until = game.getDispute(disputeId).revealDeadline;
            if (block.timestamp <= until) vm.warp(until + 1);
            game.resolve(disputeId);
        }
    }

    /// @notice When dispute `disputeId` waits for its provider's appeal of a unanimous first-round Fault, lets the window
    /// pass and resolves it (PanelFault); returns whether it did.
    function _settleUnappealed(uint256 disputeId) internal returns (bool) {
        (uint64 until,) = game.faultAppealOf(disputeId);
        if (until == 0) return false;
        vm.warp(until + 1);
        game.resolve(disputeId);
        return true;
    }

    /// @notice resolve, then (for a unanimous first-round Fault) the provider's appeal window left unused.
    function _resolveFault(uint256 disputeId) internal {
        game.resolve(disputeId);
        _settleUnappealed(disputeId);
    }
}

/// @notice Deploys the market set plus DisputeGame and the generated Groth16 verifier, wired once as
/// ignition/modules/market.ts does (without the registries), with funded actors and five bonded auditors.
contract DisputeFixture is DisputeBase {
    constructor() {
        token = new TestToken("Test", "TST");
        vault = new StakeVault(token, UNBONDING, address(this));
        registry = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        market = new JobMarket(vault, address(this));
        verifier = new Groth16Verifier();
        game = new DisputeGame(market, registry, IStepVerifier(address(verifier)), bytes32(0), token, defaultParams());
        // Wired once, as ignition/modules/market.ts does (no slasher, no evaluator; registries not set here),
        // and wiring ended: the fixture keeps no power over the set.
        vault.wire(address(market), address(0));
        registry.wire(address(game));
        market.wire(address(game), address(0));

        address[4] memory people = [buyer, provider, challenger, stranger];
        for (uint256 i; i < people.length; ++i) _fund(people[i]);
        vm.prank(provider);
        vault.deposit(100e18);
        for (uint256 i = 1; i <= 5; ++i) {
            address a = address(uint160(0xA0D170 + i));
            auditors.push(a);
            _fund(a);
            vm.prank(a);
            registry.postBond(AUDITOR_BOND);
        }
        // the bonds count for snapshots from here on
        vm.warp(block.timestamp + ACTIVATION_DELAY);
    }

}
