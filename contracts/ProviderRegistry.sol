// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {PanelTiming} from "./libraries/PanelTiming.sol";
import {Receipts} from "./libraries/Receipts.sol";

/// @title ProviderRegistry: provider attestation tiers recorded on a quorum of a drawn auditor committee
/// (see IProviderRegistry and docs/panels.md)
/// @dev No admin: the committee size, quorum, seed delay, request window, maximum validity and the auditor registry
/// are fixed at deployment.
contract ProviderRegistry is IProviderRegistry, EIP712 {
    /// @notice The tier of a provider with no counting record.
    uint8 public constant TIER_NONE = 4;
    /// @notice Largest committee (signature checks loop over it; AuditorRegistry draws are O(pool)).
    uint256 public constant MAX_COMMITTEE = 15;
    /// @dev blockhash(n) is only available for the 256 most recent blocks.
    uint256 private constant _BLOCKHASH_RANGE = 256;

    IAuditorRegistry private immutable _auditors;
    uint256 private immutable _committeeSize;
    uint256 private immutable _quorum;
    uint64 private immutable _maxValiditySeconds;
    uint16 private immutable _seedDelayBlocks;
    uint64 private immutable _requestWindowSeconds;

    uint256 private _requestCount;
    mapping(uint256 requestId => Request) private _requests;
    mapping(uint256 requestId => address[]) private _committees;
    mapping(address provider => uint256 requestId) private _lastRequest;
    mapping(address provider => Attestation) private _attestations;
    mapping(address provider => address[]) private _signers;

    constructor(
        IAuditorRegistry auditors_,
        uint256 committeeSize_,
        uint256 quorum_,
        uint64 maxValiditySeconds_,
        uint16 seedDelayBlocks_,
        uint64 requestWindowSeconds_
    ) EIP712(Receipts.PROVIDER_REGISTRY_DOMAIN_NAME, Receipts.DOMAIN_VERSION) {
        if (quorum_ == 0) revert ProviderRegistryZeroQuorum();
        if (committeeSize_ > MAX_COMMITTEE) revert ProviderRegistryCommitteeTooLarge(committeeSize_, MAX_COMMITTEE);
        if (quorum_ > committeeSize_) revert ProviderRegistryQuorumAboveCommittee(quorum_, committeeSize_);
        // INVARIANT: two disjoint sets of committee members can never both make a quorum.
        if (2 * quorum_ <= committeeSize_) revert ProviderRegistryQuorumNotMajority(quorum_, committeeSize_);
        if (maxValiditySeconds_ == 0) revert ProviderRegistryZeroValidity();
        if (seedDelayBlocks_ == 0 || seedDelayBlocks_ > 200) revert ProviderRegistryInvalidSeedDelay(seedDelayBlocks_);
        uint256 seedSeconds = PanelTiming.blocksToSeconds(seedDelayBlocks_);
        if (requestWindowSeconds_ <= seedSeconds) revert ProviderRegistryWindowTooShort(requestWindowSeconds_, seedSeconds);
        uint64 exitDelay = auditors_.exitDelaySeconds();
        // INVARIANT: a committee is drawn by the deadline, while the request's snapshot is still drawable.
        if (requestWindowSeconds_ > exitDelay) revert ProviderRegistryWindowTooLong(requestWindowSeconds_, exitDelay);
        uint64 activationDelay = auditors_.activationDelaySeconds();
        // INVARIANT: a bond posted once a request fixed its seed block cannot count before the seed is public.
        if (activationDelay <= seedSeconds) revert ProviderRegistryActivationDelayTooShort(activationDelay, seedSeconds);
        _auditors = auditors_;
        _committeeSize = committeeSize_;
        _quorum = quorum_;
        _maxValiditySeconds = maxValiditySeconds_;
        _seedDelayBlocks = seedDelayBlocks_;
        _requestWindowSeconds = requestWindowSeconds_;
    }

    /// @inheritdoc IProviderRegistry
    function requestAttestation(bytes32 evidenceHash) external returns (uint256 requestId) {
        if (evidenceHash == bytes32(0)) revert ProviderRegistryZeroEvidence();
        uint256 previous = _lastRequest[msg.sender];
        // INVARIANT: one committee draw per provider per request window, so re-rolling the committee costs a window.
        if (previous != 0 && block.timestamp <= _requests[previous].deadline) {
            revert ProviderRegistryRequestOpen(msg.sender, previous, _requests[previous].deadline);
        }
        requestId = ++_requestCount;
        uint64 asOf = uint64(block.timestamp);
        uint64 seedBlock = uint64(block.number + _seedDelayBlocks);
        uint64 deadline = asOf + _requestWindowSeconds;
        _requests[requestId] = Request({
            provider: msg.sender,
            asOf: asOf,
            drawn: false,
            recorded: false,
            seedBlock: seedBlock,
            deadline: deadline,
            evidenceHash: evidenceHash
        });
        _lastRequest[msg.sender] = requestId;
        emit AttestationRequested(requestId, msg.sender, evidenceHash, asOf, seedBlock, deadline);
    }

    /// @inheritdoc IProviderRegistry
    function drawCommittee(uint256 requestId) external returns (address[] memory committee) {
        Request storage q = _openRequest(requestId);
        if (q.drawn) revert ProviderRegistryCommitteeDrawn(requestId);
        committee = _draw(requestId, q);
    }

    /// @inheritdoc IProviderRegistry
    function record(Receipts.AttestationVerified calldata att, bytes[] calldata signatures) external {
        uint256 requestId = att.requestId;
        Request storage q = _openRequest(requestId);
        _checkStatement(requestId, q, att);
        uint256 n = signatures.length;
        if (n < _quorum) revert ProviderRegistryBelowQuorum(n, _quorum);
        address[] memory committee = q.drawn ? _committees[requestId] : _draw(requestId, q);
        bytes32 digest = _hashTypedDataV4(Receipts.hash(_toMemory(att)));
        address[] memory signers = _committeeSigners(requestId, committee, digest, signatures);

        q.recorded = true;
        Attestation storage current = _attestations[att.provider];
        current.tier = att.tier;
        current.band = att.band;
        current.expiresAt = att.expiresAt;
        current.recordedAt = uint64(block.timestamp);
        current.evidenceHash = att.evidenceHash;
        current.requestId = requestId;
        _signers[att.provider] = signers;
        emit AttestationRecorded(att.provider, requestId, att.tier, att.band, att.evidenceHash, att.expiresAt, digest, signers);
    }

    /// @inheritdoc IProviderRegistry
    function attestationOf(address provider) external view returns (Attestation memory) {
        return _attestations[provider];
    }

    /// @inheritdoc IProviderRegistry
    function signersOf(address provider) external view returns (address[] memory) {
        return _signers[provider];
    }

    /// @inheritdoc IProviderRegistry
    function backingOf(address provider) public view returns (uint256 active) {
        address[] storage signers = _signers[provider];
        for (uint256 i; i < signers.length; ++i) {
            if (_auditors.isActive(signers[i])) ++active;
        }
    }

    /// @inheritdoc IProviderRegistry
    function effectiveTier(address provider) external view returns (uint8) {
        Attestation storage a = _attestations[provider];
        if (a.tier == 0 || a.expiresAt <= block.timestamp) return TIER_NONE;
        // INVARIANT: a statement counts only while a quorum of its signers keeps its bond in the registry.
        if (backingOf(provider) < _quorum) return TIER_NONE;
        return a.tier;
    }

    /// @inheritdoc IProviderRegistry
    function requestOf(uint256 requestId) external view returns (Request memory) {
        return _requests[requestId];
    }

    /// @inheritdoc IProviderRegistry
    function lastRequestOf(address provider) external view returns (uint256) {
        return _lastRequest[provider];
    }

    /// @inheritdoc IProviderRegistry
    function committeeOf(uint256 requestId) external view returns (address[] memory) {
        Request storage q = _requests[requestId];
        if (q.drawn) return _committees[requestId];
        if (q.provider == address(0)) revert ProviderRegistryUnknownRequest(requestId);
        if (block.timestamp > q.deadline) revert ProviderRegistryRequestClosed(requestId, q.deadline, block.timestamp);
        (, address[] memory committee) = _compute(requestId, q);
        return committee;
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
    function committeeSize() external view returns (uint256) {
        return _committeeSize;
    }

    /// @inheritdoc IProviderRegistry
    function quorum() external view returns (uint256) {
        return _quorum;
    }

    /// @inheritdoc IProviderRegistry
    function maxValiditySeconds() external view returns (uint64) {
        return _maxValiditySeconds;
    }

    /// @inheritdoc IProviderRegistry
    function seedDelayBlocks() external view returns (uint16) {
        return _seedDelayBlocks;
    }

    /// @inheritdoc IProviderRegistry
    function requestWindowSeconds() external view returns (uint64) {
        return _requestWindowSeconds;
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

    function _openRequest(uint256 requestId) private view returns (Request storage q) {
        q = _requests[requestId];
        if (q.provider == address(0)) revert ProviderRegistryUnknownRequest(requestId);
        // INVARIANT: a request is drawn and recorded by its deadline, while its snapshot is drawable (constructor).
        if (block.timestamp > q.deadline) revert ProviderRegistryRequestClosed(requestId, q.deadline, block.timestamp);
    }

    /// @dev The statement fits its request, its tier's band range and the validity rules, and is fresher than the record.
    function _checkStatement(uint256 requestId, Request storage q, Receipts.AttestationVerified calldata att)
        private
        view
    {
        // INVARIANT: a request yields at most one record.
        if (q.recorded) revert ProviderRegistryAlreadyRecorded(requestId);
        // INVARIANT: the committee speaks about the provider that asked and the evidence it named.
        if (att.provider != q.provider) revert ProviderRegistryWrongProvider(requestId, att.provider, q.provider);
        if (att.evidenceHash != q.evidenceHash) {
            revert ProviderRegistryWrongEvidence(requestId, att.evidenceHash, q.evidenceHash);
        }
        (uint8 lo, uint8 hi) = bandRange(att.tier);
        if (att.band < lo || att.band > hi) revert ProviderRegistryBandOutOfRange(att.tier, att.band, lo, hi);
        // INVARIANT: an expired statement never counts.
        if (att.expiresAt <= block.timestamp) revert ProviderRegistryExpired(att.expiresAt, block.timestamp);
        if (att.expiresAt > block.timestamp + _maxValiditySeconds) {
            revert ProviderRegistryValidityTooLong(att.expiresAt, block.timestamp, _maxValiditySeconds);
        }
        uint64 current = _attestations[att.provider].expiresAt;
        // INVARIANT: a record is replaced only by a fresher one, so an old statement cannot undo a newer one.
        if (att.expiresAt <= current) revert ProviderRegistryStale(att.provider, att.expiresAt, current);
    }

    /// @dev The signers of `signatures` over `digest`: strictly ascending, each on the committee and active now.
    function _committeeSigners(
        uint256 requestId,
        address[] memory committee,
        bytes32 digest,
        bytes[] calldata signatures
    ) private view returns (address[] memory signers) {
        uint256 n = signatures.length;
        signers = new address[](n);
        address previous;
        for (uint256 i; i < n; ++i) {
            address signer = ECDSA.recover(digest, signatures[i]);
            // Ascending order makes "distinct" a one-comparison check.
            if (signer <= previous) revert ProviderRegistryUnsortedSigners(i, previous, signer);
            // INVARIANT: only the drawn committee speaks for a request; the provider's own auditors count only if the
            // draw picked them. A signature over other fields recovers to an unrelated address and fails here.
            if (!_contains(committee, signer)) revert ProviderRegistryNotCommitteeMember(requestId, i, signer);
            // INVARIANT: every signer's bond is at stake when the statement is recorded.
            if (!_auditors.isActive(signer)) revert ProviderRegistryNotAuditor(i, signer);
            signers[i] = signer;
            previous = signer;
        }
    }

    function _draw(uint256 requestId, Request storage q) private returns (address[] memory committee) {
        bytes32 seed;
        (seed, committee) = _compute(requestId, q);
        q.drawn = true;
        _committees[requestId] = committee;
        emit CommitteeDrawn(requestId, seed, committee);
    }

    /// @dev The committee of request `requestId` from blockhash(seedBlock): a snapshot draw the provider is excluded
    /// from. No reseed when the hash is gone: whoever holds back the draw would otherwise get a new committee.
    function _compute(uint256 requestId, Request storage q) private view returns (bytes32 seed, address[] memory) {
        if (block.number <= q.seedBlock) revert ProviderRegistrySeedNotReady(requestId, q.seedBlock, block.number);
        if (block.number - q.seedBlock > _BLOCKHASH_RANGE) revert ProviderRegistrySeedExpired(requestId, q.seedBlock);
        seed = keccak256(abi.encode(blockhash(q.seedBlock), address(this), requestId));
        address[] memory exclude = new address[](1);
        exclude[0] = q.provider;
        return (seed, _auditors.drawPanel(seed, _committeeSize, exclude, q.asOf));
    }

    function _contains(address[] memory list, address who) private pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == who) return true;
        }
        return false;
    }

    function _toMemory(Receipts.AttestationVerified calldata att)
        private
        pure
        returns (Receipts.AttestationVerified memory)
    {
        return att;
    }
}
