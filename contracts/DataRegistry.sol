// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IDataRegistry} from "./interfaces/IDataRegistry.sol";

/// @title DataRegistry: registered training corpora, their owners, licences and payout addresses
/// (see IDataRegistry)
contract DataRegistry is IDataRegistry {
    uint64 private _corpusCount;
    mapping(uint64 corpusId => Corpus) private _corpora;
    mapping(bytes32 contentDigest => uint64 corpusId) private _byContent;

    /// @inheritdoc IDataRegistry
    function register(
        bytes32 contentDigest,
        string calldata contentCid,
        string calldata licence,
        address payout,
        bytes32 termsHash
    ) external returns (uint64 corpusId) {
        if (contentDigest == bytes32(0)) revert DataRegistryZeroContent();
        if (bytes(contentCid).length == 0) revert DataRegistryEmptyCid();
        if (bytes(licence).length == 0) revert DataRegistryEmptyLicence();
        if (payout == address(0)) revert DataRegistryZeroPayout();
        // INVARIANT: one corpus per content: nobody can re-register someone else's bytes to take its share.
        uint64 existing = _byContent[contentDigest];
        if (existing != 0) revert DataRegistryDuplicateContent(contentDigest, existing);

        corpusId = ++_corpusCount;
        _byContent[contentDigest] = corpusId;
        Corpus storage c = _corpora[corpusId];
        c.owner = msg.sender;
        c.registeredAt = uint64(block.timestamp);
        c.payout = payout;
        c.contentDigest = contentDigest;
        c.termsHash = termsHash;
        c.licence = licence;
        c.contentCid = contentCid;
        emit CorpusRegistered(corpusId, msg.sender, contentDigest, contentCid, licence, payout, termsHash);
    }

    /// @inheritdoc IDataRegistry
    function setPayout(uint64 corpusId, address payout) external {
        Corpus storage c = _owned(corpusId);
        if (payout == address(0)) revert DataRegistryZeroPayout();
        address previous = c.payout;
        c.payout = payout;
        emit PayoutChanged(corpusId, previous, payout);
    }

    /// @inheritdoc IDataRegistry
    function retire(uint64 corpusId) external {
        Corpus storage c = _owned(corpusId);
        if (c.retired) revert DataRegistryRetired(corpusId);
        c.retired = true;
        emit CorpusRetired(corpusId);
    }

    /// @inheritdoc IDataRegistry
    function requireAttachable(uint64 corpusId) external view {
        // INVARIANT: jobs reference registered, unretired corpora only.
        if (_known(corpusId).retired) revert DataRegistryRetired(corpusId);
    }

    /// @inheritdoc IDataRegistry
    function payoutOf(uint64 corpusId) external view returns (address) {
        return _known(corpusId).payout;
    }

    /// @inheritdoc IDataRegistry
    function corpusOf(uint64 corpusId) external view returns (Corpus memory) {
        return _known(corpusId);
    }

    /// @inheritdoc IDataRegistry
    function corpusIdOf(bytes32 contentDigest) external view returns (uint64) {
        return _byContent[contentDigest];
    }

    /// @inheritdoc IDataRegistry
    function corpusCount() external view returns (uint64) {
        return _corpusCount;
    }

    function _known(uint64 corpusId) private view returns (Corpus storage c) {
        c = _corpora[corpusId];
        if (c.owner == address(0)) revert DataRegistryUnknownCorpus(corpusId);
    }

    function _owned(uint64 corpusId) private view returns (Corpus storage c) {
        c = _known(corpusId);
        if (msg.sender != c.owner) revert DataRegistryNotOwner(corpusId, msg.sender, c.owner);
    }
}
