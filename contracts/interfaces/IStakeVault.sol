// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IFixedRoles} from "./IFixedRoles.sol";

/// @title IStakeVault: provider stake for the PoUW market
/// @notice Providers deposit stake in one ERC-20. Stake is either free (withdrawable after an unbonding
/// delay) or locked for one job. Only the market (MARKET_ROLE) locks and unlocks; only a slasher
/// (SLASHER_ROLE: the dispute contract, and the market for timeouts and for settlements the dispute
/// role orders) slashes, never more than a job's lock. Slash proceeds become credits that recipients
/// claim (pull payments); the burn share goes to BURN_ADDRESS.
///
/// No admin (IFixedRoles): both roles are wired once, by the deployer, with `wire`, and never change; nobody
/// can lock, unlock or slash a provider's stake except the wired market and slasher, under their rules.
interface IStakeVault is IFixedRoles {
    /// @notice One provider's balances. free + locked + pendingWithdrawal is the provider's stake in the vault.
    struct Account {
        uint128 free;
        uint128 locked;
        uint128 pendingWithdrawal;
        uint64 withdrawableAt;
    }

    /// @notice `provider` added `amount` to its free stake.
    event StakeDeposited(address indexed provider, uint256 amount);
    /// @notice `provider` moved `amount` from free stake into the unbonding queue, withdrawable at `withdrawableAt`.
    event WithdrawalRequested(address indexed provider, uint256 amount, uint64 withdrawableAt);
    /// @notice `provider` withdrew `amount` of unbonded stake.
    event StakeWithdrawn(address indexed provider, uint256 amount);
    /// @notice `amount` of `provider`'s free stake was locked for job `jobId`.
    event StakeLocked(address indexed provider, uint256 indexed jobId, uint256 amount);
    /// @notice `amount` more of `provider`'s free stake was locked for job `jobId`, whose lock is now `total`.
    event StakeToppedUp(address indexed provider, uint256 indexed jobId, uint256 amount, uint256 total);
    /// @notice The remaining lock of `provider` for job `jobId` (`amount`) went back to free stake.
    event StakeUnlocked(address indexed provider, uint256 indexed jobId, uint256 amount);
    /// @notice `amount` of `provider`'s lock for job `jobId` was slashed; `burned` of it went to BURN_ADDRESS.
    event StakeSlashed(address indexed provider, uint256 indexed jobId, uint256 amount, uint256 burned);
    /// @notice `account` was credited `amount` (claimable with `claim`).
    event Credited(address indexed account, uint256 amount);
    /// @notice `account` claimed its whole credit `amount`.
    event CreditClaimed(address indexed account, uint256 amount);

    /// @notice An amount of zero was passed where a positive amount is needed.
    error StakeVaultZeroAmount();
    /// @notice A deposit of `expected` of `token` delivered only `received` (a fee-on-transfer token): refused.
    error StakeVaultTransferShortfall(address token, uint256 expected, uint256 received);
    /// @notice `provider` has `free` free stake but `needed` is needed.
    error StakeVaultInsufficientStake(address provider, uint256 free, uint256 needed);
    /// @notice `provider` has no pending withdrawal.
    error StakeVaultNoPendingWithdrawal(address provider);
    /// @notice The unbonding delay has not passed: withdrawable at `withdrawableAt`, now is `nowTs`.
    error StakeVaultStillUnbonding(address provider, uint64 withdrawableAt, uint256 nowTs);
    /// @notice `provider` already has a lock for job `jobId`.
    error StakeVaultAlreadyLocked(address provider, uint256 jobId);
    /// @notice `provider` has no lock for job `jobId` to top up.
    error StakeVaultNotLocked(address provider, uint256 jobId);
    /// @notice A slash of `amount` exceeds the `locked` stake of `provider` for job `jobId`.
    error StakeVaultSlashExceedsLock(address provider, uint256 jobId, uint256 locked, uint256 amount);
    /// @notice The split does not add up: `recipients` and `amounts` lengths, or the amounts' `sum` vs `amount`.
    error StakeVaultBadSplit(uint256 recipients, uint256 amounts, uint256 sum, uint256 amount);
    /// @notice `caller` holds neither the MARKET_ROLE nor the SLASHER_ROLE needed to slash.
    error StakeVaultNotSlasher(address caller);
    /// @notice `account` has nothing to claim.
    error StakeVaultNothingToClaim(address account);

    /// @notice Wire the roles, once, and end wiring: MARKET_ROLE to `market` (the JobMarket; not zero) and
    /// SLASHER_ROLE to `slasher` (zero: nobody; the standard deployment slashes through the market). Wirer only.
    function wire(address market, address slasher) external;

    /// @notice Deposit `amount` of the stake token as free stake (needs an allowance).
    function deposit(uint256 amount) external;

    /// @notice Start unbonding `amount` of free stake; it becomes withdrawable after the unbonding delay.
    /// A new request adds to the pending amount and restarts the delay.
    function requestWithdrawal(uint256 amount) external;

    /// @notice Withdraw the whole pending amount once the unbonding delay has passed.
    function withdraw() external;

    /// @notice Lock `amount` of `provider`'s free stake for `jobId`. MARKET_ROLE only.
    function lock(address provider, uint256 jobId, uint256 amount) external;

    /// @notice Add `amount` of `provider`'s free stake to its existing lock for `jobId` (a tenure whose tier fell mid-job
    /// pays the stake its current tier requires). MARKET_ROLE only. Reverts with StakeVaultNotLocked without a lock and
    /// StakeVaultInsufficientStake when the free stake is short.
    function topUp(address provider, uint256 jobId, uint256 amount) external;

    /// @notice Release `provider`'s whole remaining lock for `jobId` back to free stake. MARKET_ROLE only.
    /// Releases nothing (returns 0, no event) when there is no lock, e.g. after a slash took all of it.
    /// @return amount the amount released
    function unlock(address provider, uint256 jobId) external returns (uint256 amount);

    /// @notice Slash `amount` of `provider`'s lock for `jobId` and credit it to `recipients` by `amounts`
    /// (a recipient equal to BURN_ADDRESS is burned). SLASHER_ROLE or MARKET_ROLE only.
    function slash(address provider, uint256 jobId, uint256 amount, address[] calldata recipients, uint256[] calldata amounts)
        external;

    /// @notice Transfer the caller's whole credit to it.
    function claim() external returns (uint256 amount);

    /// @notice The stake token.
    function token() external view returns (address);
    /// @notice Seconds between `requestWithdrawal` and `withdraw`.
    function unbondingDelaySeconds() external view returns (uint64);
    /// @notice A provider's balances.
    function accountOf(address provider) external view returns (Account memory);
    /// @notice A provider's lock for one job.
    function lockedFor(address provider, uint256 jobId) external view returns (uint256);
    /// @notice Claimable credit of `account`.
    function creditOf(address account) external view returns (uint256);
}
