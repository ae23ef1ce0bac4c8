// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {Receipts} from "../libraries/Receipts.sol";

/// @notice Test-only: computes EIP-712 digests of Receipts structs under an OpenZeppelin EIP712 domain
/// (name given at deployment, version "1", this contract as verifyingContract) and recovers signers,
/// so TypeScript tests can compare verifier/src/receipts with what a contract computes.
contract ReceiptDigestHarness is EIP712 {
    constructor(string memory domainName) EIP712(domainName, Receipts.DOMAIN_VERSION) {}

    function auditReceiptTypehash() external pure returns (bytes32) {
        return Receipts.AUDIT_RECEIPT_TYPEHASH;
    }

    function attestationVerifiedTypehash() external pure returns (bytes32) {
        return Receipts.ATTESTATION_VERIFIED_TYPEHASH;
    }

    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    function auditReceiptDigest(Receipts.AuditReceipt calldata r) public view returns (bytes32) {
        return _hashTypedDataV4(Receipts.hash(r));
    }

    function attestationVerifiedDigest(Receipts.AttestationVerified calldata a) public view returns (bytes32) {
        return _hashTypedDataV4(Receipts.hash(a));
    }

    function recoverAuditReceipt(Receipts.AuditReceipt calldata r, bytes calldata signature)
        external
        view
        returns (address)
    {
        return ECDSA.recover(auditReceiptDigest(r), signature);
    }

    function recoverAttestationVerified(Receipts.AttestationVerified calldata a, bytes calldata signature)
        external
        view
        returns (address)
    {
        return ECDSA.recover(attestationVerifiedDigest(a), signature);
    }
}
