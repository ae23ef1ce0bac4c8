// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IFixedRoles} from "./IFixedRoles.sol";

/// @title IAuditorRegistry: bonded auditors, snapshot panel draws and bond forfeiture
/// @notice Auditors post a bond of at least `minBond` in one ERC-20 and become active. A membership counts for
/// panel draws only `activationDelaySeconds` after it began, and stops counting at the exit request or the
/// deactivation that ends it. `drawPanel(seed, k, exclude, asOf)` draws from the members eligible at the past
/// time `asOf`: an auditor is eligible at `asOf` iff a membership of it began at least the activation delay
/// before `asOf` (`eligibleFrom <= asOf`) and had not ended at or before `asOf` (`asOf < eligibleUntil`). That
/// pool is a function of the registry's history up to `asOf` only: nothing done after `asOf` (a new bond, an
/// exit request, a leave, a re-bond after a forfeit) adds or removes a member of it, for as long as `asOf` is
/// within `exitDelaySeconds` of now (older snapshots revert: a member that was eligible then may have left).
/// An exiting member stays listed and forfeitable until it leaves, `exitDelaySeconds` after its request.
/// Only the dispute role (DISPUTE_ROLE, held by the dispute contract) forfeits bonds; forfeited amounts become
/// credits the recipient claims. See docs/panels.md.
///
/// No admin (IFixedRoles): DISPUTE_ROLE is wired once, by the deployer, with `wire`, and never changes.
interface IAuditorRegistry is IFixedRoles {
    /// @notice Lifecycle of an auditor. Active: bond >= minBond, not exiting. Inactive: bond fell below the
    /// minimum through a forfeit (a top-up back to the minimum re-activates it as a new membership). Exiting:
    /// requested exit, can leave at `exitableAt`.
    enum AuditorStatus {
        None,
        Active,
        Inactive,
        Exiting
    }

    /// @notice One auditor's record.
    /// @param bond the bonded amount (forfeitable while the auditor is listed)
    /// @param exitableAt unix seconds from which `leave` is possible (0 unless Exiting)
    /// @param status lifecycle state
    /// @param eligibleFrom unix seconds from which the current membership counts for a snapshot: the time it
    ///        became active plus `activationDelaySeconds` (0 when never a member)
    /// @param eligibleUntil unix seconds of the exit request or deactivation that ended the current membership;
    ///        type(uint64).max while it runs (0 when never a member)
    struct Auditor {
        uint128 bond;
        uint64 exitableAt;
        AuditorStatus status;
        uint64 eligibleFrom;
        uint64 eligibleUntil;
    }

    /// @notice `auditor` added `amount`; its bond is now `bond`.
    event BondPosted(address indexed auditor, uint256 amount, uint256 bond);
    /// @notice `auditor` became active (a new membership); it counts for snapshots taken at `eligibleFrom` or later.
    event AuditorActivated(address indexed auditor, uint64 eligibleFrom);
    /// @notice `auditor` stopped being active because its bond fell to `bond`, below the minimum.
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

    /// @notice The activation delay must be at least 1 second (a bond posted in the block of a snapshot must not count).
    error AuditorRegistryZeroActivationDelay();
    /// @notice The exit delay must be at least 1 second (a snapshot is drawable for `exitDelaySeconds` after it).
    error AuditorRegistryZeroExitDelay();
    /// @notice An amount of zero was passed where a positive amount is needed.
    error AuditorRegistryZeroAmount();
    /// @notice A bond of `expected` of `token` delivered only `received` (a fee-on-transfer token): refused.
    error AuditorRegistryTransferShortfall(address token, uint256 expected, uint256 received);
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
    /// @notice A panel of `k` was asked for but only `eligible` auditors eligible at the snapshot are not excluded.
    error AuditorRegistryNotEnoughAuditors(uint256 eligible, uint256 k);
    /// @notice A panel draw failed without a reason (it ran out of gas); raised by the caller of drawPanel (DrawGuard) so
    /// that a short gas allowance fails the whole call instead of passing for "no panel". `gasLeft` is what remained.
    error AuditorRegistryDrawOutOfGas(uint256 gasLeft);
    /// @notice `account` has nothing to claim.
    error AuditorRegistryNothingToClaim(address account);
    /// @notice The snapshot time `asOf` is not in the past (now `nowTs`): actions later in this second could still
    /// change who was eligible at it.
    error AuditorRegistrySnapshotNotPast(uint64 asOf, uint256 nowTs);
    /// @notice The snapshot time `asOf` is more than `exitDelaySeconds` before now (`nowTs`): a member eligible
    /// at it may have left since, so the pool can no longer be rebuilt.
    error AuditorRegistrySnapshotTooOld(uint64 asOf, uint256 nowTs, uint64 exitDelaySeconds);

    /// @notice Add `amount` to the caller's bond (needs an allowance). Once the bond reaches minBond an auditor
    /// that is not active becomes active: a new membership, eligible for snapshots from now + activationDelaySeconds.
    function postBond(uint256 amount) external;

    /// @notice Stop counting from now on (snapshots at or after now exclude the caller); the caller stays listed and
    /// its bond forfeitable until it leaves with `leave`, at least `exitDelaySeconds` from now.
    function requestExit() external;

    /// @notice Withdraw the whole bond and leave the list, after the exit delay.
    function leave() external;

    /// @notice Wire DISPUTE_ROLE to `dispute` (the DisputeGame; not zero), once, and end wiring. Wirer only.
    function wire(address dispute) external;

    /// @notice Forfeit `amount` of `auditor`'s bond to `to` as a credit. DISPUTE_ROLE only.
    /// An active auditor whose bond falls below minBond is deactivated (its membership ends now).
    function forfeit(address auditor, uint256 amount, address to) external;

    /// @notice Transfer the caller's whole credit to it.
    function claim() external returns (uint256 amount);

    /// @notice A deterministic panel of `k` distinct auditors eligible at `asOf`, none in `exclude`, from `seed`.
    /// The pool is the memberships eligible at `asOf` in slot order (a membership's slot is numbered when it
    /// starts, in activation order, and never reused), less the members in `exclude`. Position i of the panel is
    /// the (r_i + 1)-th member of what is left of the pool after positions 0..i-1 were taken out, with
    /// r_i = uint256(keccak256(abi.encode(seed, i))) % (pool size - i): uniform, without replacement. The same seed
    /// and the same snapshot give the same panel, whatever happened after `asOf`. Cost: O((k + exclude.length) *
    /// log(slots)) storage reads (a Fenwick tree with per-node history; docs/panels.md gives the measured gas).
    /// The caller supplies as `seed` randomness that was unpredictable at `asOf`. Reverts unless
    /// `now - exitDelaySeconds <= asOf < now`, and with `AuditorRegistryNotEnoughAuditors(have, k)` when fewer than
    /// `k` remain. A caller that must not lose the draw to a short gas allowance (a dispute's forfeits depend on it)
    /// treats any other failure as its own revert (DrawGuard).
    function drawPanel(bytes32 seed, uint256 k, address[] calldata exclude, uint64 asOf)
        external
        view
        returns (address[] memory panel);

    /// @notice How many auditors `drawPanel(seed, k, exclude, asOf)` draws from: the largest k it accepts
    /// (an "every eligible auditor" panel). O((exclude.length) + log(slots)) reads; same snapshot reverts.
    function poolSize(uint64 asOf, address[] calldata exclude) external view returns (uint256);

    /// @notice The auditors eligible at `asOf` (ascending addresses); same snapshot reverts as drawPanel. Loops over
    /// every listed member: for off-chain readers, not for contracts.
    function eligibleAuditors(uint64 asOf) external view returns (address[] memory pool);

    /// @notice Whether `auditor` is eligible at `asOf` by the rule above, over its memberships still on record
    /// (a stable answer only for `asOf` within `exitDelaySeconds` of now; an auditor that left has no record).
    function isEligible(address auditor, uint64 asOf) external view returns (bool);

    /// @notice The bond token.
    function token() external view returns (address);
    /// @notice Minimum bond of an active auditor.
    function minBond() external view returns (uint256);
    /// @notice Seconds between `requestExit` and `leave`; also how far back a snapshot can be drawn.
    function exitDelaySeconds() external view returns (uint64);
    /// @notice Seconds between a membership's start and the first snapshot that counts it.
    function activationDelaySeconds() external view returns (uint64);
    /// @notice One auditor's record.
    function auditorOf(address auditor) external view returns (Auditor memory);
    /// @notice When `auditor` last forfeited any part of its bond (unix seconds; 0: never). A dispute opened before
    /// that second no longer counts the auditor's vote: it has lost a meta-audit and may have nothing left at
    /// stake, so it is out of every panel open then (DisputeGame: VoteVoided).
    function forfeitedAt(address auditor) external view returns (uint64);
    /// @notice Whether `auditor` is bonded at or above the minimum and not exiting now (what an audit receipt or an
    /// attestation signature needs). It does not wait for the activation delay: panel eligibility is `isEligible`.
    function isActive(address auditor) external view returns (bool);
    /// @notice The auditors that are active now (listed members with status Active), in list order.
    function activeAuditors() external view returns (address[] memory);
    /// @notice Every listed member (active, inactive and exiting; leavers are removed), in list order.
    function members() external view returns (address[] memory);
    /// @notice Claimable credit of `account`.
    function creditOf(address account) external view returns (uint256);
}
