// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";

/// @title DrawGuard: tells a draw that cannot succeed from a draw its caller starved of gas
/// @notice A contract that catches a failed `AuditorRegistry.drawPanel` and carries on without a panel (DisputeGame:
/// the dispute ends NoDecision and no silent member forfeits) must do so only when the registry says no panel can be
/// drawn: too few eligible auditors, a snapshot older than the exit delay, or (not yet) a snapshot in the current
/// second. Under the 63/64 rule a caller can pass just enough gas for everything but the draw; the draw then fails
/// with empty revert data. `requireNoPanel` lets the three named reasons through and reverts on anything else
/// (bubbling a named error, or AuditorRegistryDrawOutOfGas for empty data), so a short gas allowance fails the
/// caller's whole transaction.
library DrawGuard {
    /// @dev Reverts unless `reason` (the revert data of a failed drawPanel) says that no panel can be drawn.
    function requireNoPanel(bytes memory reason) internal view {
        if (reason.length >= 4) {
            bytes4 selector = bytes4(reason);
            if (
                selector == IAuditorRegistry.AuditorRegistryNotEnoughAuditors.selector
                    || selector == IAuditorRegistry.AuditorRegistrySnapshotTooOld.selector
                    || selector == IAuditorRegistry.AuditorRegistrySnapshotNotPast.selector
            ) return;
            assembly ("memory-safe") {
                revert(add(reason, 32), mload(reason))
            }
        }
        revert IAuditorRegistry.AuditorRegistryDrawOutOfGas(gasleft());
    }
}
