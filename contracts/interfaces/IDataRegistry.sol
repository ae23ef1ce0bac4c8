// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IDataRegistry: training corpora that jobs may reference and pay
/// @notice A data contributor registers a corpus: its content digest and content id (CID), a licence
/// identifier (SPDX or LicenseRef), a payout address and the hash of its terms. The registering account
/// is the corpus owner: it may change the payout address and retire the corpus. JobMarket accepts only
/// registered, unretired corpora in a job's terms (`requireAttachable`) and, at finalize, credits the
/// job's data share to each corpus's payout address as read then (`payoutOf`).
///
/// Retirement rule: retiring stops new jobs from referencing the corpus; jobs that already reference it
/// still credit its share to its payout address at finalize (the data was used under the terms in force
/// when the job was created, and the share must not become a windfall for anyone else). The owner may
/// still change the payout address of a retired corpus, so a lost payout key can be replaced.
/// The registry holds no tokens.
interface IDataRegistry {
    /// @notice One corpus.
    /// @param contentDigest sha2-256 digest of the corpus bytes (the multihash digest of its CID), unique
    /// @param termsHash keccak256 (or other 32-byte hash) of the corpus's terms document
    /// @param licence licence identifier, e.g. "CC-BY-4.0"
    /// @param contentCid content id of the corpus bytes, e.g. a CIDv1 string
    struct Corpus {
        address owner;
        bool retired;
        uint64 registeredAt;
        address payout;
        bytes32 contentDigest;
        bytes32 termsHash;
        string licence;
        string contentCid;
    }

    /// @notice `owner` registered corpus `corpusId`.
    event CorpusRegistered(
        uint64 indexed corpusId,
        address indexed owner,
        bytes32 indexed contentDigest,
        string contentCid,
        string licence,
        address payout,
        bytes32 termsHash
    );
    /// @notice Corpus `corpusId`'s payout address changed from `previous` to `payout`.
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
    /// @notice A corpus with content digest `contentDigest` is already registered as `corpusId`.
    error DataRegistryDuplicateContent(bytes32 contentDigest, uint64 corpusId);
    /// @notice No corpus `corpusId` exists.
    error DataRegistryUnknownCorpus(uint64 corpusId);
    /// @notice `caller` is not corpus `corpusId`'s owner `owner`.
    error DataRegistryNotOwner(uint64 corpusId, address caller, address owner);
    /// @notice Corpus `corpusId` is retired.
    error DataRegistryRetired(uint64 corpusId);

    /// @notice Register a corpus; the caller becomes its owner.
    /// @return corpusId the new corpus's id (1, 2, ...)
    function register(
        bytes32 contentDigest,
        string calldata contentCid,
        string calldata licence,
        address payout,
        bytes32 termsHash
    ) external returns (uint64 corpusId);

    /// @notice Change the payout address of corpus `corpusId` (also after retirement). Owner only.
    function setPayout(uint64 corpusId, address payout) external;

    /// @notice Retire corpus `corpusId`: no new job may reference it. Owner only; once.
    function retire(uint64 corpusId) external;

    /// @notice Reverts with DataRegistryUnknownCorpus or DataRegistryRetired unless `corpusId` may be
    /// referenced by a new job.
    function requireAttachable(uint64 corpusId) external view;

    /// @notice The current payout address of corpus `corpusId`; reverts if unknown.
    function payoutOf(uint64 corpusId) external view returns (address);

    /// @notice The record of corpus `corpusId`; reverts if unknown.
    function corpusOf(uint64 corpusId) external view returns (Corpus memory);

    /// @notice The id of the corpus with content digest `contentDigest`, 0 if none.
    function corpusIdOf(bytes32 contentDigest) external view returns (uint64);

    /// @notice Number of corpora registered so far (the last id).
    function corpusCount() external view returns (uint64);
}
