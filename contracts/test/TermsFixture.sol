// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {MarketFixture} from "./MarketFixture.sol";
import {AuditorKeys} from "./RegistryFixture.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";

/// @notice MarketFixture (which sets ProviderRegistry, committees of 3, quorum 2, and DataRegistry in the JobMarket and
/// wires this contract as evaluator) plus helpers for corpora and terms, and three bonded auditors with
/// known keys (AuditorKeys).
contract TermsFixture is MarketFixture, AuditorKeys {
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
