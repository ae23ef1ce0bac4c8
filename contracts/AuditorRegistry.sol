// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {FixedRoles} from "./access/FixedRoles.sol";

/// @title AuditorRegistry: auditor bonds, exit delay, deterministic panel draws, forfeiture (see IAuditorRegistry)
contract AuditorRegistry is IAuditorRegistry, FixedRoles {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;

    /// @notice May forfeit bonds (the dispute contract, for meta-audits and silent panelists).
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");

    IERC20 private immutable _token;
    uint256 private immutable _minBond;
    uint64 private immutable _exitDelaySeconds;

    mapping(address auditor => Auditor) private _auditors;
    /// @dev The active set; _indexPlusOne[a] is a's position + 1 (0: not in the set).
    address[] private _active;
    mapping(address auditor => uint256) private _indexPlusOne;
    mapping(address account => uint256 amount) private _credits;

    /// @param wirer_ the account that calls `wire` once (the deployer); nobody ever holds DEFAULT_ADMIN_ROLE
    constructor(IERC20 token_, uint256 minBond_, uint64 exitDelaySeconds_, address wirer_) FixedRoles(wirer_) {
        _token = token_;
        _minBond = minBond_;
        _exitDelaySeconds = exitDelaySeconds_;
    }

    /// @inheritdoc IAuditorRegistry
    function wire(address dispute) external onlyWirer {
        // INVARIANT: the forfeiting role has exactly one holder (the dispute contract), fixed here forever.
        if (dispute == address(0)) revert FixedRolesZeroHolder(DISPUTE_ROLE);
        _wireRole(DISPUTE_ROLE, dispute);
        _endWiring();
    }

    /// @inheritdoc IAuditorRegistry
    function postBond(uint256 amount) external {
        if (amount == 0) revert AuditorRegistryZeroAmount();
        Auditor storage a = _auditors[msg.sender];
        // INVARIANT: an exiting auditor's bond only goes down (forfeit) or out (leave).
        if (a.status == AuditorStatus.Exiting) revert AuditorRegistryExiting(msg.sender);
        uint256 bond = uint256(a.bond) + amount;
        if (a.status != AuditorStatus.Active) {
            // INVARIANT: every active auditor has a bond >= minBond.
            if (bond < _minBond) revert AuditorRegistryBondTooLow(msg.sender, bond, _minBond);
        }
        a.bond = bond.toUint128();
        emit BondPosted(msg.sender, amount, bond);
        if (a.status != AuditorStatus.Active) {
            a.status = AuditorStatus.Active;
            _active.push(msg.sender);
            _indexPlusOne[msg.sender] = _active.length;
            emit AuditorActivated(msg.sender);
        }
        _token.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc IAuditorRegistry
    function requestExit() external {
        Auditor storage a = _auditors[msg.sender];
        if (a.status != AuditorStatus.Active && a.status != AuditorStatus.Inactive) {
            revert AuditorRegistryNotActive(msg.sender, a.status);
        }
        if (a.status == AuditorStatus.Active) _removeActive(msg.sender);
        uint64 at = uint64(block.timestamp) + _exitDelaySeconds;
        a.status = AuditorStatus.Exiting;
        a.exitableAt = at;
        emit ExitRequested(msg.sender, at);
    }

    /// @inheritdoc IAuditorRegistry
    function leave() external {
        Auditor storage a = _auditors[msg.sender];
        if (a.status != AuditorStatus.Exiting) revert AuditorRegistryNotExiting(msg.sender, a.status);
        // INVARIANT: a bond stays forfeitable for the whole exit delay.
        if (block.timestamp < a.exitableAt) {
            revert AuditorRegistryExitDelayNotPassed(msg.sender, a.exitableAt, block.timestamp);
        }
        uint256 amount = a.bond;
        delete _auditors[msg.sender];
        emit AuditorLeft(msg.sender, amount);
        if (amount != 0) _token.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IAuditorRegistry
    function forfeit(address auditor, uint256 amount, address to) external onlyRole(DISPUTE_ROLE) {
        if (amount == 0) revert AuditorRegistryZeroAmount();
        if (to == address(0)) revert AuditorRegistryZeroRecipient();
        Auditor storage a = _auditors[auditor];
        // INVARIANT: a forfeit never exceeds the bond.
        if (amount > a.bond) revert AuditorRegistryForfeitExceedsBond(auditor, a.bond, amount);
        unchecked {
            // bound: checked just above
            a.bond -= uint128(amount);
        }
        _credits[to] += amount;
        emit BondForfeited(auditor, amount, to);
        emit Credited(to, amount);
        // INVARIANT: every active auditor has a bond >= minBond.
        if (a.status == AuditorStatus.Active && a.bond < _minBond) {
            _removeActive(auditor);
            a.status = AuditorStatus.Inactive;
            emit AuditorDeactivated(auditor, a.bond);
        }
    }

    /// @inheritdoc IAuditorRegistry
    function claim() external returns (uint256 amount) {
        amount = _credits[msg.sender];
        // INVARIANT: a credit is paid once: it is zeroed before the transfer.
        if (amount == 0) revert AuditorRegistryNothingToClaim(msg.sender);
        _credits[msg.sender] = 0;
        emit CreditClaimed(msg.sender, amount);
        _token.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IAuditorRegistry
    function drawPanel(bytes32 seed, uint256 k, address[] calldata exclude)
        external
        view
        returns (address[] memory panel)
    {
        uint256 n = _active.length;
        address[] memory pool = new address[](n);
        uint256 m;
        for (uint256 i; i < n; ++i) {
            address a = _active[i];
            bool skip;
            for (uint256 j; j < exclude.length; ++j) {
                if (exclude[j] == a) {
                    skip = true;
                    break;
                }
            }
            if (!skip) pool[m++] = a;
        }
        if (k > m) revert AuditorRegistryNotEnoughAuditors(m, k);
        panel = new address[](k);
        // Partial Fisher-Yates: position i takes a uniformly drawn member of pool[i..m).
        for (uint256 i; i < k; ++i) {
            uint256 j = i + uint256(keccak256(abi.encode(seed, i))) % (m - i);
            (pool[i], pool[j]) = (pool[j], pool[i]);
            panel[i] = pool[i];
        }
    }

    /// @inheritdoc IAuditorRegistry
    function token() external view returns (address) {
        return address(_token);
    }

    /// @inheritdoc IAuditorRegistry
    function minBond() external view returns (uint256) {
        return _minBond;
    }

    /// @inheritdoc IAuditorRegistry
    function exitDelaySeconds() external view returns (uint64) {
        return _exitDelaySeconds;
    }

    /// @inheritdoc IAuditorRegistry
    function auditorOf(address auditor) external view returns (Auditor memory) {
        return _auditors[auditor];
    }

    /// @inheritdoc IAuditorRegistry
    function isActive(address auditor) external view returns (bool) {
        return _indexPlusOne[auditor] != 0;
    }

    /// @inheritdoc IAuditorRegistry
    function activeAuditors() external view returns (address[] memory) {
        return _active;
    }

    /// @inheritdoc IAuditorRegistry
    function creditOf(address account) external view returns (uint256) {
        return _credits[account];
    }

    function _removeActive(address auditor) private {
        uint256 idx = _indexPlusOne[auditor] - 1;
        uint256 last = _active.length - 1;
        if (idx != last) {
            address moved = _active[last];
            _active[idx] = moved;
            _indexPlusOne[moved] = idx + 1;
        }
        _active.pop();
        delete _indexPlusOne[auditor];
    }
}
