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
    string public constant VERSION = "pouw-ProviderRegistry-1";

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

    /// @dev A statement dispute in three slots. NOTE: uint32 seed blocks and uint48 times as in StoredRequest; uint40
    /// request ids last 1.1e12 requests (one per transaction: unreachable); votes fit a uint8 (panel <= MAX_COMMITTEE).
    struct StoredDispute {
        address provider;
        uint48 asOf;
        uint32 seedBlock;
        bool drawn;
        uint8 outcome;
        address challenger;
        uint40 requestId;
        uint16 signerMask;
        uint8 falseVotes;
        uint8 trueVotes;
        uint8 revokedVotes;
        uint16 votedMask;
        uint256 bond;
    }

    /// @dev A device's binding to one provider, until `expiresAt` (a statement's expiry). One slot.
    struct DeviceBinding {
        address provider;
        uint64 expiresAt;
    }

    /// @notice The tier of a provider with no counting record.
    uint8 public constant TIER_NONE = 4;
    /// @notice Most devices one request declares (record binds each: a loop of storage writes).
    uint256 public constant MAX_DEVICES = 64;
    /// @notice Largest committee (signature checks loop over it; AuditorRegistry draws are O(pool)).
    uint256 public constant MAX_COMMITTEE = 15;
    /// @notice How far back the challenge block of a request may be: evidence bound to it is at most this many blocks
    /// older than its request.
    uint256 public constant CHALLENGE_MAX_AGE_BLOCKS = 64;
    /// @notice Where request fees go (never claimed: burned; ERC-20s refuse address(0)).
    address public constant BURN_ADDRESS = 0x000000000000000000000000000000000000dEaD;
    /// @notice Dispute outcomes (Dispute.outcome): open, statement false (upheld), statement stands (rejected), no
    /// quorum by the deadline (undecided).
    uint8 public constant DISPUTE_OPEN = 0;
    uint8 public constant DISPUTE_UPHELD = 1;
    uint8 public constant DISPUTE_REJECTED = 2;
    uint8 public constant DISPUTE_UNDECIDED = 3;
    /// @notice Dispute outcome: the statement held at its time, its evidence is revoked since (record revoked, no forfeit).
    uint8 public constant DISPUTE_REVOKED = 4;
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
    uint256 private _disputeCount;
    mapping(uint256 disputeId => StoredDispute) private _disputes;
    mapping(uint256 disputeId => address[]) private _panels;
    mapping(uint256 requestId => uint256 disputeId) private _disputeOfRequest;
    mapping(address account => uint256 amount) private _credits;
    mapping(uint256 requestId => bytes32[]) private _requestDevices;
    mapping(bytes32 deviceId => DeviceBinding) private _devices;
    mapping(uint256 requestId => address sessionKey) private _sessionKeys;

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
        requestId = _requestAttestation(evidenceHash, challengeBlock);
    }

    /// @inheritdoc IProviderRegistry
    function requestAttestation(bytes32 evidenceHash, uint64 challengeBlock, bytes32[] calldata deviceIds)
        external
        returns (uint256 requestId)
    {
        requestId = _requestWithDevices(evidenceHash, challengeBlock, deviceIds);
    }

    /// @inheritdoc IProviderRegistry
    function requestAttestation(
        bytes32 evidenceHash,
        uint64 challengeBlock,
        bytes32[] calldata deviceIds,
        address sessionKey
    ) external returns (uint256 requestId) {
        if (sessionKey == address(0)) revert ProviderRegistryZeroSessionKey();
        requestId = _requestWithDevices(evidenceHash, challengeBlock, deviceIds);
        _sessionKeys[requestId] = sessionKey;
        emit SessionKeyDeclared(requestId, sessionKey);
    }

    /// @inheritdoc IProviderRegistry
    function sessionKeyOf(uint256 requestId) external view returns (address) {
        return _sessionKeys[requestId];
    }

    function _requestWithDevices(bytes32 evidenceHash, uint64 challengeBlock, bytes32[] calldata deviceIds)
        private
        returns (uint256 requestId)
    {
        uint256 n = deviceIds.length;
        if (n > MAX_DEVICES) revert ProviderRegistryTooManyDevices(n, MAX_DEVICES);
        for (uint256 i; i < n; ++i) {
            // Ascending order makes "distinct" a one-comparison check.
            if (i > 0 && deviceIds[i] <= deviceIds[i - 1]) revert ProviderRegistryUnsortedDevices(i, deviceIds[i - 1], deviceIds[i]);
            _checkDeviceFree(deviceIds[i], msg.sender);
        }
        requestId = _requestAttestation(evidenceHash, challengeBlock);
        _requestDevices[requestId] = deviceIds;
    }

    /// @inheritdoc IProviderRegistry
    function devicesOf(uint256 requestId) external view returns (bytes32[] memory) {
        return _requestDevices[requestId];
    }

    /// @inheritdoc IProviderRegistry
    function deviceBindingOf(bytes32 deviceId) external view returns (address provider, uint64 expiresAt) {
        DeviceBinding storage b = _devices[deviceId];
        return (b.provider, b.expiresAt);
    }

    function _requestAttestation(bytes32 evidenceHash, uint64 challengeBlock) private returns (uint256 requestId) {
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
        // INVARIANT: a tier that names an accelerator (1-2) rests on evidence bound to the session key its request
        // declared, so its discounted lock is used only by commits from that key (JobMarket.commitSegment).
        if (att.tier <= 2 && _sessionKeys[requestId] == address(0)) revert ProviderRegistryTierNeedsSessionKey(requestId, att.tier);
        bytes32 digest = _hashTypedDataV4(Receipts.hash(_toMemory(att)));
        (address[] memory signers, uint16 mask) = _committeeSigners(requestId, committee, digest, signatures);

        q.recorded = true;
        // A device serves one provider at a time: an attested tier binds the request's declared devices until expiry.
        if (att.tier != TIER_NONE) _bindDevices(requestId, att.provider, att.expiresAt);
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
    function disputeStatement(address provider, bytes calldata bundle) external returns (uint256 disputeId) {
        StoredAttestation storage a = _attestations[provider];
        // INVARIANT: only a standing statement that claims an attested tier (1..3) is disputed; tier 4 claims nothing.
        if (a.tier == 0 || a.tier == TIER_NONE || a.expiresAt <= block.timestamp) {
            revert ProviderRegistryNothingToDispute(provider, a.tier, a.expiresAt, block.timestamp);
        }
        uint256 requestId = a.requestId;
        uint256 previous = _disputeOfRequest[requestId];
        if (previous != 0) {
            StoredDispute storage p = _disputes[previous];
            // A lapsed dispute (its seed gone undrawn, or its deadline passed) is settled undecided here, so whoever
            // holds a statement's dispute open without drawing its panel blocks nobody.
            if (p.outcome == DISPUTE_OPEN && _lapsed(p)) _settleUndecided(previous, p);
            // INVARIANT: only a live or decided dispute blocks another of the same statement (signers forfeit at most
            // once for it); an undecided one never does.
            if (p.outcome != DISPUTE_UNDECIDED) revert ProviderRegistryAlreadyDisputed(requestId, previous);
        }
        uint256 bond = _auditors.minBond();
        uint256 allowed = _feeToken.allowance(msg.sender, address(this));
        // INVARIANT: a dispute is opened only with its bond locked, so a false dispute costs its challenger.
        if (allowed < bond) revert ProviderRegistryBondNotApproved(msg.sender, allowed, bond);
        disputeId = ++_disputeCount;
        uint48 asOf = block.timestamp.toUint48();
        uint32 seedBlock = (block.number + _seedDelayBlocks).toUint32();
        _disputes[disputeId] = StoredDispute({
            provider: provider,
            asOf: asOf,
            seedBlock: seedBlock,
            drawn: false,
            outcome: DISPUTE_OPEN,
            challenger: msg.sender,
            requestId: uint40(requestId), // a stored record's request id: far below 2^40 (struct NOTE)
            signerMask: a.signerMask,
            falseVotes: 0,
            trueVotes: 0,
            revokedVotes: 0,
            votedMask: 0,
            bond: bond
        });
        _disputeOfRequest[requestId] = disputeId;
        emit StatementDisputed(
            disputeId, provider, requestId, msg.sender, bond, asOf, seedBlock, uint64(asOf) + _requestWindowSeconds
        );
        // INVARIANT: a dispute opens only with the statement's evidence bundle, emitted here, so every panel member can
        // judge it (a withheld bundle would leave the panel silent and its seats forfeiting, at no cost to whoever
        // disputes).
        _publishEvidence(disputeId, requestId, a.evidenceHash, bundle);
        _feeToken.safeTransferFrom(msg.sender, address(this), bond);
    }

    /// @dev Emits StatementEvidence(disputeId, bundle) and reverts ProviderRegistryWrongEvidence unless keccak256(bundle)
    /// is `evidenceHash` (a revert drops the log). The event's ABI encoding (offset, length, padded bytes) is written
    /// by hand above the free memory pointer: one copy for the hash and the log, and the runtime code stays under the
    /// size limit.
    function _publishEvidence(uint256 disputeId, uint256 requestId, bytes32 evidenceHash, bytes calldata bundle) private {
        bytes32 topic = StatementEvidence.selector;
        bytes32 got;
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            let len := bundle.length
            mstore(ptr, 0x20)
            mstore(add(ptr, 0x20), len)
            let data := add(ptr, 0x40)
            // the padding of the last word must be zero (memory above the free pointer may hold old bytes)
            mstore(add(data, and(len, not(31))), 0)
            calldatacopy(data, bundle.offset, len)
            got := keccak256(data, len)
            log2(ptr, add(0x40, and(add(len, 31), not(31))), topic, disputeId)
        }
        _requireEvidence(requestId, got, evidenceHash);
    }

    function _requireEvidence(uint256 requestId, bytes32 evidenceHash, bytes32 requested) private pure {
        if (evidenceHash != requested) revert ProviderRegistryWrongEvidence(requestId, evidenceHash, requested);
    }

    /// @inheritdoc IProviderRegistry
    function drawDisputePanel(uint256 disputeId) external returns (address[] memory panel) {
        StoredDispute storage d = _openDispute(disputeId);
        if (d.drawn) return _panels[disputeId];
        panel = _drawDisputePanel(disputeId, d);
    }

    /// @inheritdoc IProviderRegistry
    function voteDispute(uint256 disputeId, bool statementFalse) external {
        _vote(disputeId, statementFalse ? DISPUTE_UPHELD : DISPUTE_REJECTED);
    }

    /// @inheritdoc IProviderRegistry
    function voteRevoked(uint256 disputeId) external {
        _vote(disputeId, DISPUTE_REVOKED);
    }

    /// @dev One panel vote for `verdict` (DISPUTE_UPHELD, DISPUTE_REJECTED or DISPUTE_REVOKED); the vote that makes a
    /// quorum for its verdict settles the dispute with it.
    function _vote(uint256 disputeId, uint8 verdict) private {
        StoredDispute storage d = _openDispute(disputeId);
        address[] memory panel = d.drawn ? _panels[disputeId] : _drawDisputePanel(disputeId, d);
        uint256 at = _indexOf(panel, msg.sender);
        // INVARIANT: only the drawn panel decides a dispute, each member once, with its bond at stake.
        if (at == type(uint256).max) revert ProviderRegistryNotPanelMember(disputeId, msg.sender);
        if (d.votedMask & (1 << at) != 0) revert ProviderRegistryAlreadyVoted(disputeId, msg.sender);
        if (!_auditors.isActive(msg.sender)) revert ProviderRegistryVoterNotAuditor(disputeId, msg.sender);
        d.votedMask |= uint16(1 << at); // fits: at < panel length <= MAX_COMMITTEE = 15
        // votes fit a uint8: at most one per member of a panel <= MAX_COMMITTEE
        uint8 votes;
        if (verdict == DISPUTE_REVOKED) {
            votes = ++d.revokedVotes;
            emit DisputeVotedRevoked(disputeId, msg.sender);
        } else {
            votes = verdict == DISPUTE_UPHELD ? ++d.falseVotes : ++d.trueVotes;
            emit DisputeVoted(disputeId, msg.sender, verdict == DISPUTE_UPHELD);
        }
        // INVARIANT: each verdict needs its own quorum; "revoked since" votes never add to "false" ones (or the other
        // way), so neither a colluding minority nor a split panel turns a false statement into a forfeit-free revocation.
        if (votes < _quorum) return;
        if (verdict == DISPUTE_UPHELD) {
            _uphold(disputeId, d);
        } else if (verdict == DISPUTE_REJECTED) {
            _reject(disputeId, d);
        } else {
            // The statement held when signed: the record goes (its evidence no longer supports the tier), its signers
            // keep their bonds and the challenger its bond.
            d.outcome = DISPUTE_REVOKED;
            _revokeRecord(disputeId, d);
            emit DisputeSettled(disputeId, DISPUTE_REVOKED);
            _credit(d.challenger, d.bond);
        }
    }

    /// @inheritdoc IProviderRegistry
    function settleDispute(uint256 disputeId) external {
        StoredDispute storage d = _disputes[disputeId];
        if (d.provider == address(0)) revert ProviderRegistryUnknownDispute(disputeId);
        if (d.outcome != DISPUTE_OPEN) revert ProviderRegistryDisputeSettled(disputeId);
        // INVARIANT: a dispute is settled undecided only once no vote can count any more (deadline passed, or the panel
        // seed gone undrawn).
        if (!_lapsed(d)) revert ProviderRegistryDisputeOpen(disputeId, uint64(d.asOf) + _requestWindowSeconds, block.timestamp);
        _settleUndecided(disputeId, d);
    }

    /// @inheritdoc IProviderRegistry
    function claimCredit() external returns (uint256 amount) {
        amount = _credits[msg.sender];
        // INVARIANT: a credit is paid once: it is zeroed before the transfer.
        if (amount == 0) revert ProviderRegistryNothingToClaim(msg.sender);
        _credits[msg.sender] = 0;
        emit DisputeCreditClaimed(msg.sender, amount);
        _feeToken.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IProviderRegistry
    function disputeOf(uint256 disputeId) external view returns (Dispute memory v) {
        StoredDispute storage d = _disputes[disputeId];
        v.provider = d.provider;
        v.requestId = d.requestId;
        v.challenger = d.challenger;
        v.bond = d.bond;
        v.asOf = d.asOf;
        v.seedBlock = d.seedBlock;
        v.deadline = d.provider == address(0) ? 0 : uint64(d.asOf) + _requestWindowSeconds;
        v.drawn = d.drawn;
        v.falseVotes = d.falseVotes;
        v.trueVotes = d.trueVotes;
        v.outcome = d.outcome;
    }

    /// @inheritdoc IProviderRegistry
    function panelOf(uint256 disputeId) external view returns (address[] memory) {
        return _panels[disputeId];
    }

    /// @inheritdoc IProviderRegistry
    function disputeOfRequest(uint256 requestId) external view returns (uint256) {
        return _disputeOfRequest[requestId];
    }

    /// @inheritdoc IProviderRegistry
    function disputeBond() external view returns (uint256) {
        return _auditors.minBond();
    }

    /// @inheritdoc IProviderRegistry
    function creditOf(address account) external view returns (uint256) {
        return _credits[account];
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
        return _maskedSigners(r.requestId, r.signerMask);
    }

    /// @inheritdoc IProviderRegistry
    function backingOf(address provider) public view returns (uint256 active) {
        address[] memory signers = signersOf(provider);
        for (uint256 i; i < signers.length; ++i) {
            if (_auditors.isActive(signers[i])) ++active;
        }
    }

    /// @inheritdoc IProviderRegistry
    function effectiveTier(address provider) public view returns (uint8) {
        StoredAttestation storage a = _attestations[provider];
        if (a.tier == 0 || a.expiresAt <= block.timestamp) return TIER_NONE;
        // INVARIANT: a statement counts only while a quorum of its signers keeps its bond in the registry.
        if (backingOf(provider) < _quorum) return TIER_NONE;
        return a.tier;
    }

    /// @inheritdoc IProviderRegistry
    function tierAndSessionKey(address provider) external view returns (uint8 tier, address sessionKey, uint64 expiresAt) {
        tier = effectiveTier(provider);
        // INVARIANT: a key and an expiry are named only with a counting tier: the record's, whose evidence binds the key.
        if (tier != TIER_NONE) {
            StoredAttestation storage a = _attestations[provider];
            (sessionKey, expiresAt) = (_sessionKeys[a.requestId], a.expiresAt);
        }
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
        v.binding = _bindingOf(q);
    }

    /// @inheritdoc IProviderRegistry
    function bindingOf(uint256 requestId) external view returns (bytes32) {
        return _bindingOf(_requests[requestId]);
    }

    function _bindingOf(StoredRequest storage q) private view returns (bytes32) {
        return q.provider == address(0) ? bytes32(0) : _binding(q.provider, q.challenge);
    }

    /// @inheritdoc IProviderRegistry
    function lastRequestOf(address provider) external view returns (uint256) {
        return _lastRequest[provider];
    }

    /// @inheritdoc IProviderRegistry
    function committeeOf(uint256 requestId) external view returns (address[] memory) {
        if (_requests[requestId].drawn) return _committees[requestId];
        (, address[] memory committee) = _compute(requestId, _openRequest(requestId));
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

    /// @dev Reverts when `deviceId` is bound to a provider other than `provider` by a statement that has not expired.
    function _checkDeviceFree(bytes32 deviceId, address provider) private view {
        DeviceBinding storage b = _devices[deviceId];
        // INVARIANT: a device attests for one provider at a time (until the statement that bound it expires).
        if (b.provider != address(0) && b.provider != provider && b.expiresAt > block.timestamp) {
            revert ProviderRegistryDeviceBound(deviceId, b.provider, b.expiresAt);
        }
    }

    function _bindDevices(uint256 requestId, address provider, uint64 expiresAt) private {
        bytes32[] storage ids = _requestDevices[requestId];
        for (uint256 i; i < ids.length; ++i) {
            _checkDeviceFree(ids[i], provider);
            _devices[ids[i]] = DeviceBinding({provider: provider, expiresAt: expiresAt});
        }
    }

    function _openDispute(uint256 disputeId) private view returns (StoredDispute storage d) {
        d = _disputes[disputeId];
        if (d.provider == address(0)) revert ProviderRegistryUnknownDispute(disputeId);
        if (d.outcome != DISPUTE_OPEN) revert ProviderRegistryDisputeSettled(disputeId);
        uint64 deadline = uint64(d.asOf) + _requestWindowSeconds;
        // INVARIANT: a panel is drawn and votes by the deadline, while its snapshot is drawable (constructor).
        if (block.timestamp > deadline) revert ProviderRegistryDisputeClosed(disputeId, deadline, block.timestamp);
    }

    /// @dev The panel of dispute `disputeId`: a snapshot draw like a committee's, excluding the provider, the challenger
    /// and the statement's signers (none of them judges its own case).
    function _drawDisputePanel(uint256 disputeId, StoredDispute storage d) private returns (address[] memory panel) {
        if (block.number <= d.seedBlock) revert ProviderRegistryDisputeSeedNotReady(disputeId, d.seedBlock, block.number);
        // No reseed when the hash is gone (whoever holds back the draw would get a new panel): the dispute has lapsed
        // (settleDispute, or the next disputeStatement of the statement, settles it undecided).
        if (block.number - d.seedBlock > _BLOCKHASH_RANGE) revert ProviderRegistryDisputeSeedExpired(disputeId, d.seedBlock);
        bytes32 seed = keccak256(abi.encode(blockhash(d.seedBlock), address(this), "dispute", disputeId));
        address[] memory signers = _maskedSigners(d.requestId, d.signerMask);
        address[] memory exclude = new address[](signers.length + 2);
        exclude[0] = d.provider;
        exclude[1] = d.challenger;
        for (uint256 i; i < signers.length; ++i) {
            exclude[i + 2] = signers[i];
        }
        panel = _auditors.drawPanel(seed, _committeeSize, exclude, d.asOf);
        d.drawn = true;
        _panels[disputeId] = panel;
        emit DisputePanelDrawn(disputeId, seed, panel);
    }

    /// @dev The statement was false: revoke it if it still stands, forfeit every signer's whole bond (half to the
    /// challenger, the rest burned) and credit the challenger's bond back.
    function _uphold(uint256 disputeId, StoredDispute storage d) private {
        d.outcome = DISPUTE_UPHELD;
        _revokeRecord(disputeId, d);
        // A false statement's devices are released (the provider it bound them to never proved them).
        bytes32[] storage ids = _requestDevices[d.requestId];
        for (uint256 i; i < ids.length; ++i) {
            if (_devices[ids[i]].provider == d.provider) delete _devices[ids[i]];
        }
        emit DisputeSettled(disputeId, DISPUTE_UPHELD);
        _credit(d.challenger, d.bond);
        address[] memory signers = _maskedSigners(d.requestId, d.signerMask);
        for (uint256 i; i < signers.length; ++i) {
            uint256 bond = _auditors.auditorOf(signers[i]).bond;
            uint256 reward = bond / 2;
            // INVARIANT: every signer of a false statement loses all it has bonded, whatever else it is doing.
            if (reward != 0) _auditors.forfeit(signers[i], reward, d.challenger);
            if (bond - reward != 0) _auditors.forfeit(signers[i], bond - reward, BURN_ADDRESS);
        }
    }

    /// @dev Ends the disputed statement's record now if it still stands (a newer record is left alone).
    function _revokeRecord(uint256 disputeId, StoredDispute storage d) private {
        StoredAttestation storage a = _attestations[d.provider];
        if (a.requestId == d.requestId && a.expiresAt > block.timestamp) {
            a.expiresAt = uint64(block.timestamp);
            emit AttestationRevoked(d.provider, d.requestId, disputeId);
        }
    }

    /// @dev No panel decided. A drawn panel with silent seats failed its quorum on them: each silent member forfeits
    /// min(its bond, half the dispute bond), burned, and the challenger's bond is credited back whole. Otherwise (nobody
    /// drew the panel, which anyone, the challenger included, could; or every seat voted and the votes split below
    /// quorum) half the challenger's bond is burned and the rest credited back, so holding a statement's dispute open
    /// is never free.
    function _settleUndecided(uint256 disputeId, StoredDispute storage d) private {
        d.outcome = DISPUTE_UNDECIDED;
        emit DisputeSettled(disputeId, DISPUTE_UNDECIDED);
        uint256 half = d.bond / 2;
        uint256 burned = half;
        if (d.drawn) {
            address[] storage panel = _panels[disputeId];
            for (uint256 i; i < panel.length; ++i) {
                if (d.votedMask & (1 << i) != 0) continue;
                // INVARIANT: a quorum that failed on a silent seat costs the silent member, never the challenger (one
                // provider-owned seat plus one silent member would otherwise burn an honest challenger's bond).
                burned = 0;
                uint256 bond = _auditors.auditorOf(panel[i]).bond;
                uint256 take = bond < half ? bond : half;
                if (take != 0) _auditors.forfeit(panel[i], take, BURN_ADDRESS);
            }
        }
        _credit(d.challenger, d.bond - burned);
        if (burned != 0) _feeToken.safeTransfer(BURN_ADDRESS, burned);
    }

    /// @dev No vote can count on open dispute `d` any more: its deadline passed, or its seed left blockhash range with
    /// no panel drawn (no reseed: whoever held back the draw would get a new panel).
    function _lapsed(StoredDispute storage d) private view returns (bool) {
        return block.timestamp > uint64(d.asOf) + _requestWindowSeconds
            || (!d.drawn && block.number > uint256(d.seedBlock) + _BLOCKHASH_RANGE);
    }

    /// @dev The statement stands: the challenger's bond is burned.
    function _reject(uint256 disputeId, StoredDispute storage d) private {
        d.outcome = DISPUTE_REJECTED;
        emit DisputeSettled(disputeId, DISPUTE_REJECTED);
        _feeToken.safeTransfer(BURN_ADDRESS, d.bond);
    }

    function _credit(address account, uint256 amount) private {
        _credits[account] += amount;
        emit DisputeCredited(account, amount);
    }

    /// @dev The members of request `requestId`'s committee whose bits are set in `mask`.
    function _maskedSigners(uint256 requestId, uint16 mask) private view returns (address[] memory signers) {
        address[] storage committee = _committees[requestId];
        signers = new address[](committee.length);
        uint256 n;
        for (uint256 i; i < committee.length; ++i) {
            if (mask & (1 << i) != 0) signers[n++] = committee[i];
        }
        assembly ("memory-safe") {
            mstore(signers, n) // shrink to the n signers (n <= committee length)
        }
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
        _requireEvidence(requestId, att.evidenceHash, q.evidenceHash);
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
