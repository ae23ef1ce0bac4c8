// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IDataRegistry: training corpora that jobs may reference and pay
/// @notice A registration is a claim: "the bytes with content digest D (content id, licence, terms) pay
/// address P". Anyone may register any digest; nobody can prove on chain who owns public bytes, so the
/// registry does not try to pick an owner. Instead:
///
/// Payout rule: a registration's payout address changes only by the hand of its current payout address
/// (`setPayout`); the registering account (`registrant`) cannot change it. So every registration listed
/// under (D, P) by `corpusIdsOf` pays P, or an address P (or its chosen successor) moved it to, for every
/// job that references it, from job creation to finalize.
///
/// Attachment rule (what a buyer does, docs/governance.md): the buyer, who knows where its data came from,
/// names the payout address P it means to pay for each corpus (the manifest's `payoutAddress`) and
/// attaches a registration listed under (contentDigest, P) whose CID string and licence match its
/// manifest. A squatter who registers the same digest first with its own payout is listed under its own
/// address and never attached; one who copies a registration (from the mempool or the chain) keeps the
/// copied payout P, which it can never change, so the copy pays P. One registration per (digest,
/// registrant); many per digest.
///
/// JobMarket accepts only registered, unretired corpora in a job's terms (`requireAttachable`) and, at
/// finalize, credits the job's data share to each corpus's payout address as read then (`payoutOf`).
///
/// Retirement rule: the registrant or the current payout address may retire a registration; retiring stops
/// new jobs from referencing it; jobs that already reference it still credit its share to its payout
/// address at finalize (the data was used under the terms in force when the job was created, and the share
/// must not become a windfall for anyone else). The payout address may still move the payout of a retired
/// corpus. The registry holds no tokens and has no admin.
interface IDataRegistry {
    /// @notice One registration.
    /// @param registrant the account that registered it: may retire it, cannot change its payout
    /// @param payout where its data shares are credited; changed only by the current payout (`setPayout`)
    /// @param contentDigest sha2-256 digest of the corpus bytes (the multihash digest of its CID)
    /// @param termsHash keccak256 (or other 32-byte hash) of the corpus's terms document
    /// @param licence licence identifier, e.g. "CC-BY-4.0"
    /// @param contentCid content id of the corpus bytes, e.g. a CIDv1 string
    struct Corpus {
        address registrant;
        bool retired;
        uint64 registeredAt;
        address payout;
        bytes32 contentDigest;
        bytes32 termsHash;
        string licence;
        string contentCid;
    }

    /// @notice `registrant` registered corpus `corpusId`, paying `payout`.
    event CorpusRegistered(
        uint64 indexed corpusId,
        address indexed registrant,
        bytes32 indexed contentDigest,
        string contentCid,
        string licence,
        address payout,
        bytes32 termsHash
    );
    /// @notice Corpus `corpusId`'s payout address `previous` moved it to `payout`.
    event PayoutChanged(uint64 indexed corpusId, address previous, address payout);
    /// @notice Corpus `corpusId` was retired: no new job may reference it.
    event CorpusRetired(uint64 indexed corpusId);

    /// @notice The content digest is zero.
    error DataRegistryZeroContent();
    /// @notice The content id string is empty.
    error DataRegistryEmptyCid();
    /// @notice The licence identifier is empty.
    error DataRegistryEmptyLicence();
    /// @notice The payout address is the zero address.
    error DataRegistryZeroPayout();
    /// @notice `registrant` already registered content digest `contentDigest`, as `corpusId`.
    error DataRegistryDuplicateContent(bytes32 contentDigest, address registrant, uint64 corpusId);
    /// @notice No corpus `corpusId` exists.
    error DataRegistryUnknownCorpus(uint64 corpusId);
    /// @notice `caller` is not corpus `corpusId`'s payout address `payout` (only it may move the payout).
    error DataRegistryNotPayout(uint64 corpusId, address caller, address payout);
    /// @notice `caller` is neither corpus `corpusId`'s registrant nor its payout address.
    error DataRegistryNotRegistrantOrPayout(uint64 corpusId, address caller);
    /// @notice Corpus `corpusId` is retired.
    error DataRegistryRetired(uint64 corpusId);

    /// @notice Register a corpus paying `payout`; the caller is its registrant. Once per (digest, caller).
    /// @return corpusId the new corpus's id (1, 2, ...)
    function register(
        bytes32 contentDigest,
        string calldata contentCid,
        string calldata licence,
        address payout,
        bytes32 termsHash
    ) external returns (uint64 corpusId);

    /// @notice Move corpus `corpusId`'s payout to `payout` (also after retirement). Current payout address
    /// only; the corpus is then also listed under (its digest, `payout`).
    function setPayout(uint64 corpusId, address payout) external;

    /// @notice Retire corpus `corpusId`: no new job may reference it. Registrant or payout address; once.
    function retire(uint64 corpusId) external;

    /// @notice Reverts with DataRegistryUnknownCorpus or DataRegistryRetired unless `corpusId` may be
    /// referenced by a new job.
    function requireAttachable(uint64 corpusId) external view;

    /// @notice The current payout address of corpus `corpusId`; reverts if unknown.
    function payoutOf(uint64 corpusId) external view returns (address);

    /// @notice The record of corpus `corpusId`; reverts if unknown.
    function corpusOf(uint64 corpusId) external view returns (Corpus memory);

    /// @notice Ids of the corpora with content digest `contentDigest` that were registered paying `payout`
    /// or moved to `payout` by their payout address, in the order listed (ascending ids first, moves after);
    /// each pays `payout` or an address `payout` chose since. Retired ones included.
    function corpusIdsOf(bytes32 contentDigest, address payout) external view returns (uint64[] memory);

    /// @notice The id of the corpus `registrant` registered with content digest `contentDigest`, 0 if none.
    function registrationOf(bytes32 contentDigest, address registrant) external view returns (uint64);

    /// @notice Number of corpora registered so far (the last id).
    function corpusCount() external view returns (uint64);
}
