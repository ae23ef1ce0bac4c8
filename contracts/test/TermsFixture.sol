// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {MarketFixture} from "./MarketFixture.sol";
import {AuditorKeys} from "./RegistryFixture.sol";
import {ProviderRegistry} from "../ProviderRegistry.sol";
import {DataRegistry} from "../DataRegistry.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";

/// @notice MarketFixture plus ProviderRegistry (committees of 3, quorum 2) and DataRegistry wired into the JobMarket
/// the way ignition/modules/market.ts does, three bonded auditors with known keys, and this contract as evaluator.
contract TermsFixture is MarketFixture, AuditorKeys {
    uint256 internal constant COMMITTEE = 3;
    uint256 internal constant QUORUM = 2;
    uint64 internal constant MAX_VALIDITY = 30 days;
    uint16 internal constant ATTESTATION_SEED_DELAY = 2;
    uint64 internal constant REQUEST_WINDOW = 1 days;

    ProviderRegistry public providers;
    DataRegistry public data;

    constructor() {
        providers = new ProviderRegistry(registry, COMMITTEE, QUORUM, MAX_VALIDITY, ATTESTATION_SEED_DELAY, REQUEST_WINDOW);
        data = new DataRegistry();
        market.setRegistries(registry, providers, data);
        market.grantRole(market.EVALUATOR_ROLE(), address(this));
    }

    /// @dev Registers a corpus owned by `owner` paying to `payout`; the digest is derived from `salt`.
    function _corpus(address owner, address payout, uint256 salt) internal returns (uint64 id) {
        vm.prank(owner);
        id = data.register(keccak256(abi.encode("corpus", salt)), "bafkrei-corpus", "CC-BY-4.0", payout, keccak256("terms"));
    }

    function _terms(uint8 minTier, uint16 dataShareBps, uint64[] memory ids, uint96[] memory tokens)
        internal
        pure
        returns (IJobMarket.Terms memory t)
    {
        t.minTier = minTier;
        t.dataShareBps = dataShareBps;
        t.corpora = new IJobMarket.CorpusUse[](ids.length);
        for (uint256 i; i < ids.length; ++i) {
            t.corpora[i] = IJobMarket.CorpusUse({corpusId: ids[i], tokens: tokens[i]});
        }
    }
}
