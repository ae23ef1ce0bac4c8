// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IJobMarket} from "./IJobMarket.sol";

/// @title IKindRecords: the results of finalized inference jobs (evaluate, generate), readable by the model's CID
/// @notice An inference job commits one leaf per example through JobMarket.commitSegment (docs/kinds.md); its last
/// leaf h(N) binds the job's aggregate. A result is recorded only with the preimage of that committed leaf, so the
/// recorded score is the one the examples give, and only once the job is Finalized (its challenge window passed with
/// no fault found).
interface IKindRecords {
    /// @notice The preimage of a job's last leaf h(N) (N = segments x stepsPerSegment), less jobId, N and the subject
    /// keccak256(bytes(modelCid)), which the contract supplies: h(N) = keccak256(abi.encode(jobId, N, kind, subject,
    /// item, score, hit, total, hits, chain)).
    struct EndState {
        uint8 kind;
        bytes32 item;
        uint256 score;
        uint256 hit;
        uint256 total;
        uint256 hits;
        bytes32 chain;
    }

    /// @notice One recorded result.
    struct Result {
        uint8 kind;
        uint64 examples;
        uint64 recordedAt;
        bytes32 manifestHash;
        bytes32 modelCidHash;
        /// @dev keccak256(bytes(resultCid)); zero while none was named
        bytes32 resultCidHash;
        uint256 total;
        uint256 hits;
        bytes32 chain;
    }

    /// @notice Job `jobId` of kind `kind` (1 evaluate, 2 generate) scored `examples` examples of model `modelCid`:
    /// the sum of their scores is `total`, of their hits `hits`, `chain` hashes their outputs in order; `resultCid`
    /// names the outputs (evaluate) or the generated dataset (generate), checked off chain against `chain`.
    event ResultRecorded(
        uint256 indexed jobId,
        bytes32 indexed modelCidHash,
        uint8 kind,
        uint256 examples,
        uint256 total,
        uint256 hits,
        bytes32 chain,
        string modelCid,
        string resultCid
    );

    /// @notice Job `jobId`'s provider named `resultCid` for a result recorded earlier without one.
    event ResultCidNamed(uint256 indexed jobId, string resultCid);

    error KindRecordsZeroMarket();
    /// @notice `caller` named a result CID for job `jobId`; only its provider `provider` may (anyone may record with "").
    error KindRecordsResultCidNotProvider(uint256 jobId, address caller, address provider);
    error KindRecordsUnknownJob(uint256 jobId);
    error KindRecordsWrongStatus(uint256 jobId, IJobMarket.JobStatus status, IJobMarket.JobStatus expected);
    error KindRecordsUnknownKind(uint256 jobId, uint8 kind);
    error KindRecordsEndStateMismatch(uint256 jobId, uint256 segment, bytes32 endStateHash);
    error KindRecordsAlreadyRecorded(uint256 jobId);
    /// @notice Job `jobId` was created with kind `jobKind` and model CID hash `jobModel` (createKindJob; 0 and zero: not
    /// an inference job), but the result names kind `kind` and model CID hash `model`.
    error KindRecordsKindMismatch(uint256 jobId, uint8 jobKind, bytes32 jobModel, uint8 kind, bytes32 model);
    /// @notice Job `jobId`'s least possible lock `leastLock` (its requiredStake at the best tier's discount) is below the
    /// `minStake` a citable record needs.
    error KindRecordsStakeTooLow(uint256 jobId, uint256 leastLock, uint256 minStake);

    /// @notice Records finalized job `jobId`'s result (anyone may: everything is checked against the market). A
    /// non-empty `resultCid` is its provider's only (unchecked on chain); a result recorded with "" (resultCidHash 0)
    /// takes the provider's later call with one, once (ResultCidNamed).
    /// @param traceRoot the last segment's committed root
    function recordResult(
        uint256 jobId,
        bytes32 traceRoot,
        EndState calldata end,
        string calldata modelCid,
        string calldata resultCid
    ) external;

    /// @notice Job `jobId`'s recorded result (kind 0 when none).
    function resultOf(uint256 jobId) external view returns (Result memory);

    /// @notice The jobs whose recorded result is for model `modelCid`, in recording order.
    function jobsForModel(string calldata modelCid) external view returns (uint256[] memory);

    /// @notice The market every result is checked against.
    function market() external view returns (address);

    /// @notice The least stake a job's provider must have locked (at any tier) for its result to be recorded.
    function minStake() external view returns (uint256);
}
