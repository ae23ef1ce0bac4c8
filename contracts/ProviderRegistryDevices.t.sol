// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {Receipts} from "./libraries/Receipts.sol";

/// @notice ProviderRegistry's device ledger: a device declared in a request is bound to one provider by a tier 1..3
/// record until that statement expires; a second provider presenting it is refused by name (at request, or at record
/// when both requested first); tier 4 binds nothing; an upheld dispute releases the devices of the false statement.
contract ProviderRegistryDevicesTest is TestBase, AuditorKeys {
    address internal constant P1 = address(0xB1);
    address internal constant P2 = address(0xB2);
    address internal constant CHALLENGER = address(0xC4);
    bytes32 internal constant GPU = keccak256("nvidia-ueid:622903794624785314125385224830541104713451457931");
    bytes32 internal constant CPU = keccak256("intel-ppid:0x01");

    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, 14 days, 1 hours, address(this));
        providers = new ProviderRegistry(auditors, 3, 2, 30 days, 2, 1 days, 1e18);
        auditors.wireAttestation(address(providers));
        _bondAuditors(token, auditors, 8);
    }

    function _devices(bytes32 a) internal pure returns (bytes32[] memory ids) {
        ids = new bytes32[](1);
        ids[0] = a;
    }

    function _requestWith(address provider, bytes32[] memory ids) internal returns (uint256 id) {
        _fundFee(providers, provider);
        vm.prank(provider);
        id = providers.requestAttestation(_evidence(provider), _challengeBlock(), ids, provider); // tiers 1-2 need a key
    }

    function _past(uint256) internal {
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
    }

    function _record(address provider, uint256 id, uint8 tier, uint64 expiresAt) internal {
        (uint8 lo,) = providers.bandRange(tier);
        Receipts.AttestationVerified memory att = _attestation(provider, id, tier, lo, expiresAt);
        providers.record(att, _committeeSigs(providers, id, providers.digestOf(att), 2));
    }

    /// A request may declare the session key its evidence binds; the registry keeps it with the request, so the record's
    /// key is sessionKeyOf(attestationOf(provider).requestId), and the devices are bound as with the 3-argument request.
    function test_requestWithSessionKey_keptWithTheRecord() public {
        address key = address(0x5E55);
        _fundFee(providers, P1);
        vm.prank(P1);
        uint256 id = providers.requestAttestation(_evidence(P1), _challengeBlock(), _devices(GPU), key);
        _past(id);
        _record(P1, id, 1, uint64(block.timestamp + 7 days));
        assertEq(providers.sessionKeyOf(providers.attestationOf(P1).requestId), key, "the record's session key");
        (address holder,) = providers.deviceBindingOf(GPU);
        assertEq(holder, P1, "devices bound as before");
        // a request without a key declares none
        _fundFee(providers, P2);
        vm.prank(P2);
        uint256 id2 = providers.requestAttestation(_evidence(P2), _challengeBlock(), _devices(CPU));
        assertEq(providers.sessionKeyOf(id2), address(0), "none declared");
    }

    function test_requestWithSessionKey_zero_reverts() public {
        _fundFee(providers, P1);
        uint64 challengeBlock = _challengeBlock();
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroSessionKey.selector));
        vm.prank(P1);
        providers.requestAttestation(_evidence(P1), challengeBlock, _devices(GPU), address(0));
    }

    function test_secondProvider_sameDevice_refused() public {
        uint256 id = _requestWith(P1, _devices(GPU));
        _past(id);
        uint64 exp = uint64(block.timestamp + 7 days);
        _record(P1, id, 1, exp);
        (address holder, uint64 until) = providers.deviceBindingOf(GPU);
        assertEq(holder, P1, "bound to P1");
        assertEq(until, exp, "until the statement's expiry");
        assertEq(providers.devicesOf(id)[0], GPU, "declared");
        _fundFee(providers, P2);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDeviceBound.selector, GPU, P1, exp));
        vm.prank(P2);
        providers.requestAttestation(_evidence(P2), _challengeBlock(), _devices(GPU));
        // once the statement expired, the device is free for another provider
        vm.warp(exp);
        uint256 id2 = _requestWith(P2, _devices(GPU));
        _past(id2);
        _record(P2, id2, 2, uint64(block.timestamp + 1 days));
        (holder,) = providers.deviceBindingOf(GPU);
        assertEq(holder, P2, "now P2's");
    }

    /// Both providers request with the same device before either is recorded: the second record is refused.
    function test_raceBetweenRequests_secondRecordRefused() public {
        uint256 a = _requestWith(P1, _devices(GPU));
        uint256 b = _requestWith(P2, _devices(GPU));
        _past(a);
        uint64 exp = uint64(block.timestamp + 7 days);
        _record(P1, a, 1, exp);
        (uint8 lo,) = providers.bandRange(1);
        Receipts.AttestationVerified memory att = _attestation(P2, b, 1, lo, exp);
        bytes[] memory sigs = _committeeSigs(providers, b, providers.digestOf(att), 2);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryDeviceBound.selector, GPU, P1, exp));
        providers.record(att, sigs);
    }

    /// The same provider re-attests its own device; tier 4 binds nothing.
    function test_sameProvider_reattests_andTierFourBindsNothing() public {
        uint256 a = _requestWith(P1, _devices(GPU));
        _past(a);
        _record(P1, a, 1, uint64(block.timestamp + 2 days));
        vm.warp(block.timestamp + 1 days + 1);
        uint256 b = _requestWith(P1, _devices(GPU));
        _past(b);
        _record(P1, b, 1, uint64(block.timestamp + 3 days));
        uint256 c = _requestWith(P2, _devices(CPU));
        _past(c);
        _record(P2, c, 4, uint64(block.timestamp + 1 days));
        (address holder,) = providers.deviceBindingOf(CPU);
        assertEq(holder, address(0), "tier 4 binds nothing");
    }

    /// A false statement's devices are released by the upheld dispute.
    function test_upheldDispute_releasesDevices() public {
        uint256 id = _requestWith(P1, _devices(GPU));
        _past(id);
        _record(P1, id, 1, uint64(block.timestamp + 7 days));
        token.mint(CHALLENGER, AUDITOR_BOND);
        vm.startPrank(CHALLENGER);
        token.approve(address(providers), AUDITOR_BOND);
        uint256 d = providers.disputeStatement(P1, _bundle(P1));
        vm.stopPrank();
        _past(d);
        address[] memory panel = providers.drawDisputePanel(d);
        vm.prank(panel[0]);
        providers.voteDispute(d, true);
        vm.prank(panel[1]);
        providers.voteDispute(d, true);
        (address holder,) = providers.deviceBindingOf(GPU);
        assertEq(holder, address(0), "released");
        _requestWith(P2, _devices(GPU)); // no DeviceBound
    }

    function test_request_unsortedOrDuplicateDevices_reverts() public {
        bytes32[] memory ids = new bytes32[](2);
        (ids[0], ids[1]) = GPU < CPU ? (CPU, GPU) : (GPU, CPU);
        _fundFee(providers, P1);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnsortedDevices.selector, 1, ids[0], ids[1])
        );
        vm.prank(P1);
        providers.requestAttestation(_evidence(P1), _challengeBlock(), ids);
        ids[1] = ids[0];
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnsortedDevices.selector, 1, ids[0], ids[0])
        );
        vm.prank(P1);
        providers.requestAttestation(_evidence(P1), _challengeBlock(), ids);
    }

    function test_request_tooManyDevices_reverts() public {
        bytes32[] memory ids = new bytes32[](65);
        for (uint256 i; i < 65; ++i) {
            ids[i] = bytes32(i + 1);
        }
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryTooManyDevices.selector, 65, 64));
        vm.prank(P1);
        providers.requestAttestation(_evidence(P1), _challengeBlock(), ids);
    }
}
