// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title PanelTiming: the assumptions that relate a draw's seed delay (blocks) to the registry's delays (seconds)
/// @notice Contracts that draw from AuditorRegistry snapshots (DisputeGame, ProviderRegistry) check at deployment
/// that the registry's activation delay is longer than their seed delay and that its exit delay covers the longest
/// time a drawn member must stay forfeitable (docs/panels.md, "Delays").
/// @dev IMPORTANT: a delay in blocks has no hard bound in seconds. `MAX_SECONDS_PER_BLOCK` is the assumption: 12 s,
/// Ethereum's slot time. Missed slots make blocks slower (a run of them breaks the bound); rollups with faster blocks
/// only make the checks more conservative. Each check compares a seconds value with blocks * MAX_SECONDS_PER_BLOCK.
library PanelTiming {
    /// @notice Seconds one block is assumed to take at most (Ethereum's 12 s slot).
    uint256 internal constant MAX_SECONDS_PER_BLOCK = 12;

    /// @notice Time after a dispute's reveal deadline in which `resolve` still finds every drawn member bonded and
    /// forfeitable (part of the exit delay DisputeGame requires).
    uint256 internal constant RESOLVE_MARGIN_SECONDS = 1 days;

    /// @notice `blocks` as seconds under the MAX_SECONDS_PER_BLOCK assumption.
    function blocksToSeconds(uint256 blocks) internal pure returns (uint256) {
        return blocks * MAX_SECONDS_PER_BLOCK;
    }
}
