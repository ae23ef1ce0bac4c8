// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IDataRegistry} from "./interfaces/IDataRegistry.sol";

/// @title DataRegistry: registered training corpora, their registrants, licences and payout addresses
/// (see IDataRegistry: payout rule, attachment rule, retirement rule)
contract DataRegistry is IDataRegistry {
    string public constant VERSION = "pouw-DataRegistry-1";
    uint64 private _corpusCount;
    mapping(uint64 corpusId => Corpus) private _corpora;
    mapping(bytes32 contentDigest => mapping(address payout => uint64[] corpusIds)) private _byPayout;
    mapping(bytes32 contentDigest => mapping(address registrant => uint64 corpusId)) private _byRegistrant;

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
        // NOTE: no first-come-first-served claim on content: anyone may register any digest (a squatter's
        // registration is listed under its own payout, which no buyer naming the real payout attaches).
        uint64 existing = _byRegistrant[contentDigest][msg.sender];
        if (existing != 0) revert DataRegistryDuplicateContent(contentDigest, msg.sender, existing);

        corpusId = ++_corpusCount;
        _byRegistrant[contentDigest][msg.sender] = corpusId;
        _byPayout[contentDigest][payout].push(corpusId);
        Corpus storage c = _corpora[corpusId];
        c.registrant = msg.sender;
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
        Corpus storage c = _known(corpusId);
        address previous = c.payout;
        // INVARIANT: a payout moves only by the hand of the current payout address (never the registrant's),
        // so a registration a buyer attached for payout P keeps paying P or whom P chose.
        if (msg.sender != previous) revert DataRegistryNotPayout(corpusId, msg.sender, previous);
        if (payout == address(0)) revert DataRegistryZeroPayout();
        c.payout = payout;
        _byPayout[c.contentDigest][payout].push(corpusId);
        emit PayoutChanged(corpusId, previous, payout);
    }

    /// @inheritdoc IDataRegistry
    function retire(uint64 corpusId) external {
        Corpus storage c = _known(corpusId);
        if (msg.sender != c.registrant && msg.sender != c.payout) {
            revert DataRegistryNotRegistrantOrPayout(corpusId, msg.sender);
        }
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
    function corpusIdsOf(bytes32 contentDigest, address payout) external view returns (uint64[] memory) {
        return _byPayout[contentDigest][payout];
    }

    /// @inheritdoc IDataRegistry
    function registrationOf(bytes32 contentDigest, address registrant) external view returns (uint64) {
        return _byRegistrant[contentDigest][registrant];
    }

    /// @inheritdoc IDataRegistry
    function corpusCount() external view returns (uint64) {
        return _corpusCount;
    }

    function _known(uint64 corpusId) private view returns (Corpus storage c) {
        c = _corpora[corpusId];
        if (c.registrant == address(0)) revert DataRegistryUnknownCorpus(corpusId);
    }
}
