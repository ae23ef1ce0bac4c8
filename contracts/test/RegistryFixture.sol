// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {TestToken} from "../mocks/TestToken.sol";
import {AuditorRegistry} from "../AuditorRegistry.sol";
import {ProviderRegistry} from "../ProviderRegistry.sol";
import {Receipts} from "../libraries/Receipts.sol";

/// @notice Bonded auditors with known private keys (for vm.sign) and EIP-712 signing helpers for
/// AttestationVerified (ProviderRegistry) and AuditReceipt (JobMarket) messages.
abstract contract AuditorKeys {
    uint256 internal constant AUDITOR_BOND = 100e18;
    uint256[] internal _auditorKeys;

    /// @dev Mints, approves and posts `AUDITOR_BOND` for `n` auditors with keys 0xA11CE + i; returns their
    /// addresses sorted ascending (the order ProviderRegistry.record wants).
    function _bondAuditors(TestToken token, AuditorRegistry registry, uint256 n) internal {
        for (uint256 i; i < n; ++i) {
            uint256 key = 0xA11CE + i;
            address a = vm.addr(key);
            token.mint(a, AUDITOR_BOND);
            vm.startPrank(a);
            token.approve(address(registry), AUDITOR_BOND);
            registry.postBond(AUDITOR_BOND);
            vm.stopPrank();
            _auditorKeys.push(key);
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

    function _attestation(address provider, uint8 tier, uint8 band, uint64 expiresAt)
        internal
        pure
        returns (Receipts.AttestationVerified memory)
    {
        return Receipts.AttestationVerified({
            provider: provider,
            tier: tier,
            band: band,
            evidenceHash: keccak256(abi.encode("evidence", provider, tier, band, expiresAt)),
            expiresAt: expiresAt
        });
    }

    /// @dev Records `tier` (band: the tier's lowest) for `provider` on a quorum of `k` signatures.
    function _attest(ProviderRegistry providers, address provider, uint8 tier, uint64 expiresAt, uint256 k) internal {
        (uint8 lo,) = providers.bandRange(tier);
        Receipts.AttestationVerified memory att = _attestation(provider, tier, lo, expiresAt);
        providers.record(att, _sigs(providers.digestOf(att), k));
    }
}
