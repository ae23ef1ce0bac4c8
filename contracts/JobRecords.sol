// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IJobRecords} from "./interfaces/IJobRecords.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {Trace} from "./libraries/Trace.sol";
import {Receipts} from "./libraries/Receipts.sol";

/// @title JobRecords: audit receipts and provenance of JobMarket's jobs (see IJobRecords)
/// @dev Ownerless and fundless; everything it checks it reads from its market, so it needs no wiring.
contract JobRecords is IJobRecords, EIP712 {
    string public constant VERSION = "pouw-JobRecords-1";
    /// @dev One anchored provenance record.
    struct Provenance {
        bytes32 recordHash;
        bytes32 weightsCidHash;
        uint64 anchoredAt;
    }

    /// @dev AuditReceipt.checks bits in use (recompute .. attestation); the others are reserved.
    uint32 private constant _CHECKS_MASK = 63;

    IJobMarket private immutable _market;

    mapping(bytes32 key => bytes32 digest) private _receipts; // key: keccak256(jobId, segment, auditor)
    mapping(uint256 jobId => Provenance) private _provenance;

    constructor(IJobMarket market_) EIP712(Receipts.JOB_MARKET_DOMAIN_NAME, Receipts.DOMAIN_VERSION) {
        if (address(market_) == address(0)) revert JobRecordsZeroMarket();
        _market = market_;
    }

    /// @inheritdoc IJobRecords
    function recordReceipt(Receipts.AuditReceipt calldata receipt, bytes32 endStateHash, bytes calldata signature)
        external
        returns (address auditor)
    {
        bytes32 digest;
        (auditor, digest) = _verifyReceipt(receipt, endStateHash, signature);
        bytes32 key = keccak256(abi.encode(receipt.jobId, receipt.segment, auditor));
        // INVARIANT: one receipt per (job, segment, auditor).
        if (_receipts[key] != bytes32(0)) revert JobRecordsDuplicateReceipt(receipt.jobId, receipt.segment, auditor);
        _receipts[key] = digest;
        emit ReceiptRecorded(
            receipt.jobId,
            receipt.segment,
            auditor,
            digest,
            receipt.traceRoot,
            receipt.checks,
            receipt.sampledSteps,
            receipt.verdict
        );
    }

    /// @inheritdoc IJobRecords
    function anchorProvenance(uint256 jobId, bytes32 recordHash, string calldata weightsCid) external {
        (, address provider, IJobMarket.JobStatus status) = _market.jobParties(jobId);
        if (status == IJobMarket.JobStatus.None) revert JobRecordsUnknownJob(jobId);
        if (status != IJobMarket.JobStatus.Finalized) {
            revert JobRecordsWrongStatus(jobId, status, IJobMarket.JobStatus.Finalized);
        }
        if (msg.sender != provider) revert JobRecordsNotProvider(jobId, msg.sender, provider);
        if (recordHash == bytes32(0)) revert JobRecordsZeroProvenance();
        Provenance storage p = _provenance[jobId];
        // INVARIANT: a job's provenance is anchored once and never rewritten.
        if (p.recordHash != bytes32(0)) revert JobRecordsProvenanceAlreadyAnchored(jobId);
        p.recordHash = recordHash;
        p.weightsCidHash = keccak256(bytes(weightsCid));
        p.anchoredAt = uint64(block.timestamp);
        emit ProvenanceAnchored(jobId, msg.sender, recordHash, weightsCid);
    }

    /// @inheritdoc IJobRecords
    function receiptDigest(Receipts.AuditReceipt calldata receipt) external view returns (bytes32) {
        return _hashTypedDataV4(Receipts.hash(receipt));
    }

    /// @inheritdoc IJobRecords
    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @inheritdoc IJobRecords
    function receiptOf(uint256 jobId, uint256 segment, address auditor) external view returns (bytes32) {
        return _receipts[keccak256(abi.encode(jobId, segment, auditor))];
    }

    /// @inheritdoc IJobRecords
    function provenanceOf(uint256 jobId)
        external
        view
        returns (bytes32 recordHash, bytes32 weightsCidHash, uint64 anchoredAt)
    {
        Provenance storage p = _provenance[jobId];
        return (p.recordHash, p.weightsCidHash, p.anchoredAt);
    }

    /// @inheritdoc IJobRecords
    function market() external view returns (address) {
        return address(_market);
    }

    /// @dev Checks a receipt's fields, its match with the committed segment and its signer; returns the
    /// signer and the EIP-712 digest.
    function _verifyReceipt(Receipts.AuditReceipt calldata receipt, bytes32 endStateHash, bytes calldata signature)
        private
        view
        returns (address auditor, bytes32 digest)
    {
        if (receipt.checks & ~_CHECKS_MASK != 0 || receipt.verdict > 1) {
            revert JobRecordsMalformedReceipt(receipt.checks, receipt.verdict);
        }
        IJobMarket m = _market;
        (,, IJobMarket.JobStatus status) = m.jobParties(receipt.jobId);
        if (status == IJobMarket.JobStatus.None) revert JobRecordsUnknownJob(receipt.jobId);
        // INVARIANT: a receipt is anchored only for what the provider actually committed.
        if (m.segmentCommitment(receipt.jobId, receipt.segment) != Trace.commitment(receipt.traceRoot, endStateHash)) {
            revert JobRecordsReceiptMismatch(receipt.jobId, receipt.segment);
        }
        (address auditors,,) = m.registries();
        if (auditors == address(0)) revert JobRecordsRegistriesNotSet();
        digest = _hashTypedDataV4(Receipts.hash(receipt));
        auditor = ECDSA.recover(digest, signature);
        // INVARIANT: only a bonded (active) auditor's receipt is anchored.
        if (!IAuditorRegistry(auditors).isActive(auditor)) revert JobRecordsNotAuditor(auditor);
    }
}
