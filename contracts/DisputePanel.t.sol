// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {DisputeFixture} from "./test/DisputeFixture.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {DisputeGame} from "./DisputeGame.sol";
import {IDisputeGameTypes, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {PanelReference} from "./test/PanelReference.sol";

/// @notice The dispute panel is the registry's snapshot at the challenge: an attacker that waits
/// for blockhash(seedBlock) and then posts bonds, requests exits, leaves, or re-bonds after a forfeit, in the block of
/// the draw, does not change the panel. The expected panel comes from the reference draw (test/PanelReference.sol) over the
/// pool the fixture set up (its five auditors, in bond order), not from the registry.
contract DisputePanelTest is TestBase, DisputeFixture {
    /// @dev An auditor that bonded and requested exit long before the dispute: not in the snapshot, free to leave
    /// (which reorders the registry's storage) at any time during it.
    address internal constant OLD_EXITER = address(0xE1E1);
    uint256 internal constant SYBILS = 6;
    IDisputeGameTypes.Vote internal constant FAULT_VOTE = IDisputeGameTypes.Vote.Fault;

    function setUp() public {
        _fund(OLD_EXITER);
        vm.prank(OLD_EXITER);
        registry.postBond(AUDITOR_BOND);
        vm.prank(OLD_EXITER);
        registry.requestExit();
        vm.warp(block.timestamp + EXIT_DELAY);
        for (uint256 i; i < SYBILS; ++i) _fund(_sybil(i));
    }

    function _sybil(uint256 i) internal pure returns (address) {
        return address(uint160(uint256(keccak256(abi.encode("sybil", i)))));
    }

    /// @dev The fixture's auditors in bond order (= slot order): the pool at any challenge in these tests.
    function _expectedPool() internal view returns (address[] memory pool) {
        pool = new address[](auditors.length);
        for (uint256 i; i < auditors.length; ++i) pool[i] = auditors[i];
    }

    /// @dev The reference draw (IAuditorRegistry.drawPanel's documented rule) over `pool`.
    function _referencePanel(bytes32 seed, address[] memory pool, uint256 k) internal pure returns (address[] memory) {
        return PanelReference.panel(seed, pool, k);
    }

    /// @dev A cheating dispute, then the chain moves past its seed block: the seed is public from here on.
    function _disputeWithPublicSeed() internal returns (uint256 id, bytes32 seed) {
        uint256 jobId = _job(2, 2, 2);
        id = _challenge(challenger, jobId, 2, 2);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        VMB.roll(d.seedBlock + 1);
        vm.warp(block.timestamp + 1);
        seed = keccak256(abi.encode(blockhash(d.seedBlock), id));
    }

    function _bondSybil(uint256 i) internal {
        vm.prank(_sybil(i));
        registry.postBond(AUDITOR_BOND);
    }

    function _assertPanel(uint256 id, bytes32 seed) internal view {
        address[] memory expected = _referencePanel(seed, _expectedPool(), defaultParams().panelSize);
        address[] memory panel = game.getDispute(id).panel;
        assertEq(panel.length, expected.length, "panel size");
        for (uint256 i; i < panel.length; ++i) {
            assertEq(panel[i], expected[i], "snapshot panel");
            assertTrue(panel[i] != OLD_EXITER, "exited before the challenge");
            for (uint256 s; s < SYBILS; ++s) {
                assertTrue(panel[i] != _sybil(s), "bonded after the challenge");
            }
        }
    }

    // ---------------------------------------------------------------- the attack

    /// Everything the attacker can do once the seed is public, in the block of the draw: six new bonds, two honest
    /// members' exits (it controls them), a leave that reorders storage, a forfeit below the minimum and a re-bond.
    function test_attackerActsAfterSeed_panelUnchanged() public {
        (uint256 id, bytes32 seed) = _disputeWithPublicSeed();
        uint64 asOf = game.getDispute(id).challengedAt;
        address[] memory preview = registry.drawPanel(seed, 3, _parties(), asOf);

        for (uint256 i; i < SYBILS; ++i) _bondSybil(i);
        vm.prank(auditors[0]);
        registry.requestExit();
        vm.prank(auditors[1]);
        registry.requestExit();
        vm.prank(OLD_EXITER);
        registry.leave();
        vm.prank(address(game)); // the dispute role forfeits (the only holder)
        registry.forfeit(auditors[2], AUDITOR_BOND - MIN_BOND + 1, address(this));
        assertTrue(!registry.isActive(auditors[2]), "deactivated");
        vm.prank(auditors[2]);
        registry.postBond(1);

        assertTrue(game.drawPanel(id), "drawn");
        address[] memory panel = game.getDispute(id).panel;
        for (uint256 i; i < 3; ++i) {
            assertEq(panel[i], preview[i], "the panel fixed by the snapshot");
        }
        _assertPanel(id, seed);
    }

    /// Fuzzed: any subset of new bonds, exits and a forfeit-and-re-bond, with the draw by drawPanel or by the first
    /// commitVote, gives the reference panel.
    function testFuzz_actionsAfterChallenge_cannotChangePanel(uint8 bondMask, uint8 exitMask, bool rebond, bool leave, bool byCommit)
        public
    {
        (uint256 id, bytes32 seed) = _disputeWithPublicSeed();
        for (uint256 i; i < SYBILS; ++i) {
            if (bondMask & (1 << i) != 0) _bondSybil(i);
        }
        for (uint256 i; i < auditors.length; ++i) {
            if (exitMask & (1 << i) == 0) continue;
            vm.prank(auditors[i]);
            registry.requestExit();
        }
        if (leave) {
            vm.prank(OLD_EXITER);
            registry.leave();
        }
        if (rebond) {
            address a = auditors[(bondMask ^ exitMask) % auditors.length];
            IAuditorRegistry.Auditor memory x = registry.auditorOf(a);
            if (x.status == IAuditorRegistry.AuditorStatus.Active) {
                vm.prank(address(game));
                registry.forfeit(a, x.bond - MIN_BOND + 1, address(this));
                vm.prank(a);
                registry.postBond(1);
            }
        }
        if (byCommit) {
            // the first commit draws; whoever commits must be on the panel, so pick a reference member
            address m = _referencePanel(seed, _expectedPool(), 3)[0];
            _commitVote(id, m, FAULT_VOTE);
        } else {
            assertTrue(game.drawPanel(id), "drawn");
        }
        _assertPanel(id, seed);
    }

    /// Bonds posted after the challenge but before the seed block (the seed still unknown) do not count either.
    function test_bondsBeforeSeedBlock_notDrawn() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(challenger, jobId, 2, 2);
        vm.warp(block.timestamp + 1);
        for (uint256 i; i < SYBILS; ++i) _bondSybil(i);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        VMB.roll(d.seedBlock + 1);
        assertTrue(game.drawPanel(id), "drawn");
        _assertPanel(id, keccak256(abi.encode(blockhash(d.seedBlock), id)));
    }

    /// The provider sees a commitChallenge in the mempool (it cannot tell the job or step, but it can tell that a
    /// challenge is coming) and bonds six sybils in that very block. The dispute's pool is the snapshot at the reveal
    /// (challengedAt), and a bond counts only activationDelaySeconds (1 hour) after it is posted, so sybils bonded
    /// between the commit and a prompt reveal (the bot reveals in the next block) are not drawn. A challenger that
    /// waited longer than the activation delay between commit and reveal would let them in, but only as bonds posted
    /// before the seed was fixed: they buy the same odds as older ones, nothing chosen after the seed.
    function test_sybilsBondedAfterChallengeCommit_notInPool() public {
        uint256 jobId = _job(2, 2, 2);
        bytes32 salt = keccak256(abi.encode("challenge", challenger, jobId, uint256(2)));
        bytes32 c = game.challengeCommitment(jobId, 2, challenger, salt);
        vm.prank(challenger);
        game.commitChallenge(jobId, 0, c);
        for (uint256 i; i < SYBILS; ++i) _bondSybil(i); // same block as the commit
        VMB.roll(block.number + 1);
        vm.warp(block.timestamp + 12);
        uint256 id = _challengeCommitted(challenger, jobId, 2, 2);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        VMB.roll(d.seedBlock + 1);
        vm.warp(block.timestamp + 1);
        address[] memory pool = registry.eligibleAuditors(d.challengedAt);
        assertEq(pool.length, auditors.length, "pool at challengedAt: the fixture's auditors only");
        assertTrue(game.drawPanel(id), "drawn");
        _assertPanel(id, keccak256(abi.encode(blockhash(d.seedBlock), id)));
        // the slow reveal, for contrast: an activation delay after the bonds, the sybils are eligible
        assertTrue(registry.isEligible(_sybil(0), uint64(d.challengedAt + ACTIVATION_DELAY)), "counts an hour later");
    }

    // ---------------------------------------------------------------- forfeitability and the horizon

    /// A drawn member that requests exit during the dispute cannot leave before resolve: its silence is forfeited.
    function test_exitingDrawnMember_staysForfeitable() public {
        (uint256 id,) = _disputeWithPublicSeed();
        assertTrue(game.drawPanel(id), "drawn");
        address[] memory p = game.getDispute(id).panel;
        vm.prank(p[0]);
        registry.requestExit();
        _commitVote(id, p[1], FAULT_VOTE);
        _commitVote(id, p[2], FAULT_VOTE);
        vm.warp(block.timestamp + 1 days + 1);
        _reveal(id, p[1], FAULT_VOTE);
        _reveal(id, p[2], FAULT_VOTE);
        vm.warp(game.getDispute(id).revealDeadline + 1);
        vm.expectPartialRevert(IAuditorRegistry.AuditorRegistryExitDelayNotPassed.selector);
        vm.prank(p[0]);
        registry.leave();
        uint256 before = registry.auditorOf(p[0]).bond;
        game.resolve(id);
        // the silent seat made the Fault a split: appealed, and the silence is judged when the last round settles
        _appealRounds(id, FAULT_VOTE);
        assertEq(registry.auditorOf(p[0]).bond, before - defaultParams().panelForfeit, "silent exiting member forfeits");
    }

    /// A panel nobody drew while the snapshot was drawable is never drawn: resolve ends with no decision and no forfeit.
    function test_resolve_snapshotTooOld_noPanel() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(challenger, jobId, 2, 2);
        VMB.roll(block.number + 3);
        vm.warp(game.getDispute(id).challengedAt + EXIT_DELAY + 1);
        game.resolve(id);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.NoDecision, "no decision");
        assertEq(d.panel.length, 0, "no panel");
    }

    // ---------------------------------------------------------------- deployment

    /// The registry's activation delay must exceed the seed delay (2 blocks, taken as 24 s) and its exit delay must
    /// cover MAX_ROUNDS (3) times seed delay + commit + reveal windows, + the provider's appeal window (one commit
    /// window) + 1 day (3 * (24 + 86,400 + 86,400) + 86,400 + 86,400 s).
    function test_constructor_registryDelays_checked() public {
        IDisputeGameTypes.Params memory p = defaultParams();
        uint256 need = 3 * (24 + 2 days) + 1 days + 1 days;
        AuditorRegistry quick = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, 24, address(this));
        vm.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameActivationDelayTooShort.selector, address(quick), 24, 24)
        );
        new DisputeGame(market, quick, IStepVerifier(address(verifier)), bytes32(0), token, p);
        AuditorRegistry shortExit = new AuditorRegistry(token, MIN_BOND, uint64(need - 1), 25, address(this));
        vm.expectRevert(
            abi.encodeWithSelector(IDisputeGameTypes.DisputeGameExitDelayTooShort.selector, address(shortExit), need - 1, need)
        );
        new DisputeGame(market, shortExit, IStepVerifier(address(verifier)), bytes32(0), token, p);
        // the boundaries are accepted
        AuditorRegistry edge = new AuditorRegistry(token, MIN_BOND, uint64(need), 25, address(this));
        new DisputeGame(market, edge, IStepVerifier(address(verifier)), bytes32(0), token, p);
    }

    /// @dev What DisputeGame excludes from its panels here: the provider, the challenger and the buyer.
    function _parties() internal view returns (address[] memory ex) {
        ex = new address[](3);
        ex[0] = provider;
        ex[1] = challenger;
        ex[2] = buyer;
    }
}
