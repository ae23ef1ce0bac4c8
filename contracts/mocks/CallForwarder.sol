// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice Test-only smart-contract wallet: forwards one call, or a batch (a multicall), from its own address, so tests
/// exercise a provider whose commits are not its transaction's top-level call (JobMarket then logs SegmentLeaves).
contract CallForwarder {
    /// @notice A forwarded call reverted with `data`.
    error CallForwarderFailed(uint256 index, bytes data);

    /// @notice Calls `targets[i]` with `data[i]`, in order, from this contract; reverts if any call does.
    function forward(address[] calldata targets, bytes[] calldata data) external {
        for (uint256 i; i < targets.length; ++i) {
            (bool ok, bytes memory ret) = targets[i].call(data[i]);
            if (!ok) revert CallForwarderFailed(i, ret);
        }
    }
}
