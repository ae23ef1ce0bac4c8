// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IKindRecords} from "./interfaces/IKindRecords.sol";

/// @title KindRecords: the scores and datasets of finalized inference jobs, by model CID (see IKindRecords)
/// @dev Ownerless and fundless; everything it checks it reads from its market, so it needs no wiring.
contract KindRecords is IKindRecords {
    string public constant VERSION = "pouw-KindRecords-1";

    /// @dev The kinds whose step is one example (verifier/src/kinds/state.ts KIND_CODES).
    uint8 private constant _EVALUATE = 1;
    uint8 private constant _GENERATE = 2;

    IJobMarket private immutable _market;
    uint256 private immutable _minStake;

    mapping(uint256 jobId => Result) private _results;
    mapping(bytes32 modelCidHash => uint256[] jobIds) private _byModel;

    /// @param minStake_ the least stake a recorded job's provider locked: a record anyone cites was backed by a lock
    /// worth challenging (a self-dealt job with a token lock records nothing)
    constructor(IJobMarket market_, uint256 minStake_) {
        if (address(market_) == address(0)) revert KindRecordsZeroMarket();
        _market = market_;
        _minStake = minStake_;
    }

    /// @inheritdoc IKindRecords
    function recordResult(
        uint256 jobId,
        bytes32 traceRoot,
        EndState calldata end,
        string calldata modelCid,
        string calldata resultCid
    ) external {
        IJobMarket.JobView memory j = _market.getJob(jobId);
        if (j.status == IJobMarket.JobStatus.None) revert KindRecordsUnknownJob(jobId);
        // INVARIANT: only a job whose challenge window closed with no fault has a result.
        if (j.status != IJobMarket.JobStatus.Finalized) {
            revert KindRecordsWrongStatus(jobId, j.status, IJobMarket.JobStatus.Finalized);
        }
        if (end.kind != _EVALUATE && end.kind != _GENERATE) revert KindRecordsUnknownKind(jobId, end.kind);
        bytes32 modelCidHash = keccak256(bytes(modelCid));
        {
            (uint8 jobKind, bytes32 jobModel) = _market.kindOf(jobId);
            // INVARIANT: a result is recorded only for the kind and model the job was created with (createKindJob), never
            // for what its provider's last leaf alone names.
            if (jobKind != end.kind || jobModel != modelCidHash) {
                revert KindRecordsKindMismatch(jobId, jobKind, jobModel, end.kind, modelCidHash);
            }
            // INVARIANT: the provider locked at least minStake whatever its tier (the best tier locks the least), so a
            // score anyone cites was exposed to a slash worth a challenge for as long as its window ran.
            uint256 leastLock = (uint256(j.policy.requiredStake) * _market.stakeMultiplierBps(1) + 9_999) / 10_000;
            if (leastLock < _minStake) revert KindRecordsStakeTooLow(jobId, leastLock, _minStake);
        }
        // INVARIANT: only the job's provider names its result CID (KindRecords cannot check it): anyone may record the
        // score as soon as the job is Finalized, but a stranger's record cannot pin a wrong dataset CID on the job.
        if (bytes(resultCid).length != 0 && msg.sender != j.provider) {
            revert KindRecordsResultCidNotProvider(jobId, msg.sender, j.provider);
        }
        Result storage r = _results[jobId];
        // INVARIANT: a job's result is recorded once and never rewritten; a record made without a result CID takes its
        // provider's once (the score it holds is the one committed leaf's preimage either way).
        if (r.kind != 0 && (r.resultCidHash != 0 || bytes(resultCid).length == 0)) revert KindRecordsAlreadyRecorded(jobId);
        uint256 examples = _verifyEnd(jobId, j.policy, traceRoot, modelCidHash, end);
        if (r.kind != 0) {
            r.resultCidHash = keccak256(bytes(resultCid));
            emit ResultCidNamed(jobId, resultCid);
            return;
        }
        r.kind = end.kind;
        r.examples = uint64(examples);
        r.recordedAt = uint64(block.timestamp);
        r.manifestHash = j.manifestHash;
        r.modelCidHash = modelCidHash;
        if (bytes(resultCid).length != 0) r.resultCidHash = keccak256(bytes(resultCid));
        r.total = end.total;
        r.hits = end.hits;
        r.chain = end.chain;
        _byModel[modelCidHash].push(jobId);
        _emitRecorded(jobId, r, modelCid, resultCid);
    }

    /// @inheritdoc IKindRecords
    function resultOf(uint256 jobId) external view returns (Result memory) {
        return _results[jobId];
    }

    /// @inheritdoc IKindRecords
    function jobsForModel(string calldata modelCid) external view returns (uint256[] memory) {
        return _byModel[keccak256(bytes(modelCid))];
    }

    /// @inheritdoc IKindRecords
    function market() external view returns (address) {
        return address(_market);
    }

    /// @inheritdoc IKindRecords
    function minStake() external view returns (uint256) {
        return _minStake;
    }

    /// @dev The job's example count N, once `end` is the preimage of its committed last leaf h(N).
    function _verifyEnd(
        uint256 jobId,
        IJobMarket.Policy memory policy,
        bytes32 traceRoot,
        bytes32 modelCidHash,
        EndState calldata end
    ) private view returns (uint256 examples) {
        uint256 last = uint256(policy.segments) - 1;
        examples = uint256(policy.segments) * uint256(policy.stepsPerSegment);
        bytes32 endStateHash = _endStateHash(jobId, examples, modelCidHash, end);
        // INVARIANT: the recorded aggregate and model are the preimage of the committed last leaf h(N).
        if (!_market.verifySegment(jobId, last, traceRoot, endStateHash)) {
            revert KindRecordsEndStateMismatch(jobId, last, endStateHash);
        }
    }

    /// @dev h(N) = keccak256(abi.encode(jobId, N, kind, subject, item, score, hit, total, hits, chain)); two static
    /// abi.encode halves concatenate to exactly that encoding (split only to stay within the stack).
    function _endStateHash(uint256 jobId, uint256 examples, bytes32 modelCidHash, EndState calldata end)
        private
        pure
        returns (bytes32)
    {
        return keccak256(
            bytes.concat(
                abi.encode(jobId, examples, end.kind, modelCidHash, end.item),
                abi.encode(end.score, end.hit, end.total, end.hits, end.chain)
            )
        );
    }

    /// @dev The event, from storage (split only to stay within the stack).
    function _emitRecorded(uint256 jobId, Result storage r, string calldata modelCid, string calldata resultCid) private {
        emit ResultRecorded(jobId, r.modelCidHash, r.kind, r.examples, r.total, r.hits, r.chain, modelCid, resultCid);
    }
}
