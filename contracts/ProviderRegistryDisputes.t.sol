// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IFixedRoles} from "./interfaces/IFixedRoles.sol";

/// @notice ProviderRegistry statement disputes: a recorded statement is challenged, a fresh panel (signers, provider
/// and challenger excluded) votes, a false statement is revoked and its signers forfeit their whole bonds (half to the
/// challenger, half burned), a true one burns the challenger's bond, an undecided one burns half of it; every revert path;
/// the attacker's side (the provider's own sybil signers, the provider disputing its own forged statement).
contract ProviderRegistryDisputesTest is TestBase, AuditorKeys {
    address internal constant PROVIDER = address(0xB2);
    address internal constant CHALLENGER = address(0xC4);
    uint64 internal constant MAX_VALIDITY = 30 days;
    uint64 internal constant EXIT_DELAY = 14 days;
    uint64 internal constant ACTIVATION_DELAY = 1 hours;
    uint16 internal constant SEED_DELAY = 2;
    uint64 internal constant WINDOW = 1 days;
    uint256 internal constant FEE = 1e18;
    address internal constant BURN = 0x000000000000000000000000000000000000dEaD;

    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        providers = new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        auditors.wireAttestation(address(providers));
        // 8 auditors: a committee of 3 (2 sign), then a panel of 3 from the 6 that did not sign.
        _bondAuditors(token, auditors, 8);
        token.mint(CHALLENGER, 10 * AUDITOR_BOND);
        vm.prank(CHALLENGER);
        token.approve(address(providers), type(uint256).max);
    }

    // ---------------------------------------------------------------- helpers

    /// @dev PROVIDER's statement of `tier` signed by 2 of its committee; returns the request and the signers.
    function _recorded(uint8 tier) internal returns (uint256 requestId, address[] memory signers) {
        requestId = _attest(providers, PROVIDER, tier, uint64(block.timestamp + 7 days), 2);
        signers = providers.signersOf(PROVIDER);
    }

    /// @dev CHALLENGER disputes PROVIDER's statement; the chain moves past the panel's seed block.
    function _dispute() internal returns (uint256 id) {
        vm.prank(CHALLENGER);
        id = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        vm.roll(block.number + SEED_DELAY + 1);
        vm.warp(block.timestamp + 1);
    }

    function _vote(uint256 id, address voter, bool statementFalse) internal {
        vm.prank(voter);
        providers.voteDispute(id, statementFalse);
    }

    // ---------------------------------------------------------------- outcomes

    /// A false statement: two panel votes revoke it and every signer forfeits its whole bond, half to the challenger
    /// (AuditorRegistry credit), half burned; the challenger's own bond is credited back here.
    function test_dispute_falseStatement_revokesAndForfeitsSigners() public {
        (uint256 requestId, address[] memory signers) = _recorded(1);
        assertEq(providers.effectiveTier(PROVIDER), 1, "tier 1 before");
        uint256 before = token.balanceOf(CHALLENGER);
        uint256 id = _dispute();
        assertEq(token.balanceOf(CHALLENGER), before - AUDITOR_BOND, "bond locked");
        address[] memory panel = providers.drawDisputePanel(id);
        assertEq(panel.length, 3, "panel size");
        for (uint256 i; i < panel.length; ++i) {
            assertTrue(panel[i] != PROVIDER && panel[i] != CHALLENGER, "parties excluded");
            for (uint256 j; j < signers.length; ++j) {
                assertTrue(panel[i] != signers[j], "signers never judge their own statement");
            }
        }
        _vote(id, panel[0], true);
        assertEq(providers.disputeOf(id).outcome, 0, "one vote decides nothing");
        _vote(id, panel[1], true);

        IProviderRegistry.Dispute memory d = providers.disputeOf(id);
        assertEq(d.outcome, 1, "upheld");
        assertEq(d.falseVotes, 2, "false votes");
        assertEq(d.requestId, requestId, "statement");
        assertEq(providers.effectiveTier(PROVIDER), 4, "revoked");
        assertEq(providers.attestationOf(PROVIDER).expiresAt, block.timestamp, "expires now");
        for (uint256 j; j < signers.length; ++j) {
            IAuditorRegistry.Auditor memory a = auditors.auditorOf(signers[j]);
            assertEq(a.bond, 0, "signer forfeited its whole bond");
            assertTrue(!auditors.isActive(signers[j]), "signer deactivated");
        }
        assertEq(auditors.creditOf(CHALLENGER), AUDITOR_BOND, "half of two bonds to the challenger");
        assertEq(auditors.creditOf(BURN), AUDITOR_BOND, "half of two bonds burned");
        assertEq(providers.creditOf(CHALLENGER), AUDITOR_BOND, "challenger bond back");
        vm.prank(CHALLENGER);
        assertEq(providers.claimCredit(), AUDITOR_BOND, "claimed");
        assertEq(token.balanceOf(CHALLENGER), before, "bond returned");
        assertEq(token.balanceOf(address(providers)), 0, "registry holds nothing");
    }

    /// A true statement: two panel votes reject the dispute and burn the challenger's bond; the record stands.
    function test_dispute_trueStatement_burnsChallengerBond() public {
        (, address[] memory signers) = _recorded(2);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        uint256 burned = token.balanceOf(BURN);
        _vote(id, panel[2], false);
        _vote(id, panel[0], false);
        assertEq(providers.disputeOf(id).outcome, 2, "rejected");
        assertEq(token.balanceOf(BURN), burned + AUDITOR_BOND, "challenger bond burned");
        assertEq(providers.creditOf(CHALLENGER), 0, "no refund");
        assertEq(providers.effectiveTier(PROVIDER), 2, "record stands");
        for (uint256 j; j < signers.length; ++j) {
            assertEq(auditors.auditorOf(signers[j]).bond, AUDITOR_BOND, "signers keep their bonds");
        }
        assertEq(token.balanceOf(address(providers)), 0, "registry holds nothing");
    }

    /// Revoked since: the statement held when signed, but its platform TCB or certificate is revoked by public data
    /// published since. Anyone disputes it; a quorum of "revoked" votes ends the record now (effective tier 4), the
    /// signers keep their bonds (they signed what held) and the challenger gets its bond back whole.
    function test_dispute_revokedSince_downgradesWithoutForfeit() public {
        (uint256 requestId, address[] memory signers) = _recorded(1);
        uint256 before = token.balanceOf(CHALLENGER);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        vm.prank(panel[1]);
        providers.voteRevoked(id);
        assertEq(providers.disputeOf(id).outcome, 0, "one vote decides nothing");
        assertEq(providers.effectiveTier(PROVIDER), 1, "still tier 1");
        vm.prank(panel[2]);
        providers.voteRevoked(id);
        IProviderRegistry.Dispute memory d = providers.disputeOf(id);
        assertEq(d.outcome, providers.DISPUTE_REVOKED(), "revoked since");
        assertEq(d.requestId, requestId, "statement");
        assertEq(providers.effectiveTier(PROVIDER), 4, "downgraded");
        assertEq(providers.attestationOf(PROVIDER).expiresAt, block.timestamp, "expires now");
        for (uint256 j; j < signers.length; ++j) {
            assertEq(auditors.auditorOf(signers[j]).bond, AUDITOR_BOND, "signers keep their bonds");
        }
        vm.prank(CHALLENGER);
        assertEq(providers.claimCredit(), AUDITOR_BOND, "challenger bond back whole");
        assertEq(token.balanceOf(CHALLENGER), before, "the downgrade cost the challenger nothing");
        assertEq(token.balanceOf(address(providers)), 0, "registry holds nothing");
        // a settled dispute takes no more votes of any kind
        vm.prank(panel[0]);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeSettled.selector, id));
        providers.voteRevoked(id);
    }

    /// "Revoked since" votes never add to "false" ones: a colluding member voting "revoked" next to one honest "false"
    /// decides nothing, and the second honest "false" upholds the dispute with the signers' forfeits.
    function test_dispute_revokedVote_doesNotShieldAFalseStatement() public {
        (, address[] memory signers) = _recorded(1);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        _vote(id, panel[0], true);
        vm.prank(panel[1]);
        providers.voteRevoked(id);
        assertEq(providers.disputeOf(id).outcome, 0, "a split decides nothing");
        assertEq(providers.effectiveTier(PROVIDER), 1, "record stands while open");
        _vote(id, panel[2], true);
        assertEq(providers.disputeOf(id).outcome, 1, "upheld");
        for (uint256 j; j < signers.length; ++j) {
            assertEq(auditors.auditorOf(signers[j]).bond, 0, "signers forfeit");
        }
    }

    /// Only the panel votes "revoked", each member once.
    function test_voteRevoked_stranger_orTwice_reverts() public {
        _recorded(1);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        vm.prank(CHALLENGER);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNotPanelMember.selector, id, CHALLENGER));
        providers.voteRevoked(id);
        vm.prank(panel[0]);
        providers.voteRevoked(id);
        vm.prank(panel[0]);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryAlreadyVoted.selector, id, panel[0]));
        providers.voteDispute(id, true);
    }

    /// A split panel with a silent seat (one provider-owned vote, one honest vote, one member silent): nothing is decided;
    /// after the deadline anyone settles. The quorum failed on the silent seat, so the silent member forfeits half the
    /// dispute bond (burned) and the honest challenger's bond comes back whole; the voters keep their bonds.
    function test_dispute_undecided_silentSeatForfeits_challengerWhole() public {
        _recorded(1);
        uint256 id = _dispute();
        uint256 burned = auditors.creditOf(BURN);
        uint256 tokensBurned = token.balanceOf(BURN);
        address[] memory panel = providers.drawDisputePanel(id);
        _vote(id, panel[0], true);
        _vote(id, panel[1], false);
        uint64 deadline = providers.disputeOf(id).deadline;
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeOpen.selector, id, deadline, block.timestamp)
        );
        providers.settleDispute(id);
        vm.warp(deadline + 1);
        providers.settleDispute(id);
        assertEq(providers.disputeOf(id).outcome, 3, "undecided");
        assertEq(providers.creditOf(CHALLENGER), AUDITOR_BOND, "the whole bond credited back");
        assertEq(token.balanceOf(BURN), tokensBurned, "nothing of the challenger's burned");
        assertEq(auditors.auditorOf(panel[2]).bond, AUDITOR_BOND - AUDITOR_BOND / 2, "the silent member forfeits half the bond");
        assertEq(auditors.creditOf(BURN), burned + AUDITOR_BOND / 2, "its forfeit burned");
        assertEq(auditors.auditorOf(panel[0]).bond, AUDITOR_BOND, "a voter keeps its bond");
        assertEq(auditors.auditorOf(panel[1]).bond, AUDITOR_BOND, "a voter keeps its bond");
        assertEq(providers.effectiveTier(PROVIDER), 1, "record stands");
        assertEq(token.balanceOf(address(providers)), AUDITOR_BOND, "the registry holds the credited bond only");
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeSettled.selector, id));
        providers.settleDispute(id);
    }

    /// The first vote draws the panel when nobody did.
    function test_vote_drawsPanel() public {
        _recorded(1);
        uint256 id = _dispute();
        bool voted;
        for (uint256 i; i < _auditorKeys.length && !voted; ++i) {
            vm.prank(vm.addr(_auditorKeys[i]));
            try providers.voteDispute(id, true) {
                voted = true;
            } catch {} // not on the panel: the whole call, draw included, reverted
        }
        assertTrue(voted, "some auditor is on the panel");
        assertTrue(providers.disputeOf(id).drawn, "drawn by the vote");
        assertEq(providers.disputeOf(id).falseVotes, 1, "the vote counted");
        assertEq(providers.panelOf(id).length, 3, "stored");
    }

    // ---------------------------------------------------------------- the attacker's side

    /// The provider's own two sybil auditors land its committee and sign a tier-1 statement; an honest challenger
    /// disputes it; the sybils are excluded from the panel, which finds it false: both sybils lose their whole bond.
    function test_sybilQuorum_forgedTier_signersForfeit() public {
        (uint256 requestId, address[] memory signers) = _recorded(1);
        assertEq(signers.length, 2, "two (sybil) signers");
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        _vote(id, panel[1], true);
        _vote(id, panel[2], true);
        assertEq(providers.disputeOfRequest(requestId), id, "statement's dispute");
        uint256 lost;
        for (uint256 j; j < signers.length; ++j) {
            lost += AUDITOR_BOND - auditors.auditorOf(signers[j]).bond;
        }
        assertEq(lost, 2 * AUDITOR_BOND, "the forged tier cost both bonds");
    }

    /// The provider disputes its own forged statement to pre-empt an honest challenger and recover its sybils' bonds:
    /// half of them is burned whoever disputes, and the tier is gone.
    function test_selfDispute_stillBurnsHalf() public {
        _recorded(1);
        token.mint(PROVIDER, AUDITOR_BOND);
        vm.startPrank(PROVIDER);
        token.approve(address(providers), type(uint256).max);
        uint256 id = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        vm.stopPrank();
        vm.roll(block.number + SEED_DELAY + 1);
        vm.warp(block.timestamp + 1);
        address[] memory panel = providers.drawDisputePanel(id);
        _vote(id, panel[0], true);
        _vote(id, panel[1], true);
        assertEq(auditors.creditOf(PROVIDER), AUDITOR_BOND, "the provider gets back half of two bonds");
        assertEq(auditors.creditOf(BURN), AUDITOR_BOND, "the other half is burned");
        assertEq(providers.effectiveTier(PROVIDER), 4, "and the tier is revoked");
    }

    /// A signer cannot vote on its own statement's dispute, nor can the provider or the challenger (not drawn).
    function test_vote_signer_reverts() public {
        (, address[] memory signers) = _recorded(1);
        uint256 id = _dispute();
        providers.drawDisputePanel(id);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNotPanelMember.selector, id, signers[0])
        );
        _vote(id, signers[0], false);
    }

    // ---------------------------------------------------------------- reverts

    function test_dispute_noRecord_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryNothingToDispute.selector, PROVIDER, uint8(0), uint64(0), block.timestamp
            )
        );
        vm.prank(CHALLENGER);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
    }

    function test_dispute_tierFour_reverts() public {
        _recorded(4);
        uint64 exp = providers.attestationOf(PROVIDER).expiresAt;
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryNothingToDispute.selector, PROVIDER, uint8(4), exp, block.timestamp
            )
        );
        vm.prank(CHALLENGER);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
    }

    function test_dispute_expired_reverts() public {
        _recorded(1);
        uint64 exp = providers.attestationOf(PROVIDER).expiresAt;
        vm.warp(exp);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNothingToDispute.selector, PROVIDER, uint8(1), exp, exp)
        );
        vm.prank(CHALLENGER);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
    }

    function test_dispute_twice_reverts() public {
        (uint256 requestId,) = _recorded(1);
        uint256 id = _dispute();
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryAlreadyDisputed.selector, requestId, id)
        );
        vm.prank(CHALLENGER);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
    }

    function test_dispute_bondNotApproved_reverts() public {
        _recorded(1);
        address poor = address(0xF00);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryBondNotApproved.selector, poor, 0, AUDITOR_BOND)
        );
        vm.prank(poor);
        providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
    }

    function test_vote_unknownDispute_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnknownDispute.selector, 7));
        providers.voteDispute(7, true);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnknownDispute.selector, 7));
        providers.settleDispute(7);
    }

    function test_vote_afterSettled_reverts() public {
        _recorded(1);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        _vote(id, panel[0], false);
        _vote(id, panel[1], false);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeSettled.selector, id));
        _vote(id, panel[2], true);
    }

    function test_vote_afterDeadline_reverts() public {
        _recorded(1);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        uint64 deadline = providers.disputeOf(id).deadline;
        vm.warp(deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeClosed.selector, id, deadline, deadline + 1)
        );
        _vote(id, panel[0], true);
    }

    function test_vote_twice_reverts() public {
        _recorded(1);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        _vote(id, panel[0], true);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryAlreadyVoted.selector, id, panel[0]));
        _vote(id, panel[0], false);
    }

    /// A panel member that starts its exit (its bond no longer stands behind its vote) cannot vote.
    function test_vote_exitingMember_reverts() public {
        _recorded(1);
        uint256 id = _dispute();
        address[] memory panel = providers.drawDisputePanel(id);
        vm.prank(panel[0]);
        auditors.requestExit();
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryVoterNotAuditor.selector, id, panel[0])
        );
        _vote(id, panel[0], true);
    }

    function test_draw_beforeSeed_reverts() public {
        _recorded(1);
        vm.prank(CHALLENGER);
        uint256 id = providers.disputeStatement(PROVIDER, _bundle(PROVIDER));
        uint64 seedBlock = providers.disputeOf(id).seedBlock;
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryDisputeSeedNotReady.selector, id, seedBlock, block.number
            )
        );
        providers.drawDisputePanel(id);
    }

    /// Nobody drew the panel while the seed hash existed: no reseed; the dispute has lapsed and settles at once (half
    /// the bond back; ProviderRegistrySquatAttack.t.sol has the rest of the lapse rules).
    function test_draw_seedGone_reverts_thenLapses() public {
        _recorded(1);
        uint256 id = _dispute();
        uint64 seedBlock = providers.disputeOf(id).seedBlock;
        vm.roll(seedBlock + 257);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDisputeSeedExpired.selector, id, seedBlock)
        );
        providers.drawDisputePanel(id);
        providers.settleDispute(id);
        assertEq(providers.creditOf(CHALLENGER), AUDITOR_BOND / 2, "half refunded");
    }

    function test_claimCredit_nothing_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNothingToClaim.selector, CHALLENGER));
        vm.prank(CHALLENGER);
        providers.claimCredit();
    }

    // ---------------------------------------------------------------- AuditorRegistry wiring

    function test_wireAttestation_twice_reverts() public {
        bytes32 role = auditors.ATTESTATION_ROLE();
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, role, address(0x1234)));
        auditors.wireAttestation(address(0x1234));
    }

    function test_wireAttestation_zero_reverts() public {
        AuditorRegistry fresh = new AuditorRegistry(token, AUDITOR_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        bytes32 role = fresh.ATTESTATION_ROLE();
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesZeroHolder.selector, role));
        fresh.wireAttestation(address(0));
    }

    function test_wireAttestation_afterWiringEnded_reverts() public {
        AuditorRegistry fresh = new AuditorRegistry(token, AUDITOR_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        fresh.wire(address(0xD15));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        fresh.wireAttestation(address(providers));
    }

    /// Only the dispute contract and the wired ProviderRegistry forfeit; anyone else is refused by name.
    function test_forfeit_stranger_reverts() public {
        address a = vm.addr(_auditorKeys[0]);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector, address(this), auditors.DISPUTE_ROLE()
            )
        );
        auditors.forfeit(a, 1, address(this));
    }
}
