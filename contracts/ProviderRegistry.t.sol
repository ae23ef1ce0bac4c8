// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {Receipts} from "./libraries/Receipts.sol";

contract ProviderRegistryTest is TestBase, AuditorKeys {
    address internal constant PROVIDER = address(0xB2);
    uint64 internal constant MAX_VALIDITY = 30 days;

    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;

    function setUp() public {
        vm.warp(1_700_000_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, 14 days, address(this));
        providers = new ProviderRegistry(auditors, 2, MAX_VALIDITY);
        _bondAuditors(token, auditors, 3);
    }

    function _expiry() internal view returns (uint64) {
        return uint64(block.timestamp + 7 days);
    }

    /// Every tier with every band of its range and any validity up to the maximum is recorded as signed.
    function testFuzz_record_anyValidTierBand_recordsIt(uint8 tier, uint8 band, uint64 validity) public {
        tier = uint8(bound(tier, 1, 4));
        (uint8 lo, uint8 hi) = providers.bandRange(tier);
        band = uint8(bound(band, lo, hi));
        validity = uint64(bound(validity, 1, MAX_VALIDITY));
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, tier, band, uint64(block.timestamp) + validity);
        providers.record(att, _sigs(providers.digestOf(att), 2));
        IProviderRegistry.Attestation memory a = providers.attestationOf(PROVIDER);
        assertEq(a.tier, tier, "tier");
        assertEq(a.band, band, "band");
        assertEq(a.expiresAt, att.expiresAt, "expiry");
        assertEq(a.evidenceHash, att.evidenceHash, "evidence");
        assertEq(a.recordedAt, block.timestamp, "recordedAt");
        assertEq(providers.effectiveTier(PROVIDER), tier, "effective tier");
        vm.warp(att.expiresAt);
        assertEq(providers.effectiveTier(PROVIDER), 4, "expired record counts as tier 4");
    }

    function test_effectiveTier_unrecorded_isFour() public view {
        assertEq(providers.effectiveTier(address(0xDEAD)), 4, "no record");
    }

    function test_record_threeOfThree_recordsIt() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 100, _expiry());
        providers.record(att, _sigs(providers.digestOf(att), 3));
        assertEq(providers.effectiveTier(PROVIDER), 1, "tier 1");
    }

    function test_record_fresherRecord_replacesOlder() public {
        _attest(providers, PROVIDER, 1, _expiry(), 2);
        _attest(providers, PROVIDER, 3, _expiry() + 1, 2);
        assertEq(providers.effectiveTier(PROVIDER), 3, "downgraded by the fresher record");
    }

    function test_record_sameMessageTwice_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 2, 80, _expiry());
        bytes[] memory sigs = _sigs(providers.digestOf(att), 2);
        providers.record(att, sigs);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryStale.selector, PROVIDER, att.expiresAt, att.expiresAt)
        );
        providers.record(att, sigs);
    }

    function test_record_olderStatementAfterNewer_reverts() public {
        Receipts.AttestationVerified memory old = _attestation(PROVIDER, 1, 95, _expiry());
        bytes[] memory oldSigs = _sigs(providers.digestOf(old), 2);
        _attest(providers, PROVIDER, 3, _expiry() + 1 days, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryStale.selector, PROVIDER, old.expiresAt, _expiry() + 1 days)
        );
        providers.record(old, oldSigs);
    }

    function test_record_belowQuorum_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        bytes[] memory sigs = _sigs(providers.digestOf(att), 1);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryBelowQuorum.selector, 1, 2));
        providers.record(att, sigs);
    }

    function test_record_sameAuditorTwice_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        bytes32 digest = providers.digestOf(att);
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = _sig(_auditorKeys[0], digest);
        sigs[1] = _sig(_auditorKeys[0], digest);
        address a = vm.addr(_auditorKeys[0]);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnsortedSigners.selector, 1, a, a));
        providers.record(att, sigs);
    }

    function test_record_descendingSigners_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        bytes32 digest = providers.digestOf(att);
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = _sig(_auditorKeys[1], digest);
        sigs[1] = _sig(_auditorKeys[0], digest);
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryUnsortedSigners.selector,
                1,
                vm.addr(_auditorKeys[1]),
                vm.addr(_auditorKeys[0])
            )
        );
        providers.record(att, sigs);
    }

    function test_record_nonAuditorSigner_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        uint256 strangerKey = 0x5757;
        bytes[] memory sigs = new bytes[](1);
        ProviderRegistry one = new ProviderRegistry(auditors, 1, MAX_VALIDITY);
        sigs[0] = _sig(strangerKey, one.digestOf(att));
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNotAuditor.selector, 0, vm.addr(strangerKey)));
        one.record(att, sigs);
    }

    function test_record_exitedAuditor_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        bytes[] memory sigs = _sigs(providers.digestOf(att), 2);
        address a = vm.addr(_auditorKeys[1]);
        vm.prank(a);
        auditors.requestExit();
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNotAuditor.selector, 1, a));
        providers.record(att, sigs);
    }

    /// Signatures over one band do not authorize another: the signer recovered is not an auditor.
    function test_record_mismatchedFields_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        bytes[] memory sigs = _sigs(providers.digestOf(att), 2);
        att.band = 100;
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryNotAuditor.selector);
        providers.record(att, sigs);
    }

    /// A signature under another domain (the JobMarket's name) does not count either.
    function test_record_otherDomainSignature_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        ProviderRegistry other = new ProviderRegistry(auditors, 2, MAX_VALIDITY);
        bytes[] memory sigs = _sigs(other.digestOf(att), 2);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryNotAuditor.selector);
        providers.record(att, sigs);
    }

    function test_record_expired_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, uint64(block.timestamp));
        bytes[] memory sigs = _sigs(providers.digestOf(att), 2);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryExpired.selector, att.expiresAt, block.timestamp));
        providers.record(att, sigs);
    }

    function test_record_validityTooLong_reverts() public {
        Receipts.AttestationVerified memory att =
            _attestation(PROVIDER, 1, 95, uint64(block.timestamp) + MAX_VALIDITY + 1);
        bytes[] memory sigs = _sigs(providers.digestOf(att), 2);
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryValidityTooLong.selector, att.expiresAt, block.timestamp, MAX_VALIDITY
            )
        );
        providers.record(att, sigs);
    }

    function testFuzz_record_invalidTier_reverts(uint8 tier) public {
        vm.assume(tier == 0 || tier > 4);
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, tier, 50, _expiry());
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryInvalidTier.selector, tier));
        providers.record(att, new bytes[](0));
    }

    function testFuzz_record_bandOutsideTier_reverts(uint8 tier, uint8 band) public {
        tier = uint8(bound(tier, 1, 4));
        (uint8 lo, uint8 hi) = providers.bandRange(tier);
        vm.assume(band < lo || band > hi);
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, tier, band, _expiry());
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryBandOutOfRange.selector, tier, band, lo, hi));
        providers.record(att, new bytes[](0));
    }

    function test_record_zeroProvider_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(address(0), 1, 95, _expiry());
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroProvider.selector));
        providers.record(att, new bytes[](0));
    }

    function test_record_zeroEvidence_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        att.evidenceHash = bytes32(0);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroEvidence.selector));
        providers.record(att, new bytes[](0));
    }

    function test_record_malformedSignatures_revert() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 1, 95, _expiry());
        bytes[] memory sigs = _sigs(providers.digestOf(att), 2);
        sigs[0] = hex"1234";
        vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignatureLength.selector, 2));
        providers.record(att, sigs);
        // s above half the curve order (malleable form)
        sigs[0] = abi.encodePacked(bytes32(uint256(1)), bytes32(type(uint256).max), uint8(27));
        vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignatureS.selector, bytes32(type(uint256).max)));
        providers.record(att, sigs);
        // r = 0 recovers no address
        sigs[0] = abi.encodePacked(bytes32(0), bytes32(uint256(1)), uint8(27));
        vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignature.selector));
        providers.record(att, sigs);
    }

    function test_constructor_zeroQuorumOrValidity_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroQuorum.selector));
        new ProviderRegistry(auditors, 0, MAX_VALIDITY);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroValidity.selector));
        new ProviderRegistry(auditors, 1, 0);
    }

    function test_views_reportParameters() public view {
        assertEq(providers.auditors(), address(auditors), "auditors");
        assertEq(providers.quorum(), 2, "quorum");
        assertEq(providers.maxValiditySeconds(), MAX_VALIDITY, "validity");
        assertTrue(auditors.isActive(vm.addr(_auditorKeys[0])), "auditor active");
        assertTrue(uint8(auditors.auditorOf(vm.addr(_auditorKeys[2])).status) == uint8(IAuditorRegistry.AuditorStatus.Active), "status");
    }
}
