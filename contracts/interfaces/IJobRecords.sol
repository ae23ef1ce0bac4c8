// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IJobMarket} from "./IJobMarket.sol";
import {Receipts} from "../libraries/Receipts.sol";

/// @title IJobRecords: audit receipts and provenance records of JobMarket's jobs
/// @notice The records beside the market: auditors' EIP-712 receipts for committed segments (`recordReceipt`) and the
/// final provider's provenance record of a Finalized job (`anchorProvenance`). It holds no funds and no role: it reads
/// the job, its segment commitments and the AuditorRegistry from its JobMarket (fixed at deployment), so moving these
/// records out of JobMarket changes no rule. Receipts are signed under the EIP-712 domain {name: "PoUW JobMarket",
/// version: "1", chainId, verifyingContract: this contract}.
interface IJobRecords {
    /// @notice Active auditor `auditor` signed an audit receipt (EIP-712 digest `digest`) for a committed segment.
    event ReceiptRecorded(
        uint256 indexed jobId,
        uint256 indexed segment,
        address indexed auditor,
        bytes32 digest,
        bytes32 traceRoot,
        uint32 checks,
        uint32 sampledSteps,
        uint8 verdict
    );
    /// @notice The provider of finalized job `jobId` anchored its provenance record `recordHash`; the final
    /// weights are at `weightsCid`.
    event ProvenanceAnchored(uint256 indexed jobId, address indexed provider, bytes32 recordHash, string weightsCid);

    /// @notice The JobMarket address is zero.
    error JobRecordsZeroMarket();
    /// @notice No job `jobId` exists on the market.
    error JobRecordsUnknownJob(uint256 jobId);
    /// @notice Job `jobId` is in `status`, but `expected` is needed.
    error JobRecordsWrongStatus(uint256 jobId, IJobMarket.JobStatus status, IJobMarket.JobStatus expected);
    /// @notice `caller` is not job `jobId`'s provider `provider`.
    error JobRecordsNotProvider(uint256 jobId, address caller, address provider);
    /// @notice The market's registries are not set (no AuditorRegistry to check a receipt's signer against).
    error JobRecordsRegistriesNotSet();
    /// @notice The receipt's (traceRoot, endStateHash) is not what was committed for segment `segment` of job `jobId`.
    error JobRecordsReceiptMismatch(uint256 jobId, uint256 segment);
    /// @notice A receipt must have no reserved check bits and a verdict of 0 or 1.
    error JobRecordsMalformedReceipt(uint32 checks, uint8 verdict);
    /// @notice The receipt's signer `signer` is not an active auditor.
    error JobRecordsNotAuditor(address signer);
    /// @notice `auditor` already has a receipt recorded for segment `segment` of job `jobId`.
    error JobRecordsDuplicateReceipt(uint256 jobId, uint256 segment, address auditor);
    /// @notice The provenance record hash is zero.
    error JobRecordsZeroProvenance();
    /// @notice Job `jobId`'s provenance was already anchored.
    error JobRecordsProvenanceAlreadyAnchored(uint256 jobId);

    /// @notice Anchor an auditor's EIP-712 AuditReceipt for a committed segment: checks the fields, that
    /// (receipt.traceRoot, endStateHash) is the segment's commitment on the market, and that the signer is an active
    /// auditor now; at most one receipt per (job, segment, auditor). Stores only the digest. Anyone may call.
    /// @param endStateHash the segment's committed end state hash (from its SegmentCommitted event): the
    ///        market stores only keccak256(traceRoot, endStateHash)
    /// @return auditor the signer
    function recordReceipt(Receipts.AuditReceipt calldata receipt, bytes32 endStateHash, bytes calldata signature)
        external
        returns (address auditor);

    /// @notice Anchor the provenance record of a Finalized job (its keccak256 hash) and the final weights'
    /// content id. The job's final provider only; once.
    function anchorProvenance(uint256 jobId, bytes32 recordHash, string calldata weightsCid) external;

    /// @notice The EIP-712 digest of `receipt` under this contract's domain ("PoUW JobMarket", "1").
    function receiptDigest(Receipts.AuditReceipt calldata receipt) external view returns (bytes32);

    /// @notice The EIP-712 domain separator of the receipts.
    function domainSeparator() external view returns (bytes32);

    /// @notice The digest of the receipt `auditor` recorded for segment `segment` of job `jobId`, 0 if none.
    function receiptOf(uint256 jobId, uint256 segment, address auditor) external view returns (bytes32);

    /// @notice The anchored provenance of job `jobId`: record hash, keccak256 of the weights CID string and
    /// the anchoring time (all zero if none).
    function provenanceOf(uint256 jobId)
        external
        view
        returns (bytes32 recordHash, bytes32 weightsCidHash, uint64 anchoredAt);

    /// @notice The JobMarket whose jobs these records are about.
    function market() external view returns (address);
}
