// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IFixedRoles} from "../interfaces/IFixedRoles.sol";

/// @title FixedRoles: AccessControl without an admin; roles are wired once by the deployer (see IFixedRoles)
/// @dev A contract inheriting this exposes one `wire(...)` function with `onlyWirer` that calls `_wireRole` for
/// each of its roles and then `_endWiring`. `_grantRole` is reached only through `_wireRole`.
abstract contract FixedRoles is AccessControl, IFixedRoles {
    address private _wirer;
    mapping(bytes32 role => address holder) private _holders;

    modifier onlyWirer() {
        // INVARIANT: only the deployment's wirer wires, and only until wiring has ended.
        if (msg.sender != _wirer) revert FixedRolesNotWirer(msg.sender, _wirer);
        _;
    }

    constructor(address wirer_) {
        if (wirer_ == address(0)) revert FixedRolesZeroWirer();
        _wirer = wirer_;
    }

    /// @inheritdoc IFixedRoles
    function wirer() external view returns (address) {
        return _wirer;
    }

    /// @inheritdoc IFixedRoles
    function roleHolder(bytes32 role) external view returns (address) {
        return _holders[role];
    }

    /// @notice Always reverts: roles are granted only by the one-shot `wire` (IFixedRoles).
    function grantRole(bytes32 role, address account) public pure override {
        revert FixedRolesImmutable(role, account);
    }

    /// @notice Always reverts: a wired role is never revoked (IFixedRoles).
    function revokeRole(bytes32 role, address account) public pure override {
        revert FixedRolesImmutable(role, account);
    }

    /// @notice Always reverts: a wired role is never renounced (IFixedRoles).
    function renounceRole(bytes32 role, address callerConfirmation) public pure override {
        revert FixedRolesImmutable(role, callerConfirmation);
    }

    /// @dev Grants `role` to `account` (the caller checked that it is not zero) and records it as the holder.
    function _wireRole(bytes32 role, address account) internal {
        _holders[role] = account;
        _grantRole(role, account);
    }

    /// @dev Ends wiring for good: nobody can call an `onlyWirer` function again.
    function _endWiring() internal {
        address w = _wirer;
        _wirer = address(0);
        emit WiringEnded(w);
    }
}
