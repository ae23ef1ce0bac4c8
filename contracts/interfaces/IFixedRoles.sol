// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IFixedRoles: roles wired once at deployment, then fixed forever, with no admin
/// @notice StakeVault, AuditorRegistry and JobMarket keep OpenZeppelin AccessControl's role checks
/// (`hasRole`, `onlyRole`) but not its administration: nobody ever holds DEFAULT_ADMIN_ROLE, and
/// `grantRole`, `revokeRole` and `renounceRole` always revert with FixedRolesImmutable. The only way a
/// role is ever granted is the contract's one-shot `wire` function, callable once by the `wirer` named at
/// construction (the deployer); `wire` grants each role to at most one holder and then sets `wirer` to
/// zero, so after wiring no account (the deployer included) has any power left over the contract.
///
/// Before `wire` is called no role is held, so no stake, bond or escrow can be moved by a role, but the
/// wirer could still wire roles to itself: a deployment is usable only once `wirer()` is zero on every
/// contract and `roleHolder` names the expected contracts (docs/governance.md, `getWiring` in
/// verifier/src/chain/).
interface IFixedRoles {
    /// @notice `wirer` finished wiring: from now on nobody can grant, revoke or renounce a role.
    event WiringEnded(address indexed wirer);

    /// @notice The wirer passed at construction is the zero address.
    error FixedRolesZeroWirer();
    /// @notice `caller` is not the wirer `wirer` (zero once wiring has ended).
    error FixedRolesNotWirer(address caller, address wirer);
    /// @notice Role `role` must be wired to a non-zero holder.
    error FixedRolesZeroHolder(bytes32 role);
    /// @notice Roles are fixed at deployment: `role` cannot be granted to, revoked from or renounced by `account`.
    error FixedRolesImmutable(bytes32 role, address account);

    /// @notice The account that may still call `wire` (and, on JobMarket, `setRegistries`); zero once wiring ended.
    function wirer() external view returns (address);

    /// @notice The one account wired to `role`, zero if none (a role is never held by more than one account).
    function roleHolder(bytes32 role) external view returns (address);
}
