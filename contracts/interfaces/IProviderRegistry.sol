// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Receipts} from "../libraries/Receipts.sol";

/// @title IProviderRegistry: attestation tiers of providers, recorded on a quorum of a drawn auditor committee
/// @notice The provider asks first: `requestAttestation(evidenceHash, challengeBlock)` fixes the snapshot time asOf = now,
/// the challenge blockhash(challengeBlock) (a block at most CHALLENGE_MAX_AGE_BLOCKS old) and with it the binding
/// keccak256(abi.encode(provider, block.chainid, registry, challenge)) that the evidence's nonce must equal (each binding
/// is accepted once, so one piece of evidence answers one request), a seed
/// block `seedDelayBlocks` ahead and a deadline `requestWindowSeconds` ahead. Once the seed block is mined the
/// committee is AuditorRegistry.drawPanel(keccak256(blockhash(seedBlock), this, requestId), committeeSize,
/// [provider], asOf) (`drawCommittee`, anyone, or the first `record`): a draw from auditors that were eligible before
/// the seed existed, which the provider does not choose. Committee members verify the evidence locally
/// (verifier/src/checks/attestation, which also checks the evidence nonce against `bindingOf(requestId)`) and sign an
/// EIP-712 `AttestationVerified { provider, requestId, tier, band, evidenceHash, expiresAt, issuedAt }` (contracts/libraries/Receipts.sol; domain {name: "PoUW ProviderRegistry", version: "1"}).
/// Anyone may submit the message, before the deadline, with the signatures of at least `quorum()` distinct members of
/// that request's committee that are active in the AuditorRegistry at submission; the registry then records the
/// provider's tier, band, evidence hash, expiry and signers. A provider's statements are ordered by the signed
/// `issuedAt` (at or after the request, not in the future): a newer statement replaces an older one whatever their
/// expiries, so a long record never blocks a shorter downgrade. One record per request; a provider has one open request
/// at a time and opens the next only after the previous one's deadline (each request is one draw: re-rolling the
/// committee costs a whole window).
///
/// Bonds at stake: a record counts (`effectiveTier`) only while it is unexpired AND at least `quorum()` of its signers
/// are still active (bonded at or above the minimum, not exiting): a signer cannot take its bond out while its
/// statement carries weight without withdrawing the weight. A statement is accountable for its lifetime: anyone may
/// dispute it (`disputeStatement`, with a bond); a fresh panel re-verifies the on-chain-hashed evidence and, on a
/// quorum saying it does not support the tier, the record is revoked and its signers forfeit their bonds
/// (docs/panels.md, "Attestation committee"; docs/checks.md has the forged-tier inequality).
///
/// A provider with no record, or an expired or unbacked one, has the effective tier 4 (no attestation: stake
/// substitutes), which JobMarket treats as the weakest tier and charges the full required stake.
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
    /// @param requestId the request whose committee signed it
    /// @param issuedAt unix seconds at which the committee verified the evidence (orders a provider's statements)
    /// @dev NOTE: a view type, never stored (storage packs StoredAttestation), so packing is moot; issuedAt is last to
    /// keep the earlier fields where existing callers read them.
    // solhint-disable-next-line gas-struct-packing
    struct Attestation {
        uint8 tier;
        uint8 band;
        uint64 expiresAt;
        uint64 recordedAt;
        bytes32 evidenceHash;
        uint256 requestId;
        uint64 issuedAt;
    }

    /// @notice An attestation request.
    /// @param provider who asked (the statement is about it)
    /// @param asOf the AuditorRegistry snapshot time the committee is drawn from (the request's block time)
    /// @param seedBlock the block whose hash seeds the committee draw
    /// @param deadline unix seconds after which the request can no longer be drawn or recorded
    /// @param drawn whether the committee is drawn (committeeOf)
    /// @param recorded whether an attestation was recorded for it
    /// @param evidenceHash keccak256 of the evidence token the committee is to verify
    /// @param challenge blockhash of the challenge block the provider named (unknown before that block)
    /// @param binding keccak256(abi.encode(provider, chainid, registry, challenge)): the evidence nonce / report data
    struct Request {
        address provider;
        uint64 asOf;
        bool drawn;
        bool recorded;
        uint64 seedBlock;
        uint64 deadline;
        bytes32 evidenceHash;
        bytes32 challenge;
        bytes32 binding;
    }

    /// @notice A dispute of a recorded statement (IProviderRegistry.disputeStatement).
    /// @param provider whose statement
    /// @param requestId the statement's request
    /// @param challenger who disputes it (its bond is locked)
    /// @param bond the locked bond
    /// @param asOf the panel's snapshot time (the dispute's block time)
    /// @param seedBlock the block whose hash seeds the panel
    /// @param deadline unix seconds after which no vote counts
    /// @param drawn whether the panel is drawn
    /// @param falseVotes votes that the evidence does not support the tier
    /// @param trueVotes votes that it does
    /// @param outcome 0 open, 1 upheld, 2 rejected, 3 undecided, 4 revoked since (the statement held at its time)
    // solhint-disable-next-line gas-struct-packing
    struct Dispute {
        address provider;
        uint256 requestId;
        address challenger;
        uint256 bond;
        uint64 asOf;
        uint64 seedBlock;
        uint64 deadline;
        bool drawn;
        uint8 falseVotes;
        uint8 trueVotes;
        uint8 outcome;
    }

    /// @notice `provider` opened request `requestId` for the evidence `evidenceHash`: committee drawn from the snapshot
    /// at `asOf` with blockhash(`seedBlock`); draw and record by `deadline`.
    event AttestationRequested(
        uint256 indexed requestId,
        address indexed provider,
        bytes32 evidenceHash,
        uint64 asOf,
        uint64 seedBlock,
        uint64 deadline,
        bytes32 binding
    );
    /// @notice Request `requestId`'s committee was drawn from `seed`.
    event CommitteeDrawn(uint256 indexed requestId, bytes32 seed, address[] committee);
    /// @notice `provider`'s attestation was recorded for request `requestId`: tier `tier`, band `band`, valid until
    /// `expiresAt`, signed by `signers` (ascending addresses, committee members active at submission).
    event AttestationRecorded(
        address indexed provider,
        uint256 indexed requestId,
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
    /// @notice The committee size `committeeSize` is above `max` (MAX_COMMITTEE).
    error ProviderRegistryCommitteeTooLarge(uint256 committeeSize, uint256 max);
    /// @notice The quorum `quorum` exceeds the committee size `committeeSize`.
    error ProviderRegistryQuorumAboveCommittee(uint256 quorum, uint256 committeeSize);
    /// @notice The quorum `quorum` is not a strict majority of the committee size `committeeSize`.
    error ProviderRegistryQuorumNotMajority(uint256 quorum, uint256 committeeSize);
    /// @notice The seed delay `seedDelayBlocks` is not 1..200 (blockhash reaches back 256 blocks).
    error ProviderRegistryInvalidSeedDelay(uint256 seedDelayBlocks);
    /// @notice The request window `requestWindowSeconds` is not longer than the seed delay `seedDelaySeconds`
    /// (seedDelayBlocks * 12 s, PanelTiming.MAX_SECONDS_PER_BLOCK): no committee could be drawn in time.
    error ProviderRegistryWindowTooShort(uint64 requestWindowSeconds, uint256 seedDelaySeconds);
    /// @notice The request window `requestWindowSeconds` is longer than the AuditorRegistry's exit delay
    /// `exitDelaySeconds`: a snapshot is only drawable for the exit delay.
    error ProviderRegistryWindowTooLong(uint64 requestWindowSeconds, uint64 exitDelaySeconds);
    /// @notice The AuditorRegistry's activation delay `activationDelaySeconds` is not longer than the seed delay
    /// `seedDelaySeconds`.
    error ProviderRegistryActivationDelayTooShort(uint64 activationDelaySeconds, uint256 seedDelaySeconds);
    /// @notice `tier` is not 1..4.
    error ProviderRegistryInvalidTier(uint8 tier);
    /// @notice `band` is outside tier `tier`'s range `min`..`max`.
    error ProviderRegistryBandOutOfRange(uint8 tier, uint8 band, uint8 min, uint8 max);
    /// @notice The request fee must be at least 1 (a free request lets a provider re-roll committees in parallel from
    /// as many addresses as it likes).
    error ProviderRegistryZeroFee();
    /// @notice `provider` allowed this registry `allowance` of the auditor token; a request burns `fee`.
    error ProviderRegistryFeeNotApproved(address provider, uint256 allowance, uint256 fee);
    /// @notice The evidence hash is zero.
    error ProviderRegistryZeroEvidence();
    /// @notice `provider` already has request `requestId` open until `deadline`.
    error ProviderRegistryRequestOpen(address provider, uint256 requestId, uint64 deadline);
    /// @notice No request `requestId` exists.
    error ProviderRegistryUnknownRequest(uint256 requestId);
    /// @notice Request `requestId` closed at `deadline` (now `nowTs`).
    error ProviderRegistryRequestClosed(uint256 requestId, uint64 deadline, uint256 nowTs);
    /// @notice Request `requestId` already has a recorded attestation.
    error ProviderRegistryAlreadyRecorded(uint256 requestId);
    /// @notice Request `requestId` is `requester`'s, not about `provider`.
    error ProviderRegistryWrongProvider(uint256 requestId, address provider, address requester);
    /// @notice The message's evidence hash `evidenceHash` is not request `requestId`'s `requested`.
    error ProviderRegistryWrongEvidence(uint256 requestId, bytes32 evidenceHash, bytes32 requested);
    /// @notice Request `requestId`'s seed block `seedBlock` is not mined yet (now block `blockNumber`).
    error ProviderRegistrySeedNotReady(uint256 requestId, uint64 seedBlock, uint256 blockNumber);
    /// @notice Request `requestId`'s seed block `seedBlock` left the 256-block blockhash range before anyone drew the
    /// committee: the request is dead (the provider may request again after its deadline).
    error ProviderRegistrySeedExpired(uint256 requestId, uint64 seedBlock);
    /// @notice Request `requestId`'s committee is already drawn.
    error ProviderRegistryCommitteeDrawn(uint256 requestId);
    /// @notice The message expired at `expiresAt` (now `nowTs`).
    error ProviderRegistryExpired(uint64 expiresAt, uint256 nowTs);
    /// @notice `expiresAt` is more than `maxValiditySeconds` after now (`nowTs`).
    error ProviderRegistryValidityTooLong(uint64 expiresAt, uint256 nowTs, uint64 maxValiditySeconds);
    /// @notice Only `count` signatures were given; `quorum` are needed.
    error ProviderRegistryBelowQuorum(uint256 count, uint256 quorum);
    /// @notice Signature `index` recovers to `signer`, which is not on request `requestId`'s committee (an auditor the
    /// draw did not pick, or a signature over other fields).
    error ProviderRegistryNotCommitteeMember(uint256 requestId, uint256 index, address signer);
    /// @notice Signature `index` recovers to committee member `signer`, which is no longer an active auditor (exiting
    /// or deactivated): its bond would not stand behind the statement.
    error ProviderRegistryNotAuditor(uint256 index, address signer);
    /// @notice Signature `index` recovers to `signer`, not above the previous signer `previous`: signers must
    /// be strictly ascending, which rules out one auditor counted twice.
    error ProviderRegistryUnsortedSigners(uint256 index, address previous, address signer);
    /// @notice `issuedAt` is before request `requestId`'s time `asOf`: the committee verifies after the request.
    error ProviderRegistryIssuedBeforeRequest(uint256 requestId, uint64 issuedAt, uint64 asOf);
    /// @notice `issuedAt` is after the current block time `nowTs`.
    error ProviderRegistryIssuedInFuture(uint64 issuedAt, uint256 nowTs);
    /// @notice The challenge block `challengeBlock` is not one of the CHALLENGE_MAX_AGE_BLOCKS blocks before the current
    /// block `blockNumber` (its hash must exist and be recent: the evidence is at most that old).
    error ProviderRegistryBadChallengeBlock(uint64 challengeBlock, uint256 blockNumber);
    /// @notice `provider` already used the binding of challenge block `challengeBlock` for request `requestId`: a
    /// binding, and so a piece of evidence, answers one request.
    error ProviderRegistryChallengeUsed(address provider, uint64 challengeBlock, uint256 requestId);
    /// @notice `provider` has no standing attested statement to dispute: its record has tier `tier` (0: none; 4 claims
    /// nothing) and expires at `expiresAt` (now `nowTs`).
    error ProviderRegistryNothingToDispute(address provider, uint8 tier, uint64 expiresAt, uint256 nowTs);
    /// @notice The statement of request `requestId` is already disputed (dispute `disputeId`): one dispute per statement.
    error ProviderRegistryAlreadyDisputed(uint256 requestId, uint256 disputeId);
    /// @notice `challenger` allowed this registry `allowance` of the auditor token; a dispute locks `bond`.
    error ProviderRegistryBondNotApproved(address challenger, uint256 allowance, uint256 bond);
    /// @notice No statement dispute `disputeId` exists.
    error ProviderRegistryUnknownDispute(uint256 disputeId);
    /// @notice Statement dispute `disputeId` is already settled.
    error ProviderRegistryDisputeSettled(uint256 disputeId);
    /// @notice Statement dispute `disputeId`'s vote closed at `deadline` (now `nowTs`).
    error ProviderRegistryDisputeClosed(uint256 disputeId, uint64 deadline, uint256 nowTs);
    /// @notice Statement dispute `disputeId` is open until `deadline` (now `nowTs`): it times out only after that.
    error ProviderRegistryDisputeOpen(uint256 disputeId, uint64 deadline, uint256 nowTs);
    /// @notice `voter` is not on statement dispute `disputeId`'s panel.
    error ProviderRegistryNotPanelMember(uint256 disputeId, address voter);
    /// @notice Panel member `voter` of statement dispute `disputeId` is no longer an active auditor.
    error ProviderRegistryVoterNotAuditor(uint256 disputeId, address voter);
    /// @notice Statement dispute `disputeId`'s seed block `seedBlock` is not mined yet (now block `blockNumber`).
    error ProviderRegistryDisputeSeedNotReady(uint256 disputeId, uint64 seedBlock, uint256 blockNumber);
    /// @notice Statement dispute `disputeId`'s seed block `seedBlock` left the blockhash range before anyone drew the
    /// panel: the dispute can only time out undecided.
    error ProviderRegistryDisputeSeedExpired(uint256 disputeId, uint64 seedBlock);
    /// @notice `voter` already voted on statement dispute `disputeId`.
    error ProviderRegistryAlreadyVoted(uint256 disputeId, address voter);
    /// @notice Device `deviceId` is bound to `provider` until `expiresAt`: one device attests for one provider at a time.
    error ProviderRegistryDeviceBound(bytes32 deviceId, address provider, uint64 expiresAt);
    /// @notice A request declares `count` devices; at most `max`.
    error ProviderRegistryTooManyDevices(uint256 count, uint256 max);
    /// @notice Device id `index` (`deviceId`) is not above the previous one (`previous`): ids must be strictly ascending.
    error ProviderRegistryUnsortedDevices(uint256 index, bytes32 previous, bytes32 deviceId);
    /// @notice A request declared the zero address as its session key.
    error ProviderRegistryZeroSessionKey();
    /// @notice A statement of tier `tier` (1 or 2) for request `requestId`, which declared no session key: the tiers
    /// that name an accelerator rest on evidence bound to a declared session key only.
    error ProviderRegistryTierNeedsSessionKey(uint256 requestId, uint8 tier);
    /// @notice `account` has no credit to claim.
    error ProviderRegistryNothingToClaim(address account);

    /// @notice `challenger` disputed `provider`'s statement of request `requestId` (dispute `disputeId`), locking `bond`;
    /// the panel is drawn from the snapshot at `asOf` with blockhash(`seedBlock`) and votes until `deadline`.
    event StatementDisputed(
        uint256 indexed disputeId,
        address indexed provider,
        uint256 indexed requestId,
        address challenger,
        uint256 bond,
        uint64 asOf,
        uint64 seedBlock,
        uint64 deadline
    );
    /// @notice Statement dispute `disputeId` carries `bundle`, the statement's evidence bundle (keccak256(bundle) is the
    /// record's evidenceHash): what every panel member re-verifies. Emitted with StatementDisputed, in the same transaction.
    event StatementEvidence(uint256 indexed disputeId, bytes bundle);
    /// @notice Request `requestId` declared `sessionKey` as the key its evidence binds.
    event SessionKeyDeclared(uint256 indexed requestId, address indexed sessionKey);
    /// @notice Statement dispute `disputeId`'s panel was drawn from `seed` (signers, provider and challenger excluded).
    event DisputePanelDrawn(uint256 indexed disputeId, bytes32 seed, address[] panel);
    /// @notice Panel member `voter` voted on dispute `disputeId`: `statementFalse` says the evidence does not support
    /// the tier.
    event DisputeVoted(uint256 indexed disputeId, address indexed voter, bool statementFalse);
    /// @notice Panel member `voter` voted on dispute `disputeId` that the statement held at its time but its evidence no
    /// longer supports the tier now (its platform TCB or a certificate revoked since, by public revocation or TCB data).
    event DisputeVotedRevoked(uint256 indexed disputeId, address indexed voter);
    /// @notice Statement dispute `disputeId` is settled: `outcome` 1 upheld (statement false: record revoked, each signer
    /// forfeited its bond), 2 rejected (statement stands, challenger bond burned), 3 undecided at the deadline
    /// or lapsed (a drawn panel with silent seats: each silent member forfeits up to half the bond and the challenger
    /// gets its bond back whole; otherwise half the challenger bond burned, half credited back; the statement may be
    /// disputed again), 4 revoked since (a quorum voted `voteRevoked`: record revoked, no signer forfeits, the
    /// challenger's bond credited back whole).
    event DisputeSettled(uint256 indexed disputeId, uint8 outcome);
    /// @notice `provider`'s record of request `requestId` was revoked by statement dispute `disputeId` (upheld, or
    /// revoked since).
    event AttestationRevoked(address indexed provider, uint256 indexed requestId, uint256 indexed disputeId);
    /// @notice `account` was credited `amount` of the auditor token (claimCredit pays it).
    event DisputeCredited(address indexed account, uint256 amount);
    /// @notice `account` claimed `amount`.
    event DisputeCreditClaimed(address indexed account, uint256 amount);

    /// @notice Open an attestation request for the caller's evidence `evidenceHash` (keccak256 of the evidence token):
    /// snapshot asOf = now, seed block = block.number + seedDelayBlocks, deadline = now + requestWindowSeconds. Reverts
    /// while the caller's previous request is before its deadline. Burns `requestFee()` of the AuditorRegistry's token
    /// from the caller (approve it to this registry first): every committee draw costs whoever asks for it, from any
    /// address, so re-rolling committees in parallel from other provider addresses is not free (docs/panels.md).
    /// The evidence's nonce (report data) must be `keccak256(abi.encode(msg.sender, block.chainid, this,
    /// blockhash(challengeBlock)))`, with `challengeBlock` one of the CHALLENGE_MAX_AGE_BLOCKS blocks before this one;
    /// each (provider, challenge) binding opens one request.
    function requestAttestation(bytes32 evidenceHash, uint64 challengeBlock) external returns (uint256 requestId);

    /// @notice As `requestAttestation(evidenceHash, challengeBlock)`, declaring the devices the evidence attests
    /// (`deviceIds`: keccak256 of each verdict device id, e.g. keccak256("nvidia-ueid:<ueid>"), strictly ascending, at
    /// most MAX_DEVICES). Reverts with ProviderRegistryDeviceBound when one is bound to another provider by an unexpired
    /// statement; a record of tier 1..3 for the request binds each declared device to the provider until the
    /// statement's expiry (re-checked then), and an upheld dispute releases them. Committee members sign tier 4 when the
    /// evidence's devices are not exactly the declared ones (verifier/src/attest: `device-undeclared`).
    function requestAttestation(bytes32 evidenceHash, uint64 challengeBlock, bytes32[] calldata deviceIds)
        external
        returns (uint256 requestId);

    /// @notice As `requestAttestation(evidenceHash, challengeBlock, deviceIds)`, also declaring the session key the
    /// evidence binds (the bundle's `sessionKey`: an address whose key was made inside the attested machine, hashed into
    /// the evidence nonce). Committee members sign tier 4 when the bundle names another key
    /// (verifier/src/attest: `session-key-undeclared`), so a recorded statement's key is `sessionKeyOf(requestId)`: what a
    /// JobMarket check can require to sign the provider's commitments (docs/checks.md). Reverts on the zero address.
    function requestAttestation(
        bytes32 evidenceHash,
        uint64 challengeBlock,
        bytes32[] calldata deviceIds,
        address sessionKey
    ) external returns (uint256 requestId);

    /// @notice The session key request `requestId` declared (zero: none declared).
    function sessionKeyOf(uint256 requestId) external view returns (address);

    /// @notice The devices request `requestId` declared (ascending; empty for a request without devices).
    function devicesOf(uint256 requestId) external view returns (bytes32[] memory);

    /// @notice Who device `deviceId` is bound to, until when (zero: never bound; a past expiry: free).
    function deviceBindingOf(bytes32 deviceId) external view returns (address provider, uint64 expiresAt);

    /// @notice The binding request `requestId`'s evidence must carry as its nonce (zero if no such request).
    function bindingOf(uint256 requestId) external view returns (bytes32);

    /// @notice Draw and store request `requestId`'s committee (anyone) once its seed block is mined, within 256 blocks
    /// of it and before the deadline.
    function drawCommittee(uint256 requestId) external returns (address[] memory committee);

    /// @notice Record `att` for request `att.requestId` on the signatures of at least `quorum()` distinct members of its
    /// committee that are active now, given in ascending order of signer address (65-byte r,s,v or 64-byte EIP-2098
    /// signatures); draws the committee first if nobody did. Anyone may call, before the request's deadline.
    function record(Receipts.AttestationVerified calldata att, bytes[] calldata signatures) external;

    /// @notice `provider`'s record (zero if never recorded; may be expired or unbacked).
    function attestationOf(address provider) external view returns (Attestation memory);

    /// @notice The signers of `provider`'s current record, in the order of its request's committee.
    function signersOf(address provider) external view returns (address[] memory);

    /// @notice How many of the signers of `provider`'s current record are active auditors now.
    function backingOf(address provider) external view returns (uint256);

    /// @notice The tier JobMarket uses: the recorded tier while unexpired and backed by at least `quorum()` active
    /// signers, else 4 (no attestation).
    function effectiveTier(address provider) external view returns (uint8);

    /// @notice `effectiveTier(provider)` and, while that tier is attested (1..3), the session key its record's request
    /// declared (`sessionKeyOf`; zero when none was declared or the tier is 4) and the record's expiry (zero at tier 4).
    /// JobMarket reads them at acceptJob and rebindCommitter: a job accepted at a tier whose evidence bound a session
    /// key takes its segment commits from that key only, and a tier counts for a tenure only if its record outlives
    /// the tenure's last possible commit.
    function tierAndSessionKey(address provider) external view returns (uint8 tier, address sessionKey, uint64 expiresAt);

    /// @notice Request `requestId` (zero if none).
    function requestOf(uint256 requestId) external view returns (Request memory);

    /// @notice The latest request of `provider` (0: none).
    function lastRequestOf(address provider) external view returns (uint256);

    /// @notice Request `requestId`'s committee: the stored one once drawn, else the one `drawCommittee` would draw now
    /// (reverts as drawCommittee does while it cannot be drawn).
    function committeeOf(uint256 requestId) external view returns (address[] memory);

    /// @notice The EIP-712 digest committee members sign for `att` under this registry's domain.
    function digestOf(Receipts.AttestationVerified calldata att) external view returns (bytes32);

    /// @notice Dispute `provider`'s standing statement (tier 1..3, unexpired) with its evidence `bundle` (its keccak256
    /// must be the record's evidenceHash, else ProviderRegistryWrongEvidence; StatementEvidence carries the bytes to the
    /// panel): the caller locks `disputeBond()` (the AuditorRegistry's minimum bond; approve it first). A panel of `committeeSize()` auditors, drawn like a committee
    /// from the snapshot at now (excluding the provider, the caller and the statement's signers), re-verifies the
    /// on-chain-hashed evidence under the trust configuration at the statement's issuedAt and votes by
    /// `now + requestWindowSeconds()`. `quorum()` "false" votes uphold it: the record is revoked and every signer
    /// forfeits its whole bond (half credited to the challenger, half burned) through AuditorRegistry.forfeit, and the
    /// challenger's bond is credited back. `quorum()` "true" votes reject it: the challenger's bond is burned. Neither by
    /// the deadline, or the panel never drawn while its seed hash existed (256 blocks): the dispute has lapsed and is
    /// settled undecided (`settleDispute`, or the next `disputeStatement` of the statement, at once): when its panel was
    /// drawn and some member never voted, each silent member forfeits min(its bond, half the dispute bond) (burned) and
    /// the challenger's bond is credited back whole; otherwise half the bond is burned, half credited back. Only an open dispute that has not lapsed, or a decided one, blocks another dispute of
    /// the same statement (ProviderRegistryAlreadyDisputed); after an undecided one anyone may dispute it again.
    function disputeStatement(address provider, bytes calldata bundle) external returns (uint256 disputeId);

    /// @notice Draw and store dispute `disputeId`'s panel (anyone) once its seed block is mined (the first vote draws
    /// it too).
    function drawDisputePanel(uint256 disputeId) external returns (address[] memory panel);

    /// @notice Vote on dispute `disputeId` as a member of its panel that is an active auditor, before the deadline;
    /// the vote that makes a quorum settles it.
    function voteDispute(uint256 disputeId, bool statementFalse) external;

    /// @notice Vote on dispute `disputeId`, as `voteDispute`, that the statement was true at its issuedAt but its
    /// evidence does not support the tier now: its platform's TCB or one of its certificates is revoked by public
    /// revocation or TCB data published since. `quorum()` such votes settle it "revoked since": the record is revoked
    /// (effective tier 4), no signer forfeits (they signed what held) and the challenger's bond is credited back whole.
    /// A member who finds the statement false at its time votes `voteDispute(id, true)` instead, so a revocation never
    /// shields the signers of a false statement while the panel's majority is honest.
    function voteRevoked(uint256 disputeId) external;

    /// @notice Settle dispute `disputeId` that has lapsed undecided (no quorum by its deadline, or its seed left
    /// blockhash range with no panel drawn): silent panel members forfeit and the challenger's bond comes back whole
    /// when the drawn panel had silent seats; else half the challenger's bond is burned, half credited back.
    function settleDispute(uint256 disputeId) external;

    /// @notice Pay the caller's credit (refunded and rewarded dispute bonds) in the auditor token.
    function claimCredit() external returns (uint256 amount);

    /// @notice Dispute `disputeId`.
    function disputeOf(uint256 disputeId) external view returns (Dispute memory);

    /// @notice Dispute `disputeId`'s panel (empty until drawn).
    function panelOf(uint256 disputeId) external view returns (address[] memory);

    /// @notice The latest dispute of request `requestId`'s statement (0: none).
    function disputeOfRequest(uint256 requestId) external view returns (uint256);

    /// @notice What a dispute locks: the AuditorRegistry's minimum bond.
    function disputeBond() external view returns (uint256);

    /// @notice `account`'s unclaimed credit.
    function creditOf(address account) external view returns (uint256);

    /// @notice The inclusive band range of `tier` (1..4); reverts on another tier.
    function bandRange(uint8 tier) external pure returns (uint8 min, uint8 max);

    /// @notice The AuditorRegistry committees are drawn from.
    function auditors() external view returns (address);

    /// @notice Members per committee.
    function committeeSize() external view returns (uint256);

    /// @notice Number of distinct committee signatures a record needs (a strict majority of the committee).
    function quorum() external view returns (uint256);

    /// @notice Longest allowed time between submission and `expiresAt`, in seconds.
    function maxValiditySeconds() external view returns (uint64);

    /// @notice Blocks between a request and its seed block.
    function seedDelayBlocks() external view returns (uint16);

    /// @notice Seconds a request stays open for its draw and record (and before the provider may request again).
    function requestWindowSeconds() external view returns (uint64);

    /// @notice What one request burns, in units of `feeToken()` (> 0, fixed at deployment).
    function requestFee() external view returns (uint256);

    /// @notice The token of the request fee: the AuditorRegistry's bond token.
    function feeToken() external view returns (address);
}
