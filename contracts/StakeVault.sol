// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";
import {FixedRoles} from "./access/FixedRoles.sol";
import {TransferIn} from "./libraries/TransferIn.sol";

/// @title StakeVault: provider stake, unbonding, per-job locks and slashing (see IStakeVault)
contract StakeVault is IStakeVault, FixedRoles {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    string public constant VERSION = "pouw-StakeVault-1";

    /// @notice May lock and unlock stake, and slash (timeouts; settlements ordered by the dispute role).
    bytes32 public constant MARKET_ROLE = keccak256("MARKET_ROLE");
    /// @notice May slash locked stake (the dispute contract).
    bytes32 public constant SLASHER_ROLE = keccak256("SLASHER_ROLE");
    /// @notice Burned stake goes here (ERC-20s reject transfers to address(0)).
    address public constant BURN_ADDRESS = 0x000000000000000000000000000000000000dEaD;

    IERC20 private immutable _token;
    uint64 private immutable _unbondingDelaySeconds;

    mapping(address provider => Account) private _accounts;
    mapping(address provider => mapping(uint256 jobId => uint256 amount)) private _locks;
    mapping(address account => uint256 amount) private _credits;

    /// @param wirer_ the account that calls `wire` once (the deployer); nobody ever holds DEFAULT_ADMIN_ROLE
    constructor(IERC20 token_, uint64 unbondingDelaySeconds_, address wirer_) FixedRoles(wirer_) {
        _token = token_;
        _unbondingDelaySeconds = unbondingDelaySeconds_;
    }

    /// @inheritdoc IStakeVault
    function wire(address market, address slasher) external onlyWirer {
        // INVARIANT: the market role has exactly one holder, fixed here forever; the slasher role at most one.
        if (market == address(0)) revert FixedRolesZeroHolder(MARKET_ROLE);
        _wireRole(MARKET_ROLE, market);
        if (slasher != address(0)) _wireRole(SLASHER_ROLE, slasher);
        _endWiring();
    }

    /// @inheritdoc IStakeVault
    function deposit(uint256 amount) external {
        if (amount == 0) revert StakeVaultZeroAmount();
        Account storage a = _accounts[msg.sender];
        a.free += amount.toUint128();
        emit StakeDeposited(msg.sender, amount);
        uint256 received = TransferIn.pull(_token, msg.sender, amount);
        // INVARIANT: the vault books only what arrived: a fee-on-transfer token would leave stake it does not hold.
        if (received != amount) revert StakeVaultTransferShortfall(address(_token), amount, received);
    }

    /// @inheritdoc IStakeVault
    function requestWithdrawal(uint256 amount) external {
        if (amount == 0) revert StakeVaultZeroAmount();
        Account storage a = _accounts[msg.sender];
        // INVARIANT: only free stake can unbond; locked stake stays slashable until its job ends.
        if (a.free < amount) revert StakeVaultInsufficientStake(msg.sender, a.free, amount);
        unchecked {
            // bound: checked just above
            a.free -= uint128(amount);
        }
        a.pendingWithdrawal += uint128(amount);
        uint64 at = uint64(block.timestamp) + _unbondingDelaySeconds;
        a.withdrawableAt = at;
        emit WithdrawalRequested(msg.sender, amount, at);
    }

    /// @inheritdoc IStakeVault
    function withdraw() external {
        Account storage a = _accounts[msg.sender];
        uint256 amount = a.pendingWithdrawal;
        if (amount == 0) revert StakeVaultNoPendingWithdrawal(msg.sender);
        // INVARIANT: stake leaves only after the full unbonding delay since the last request.
        if (block.timestamp < a.withdrawableAt) {
            revert StakeVaultStillUnbonding(msg.sender, a.withdrawableAt, block.timestamp);
        }
        a.pendingWithdrawal = 0;
        a.withdrawableAt = 0;
        emit StakeWithdrawn(msg.sender, amount);
        _token.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IStakeVault
    function lock(address provider, uint256 jobId, uint256 amount) external onlyRole(MARKET_ROLE) {
        if (amount == 0) revert StakeVaultZeroAmount();
        // INVARIANT: one lock per (provider, job); a lock is never overwritten (it grows only by topUp).
        if (_locks[provider][jobId] != 0) revert StakeVaultAlreadyLocked(provider, jobId);
        _take(provider, amount);
        _locks[provider][jobId] = amount;
        emit StakeLocked(provider, jobId, amount);
    }

    /// @inheritdoc IStakeVault
    function topUp(address provider, uint256 jobId, uint256 amount) external onlyRole(MARKET_ROLE) {
        if (amount == 0) revert StakeVaultZeroAmount();
        uint256 locked = _locks[provider][jobId];
        if (locked == 0) revert StakeVaultNotLocked(provider, jobId);
        _take(provider, amount);
        uint256 total = locked + amount;
        _locks[provider][jobId] = total;
        emit StakeToppedUp(provider, jobId, amount, total);
    }

    /// @inheritdoc IStakeVault
    function unlock(address provider, uint256 jobId) external onlyRole(MARKET_ROLE) returns (uint256 amount) {
        amount = _locks[provider][jobId];
        // NOTE: idempotent: a lock slashed to zero (or never taken) releases nothing, so finalize and
        // reportTimeout never get stuck on a lock the dispute role emptied.
        if (amount == 0) return 0;
        delete _locks[provider][jobId];
        Account storage a = _accounts[provider];
        unchecked {
            // bound: a.locked is the sum of this provider's locks, which include `amount`
            a.locked -= uint128(amount);
            a.free += uint128(amount);
        }
        emit StakeUnlocked(provider, jobId, amount);
    }

    /// @inheritdoc IStakeVault
    function slash(
        address provider,
        uint256 jobId,
        uint256 amount,
        address[] calldata recipients,
        uint256[] calldata amounts
    ) external {
        if (!hasRole(SLASHER_ROLE, msg.sender) && !hasRole(MARKET_ROLE, msg.sender)) {
            revert StakeVaultNotSlasher(msg.sender);
        }
        if (amount == 0) revert StakeVaultZeroAmount();
        uint256 locked = _locks[provider][jobId];
        // INVARIANT: a slash never exceeds the provider's lock for this job.
        if (amount > locked) revert StakeVaultSlashExceedsLock(provider, jobId, locked, amount);
        uint256 n = recipients.length;
        uint256 sum;
        for (uint256 i; i < amounts.length; ++i) {
            sum += amounts[i];
        }
        // INVARIANT: every slashed wei goes to exactly one recipient (credit or burn).
        if (n != amounts.length || sum != amount) revert StakeVaultBadSplit(n, amounts.length, sum, amount);

        unchecked {
            // bound: amount <= locked <= a.locked
            _locks[provider][jobId] = locked - amount;
            _accounts[provider].locked -= uint128(amount);
        }
        uint256 burned;
        for (uint256 i; i < n; ++i) {
            uint256 share = amounts[i];
            if (share == 0) continue;
            address to = recipients[i];
            if (to == BURN_ADDRESS || to == address(0)) {
                burned += share;
            } else {
                _credits[to] += share;
                emit Credited(to, share);
            }
        }
        emit StakeSlashed(provider, jobId, amount, burned);
        if (burned != 0) _token.safeTransfer(BURN_ADDRESS, burned);
    }

    /// @inheritdoc IStakeVault
    function claim() external returns (uint256 amount) {
        amount = _credits[msg.sender];
        // INVARIANT: a credit is paid once: it is zeroed before the transfer.
        if (amount == 0) revert StakeVaultNothingToClaim(msg.sender);
        _credits[msg.sender] = 0;
        emit CreditClaimed(msg.sender, amount);
        _token.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IStakeVault
    function token() external view returns (address) {
        return address(_token);
    }

    /// @inheritdoc IStakeVault
    function unbondingDelaySeconds() external view returns (uint64) {
        return _unbondingDelaySeconds;
    }

    /// @inheritdoc IStakeVault
    function accountOf(address provider) external view returns (Account memory) {
        return _accounts[provider];
    }

    /// @inheritdoc IStakeVault
    function lockedFor(address provider, uint256 jobId) external view returns (uint256) {
        return _locks[provider][jobId];
    }

    /// @inheritdoc IStakeVault
    function creditOf(address account) external view returns (uint256) {
        return _credits[account];
    }

    /// @dev Moves `amount` of `provider`'s free stake to its locked stake.
    function _take(address provider, uint256 amount) private {
        Account storage a = _accounts[provider];
        // INVARIANT: a lock is backed by free stake, never by pending withdrawals or other locks.
        if (a.free < amount) revert StakeVaultInsufficientStake(provider, a.free, amount);
        unchecked {
            // bound: checked just above; locked <= total deposits < 2^128
            a.free -= uint128(amount);
            a.locked += uint128(amount);
        }
    }
}
