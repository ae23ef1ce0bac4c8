// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";

/// @notice Red team: a provider that withholds its evidence bundle and disputes its own statement burns half the bond of
/// every honest member drawn to judge it, at no cost to itself, as often as it likes.
/// A statement dispute is judged by re-verifying the bundle whose keccak256 is the request's evidenceHash
/// (attest/dispute.ts judgeStatement: `pouw auditor attest-dispute vote DISPUTE --bundle FILE`), but nothing on chain or
/// off chain makes the bundle available to the panel: only its hash is recorded, the committee's statements directory
/// holds statements and signatures, not the bundle, and the provider (or an accomplice; anyone may dispute) holds the
/// only copy it cares about. An honest member without the bytes cannot vote (voting "false" would forfeit the honest
/// signers' whole bonds; "true" would shield forged statements), so it stays silent, and a drawn panel with silent seats
/// settles undecided with each silent member forfeiting min(bond, dispute bond / 2), burned, and the challenger's bond
/// credited back whole. An undecided dispute never blocks the next, so the same statement is disputed again with a new
/// panel. Per round: the attacker gets its whole bond back (gas only); three honest auditors lose half a bond each.
/// Fix: make the evidence available with the dispute: `disputeStatement(provider, bundle)` checks
/// keccak256(bundle) == evidenceHash and emits the bytes (or `record` does), so every panel member can judge; or settle a
/// dispute whose challenger supplied no bundle by burning the challenger's half, never the silent members'.
contract RedTeamWithheldBundleTest is TestBase, AuditorKeys {
    address internal constant PROVIDER = address(0xB2);
    uint64 internal constant WINDOW = 1 days;
    uint16 internal constant SEED_DELAY = 2;

    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, 14 days, 1 hours, address(this));
        providers = new ProviderRegistry(auditors, 3, 2, 30 days, SEED_DELAY, WINDOW, 1e18);
        auditors.wireAttestation(address(providers));
        _bondAuditors(token, auditors, 12);
        token.mint(PROVIDER, 10 * AUDITOR_BOND);
        vm.prank(PROVIDER);
        token.approve(address(providers), type(uint256).max);
    }

    /// @dev The provider disputes its own statement (the bundle stays with it), draws the panel, nobody can vote, and
    /// after the window the dispute is settled. Returns the panel.
    function _round() internal returns (address[] memory panel) {
        vm.prank(PROVIDER);
        uint256 id = providers.disputeStatement(PROVIDER);
        vm.roll(block.number + SEED_DELAY + 1);
        vm.warp(block.timestamp + 1);
        panel = providers.drawDisputePanel(id);
        vm.warp(providers.disputeOf(id).deadline + 1);
        providers.settleDispute(id);
        vm.prank(PROVIDER);
        providers.claimCredit();
    }

    function test_withheldBundle_selfDispute_burnsHonestPanels_forFree() public {
        _attest(providers, PROVIDER, 2, uint64(block.timestamp + 30 days), 2);
        uint256 before = token.balanceOf(PROVIDER);
        for (uint256 r; r < 2; ++r) {
            address[] memory panel = _round();
            for (uint256 i; i < panel.length; ++i) {
                assertTrue(auditors.auditorOf(panel[i]).bond < AUDITOR_BOND, "every drawn member lost bond");
            }
        }
        uint256 total;
        for (uint256 i; i < _auditorKeys.length; ++i) {
            total += AUDITOR_BOND - auditors.auditorOf(vm.addr(_auditorKeys[i])).bond;
        }
        assertEq(token.balanceOf(PROVIDER), before, "the attacker's bond came back whole, twice");
        assertEq(providers.effectiveTier(PROVIDER), 2, "and its tier stands");
        assertTrue(total >= 5 * (AUDITOR_BOND / 2), "two rounds burned at least five half-bonds of honest auditors");
    }
}
