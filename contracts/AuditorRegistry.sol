// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {FixedRoles} from "./access/FixedRoles.sol";
import {TransferIn} from "./libraries/TransferIn.sol";

/// @title AuditorRegistry: auditor bonds, activation and exit delays, snapshot panel draws, forfeiture
/// (see IAuditorRegistry and docs/panels.md)
contract AuditorRegistry is IAuditorRegistry, FixedRoles {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;

    /// @dev Storage record of an auditor; `indexPlusOne` is its position in `_members` + 1 (0: not listed).
    /// NOTE: 128 + 64 + 8 + 32 = 232 bits: one slot already (the packing rule's heuristic does not see it).
    // solhint-disable-next-line gas-struct-packing
    struct Record {
        uint128 bond;
        uint64 exitableAt;
        AuditorStatus status;
        uint32 indexPlusOne;
    }

    /// @dev A listed member and its current membership [eligibleFrom, eligibleUntil), in one slot so that a draw
    /// reads one word per member.
    struct Member {
        address auditor;
        uint48 eligibleFrom;
        uint48 eligibleUntil;
    }

    /// @dev A membership that ended before the current one began (kept while a drawable snapshot could fall in it).
    struct Membership {
        uint48 eligibleFrom;
        uint48 eligibleUntil;
    }

    /// @notice May forfeit bonds (the dispute contract, for meta-audits and silent panelists).
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");
    /// @dev eligibleUntil of a membership that has not ended.
    uint48 private constant _OPEN = type(uint48).max;

    IERC20 private immutable _token;
    uint256 private immutable _minBond;
    uint64 private immutable _exitDelaySeconds;
    uint64 private immutable _activationDelaySeconds;

    mapping(address auditor => Record) private _records;
    /// @dev Every listed auditor (active, inactive, exiting) until it leaves; the order is not canonical (leave
    /// swaps the last member into the hole), so draws sort the pool.
    Member[] private _members;
    /// @dev Ended memberships of auditors that re-activated, oldest first.
    mapping(address auditor => Membership[]) private _past;
    mapping(address account => uint256 amount) private _credits;

    /// @param wirer_ the account that calls `wire` once (the deployer); nobody ever holds DEFAULT_ADMIN_ROLE
    constructor(IERC20 token_, uint256 minBond_, uint64 exitDelaySeconds_, uint64 activationDelaySeconds_, address wirer_)
        FixedRoles(wirer_)
    {
        if (exitDelaySeconds_ == 0) revert AuditorRegistryZeroExitDelay();
        if (activationDelaySeconds_ == 0) revert AuditorRegistryZeroActivationDelay();
        _token = token_;
        _minBond = minBond_;
        _exitDelaySeconds = exitDelaySeconds_;
        _activationDelaySeconds = activationDelaySeconds_;
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
        Record storage r = _records[msg.sender];
        // INVARIANT: an exiting auditor's bond only goes down (forfeit) or out (leave).
        if (r.status == AuditorStatus.Exiting) revert AuditorRegistryExiting(msg.sender);
        uint256 bond = uint256(r.bond) + amount;
        bool activates = r.status != AuditorStatus.Active;
        // INVARIANT: every active auditor has a bond >= minBond.
        if (activates && bond < _minBond) revert AuditorRegistryBondTooLow(msg.sender, bond, _minBond);
        r.bond = bond.toUint128();
        emit BondPosted(msg.sender, amount, bond);
        if (activates) _activate(msg.sender, r);
        uint256 received = TransferIn.pull(_token, msg.sender, amount);
        // INVARIANT: a bond is booked only as far as it arrived (a fee-on-transfer token is refused).
        if (received != amount) revert AuditorRegistryTransferShortfall(address(_token), amount, received);
    }

    /// @inheritdoc IAuditorRegistry
    function requestExit() external {
        Record storage r = _records[msg.sender];
        if (r.status != AuditorStatus.Active && r.status != AuditorStatus.Inactive) {
            revert AuditorRegistryNotActive(msg.sender, r.status);
        }
        // An inactive auditor's membership already ended at its deactivation.
        if (r.status == AuditorStatus.Active) _endMembership(r);
        uint64 at = uint64(block.timestamp) + _exitDelaySeconds;
        r.status = AuditorStatus.Exiting;
        r.exitableAt = at;
        emit ExitRequested(msg.sender, at);
    }

    /// @inheritdoc IAuditorRegistry
    function leave() external {
        Record storage r = _records[msg.sender];
        if (r.status != AuditorStatus.Exiting) revert AuditorRegistryNotExiting(msg.sender, r.status);
        // INVARIANT: a bond stays forfeitable for the whole exit delay, and a member eligible at a drawable
        // snapshot (asOf >= now - exitDelay, so exit requested after now - exitDelay) is still listed.
        if (block.timestamp < r.exitableAt) {
            revert AuditorRegistryExitDelayNotPassed(msg.sender, r.exitableAt, block.timestamp);
        }
        uint256 amount = r.bond;
        _removeMember(r.indexPlusOne - 1);
        delete _past[msg.sender];
        delete _records[msg.sender];
        emit AuditorLeft(msg.sender, amount);
        if (amount != 0) _token.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IAuditorRegistry
    function forfeit(address auditor, uint256 amount, address to) external onlyRole(DISPUTE_ROLE) {
        if (amount == 0) revert AuditorRegistryZeroAmount();
        if (to == address(0)) revert AuditorRegistryZeroRecipient();
        Record storage r = _records[auditor];
        // INVARIANT: a forfeit never exceeds the bond.
        if (amount > r.bond) revert AuditorRegistryForfeitExceedsBond(auditor, r.bond, amount);
        unchecked {
            // bound: checked just above
            r.bond -= uint128(amount);
        }
        _credits[to] += amount;
        emit BondForfeited(auditor, amount, to);
        emit Credited(to, amount);
        // INVARIANT: every active auditor has a bond >= minBond.
        if (r.status == AuditorStatus.Active && r.bond < _minBond) {
            _endMembership(r);
            r.status = AuditorStatus.Inactive;
            emit AuditorDeactivated(auditor, r.bond);
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
    function drawPanel(bytes32 seed, uint256 k, address[] calldata exclude, uint64 asOf)
        external
        view
        returns (address[] memory panel)
    {
        address[] memory pool = _pool(asOf, exclude);
        uint256 m = pool.length;
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
    function eligibleAuditors(uint64 asOf) external view returns (address[] memory) {
        return _pool(asOf, new address[](0));
    }

    /// @inheritdoc IAuditorRegistry
    function isEligible(address auditor, uint64 asOf) external view returns (bool) {
        Record storage r = _records[auditor];
        if (r.indexPlusOne == 0) return false;
        return _eligible(_members[r.indexPlusOne - 1], asOf);
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
    function activationDelaySeconds() external view returns (uint64) {
        return _activationDelaySeconds;
    }

    /// @inheritdoc IAuditorRegistry
    function auditorOf(address auditor) external view returns (Auditor memory a) {
        Record storage r = _records[auditor];
        a.bond = r.bond;
        a.exitableAt = r.exitableAt;
        a.status = r.status;
        if (r.indexPlusOne != 0) {
            Member storage m = _members[r.indexPlusOne - 1];
            a.eligibleFrom = m.eligibleFrom;
            a.eligibleUntil = m.eligibleUntil == _OPEN ? type(uint64).max : m.eligibleUntil;
        }
    }

    /// @inheritdoc IAuditorRegistry
    function isActive(address auditor) external view returns (bool) {
        return _records[auditor].status == AuditorStatus.Active;
    }

    /// @inheritdoc IAuditorRegistry
    function activeAuditors() external view returns (address[] memory active) {
        uint256 n = _members.length;
        active = new address[](n);
        uint256 m;
        for (uint256 i; i < n; ++i) {
            address a = _members[i].auditor;
            if (_records[a].status == AuditorStatus.Active) active[m++] = a;
        }
        assembly ("memory-safe") {
            mstore(active, m) // shrink to the m filled entries (m <= n)
        }
    }

    /// @inheritdoc IAuditorRegistry
    function members() external view returns (address[] memory all) {
        uint256 n = _members.length;
        all = new address[](n);
        for (uint256 i; i < n; ++i) {
            all[i] = _members[i].auditor;
        }
    }

    /// @inheritdoc IAuditorRegistry
    function creditOf(address account) external view returns (uint256) {
        return _credits[account];
    }

    /// @dev Starts a new membership of `auditor`, eligible from now + activationDelay. A listed (inactive) auditor
    /// keeps the membership that ended in `_past` while a drawable snapshot can still fall inside it.
    function _activate(address auditor, Record storage r) private {
        uint48 from = (block.timestamp + _activationDelaySeconds).toUint48();
        r.status = AuditorStatus.Active;
        if (r.indexPlusOne == 0) {
            _members.push(Member({auditor: auditor, eligibleFrom: from, eligibleUntil: _OPEN}));
            r.indexPlusOne = _members.length.toUint32();
        } else {
            Member storage m = _members[r.indexPlusOne - 1];
            // A snapshot is drawable while asOf >= now - exitDelay, so an ended membership [from, until) still matters
            // iff until > now - exitDelay (and it is not empty).
            if (m.eligibleFrom < m.eligibleUntil && uint256(m.eligibleUntil) + _exitDelaySeconds > block.timestamp) {
                _past[auditor].push(Membership({eligibleFrom: m.eligibleFrom, eligibleUntil: m.eligibleUntil}));
            }
            m.eligibleFrom = from;
            m.eligibleUntil = _OPEN;
        }
        emit AuditorActivated(auditor, from);
    }

    /// @dev Ends the current membership now: snapshots at or after now no longer count it.
    function _endMembership(Record storage r) private {
        _members[r.indexPlusOne - 1].eligibleUntil = uint48(block.timestamp); // fits: block.timestamp < _OPEN
    }

    function _removeMember(uint256 idx) private {
        uint256 last = _members.length - 1;
        if (idx != last) {
            Member memory moved = _members[last];
            _members[idx] = moved;
            _records[moved.auditor].indexPlusOne = uint32(idx + 1); // fits: idx < length <= type(uint32).max
        }
        _members.pop();
    }

    /// @dev The eligible, non-excluded auditors at `asOf`, ascending.
    function _pool(uint64 asOf, address[] memory exclude) private view returns (address[] memory pool) {
        // INVARIANT: a snapshot is drawn only while nothing done from now on can change it: it is in the past
        // (later actions this second could still end or start a membership at asOf) and no member eligible at it
        // can have left yet (leave needs an exit request after asOf plus the exit delay).
        if (asOf >= block.timestamp) revert AuditorRegistrySnapshotNotPast(asOf, block.timestamp);
        if (uint256(asOf) + _exitDelaySeconds < block.timestamp) {
            revert AuditorRegistrySnapshotTooOld(asOf, block.timestamp, _exitDelaySeconds);
        }
        uint256 n = _members.length;
        pool = new address[](n);
        uint256 m;
        for (uint256 i; i < n; ++i) {
            Member memory member = _members[i];
            if (!_eligible(member, asOf)) continue;
            bool skip;
            for (uint256 j; j < exclude.length; ++j) {
                if (exclude[j] == member.auditor) {
                    skip = true;
                    break;
                }
            }
            if (!skip) pool[m++] = member.auditor;
        }
        assembly ("memory-safe") {
            mstore(pool, m) // shrink to the m filled entries (m <= n)
        }
        if (m > 1) _sort(pool, 0, m - 1);
    }

    /// @dev Eligible at asOf iff some membership has eligibleFrom <= asOf < eligibleUntil. Memberships are disjoint
    /// and ordered, so the latest one that began counting by asOf decides.
    function _eligible(Member memory member, uint64 asOf) private view returns (bool) {
        if (member.eligibleFrom <= asOf) return asOf < member.eligibleUntil;
        Membership[] storage past = _past[member.auditor];
        for (uint256 i = past.length; i > 0; --i) {
            Membership memory p = past[i - 1];
            if (p.eligibleFrom <= asOf) return asOf < p.eligibleUntil;
        }
        return false;
    }

    /// @dev Sorts a[lo..hi] (inclusive, lo < hi) ascending: Hoare-partition quicksort over distinct addresses.
    function _sort(address[] memory a, uint256 lo, uint256 hi) private pure {
        address pivot = a[lo + (hi - lo) / 2];
        uint256 i = lo;
        uint256 j = hi;
        while (true) {
            while (a[i] < pivot) ++i;
            while (a[j] > pivot) --j;
            if (i >= j) break;
            (a[i], a[j]) = (a[j], a[i]);
            ++i;
            --j;
        }
        // lo <= j < hi: both halves are strictly smaller than a[lo..hi].
        if (lo < j) _sort(a, lo, j);
        if (j + 1 < hi) _sort(a, j + 1, hi);
    }
}
