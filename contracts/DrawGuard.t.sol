// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {DisputeBase} from "./test/DisputeFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {HungryRegistry} from "./mocks/HungryRegistry.sol";
import {StakeVault} from "./StakeVault.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {JobMarket} from "./JobMarket.sol";
import {DisputeGame} from "./DisputeGame.sol";
import {Groth16Verifier} from "./verifiers/StepVerifier.sol";
import {IDisputeGameTypes, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";

/// @notice No caller can make a panel draw fail by the gas it passes, so that a dispute ends without a panel and its
/// silent members escape their forfeits. The registry here spends DRAW_COST gas per draw (a draw that looped over
/// ~2,600 members would): under the 63/64 rule a caller of resolve that passes between ~64x the gas left to do after
/// the draw and the draw's cost starves the draw alone. DisputeGame lets only the registry's two named "no panel"
/// reasons through (DrawGuard), so every such call reverts.
contract DrawGuardTest is TestBase, DisputeBase {
    uint256 internal constant DRAW_COST = 8_000_000;

    /// @dev What one resolve call with a given gas allowance did (reverted back by `probe`).
    error Probe(bool succeeded, bool panelDrawn, uint8 outcome);

    constructor() {
        token = new TestToken("Test", "TST");
        vault = new StakeVault(token, UNBONDING, address(this));
        registry = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        HungryRegistry hungry = new HungryRegistry(registry, DRAW_COST);
        market = new JobMarket(vault, address(this));
        verifier = new Groth16Verifier();
        game = new DisputeGame(
            market, IAuditorRegistry(address(hungry)), IStepVerifier(address(verifier)), bytes32(0), token, defaultParams()
        );
        vault.wire(address(market), address(0));
        registry.wire(address(hungry)); // the double forwards the game's forfeits
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
        vm.warp(block.timestamp + ACTIVATION_DELAY);
    }

    /// A dispute nobody drew a panel for, past its reveal deadline: resolve draws the panel; a drawn round with no
    /// counted vote is appealed like a tie while rounds are left, so the dispute runs through every round (each drawn
    /// at resolve) and its silent members forfeit at the end. Swept over gas allowances in every round, every call
    /// either reverts or draws that round's panel; none ends a round (or the dispute) without one.
    function test_resolve_starvedDraw_reverts_neverSkipsThePanel() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(challenger, jobId, 2, 2);
        uint256 rounds = game.MAX_ROUNDS();
        for (uint256 round = 1; round <= rounds; ++round) {
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            assertEq(d.round, round, "the silent round before was appealed");
            VMB.roll(d.seedBlock + 1);
            vm.warp(d.revealDeadline + 1);
            uint256 drawnAt;
            uint256 starvedReverts;
            for (uint256 g = 1_000_000; g <= 12_000_000; g += 250_000) {
                (bool ok, bool drawn,) = _probe(id, round, g);
                assertTrue(!ok || drawn, "resolve ended a round without drawing its panel");
                if (ok && drawnAt == 0) drawnAt = g;
                if (!ok && g > DRAW_COST / 2) ++starvedReverts;
            }
            assertTrue(drawnAt != 0, "enough gas draws and resolves");
            assertTrue(starvedReverts != 0, "the sweep reached the starvation window");
            game.resolve(id);
            assertTrue(game.roundPanelOf(id, round).length != 0, "round drawn");
        }
        IDisputeGameTypes.DisputeView memory last = game.getDispute(id);
        assertTrue(last.status == IDisputeGameTypes.Status.Resolved, "the last silent round ends the dispute");
        assertTrue(last.outcome == IDisputeGameTypes.Outcome.NoDecision, "no decision");
        // every seat of every round was silent: each member forfeits its round's forfeit (panelForfeit doubled per
        // round) for each round it sat in
        for (uint256 i; i < auditors.length; ++i) {
            uint256 lost;
            for (uint256 round = 1; round <= rounds; ++round) {
                address[] memory panel = game.roundPanelOf(id, round);
                for (uint256 m; m < panel.length; ++m) {
                    if (panel[m] == auditors[i]) lost += uint256(defaultParams().panelForfeit) << (round - 1);
                }
            }
            assertTrue(lost != 0, "every auditor sat in a round");
            assertEq(registry.auditorOf(auditors[i]).bond, AUDITOR_BOND - lost, "silent forfeits");
        }
    }

    /// The starved call fails with the named error, not silently.
    function test_resolve_starvedDraw_namedError() public {
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(challenger, jobId, 2, 2);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        VMB.roll(d.seedBlock + 1);
        vm.warp(d.revealDeadline + 1);
        vm.expectPartialRevert(IAuditorRegistry.AuditorRegistryDrawOutOfGas.selector);
        game.resolve{gas: 7_000_000}(id);
    }

    /// Too few eligible auditors is a reason to end without a panel, and still passes through the guard.
    function test_resolve_tooFewAuditors_noPanel() public {
        for (uint256 i; i < 3; ++i) {
            vm.prank(auditors[i]);
            registry.requestExit();
        }
        vm.warp(block.timestamp + 1);
        uint256 jobId = _job(2, 2, 2);
        uint256 id = _challenge(challenger, jobId, 2, 2);
        IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
        VMB.roll(d.seedBlock + 1);
        vm.warp(d.revealDeadline + 1);
        game.resolve(id);
        d = game.getDispute(id);
        assertTrue(d.outcome == IDisputeGameTypes.Outcome.NoDecision, "no decision");
        assertEq(d.panel.length, 0, "no panel");
    }

    /// @dev Calls resolve with `g` gas and reverts with what happened (whether round `round` has a panel now: kept as
    /// an earlier round's when the call appealed it), so every probe starts from the same state.
    function probe(uint256 id, uint256 round, uint256 g) external {
        bool ok;
        try game.resolve{gas: g}(id) {
            ok = true;
        } catch {}
        revert Probe(ok, game.roundPanelOf(id, round).length != 0, uint8(game.getDispute(id).outcome));
    }

    function _probe(uint256 id, uint256 round, uint256 g) internal returns (bool ok, bool drawn, uint8 outcome) {
        try this.probe(id, round, g) {
            revert AssertTrue("probe returned");
        } catch (bytes memory data) {
            if (bytes4(data) != Probe.selector) revert AssertTrue("probe failed");
            assembly ("memory-safe") {
                ok := mload(add(data, 36))
                drawn := mload(add(data, 68))
                outcome := mload(add(data, 100))
            }
        }
    }
}
