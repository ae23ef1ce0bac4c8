// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {TestToken} from "../mocks/TestToken.sol";
import {AuditorRegistry} from "../AuditorRegistry.sol";
import {ProviderRegistry} from "../ProviderRegistry.sol";
import {Receipts} from "../libraries/Receipts.sol";

/// @notice Bonded auditors with known private keys (for vm.sign), the attestation request flow of ProviderRegistry
/// (request, seed block, committee) and EIP-712 signing helpers for AttestationVerified (ProviderRegistry) and
/// AuditReceipt (JobMarket) messages.
abstract contract AuditorKeys {
    uint256 internal constant AUDITOR_BOND = 100e18;
    uint256[] internal _auditorKeys;
    mapping(address auditor => uint256 key) internal _keyOf;

    /// @dev Mints, approves and posts `AUDITOR_BOND` for `n` auditors with keys 0xA11CE + i (keeps `_auditorKeys`
    /// sorted by address, the order ProviderRegistry.record wants), then lets the activation delay pass so that
    /// they are eligible for committee snapshots taken from now on.
    function _bondAuditors(TestToken token, AuditorRegistry registry, uint256 n) internal {
        _bondKeys(token, registry, 0xA11CE + _auditorKeys.length, n);
        vm.warp(block.timestamp + registry.activationDelaySeconds());
    }

    /// @dev Bonds `n` auditors with keys `firstKey` + i (no time passes: they are not yet eligible).
    function _bondKeys(TestToken token, AuditorRegistry registry, uint256 firstKey, uint256 n) internal {
        for (uint256 i; i < n; ++i) {
            uint256 key = firstKey + i;
            address a = vm.addr(key);
            token.mint(a, AUDITOR_BOND);
            vm.startPrank(a);
            token.approve(address(registry), AUDITOR_BOND);
            registry.postBond(AUDITOR_BOND);
            vm.stopPrank();
            _auditorKeys.push(key);
            _keyOf[a] = key;
        }
        // Sort keys by address (insertion sort, n is small).
        for (uint256 i = 1; i < _auditorKeys.length; ++i) {
            uint256 k = _auditorKeys[i];
            uint256 j = i;
            while (j > 0 && vm.addr(_auditorKeys[j - 1]) > vm.addr(k)) {
                _auditorKeys[j] = _auditorKeys[j - 1];
                --j;
            }
            _auditorKeys[j] = k;
        }
    }

    function _sig(uint256 key, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, digest);
        return abi.encodePacked(r, s, v);
    }

    /// @dev Signatures of the first `k` auditors (ascending addresses) over `digest`.
    function _sigs(bytes32 digest, uint256 k) internal view returns (bytes[] memory out) {
        out = new bytes[](k);
        for (uint256 i; i < k; ++i) {
            out[i] = _sig(_auditorKeys[i], digest);
        }
    }

    /// @dev Mints one request fee to `provider` and approves it to `providers` (the fee is burned at request).
    function _fundFee(ProviderRegistry providers, address provider) internal {
        TestToken t = TestToken(providers.feeToken());
        uint256 fee = providers.requestFee();
        t.mint(provider, fee);
        uint256 allowed = t.allowance(provider, address(providers));
        if (allowed == type(uint256).max) return;
        vm.prank(provider);
        t.approve(address(providers), allowed + fee);
    }

    /// @dev The newest block whose hash a request can use as its challenge.
    function _challengeBlock() internal view returns (uint64) {
        return uint64(block.number - 1);
    }

    /// @dev The evidence hash the fixture's providers request attestation for.
    function _evidence(address provider) internal pure returns (bytes32) {
        return keccak256(_bundle(provider));
    }

    /// @dev The evidence bundle whose keccak256 is `_evidence(provider)` (what a statement dispute carries).
    function _bundle(address provider) internal pure returns (bytes memory) {
        return abi.encode("evidence", provider);
    }

    function _attestation(address provider, uint256 requestId, uint8 tier, uint8 band, uint64 expiresAt)
        internal
        view
        returns (Receipts.AttestationVerified memory)
    {
        return Receipts.AttestationVerified({
            provider: provider,
            requestId: requestId,
            tier: tier,
            band: band,
            evidenceHash: _evidence(provider),
            expiresAt: expiresAt,
            issuedAt: uint64(block.timestamp)
        });
    }

    /// @dev `provider` requests attestation of `_evidence(provider)`, declaring its own address as the session key (so
    /// a tier-1 or tier-2 record is allowed and its jobs take commits from the provider, as fixtures commit); then the
    /// chain moves past the seed block and one second past the request (the snapshot is drawable only once its second
    /// is over), so the committee is known.
    function _request(ProviderRegistry providers, address provider) internal returns (uint256 requestId) {
        _fundFee(providers, provider);
        vm.prank(provider);
        requestId = providers.requestAttestation(_evidence(provider), _challengeBlock(), new bytes32[](0), provider);
        vm.roll(block.number + providers.seedDelayBlocks() + 1);
        vm.warp(block.timestamp + 1);
    }

    /// @dev Signatures over `digest` of the first `k` members (ascending address) of request `requestId`'s committee;
    /// every member must be one of this fixture's keyed auditors.
    function _committeeSigs(ProviderRegistry providers, uint256 requestId, bytes32 digest, uint256 k)
        internal
        view
        returns (bytes[] memory out)
    {
        address[] memory c = _ascending(providers.committeeOf(requestId));
        out = new bytes[](k);
        for (uint256 i; i < k; ++i) {
            out[i] = _sig(_keyOf[c[i]], digest);
        }
    }

    /// @dev A sorted copy of `xs` (insertion sort; committees are small).
    function _ascending(address[] memory xs) internal pure returns (address[] memory out) {
        out = new address[](xs.length);
        for (uint256 i; i < xs.length; ++i) {
            address x = xs[i];
            uint256 j = i;
            while (j > 0 && out[j - 1] > x) {
                out[j] = out[j - 1];
                --j;
            }
            out[j] = x;
        }
    }

    /// @dev Records `tier` (band: the tier's lowest) for `provider` through a new request, signed by `k` of its drawn
    /// committee.
    function _attest(ProviderRegistry providers, address provider, uint8 tier, uint64 expiresAt, uint256 k)
        internal
        returns (uint256 requestId)
    {
        requestId = _request(providers, provider);
        (uint8 lo,) = providers.bandRange(tier);
        Receipts.AttestationVerified memory att = _attestation(provider, requestId, tier, lo, expiresAt);
        providers.record(att, _committeeSigs(providers, requestId, providers.digestOf(att), k));
    }
}
