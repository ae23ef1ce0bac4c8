// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Receipts: EIP-712 struct definitions for PoUW audit receipts and attestation verifications
/// @notice The single Solidity definition of the typed messages; the TypeScript side is
/// verifier/src/receipts/types.ts and test/receipts/receipts.test.ts checks both give the same digests.
/// Domains: AuditReceipt under {name: "PoUW JobMarket", version: "1"}, AttestationVerified under
/// {name: "PoUW ProviderRegistry", version: "1"}; chainId and verifyingContract from the deployment.
/// @dev Callers combine the struct hash with their domain separator via OpenZeppelin EIP712._hashTypedDataV4.
library Receipts {
    /// @notice An auditor's verdict on one committed segment.
    /// @param checks bitmask of checks run: 1 recompute, 2 tolerance, 4 freivalds, 8 progress,
    ///        16 magnitude, 32 attestation; other bits reserved (zero)
    /// @param verdict 0 ok, 1 fault
    /// @dev NOTE: field order is the EIP-712 type's order and the struct is never stored, so packing is moot.
    // solhint-disable-next-line gas-struct-packing
    struct AuditReceipt {
        uint256 jobId;
        uint32 segment;
        bytes32 traceRoot;
        uint32 checks;
        uint32 sampledSteps;
        uint8 verdict;
    }

    /// @notice An auditor's statement that it verified a provider's attestation evidence locally.
    /// @param requestId the ProviderRegistry attestation request the statement answers (the signer must be on that
    ///        request's drawn committee; binding the id keeps a signature from counting for another request)
    /// @param tier 1 accelerator-native CC, 2 CVM + accelerator, 3 device enclave, 4 none
    /// @param band trust band within the tier's range (10..100)
    /// @param expiresAt unix seconds after which the verification no longer counts
    /// @param issuedAt unix seconds at which the committee verified the evidence: the registry orders a provider's
    ///        statements by it (a newer statement always replaces an older one, whatever their expiries)
    // solhint-disable-next-line gas-struct-packing
    struct AttestationVerified {
        address provider;
        uint256 requestId;
        uint8 tier;
        uint8 band;
        bytes32 evidenceHash;
        uint64 expiresAt;
        uint64 issuedAt;
    }

    string internal constant AUDIT_RECEIPT_TYPE =
        "AuditReceipt(uint256 jobId,uint32 segment,bytes32 traceRoot,uint32 checks,uint32 sampledSteps,uint8 verdict)";
    string internal constant ATTESTATION_VERIFIED_TYPE =
        "AttestationVerified(address provider,uint256 requestId,uint8 tier,uint8 band,bytes32 evidenceHash,uint64 expiresAt,uint64 issuedAt)";

    bytes32 internal constant AUDIT_RECEIPT_TYPEHASH = keccak256(bytes(AUDIT_RECEIPT_TYPE));
    bytes32 internal constant ATTESTATION_VERIFIED_TYPEHASH = keccak256(bytes(ATTESTATION_VERIFIED_TYPE));

    string internal constant JOB_MARKET_DOMAIN_NAME = "PoUW JobMarket";
    string internal constant PROVIDER_REGISTRY_DOMAIN_NAME = "PoUW ProviderRegistry";
    string internal constant DOMAIN_VERSION = "1";

    /// @notice EIP-712 hashStruct of an audit receipt.
    function hash(AuditReceipt memory r) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(AUDIT_RECEIPT_TYPEHASH, r.jobId, r.segment, r.traceRoot, r.checks, r.sampledSteps, r.verdict)
        );
    }

    /// @notice EIP-712 hashStruct of an attestation verification.
    function hash(AttestationVerified memory a) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(
                ATTESTATION_VERIFIED_TYPEHASH,
                a.provider,
                a.requestId,
                a.tier,
                a.band,
                a.evidenceHash,
                a.expiresAt,
                a.issuedAt
            )
        );
    }
}
