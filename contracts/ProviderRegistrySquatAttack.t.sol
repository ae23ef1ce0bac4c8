// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";

/// @notice The sham statement dispute: the provider's accomplice disputes its (false) statement first and never draws
/// the panel, hoping the undecided dispute refunds it in full and blocks every later dispute of the statement. Rules
/// under test: a dispute lapses as soon as its seed leaves blockhash range undrawn (or its deadline passes); a lapsed
/// dispute is settled undecided at once by anyone (settleDispute, or the next disputeStatement) and burns half its
/// challenger's bond; only a live or decided dispute blocks another; anyone may draw the sham's panel while it can be
/// drawn, and then it decides like any other.
contract ProviderRegistrySquatAttackTest is TestBase, AuditorKeys {
    address internal constant PROVIDER = address(0xB2);
    address internal constant CHALLENGER = address(0xC4);
    address internal constant ACCOMPLICE = address(0xACC);
    address internal constant BURN = 0x000000000000000000000000000000000000dEaD;
    uint256 internal constant FEE = 1e18;

    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, 14 days, 1 hours, address(this));
        providers = new ProviderRegistry(auditors, 3, 2, 30 days, 2, 1 days, FEE);
        auditors.wireAttestation(address(providers));
        _bondAuditors(token, auditors, 8);
        address[2] memory who = [CHALLENGER, ACCOMPLICE];
        for (uint256 i; i < 2; ++i) {
            token.mint(who[i], 10 * AUDITOR_BOND);
            vm.prank(who[i]);
            token.approve(address(providers), type(uint256).max);
        }
    }

    function _voteFalse(uint256 id, uint256 votes) internal {
        address[] memory panel = providers.drawDisputePanel(id);
        for (uint256 i; i < votes; ++i) {
            vm.prank(panel[i]);
            providers.voteDispute(id, true);
        }
    }

    /// The accomplice's dispute lapses (seed gone undrawn) long before its deadline; the honest challenger disputes at
    /// once, which settles the sham (half its bond burned), and its panel revokes the statement: the signers forfeit.
    function test_shamDisputeLapses_honestDisputeAtOnce_signersForfeit() public {
        uint256 requestId = _attest(providers, PROVIDER, 1, uint64(block.timestamp + 7 days), 2);
        address[] memory signers = providers.signersOf(PROVIDER);
        vm.prank(ACCOMPLICE);
        uint256 sham = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        uint256 burned = token.balanceOf(BURN);
        vm.roll(providers.disputeOf(sham).seedBlock + 257);
        vm.warp(block.timestamp + 1 hours);
        assertTrue(block.timestamp < providers.disputeOf(sham).deadline, "before the sham's deadline");

        vm.prank(CHALLENGER);
        uint256 id = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        assertEq(providers.disputeOf(sham).outcome, 3, "sham settled undecided");
        assertEq(providers.creditOf(ACCOMPLICE), AUDITOR_BOND / 2, "the accomplice gets half its bond back");
        assertEq(token.balanceOf(BURN), burned + AUDITOR_BOND / 2, "the other half is burned");
        assertEq(providers.disputeOfRequest(requestId), id, "the statement's latest dispute");

        vm.roll(block.number + 3);
        vm.warp(block.timestamp + 1);
        _voteFalse(id, 2);
        assertEq(providers.disputeOf(id).outcome, 1, "upheld");
        assertEq(providers.effectiveTier(PROVIDER), 4, "the false tier is revoked");
        for (uint256 j; j < signers.length; ++j) {
            assertEq(auditors.auditorOf(signers[j]).bond, 0, "its signers forfeit");
        }
        assertEq(token.balanceOf(address(providers)), AUDITOR_BOND + AUDITOR_BOND / 2, "credits held: nothing lost");
    }

    /// settleDispute settles a lapsed sham at once (no need to wait for its deadline), with the same half burn.
    function test_shamDisputeLapses_settledAtOnce_burnsHalf() public {
        _attest(providers, PROVIDER, 1, uint64(block.timestamp + 7 days), 2);
        vm.prank(ACCOMPLICE);
        uint256 sham = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        uint64 seedBlock = providers.disputeOf(sham).seedBlock;
        vm.roll(seedBlock + 256);
        uint64 deadline = providers.disputeOf(sham).deadline;
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeOpen.selector, sham, deadline, block.timestamp)
        );
        providers.settleDispute(sham); // the seed hash still exists: anyone can still draw
        vm.roll(seedBlock + 257);
        providers.settleDispute(sham);
        assertEq(providers.disputeOf(sham).outcome, 3, "undecided");
        assertEq(providers.creditOf(ACCOMPLICE), AUDITOR_BOND / 2, "half back");
        assertEq(token.balanceOf(address(providers)), AUDITOR_BOND / 2, "holds exactly the credit");
    }

    /// Anyone may draw the sham's panel while its seed hash exists; the sham then decides like an honest dispute.
    function test_shamDispute_panelDrawnByAnyone_decides() public {
        _attest(providers, PROVIDER, 1, uint64(block.timestamp + 7 days), 2);
        address[] memory signers = providers.signersOf(PROVIDER);
        vm.prank(ACCOMPLICE);
        uint256 sham = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        vm.roll(block.number + 3);
        vm.warp(block.timestamp + 1);
        vm.prank(CHALLENGER);
        providers.drawDisputePanel(sham);
        _voteFalse(sham, 2);
        assertEq(providers.disputeOf(sham).outcome, 1, "upheld");
        assertEq(providers.effectiveTier(PROVIDER), 4, "revoked");
        assertEq(auditors.auditorOf(signers[0]).bond, 0, "signers forfeit");
    }

    /// A drawn panel that stays split to the deadline (its third member silent): undecided, the silent member forfeits
    /// (the challenger's bond comes back whole), and the statement is disputable again.
    function test_undecidedAtDeadline_statementDisputableAgain() public {
        uint256 requestId = _attest(providers, PROVIDER, 1, uint64(block.timestamp + 7 days), 2);
        vm.prank(ACCOMPLICE);
        uint256 first = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        vm.roll(block.number + 3);
        vm.warp(block.timestamp + 1);
        address[] memory panel = providers.drawDisputePanel(first);
        vm.prank(panel[0]);
        providers.voteDispute(first, true);
        vm.prank(panel[1]);
        providers.voteDispute(first, false);
        vm.warp(providers.disputeOf(first).deadline + 1);
        vm.prank(CHALLENGER);
        uint256 second = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        assertEq(providers.disputeOf(first).outcome, 3, "first settled undecided");
        assertEq(providers.creditOf(ACCOMPLICE), AUDITOR_BOND, "bond back whole: the quorum failed on a silent seat");
        assertEq(auditors.auditorOf(panel[2]).bond, AUDITOR_BOND - AUDITOR_BOND / 2, "the silent member forfeits");
        assertEq(providers.disputeOfRequest(requestId), second, "latest dispute");
    }

    /// A live dispute (seed hash still there, before its deadline) and a decided one block another.
    function test_liveOrRejectedDispute_blocksAnother() public {
        uint256 requestId = _attest(providers, PROVIDER, 1, uint64(block.timestamp + 7 days), 2);
        vm.prank(ACCOMPLICE);
        uint256 first = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        vm.roll(providers.disputeOf(first).seedBlock + 256);
        vm.warp(block.timestamp + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryAlreadyDisputed.selector, requestId, first)
        );
        vm.prank(CHALLENGER);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        address[] memory panel = providers.drawDisputePanel(first);
        vm.prank(panel[0]);
        providers.voteDispute(first, false);
        vm.prank(panel[1]);
        providers.voteDispute(first, false);
        assertEq(providers.disputeOf(first).outcome, 2, "rejected");
        vm.warp(providers.disputeOf(first).deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryAlreadyDisputed.selector, requestId, first)
        );
        vm.prank(CHALLENGER);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
    }
}
