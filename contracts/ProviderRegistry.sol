// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {PanelTiming} from "./libraries/PanelTiming.sol";
import {Receipts} from "./libraries/Receipts.sol";

/// @title ProviderRegistry: provider attestation tiers recorded on a quorum of a drawn auditor committee
/// (see IProviderRegistry and docs/panels.md)
/// @dev No admin: the committee size, quorum, seed delay, request window, maximum validity, request fee and the auditor
/// registry are fixed at deployment.
contract ProviderRegistry is IProviderRegistry, EIP712 {
    using SafeCast for uint256;
    using SafeERC20 for IERC20;

    /// @dev A request in three slots (deadline = asOf + requestWindowSeconds and the binding are not stored). NOTE:
    /// uint32 block numbers last 4.29e9 blocks (1,600 years of 12 s blocks); past that, requestAttestation reverts
    /// (SafeCast).
    struct StoredRequest {
        address provider;
        uint48 asOf;
        uint32 seedBlock;
        bool drawn;
        bool recorded;
        bytes32 evidenceHash;
        bytes32 challenge;
    }

    /// @dev A record in two slots; bit i of `signerMask` set: member i of the request's committee signed it. NOTE:
    /// uint48 request ids and record times are far beyond any reachable count or date (2.8e14).
    struct StoredAttestation {
        uint8 tier;
        uint8 band;
        uint64 expiresAt;
        uint64 issuedAt;
        uint48 recordedAt;
        uint48 requestId;
        uint16 signerMask;
        bytes32 evidenceHash;
    }

    /// @notice The tier of a provider with no counting record.
    uint8 public constant TIER_NONE = 4;
    /// @notice Largest committee (signature checks loop over it; AuditorRegistry draws are O(pool)).
    uint256 public constant MAX_COMMITTEE = 15;
    /// @notice How far back the challenge block of a request may be: evidence bound to it is at most this many blocks
    /// older than its request.
    uint256 public constant CHALLENGE_MAX_AGE_BLOCKS = 64;
    /// @notice Where request fees go (never claimed: burned; ERC-20s refuse address(0)).
    address public constant BURN_ADDRESS = 0x000000000000000000000000000000000000dEaD;
    /// @dev blockhash(n) is only available for the 256 most recent blocks.
    uint256 private constant _BLOCKHASH_RANGE = 256;

    IAuditorRegistry private immutable _auditors;
    uint256 private immutable _committeeSize;
    uint256 private immutable _quorum;
    uint64 private immutable _maxValiditySeconds;
    uint16 private immutable _seedDelayBlocks;
    uint64 private immutable _requestWindowSeconds;
    IERC20 private immutable _feeToken;
    uint256 private immutable _requestFee;

    uint256 private _requestCount;
    mapping(uint256 requestId => StoredRequest) private _requests;
    mapping(uint256 requestId => address[]) private _committees;
    mapping(address provider => uint256 requestId) private _lastRequest;
    mapping(address provider => StoredAttestation) private _attestations;
    mapping(bytes32 binding => uint256 requestId) private _bindingUsed;

    constructor(
        IAuditorRegistry auditors_,
        uint256 committeeSize_,
        uint256 quorum_,
        uint64 maxValiditySeconds_,
        uint16 seedDelayBlocks_,
        uint64 requestWindowSeconds_,
        uint256 requestFee_
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
        // INVARIANT: every committee draw costs its requester something it never gets back. The one-request-per-window
        // rule binds an address, and addresses are free: without a fee a provider would draw committees in parallel for
        // as many provider addresses as it likes and use whichever drew its own auditors.
        if (requestFee_ == 0) revert ProviderRegistryZeroFee();
        _auditors = auditors_;
        _feeToken = IERC20(auditors_.token());
        _requestFee = requestFee_;
        _committeeSize = committeeSize_;
        _quorum = quorum_;
        _maxValiditySeconds = maxValiditySeconds_;
        _seedDelayBlocks = seedDelayBlocks_;
        _requestWindowSeconds = requestWindowSeconds_;
    }

    /// @inheritdoc IProviderRegistry
    function requestAttestation(bytes32 evidenceHash, uint64 challengeBlock) external returns (uint256 requestId) {
        if (evidenceHash == bytes32(0)) revert ProviderRegistryZeroEvidence();
        uint256 previous = _lastRequest[msg.sender];
        // INVARIANT: one committee draw per provider per request window, so re-rolling the committee costs a window.
        if (previous != 0 && block.timestamp <= _deadline(_requests[previous])) {
            revert ProviderRegistryRequestOpen(msg.sender, previous, _deadline(_requests[previous]));
        }
        // INVARIANT: the challenge is a blockhash nobody knew before its block, at most CHALLENGE_MAX_AGE_BLOCKS old.
        if (challengeBlock >= block.number || block.number - challengeBlock > CHALLENGE_MAX_AGE_BLOCKS) {
            revert ProviderRegistryBadChallengeBlock(challengeBlock, block.number);
        }
        bytes32 challenge = blockhash(challengeBlock);
        bytes32 binding = _binding(msg.sender, challenge);
        uint256 used = _bindingUsed[binding];
        // INVARIANT: a binding (and so the evidence that carries it) opens one request.
        if (used != 0) revert ProviderRegistryChallengeUsed(msg.sender, challengeBlock, used);
        uint256 fee = _requestFee;
        uint256 allowed = _feeToken.allowance(msg.sender, address(this));
        // INVARIANT: a request is opened only with its fee burned (a clear error beats whatever the token reverts with).
        if (allowed < fee) revert ProviderRegistryFeeNotApproved(msg.sender, allowed, fee);
        requestId = ++_requestCount;
        uint48 asOf = block.timestamp.toUint48();
        uint32 seedBlock = (block.number + _seedDelayBlocks).toUint32();
        _requests[requestId] = StoredRequest({
            provider: msg.sender,
            asOf: asOf,
            seedBlock: seedBlock,
            drawn: false,
            recorded: false,
            evidenceHash: evidenceHash,
            challenge: challenge
        });
        _bindingUsed[binding] = requestId;
        uint64 deadline = uint64(asOf) + _requestWindowSeconds;
        _lastRequest[msg.sender] = requestId;
        emit AttestationRequested(requestId, msg.sender, evidenceHash, asOf, seedBlock, deadline, binding);
        _feeToken.safeTransferFrom(msg.sender, BURN_ADDRESS, fee);
    }

    /// @inheritdoc IProviderRegistry
    function drawCommittee(uint256 requestId) external returns (address[] memory committee) {
        StoredRequest storage q = _openRequest(requestId);
        if (q.drawn) revert ProviderRegistryCommitteeDrawn(requestId);
        committee = _draw(requestId, q);
    }

    /// @inheritdoc IProviderRegistry
    function record(Receipts.AttestationVerified calldata att, bytes[] calldata signatures) external {
        uint256 requestId = att.requestId;
        StoredRequest storage q = _openRequest(requestId);
        _checkStatement(requestId, q, att);
        uint256 n = signatures.length;
        if (n < _quorum) revert ProviderRegistryBelowQuorum(n, _quorum);
        address[] memory committee = q.drawn ? _committees[requestId] : _draw(requestId, q);
        bytes32 digest = _hashTypedDataV4(Receipts.hash(_toMemory(att)));
        (address[] memory signers, uint16 mask) = _committeeSigners(requestId, committee, digest, signatures);

        q.recorded = true;
        _attestations[att.provider] = StoredAttestation({
            tier: att.tier,
            band: att.band,
            expiresAt: att.expiresAt,
            issuedAt: att.issuedAt,
            recordedAt: uint48(block.timestamp), // fits until year 8.9e6
            requestId: uint48(requestId), // fits: requestId <= _requestCount, one per transaction
            signerMask: mask,
            evidenceHash: att.evidenceHash
        });
        emit AttestationRecorded(att.provider, requestId, att.tier, att.band, att.evidenceHash, att.expiresAt, digest, signers);
    }

    /// @inheritdoc IProviderRegistry
    function attestationOf(address provider) external view returns (Attestation memory a) {
        StoredAttestation storage r = _attestations[provider];
        a.tier = r.tier;
        a.band = r.band;
        a.expiresAt = r.expiresAt;
        a.recordedAt = r.recordedAt;
        a.evidenceHash = r.evidenceHash;
        a.requestId = r.requestId;
        a.issuedAt = r.issuedAt;
    }

    /// @inheritdoc IProviderRegistry
    function signersOf(address provider) public view returns (address[] memory signers) {
        StoredAttestation storage r = _attestations[provider];
        address[] storage committee = _committees[r.requestId];
        uint16 mask = r.signerMask;
        signers = new address[](committee.length);
        uint256 n;
        for (uint256 i; i < committee.length; ++i) {
            if (mask & (1 << i) != 0) signers[n++] = committee[i];
        }
        assembly ("memory-safe") {
            mstore(signers, n) // shrink to the n signers (n <= committee length)
        }
    }

    /// @inheritdoc IProviderRegistry
    function backingOf(address provider) public view returns (uint256 active) {
        address[] memory signers = signersOf(provider);
        for (uint256 i; i < signers.length; ++i) {
            if (_auditors.isActive(signers[i])) ++active;
        }
    }

    /// @inheritdoc IProviderRegistry
    function effectiveTier(address provider) external view returns (uint8) {
        StoredAttestation storage a = _attestations[provider];
        if (a.tier == 0 || a.expiresAt <= block.timestamp) return TIER_NONE;
        // INVARIANT: a statement counts only while a quorum of its signers keeps its bond in the registry.
        if (backingOf(provider) < _quorum) return TIER_NONE;
        return a.tier;
    }

    /// @inheritdoc IProviderRegistry
    function requestOf(uint256 requestId) external view returns (Request memory v) {
        StoredRequest storage q = _requests[requestId];
        v.provider = q.provider;
        v.asOf = q.asOf;
        v.drawn = q.drawn;
        v.recorded = q.recorded;
        v.seedBlock = q.seedBlock;
        v.deadline = q.provider == address(0) ? 0 : _deadline(q);
        v.evidenceHash = q.evidenceHash;
        v.challenge = q.challenge;
        v.binding = q.provider == address(0) ? bytes32(0) : _binding(q.provider, q.challenge);
    }

    /// @inheritdoc IProviderRegistry
    function bindingOf(uint256 requestId) external view returns (bytes32) {
        StoredRequest storage q = _requests[requestId];
        return q.provider == address(0) ? bytes32(0) : _binding(q.provider, q.challenge);
    }

    /// @inheritdoc IProviderRegistry
    function lastRequestOf(address provider) external view returns (uint256) {
        return _lastRequest[provider];
    }

    /// @inheritdoc IProviderRegistry
    function committeeOf(uint256 requestId) external view returns (address[] memory) {
        StoredRequest storage q = _requests[requestId];
        if (q.drawn) return _committees[requestId];
        if (q.provider == address(0)) revert ProviderRegistryUnknownRequest(requestId);
        if (block.timestamp > _deadline(q)) revert ProviderRegistryRequestClosed(requestId, _deadline(q), block.timestamp);
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

    /// @inheritdoc IProviderRegistry
    function requestFee() external view returns (uint256) {
        return _requestFee;
    }

    /// @inheritdoc IProviderRegistry
    function feeToken() external view returns (address) {
        return address(_feeToken);
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

    function _openRequest(uint256 requestId) private view returns (StoredRequest storage q) {
        q = _requests[requestId];
        if (q.provider == address(0)) revert ProviderRegistryUnknownRequest(requestId);
        // INVARIANT: a request is drawn and recorded by its deadline, while its snapshot is drawable (constructor).
        if (block.timestamp > _deadline(q)) revert ProviderRegistryRequestClosed(requestId, _deadline(q), block.timestamp);
    }

    function _deadline(StoredRequest storage q) private view returns (uint64) {
        return uint64(q.asOf) + _requestWindowSeconds;
    }

    /// @dev The statement fits its request, its tier's band range and the validity rules, and is fresher than the record.
    function _checkStatement(uint256 requestId, StoredRequest storage q, Receipts.AttestationVerified calldata att)
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
        // INVARIANT: a statement is about evidence checked after its request and by now.
        if (att.issuedAt < q.asOf) revert ProviderRegistryIssuedBeforeRequest(requestId, att.issuedAt, uint64(q.asOf));
        if (att.issuedAt > block.timestamp) revert ProviderRegistryIssuedInFuture(att.issuedAt, block.timestamp);
        // INVARIANT: a record is replaced only by a newer statement (signed issuedAt), whatever the expiries, so an
        // old statement cannot undo a newer one and a long record cannot block a shorter downgrade. It holds by
        // construction: a provider's next request opens only after its previous one's deadline (RequestOpen), a
        // statement is recorded by its request's deadline (RequestClosed) and issued no earlier than its request
        // (IssuedBeforeRequest), so every new issuedAt >= asOf > previous deadline >= the recorded issuedAt. The
        // assert keeps it so if those rules ever change (a Panic, never a reachable custom error).
        assert(att.issuedAt > _attestations[att.provider].issuedAt);
    }

    /// @dev The signers of `signatures` over `digest` (strictly ascending, each on the committee and active now) and
    /// the mask of their committee positions.
    function _committeeSigners(
        uint256 requestId,
        address[] memory committee,
        bytes32 digest,
        bytes[] calldata signatures
    ) private view returns (address[] memory signers, uint16 mask) {
        uint256 n = signatures.length;
        signers = new address[](n);
        address previous;
        for (uint256 i; i < n; ++i) {
            address signer = ECDSA.recover(digest, signatures[i]);
            // Ascending order makes "distinct" a one-comparison check.
            if (signer <= previous) revert ProviderRegistryUnsortedSigners(i, previous, signer);
            // INVARIANT: only the drawn committee speaks for a request; the provider's own auditors count only if the
            // draw picked them. A signature over other fields recovers to an unrelated address and fails here.
            uint256 at = _indexOf(committee, signer);
            if (at == type(uint256).max) revert ProviderRegistryNotCommitteeMember(requestId, i, signer);
            // INVARIANT: every signer's bond is at stake when the statement is recorded.
            if (!_auditors.isActive(signer)) revert ProviderRegistryNotAuditor(i, signer);
            signers[i] = signer;
            mask |= uint16(1 << at); // fits: at < committee length <= MAX_COMMITTEE = 15
            previous = signer;
        }
    }

    function _draw(uint256 requestId, StoredRequest storage q) private returns (address[] memory committee) {
        bytes32 seed;
        (seed, committee) = _compute(requestId, q);
        q.drawn = true;
        _committees[requestId] = committee;
        emit CommitteeDrawn(requestId, seed, committee);
    }

    /// @dev The committee of request `requestId` from blockhash(seedBlock): a snapshot draw the provider is excluded
    /// from. No reseed when the hash is gone: whoever holds back the draw would otherwise get a new committee.
    function _compute(uint256 requestId, StoredRequest storage q) private view returns (bytes32 seed, address[] memory) {
        if (block.number <= q.seedBlock) revert ProviderRegistrySeedNotReady(requestId, q.seedBlock, block.number);
        if (block.number - q.seedBlock > _BLOCKHASH_RANGE) revert ProviderRegistrySeedExpired(requestId, q.seedBlock);
        seed = keccak256(abi.encode(blockhash(q.seedBlock), address(this), requestId));
        address[] memory exclude = new address[](1);
        exclude[0] = q.provider;
        return (seed, _auditors.drawPanel(seed, _committeeSize, exclude, q.asOf));
    }

    /// @dev What the evidence of `provider`'s request with `challenge` must carry as its nonce / report data.
    function _binding(address provider, bytes32 challenge) private view returns (bytes32) {
        return keccak256(abi.encode(provider, block.chainid, address(this), challenge));
    }

    /// @dev Position of `who` in `list`, or type(uint256).max.
    function _indexOf(address[] memory list, address who) private pure returns (uint256) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == who) return i;
        }
        return type(uint256).max;
    }

    function _toMemory(Receipts.AttestationVerified calldata att)
        private
        pure
        returns (Receipts.AttestationVerified memory)
    {
        return att;
    }
}
