// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";

/// @notice Red team finding, now a regression: a provider that withholds its evidence bundle and disputes its own
/// statement must not burn the bonds of the panel drawn to judge it. A statement dispute is judged by re-verifying the
/// bundle whose keccak256 is the record's evidenceHash (attest/dispute.ts judgeStatement); when only the hash was on
/// chain, the disputer could keep the bytes, every honest member stayed silent, and the undecided settlement burned half
/// a bond per silent seat while crediting the challenger's bond back whole, as often as it liked. Fixed:
/// `disputeStatement(provider, bundle)` refuses bytes whose keccak256 is not the evidence hash
/// (ProviderRegistryWrongEvidence) and StatementEvidence carries them, so every drawn member has what it judges.
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

    /// A dispute without the statement's bundle (or with any other bytes) is refused: nothing is locked, no panel drawn.
    function test_withheldBundle_disputeRefused() public {
        uint256 req = _attest(providers, PROVIDER, 2, uint64(block.timestamp + 30 days), 2);
        uint256 before = token.balanceOf(PROVIDER);
        bytes[2] memory wrong = [bytes(""), abi.encode("evidence", address(0xBAD))];
        for (uint256 i; i < wrong.length; ++i) {
            vm.prank(PROVIDER);
            vm.expectRevert(
                abi.encodeWithSelector(
                    IProviderRegistry.ProviderRegistryWrongEvidence.selector, req, keccak256(wrong[i]), _evidence(PROVIDER)
                )
            );
            providers.disputeStatement(PROVIDER, wrong[i]);
        }
        assertEq(providers.disputeOfRequest(req), 0, "no dispute opened");
        assertEq(token.balanceOf(PROVIDER), before, "no bond taken");
    }

    /// The dispute that opens carries the bundle in StatementEvidence: the bytes the panel re-verifies are on chain, so no
    /// disputer can leave its panel silent by keeping them.
    function test_dispute_carriesTheBundleToThePanel() public {
        uint256 req = _attest(providers, PROVIDER, 2, uint64(block.timestamp + 30 days), 2);
        bytes memory bundle = _bundle(PROVIDER);
        uint256 bond = providers.disputeBond();
        vm.expectEmit(true, true, true, true, address(providers));
        emit IProviderRegistry.StatementDisputed(
            1,
            PROVIDER,
            req,
            PROVIDER,
            bond,
            uint64(block.timestamp),
            uint64(block.number + SEED_DELAY),
            uint64(block.timestamp + WINDOW)
        );
        vm.expectEmit(true, true, true, true, address(providers));
        emit IProviderRegistry.StatementEvidence(1, bundle);
        vm.prank(PROVIDER);
        uint256 id = providers.disputeStatement(PROVIDER, bundle);
        assertEq(id, 1, "the dispute opened");
        assertEq(keccak256(bundle), providers.attestationOf(PROVIDER).evidenceHash, "the bytes are the statement's evidence");
    }
}
