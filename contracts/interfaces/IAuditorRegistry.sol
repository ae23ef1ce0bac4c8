// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IFixedRoles} from "./IFixedRoles.sol";

/// @title IAuditorRegistry: bonded auditors, panel draws and bond forfeiture
/// @notice Auditors post a bond of at least `minBond` in one ERC-20 and become active. An active auditor can
/// request exit: it leaves the active set at once and can withdraw its bond after `exitDelaySeconds`
/// (the delay keeps it forfeitable for misconduct found late). `drawPanel` picks a deterministic panel
/// from the active set. Only the dispute role (DISPUTE_ROLE, held by the dispute contract) forfeits
/// bonds; forfeited amounts become credits the recipient claims.
///
/// No admin (IFixedRoles): DISPUTE_ROLE is wired once, by the deployer, with `wire`, and never changes.
interface IAuditorRegistry is IFixedRoles {
    /// @notice Lifecycle of an auditor. Inactive: bond below minimum (never joined, or forfeited below it).
    enum AuditorStatus {
        None,
        Active,
        Inactive,
        Exiting
    }

    /// @notice One auditor's record.
    struct Auditor {
        uint128 bond;
        uint64 exitableAt;
        AuditorStatus status;
    }

    /// @notice `auditor` added `amount`; its bond is now `bond`.
    event BondPosted(address indexed auditor, uint256 amount, uint256 bond);
    /// @notice `auditor` joined the active set.
    event AuditorActivated(address indexed auditor);
    /// @notice `auditor` left the active set because its bond fell to `bond`, below the minimum.
    event AuditorDeactivated(address indexed auditor, uint256 bond);
    /// @notice `auditor` requested exit; it can leave at `exitableAt`.
    event ExitRequested(address indexed auditor, uint64 exitableAt);
    /// @notice `auditor` left and took back its bond `amount`.
    event AuditorLeft(address indexed auditor, uint256 amount);
    /// @notice `amount` of `auditor`'s bond was forfeited to `to` (as a credit).
    event BondForfeited(address indexed auditor, uint256 amount, address indexed to);
    /// @notice `account` was credited `amount`.
    event Credited(address indexed account, uint256 amount);
    /// @notice `account` claimed its whole credit `amount`.
    event CreditClaimed(address indexed account, uint256 amount);

    /// @notice An amount of zero was passed where a positive amount is needed.
    error AuditorRegistryZeroAmount();
    /// @notice A bond of `bond` is below the minimum `minBond`.
    error AuditorRegistryBondTooLow(address auditor, uint256 bond, uint256 minBond);
    /// @notice `auditor` is exiting and cannot post bond.
    error AuditorRegistryExiting(address auditor);
    /// @notice `auditor` is not active (status `status`).
    error AuditorRegistryNotActive(address auditor, AuditorStatus status);
    /// @notice `auditor` has not requested exit (status `status`).
    error AuditorRegistryNotExiting(address auditor, AuditorStatus status);
    /// @notice The exit delay has not passed: exitable at `exitableAt`, now is `nowTs`.
    error AuditorRegistryExitDelayNotPassed(address auditor, uint64 exitableAt, uint256 nowTs);
    /// @notice Forfeit of `amount` exceeds `auditor`'s bond `bond`.
    error AuditorRegistryForfeitExceedsBond(address auditor, uint256 bond, uint256 amount);
    /// @notice Forfeit recipient is the zero address.
    error AuditorRegistryZeroRecipient();
    /// @notice A panel of `k` was asked for but only `eligible` active auditors are not excluded.
    error AuditorRegistryNotEnoughAuditors(uint256 eligible, uint256 k);
    /// @notice `account` has nothing to claim.
    error AuditorRegistryNothingToClaim(address account);

    /// @notice Add `amount` to the caller's bond (needs an allowance); activates it once the bond reaches minBond.
    function postBond(uint256 amount) external;

    /// @notice Leave the active set now; the bond can be withdrawn with `leave` after the exit delay.
    function requestExit() external;

    /// @notice Withdraw the whole bond after the exit delay.
    function leave() external;

    /// @notice Wire DISPUTE_ROLE to `dispute` (the DisputeGame; not zero), once, and end wiring. Wirer only.
    function wire(address dispute) external;

    /// @notice Forfeit `amount` of `auditor`'s bond to `to` as a credit. DISPUTE_ROLE only.
    /// An active auditor whose bond falls below minBond is deactivated.
    function forfeit(address auditor, uint256 amount, address to) external;

    /// @notice Transfer the caller's whole credit to it.
    function claim() external returns (uint256 amount);

    /// @notice A deterministic panel of `k` distinct active auditors, none in `exclude`, from `seed`.
    /// Same seed and same active set give the same panel (a partial Fisher-Yates shuffle keyed by
    /// keccak256(seed, i)). The caller supplies unpredictable randomness as `seed`.
    function drawPanel(bytes32 seed, uint256 k, address[] calldata exclude) external view returns (address[] memory panel);

    /// @notice The bond token.
    function token() external view returns (address);
    /// @notice Minimum bond of an active auditor.
    function minBond() external view returns (uint256);
    /// @notice Seconds between `requestExit` and `leave`.
    function exitDelaySeconds() external view returns (uint64);
    /// @notice One auditor's record.
    function auditorOf(address auditor) external view returns (Auditor memory);
    /// @notice Whether `auditor` is in the active set.
    function isActive(address auditor) external view returns (bool);
    /// @notice The active set, in storage order.
    function activeAuditors() external view returns (address[] memory);
    /// @notice Claimable credit of `account`.
    function creditOf(address account) external view returns (uint256);
}
