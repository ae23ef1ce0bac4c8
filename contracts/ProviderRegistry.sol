// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {Receipts} from "./libraries/Receipts.sol";

/// @title ProviderRegistry: provider attestation tiers recorded on a quorum of auditor signatures
/// (see IProviderRegistry)
/// @dev No admin: the quorum, the auditor set's registry and the maximum validity are fixed at deployment.
contract ProviderRegistry is IProviderRegistry, EIP712 {
    /// @notice The tier of a provider with no unexpired record.
    uint8 public constant TIER_NONE = 4;

    IAuditorRegistry private immutable _auditors;
    uint256 private immutable _quorum;
    uint64 private immutable _maxValiditySeconds;

    mapping(address provider => Attestation) private _attestations;

    constructor(IAuditorRegistry auditors_, uint256 quorum_, uint64 maxValiditySeconds_)
        EIP712(Receipts.PROVIDER_REGISTRY_DOMAIN_NAME, Receipts.DOMAIN_VERSION)
    {
        if (quorum_ == 0) revert ProviderRegistryZeroQuorum();
        if (maxValiditySeconds_ == 0) revert ProviderRegistryZeroValidity();
        _auditors = auditors_;
        _quorum = quorum_;
        _maxValiditySeconds = maxValiditySeconds_;
    }

    /// @inheritdoc IProviderRegistry
    function record(Receipts.AttestationVerified calldata att, bytes[] calldata signatures) external {
        if (att.provider == address(0)) revert ProviderRegistryZeroProvider();
        (uint8 lo, uint8 hi) = bandRange(att.tier);
        if (att.band < lo || att.band > hi) revert ProviderRegistryBandOutOfRange(att.tier, att.band, lo, hi);
        if (att.evidenceHash == bytes32(0)) revert ProviderRegistryZeroEvidence();
        // INVARIANT: an expired statement never counts.
        if (att.expiresAt <= block.timestamp) revert ProviderRegistryExpired(att.expiresAt, block.timestamp);
        if (att.expiresAt > block.timestamp + _maxValiditySeconds) {
            revert ProviderRegistryValidityTooLong(att.expiresAt, block.timestamp, _maxValiditySeconds);
        }
        Attestation storage current = _attestations[att.provider];
        // INVARIANT: a record is replaced only by a fresher one, so a statement is recorded at most once and an
        // old statement cannot undo a newer one.
        if (att.expiresAt <= current.expiresAt) revert ProviderRegistryStale(att.provider, att.expiresAt, current.expiresAt);

        bytes32 digest = _hashTypedDataV4(Receipts.hash(_toMemory(att)));
        uint256 n = signatures.length;
        // INVARIANT: a record needs `quorum` distinct auditors that are active now.
        if (n < _quorum) revert ProviderRegistryBelowQuorum(n, _quorum);
        address[] memory signers = new address[](n);
        address previous;
        for (uint256 i; i < n; ++i) {
            address signer = ECDSA.recover(digest, signatures[i]);
            // Ascending order makes "distinct" a one-comparison check.
            if (signer <= previous) revert ProviderRegistryUnsortedSigners(i, previous, signer);
            // A signature over other fields recovers to some unrelated address and fails here.
            if (!_auditors.isActive(signer)) revert ProviderRegistryNotAuditor(i, signer);
            signers[i] = signer;
            previous = signer;
        }

        current.tier = att.tier;
        current.band = att.band;
        current.expiresAt = att.expiresAt;
        current.recordedAt = uint64(block.timestamp);
        current.evidenceHash = att.evidenceHash;
        emit AttestationRecorded(att.provider, att.tier, att.band, att.evidenceHash, att.expiresAt, digest, signers);
    }

    /// @inheritdoc IProviderRegistry
    function attestationOf(address provider) external view returns (Attestation memory) {
        return _attestations[provider];
    }

    /// @inheritdoc IProviderRegistry
    function effectiveTier(address provider) external view returns (uint8) {
        Attestation storage a = _attestations[provider];
        if (a.tier == 0 || a.expiresAt <= block.timestamp) return TIER_NONE;
        return a.tier;
    }

    /// @inheritdoc IProviderRegistry
    function digestOf(Receipts.AttestationVerified calldata att) external view returns (bytes32) {
        return _hashTypedDataV4(Receipts.hash(_toMemory(att)));
    }

    /// @inheritdoc IProviderRegistry
    function auditors() external view returns (address) {
        return address(_auditors);
    }

    /// @inheritdoc IProviderRegistry
    function quorum() external view returns (uint256) {
        return _quorum;
    }

    /// @inheritdoc IProviderRegistry
    function maxValiditySeconds() external view returns (uint64) {
        return _maxValiditySeconds;
    }

    /// @notice The EIP-712 domain separator of this registry.
    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @inheritdoc IProviderRegistry
    function bandRange(uint8 tier) public pure returns (uint8 min, uint8 max) {
        if (tier == 1) return (90, 100);
        if (tier == 2) return (70, 89);
        if (tier == 3) return (50, 69);
        if (tier == 4) return (10, 49);
        revert ProviderRegistryInvalidTier(tier);
    }

    function _toMemory(Receipts.AttestationVerified calldata att)
        private
        pure
        returns (Receipts.AttestationVerified memory)
    {
        return att;
    }
}
