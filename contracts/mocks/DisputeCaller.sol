// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IJobMarket} from "../interfaces/IJobMarket.sol";
import {IStakeVault} from "../interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";

/// @notice Test-only stand-in for the DisputeGame (a later issue): holds the dispute roles and forwards
/// the calls the dispute contract will make, so tests exercise those paths through a contract caller.
contract DisputeCaller {
    IJobMarket public immutable market;
    IStakeVault public immutable vault;
    IAuditorRegistry public immutable registry;

    constructor(IJobMarket market_, IStakeVault vault_, IAuditorRegistry registry_) {
        market = market_;
        vault = vault_;
        registry = registry_;
    }

    /// @notice The panel fees JobMarket.wire reads: this stand-in draws no panel.
    function panelFees() external pure returns (uint256) {
        return 0;
    }

    function freeze(uint256 jobId) external {
        market.freeze(jobId);
    }

    function settleProviderFault(uint256 jobId) external returns (uint256) {
        return market.settleProviderFault(jobId);
    }

    function settleNoFault(uint256 jobId, bool reopen) external {
        market.settleNoFault(jobId, reopen);
    }

    function slash(address provider, uint256 jobId, uint256 amount, address[] calldata recipients, uint256[] calldata amounts)
        external
    {
        vault.slash(provider, jobId, amount, recipients, amounts);
    }

    function forfeit(address auditor, uint256 amount, address to) external {
        registry.forfeit(auditor, amount, to);
    }

    /// @notice What a DisputeGame checks before accepting a challenge on a segment.
    function verifySegment(uint256 jobId, uint256 segment, bytes32 traceRoot, bytes32 endStateHash)
        external
        view
        returns (bool)
    {
        return market.verifySegment(jobId, segment, traceRoot, endStateHash);
    }
}
