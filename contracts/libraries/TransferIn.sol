// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// @title TransferIn: pull tokens and measure what arrived
/// @notice Every contract that takes tokens in (escrow, stake, bonds, challenge deposits) books the amount it was
/// asked for; a fee-on-transfer token delivers less, and booking the asked amount would leave the contract owing more
/// than it holds. Callers compare the returned balance delta with the amount and refuse a shortfall with their own
/// `...TransferShortfall(token, expected, received)` error. Rebasing tokens whose balances shrink later cannot be
/// checked at entry and are not supported (docs/contracts.md).
library TransferIn {
    using SafeERC20 for IERC20;

    /// @notice safeTransferFrom `amount` of `token` from `from` to this contract; returns the balance increase.
    function pull(IERC20 token, address from, uint256 amount) internal returns (uint256 received) {
        uint256 before = token.balanceOf(address(this));
        token.safeTransferFrom(from, address(this), amount);
        received = token.balanceOf(address(this)) - before;
    }
}
