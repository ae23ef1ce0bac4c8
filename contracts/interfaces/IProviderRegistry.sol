// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Receipts} from "../libraries/Receipts.sol";

/// @title IProviderRegistry: attestation tiers of providers, recorded on a quorum of bonded auditors
/// @notice An auditor verifies a provider's attestation evidence locally (verifier/src/checks/attestation)
/// and signs an EIP-712 `AttestationVerified { provider, tier, band, evidenceHash, expiresAt }`
/// (contracts/libraries/Receipts.sol; domain {name: "PoUW ProviderRegistry", version: "1"}). Anyone may
/// submit the message with the signatures of at least `quorum()` distinct auditors that are active in the
/// AuditorRegistry at submission time; the registry then records the provider's tier, band, evidence hash
/// and expiry. A provider with no record, or an expired one, has the effective tier 4 (no attestation:
/// stake substitutes), which JobMarket treats as the weakest tier and charges the full required stake.
///
/// Tiers and trust bands (docs/checks.md): 1 accelerator-native CC 90-100; 2 CVM + accelerator 70-89;
/// 3 device enclave 50-69; 4 none 10-49.
interface IProviderRegistry {
    /// @notice A provider's recorded attestation.
    /// @param tier 1..4 (0: never recorded)
    /// @param band trust band within the tier's range
    /// @param expiresAt unix seconds after which the record no longer counts
    /// @param recordedAt unix seconds of the submission
    /// @param evidenceHash keccak256 of the evidence token the auditors verified
    struct Attestation {
        uint8 tier;
        uint8 band;
        uint64 expiresAt;
        uint64 recordedAt;
        bytes32 evidenceHash;
    }

    /// @notice `provider`'s attestation was recorded: tier `tier`, band `band`, valid until `expiresAt`,
    /// signed by `signers` (ascending addresses, all active auditors).
    event AttestationRecorded(
        address indexed provider,
        uint8 tier,
        uint8 band,
        bytes32 evidenceHash,
        uint64 expiresAt,
        bytes32 digest,
        address[] signers
    );

    /// @notice The quorum must be at least 1.
    error ProviderRegistryZeroQuorum();
    /// @notice The maximum validity must be at least 1 second.
    error ProviderRegistryZeroValidity();
    /// @notice The provider is the zero address.
    error ProviderRegistryZeroProvider();
    /// @notice `tier` is not 1..4.
    error ProviderRegistryInvalidTier(uint8 tier);
    /// @notice `band` is outside tier `tier`'s range `min`..`max`.
    error ProviderRegistryBandOutOfRange(uint8 tier, uint8 band, uint8 min, uint8 max);
    /// @notice The evidence hash is zero.
    error ProviderRegistryZeroEvidence();
    /// @notice The message expired at `expiresAt` (now `nowTs`).
    error ProviderRegistryExpired(uint64 expiresAt, uint256 nowTs);
    /// @notice `expiresAt` is more than `maxValiditySeconds` after now (`nowTs`).
    error ProviderRegistryValidityTooLong(uint64 expiresAt, uint256 nowTs, uint64 maxValiditySeconds);
    /// @notice Only `count` signatures were given; `quorum` are needed.
    error ProviderRegistryBelowQuorum(uint256 count, uint256 quorum);
    /// @notice Signature `index` recovers to `signer`, which is not an active auditor (or signed other fields).
    error ProviderRegistryNotAuditor(uint256 index, address signer);
    /// @notice Signature `index` recovers to `signer`, not above the previous signer `previous`: signers must
    /// be strictly ascending, which rules out one auditor counted twice.
    error ProviderRegistryUnsortedSigners(uint256 index, address previous, address signer);
    /// @notice `expiresAt` is not later than the provider's current record's expiry `current`: a record is
    /// only ever replaced by a fresher one, so a statement is recorded at most once and an older statement
    /// cannot be replayed over a newer one.
    error ProviderRegistryStale(address provider, uint64 expiresAt, uint64 current);

    /// @notice Record `att` on the signatures of at least `quorum()` distinct active auditors, given in
    /// ascending order of signer address (65-byte r,s,v or 64-byte EIP-2098 signatures). Anyone may call.
    function record(Receipts.AttestationVerified calldata att, bytes[] calldata signatures) external;

    /// @notice `provider`'s record (zero if never recorded; may be expired).
    function attestationOf(address provider) external view returns (Attestation memory);

    /// @notice The tier JobMarket uses: the recorded tier while unexpired, else 4 (no attestation).
    function effectiveTier(address provider) external view returns (uint8);

    /// @notice The EIP-712 digest auditors sign for `att` under this registry's domain.
    function digestOf(Receipts.AttestationVerified calldata att) external view returns (bytes32);

    /// @notice The inclusive band range of `tier` (1..4); reverts on another tier.
    function bandRange(uint8 tier) external pure returns (uint8 min, uint8 max);

    /// @notice The AuditorRegistry whose active auditors may sign.
    function auditors() external view returns (address);

    /// @notice Number of distinct auditor signatures a record needs.
    function quorum() external view returns (uint256);

    /// @notice Longest allowed time between submission and `expiresAt`, in seconds.
    function maxValiditySeconds() external view returns (uint64);
}
