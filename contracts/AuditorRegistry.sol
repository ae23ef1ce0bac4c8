// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {FixedRoles} from "./access/FixedRoles.sol";
import {TransferIn} from "./libraries/TransferIn.sol";

/// @title AuditorRegistry: auditor bonds, activation and exit delays, snapshot panel draws, forfeiture
/// (see IAuditorRegistry and docs/panels.md)
/// @dev Draws use a Fenwick tree over membership slots whose nodes keep their history (a checkpoint per change), so
/// the count of members eligible at a past snapshot, and the i-th of them, are found in O(log slots) node reads.
/// Slots are numbered in activation order and never reused: the slots counted at a snapshot `asOf` (those with
/// eligibleFrom <= asOf) are a prefix of the slot numbers, and slots opened later lie beyond it.
contract AuditorRegistry is IAuditorRegistry, FixedRoles {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    string public constant VERSION = "pouw-AuditorRegistry-1";

    /// @dev Storage record of an auditor; `indexPlusOne` is its position in `_members` + 1 (0: not listed); `slot`
    /// is the slot of its current (latest) membership (0: none).
    /// NOTE: 128 + 48 + 8 + 32 + 32 = 248 bits: one slot already (the packing rule's heuristic does not see it).
    // solhint-disable-next-line gas-struct-packing
    struct Record {
        uint128 bond;
        uint48 exitableAt;
        AuditorStatus status;
        uint32 indexPlusOne;
        uint32 slot;
    }

    /// @dev One membership [eligibleFrom, eligibleUntil) of `auditor`, in one storage word. Slots are append-only.
    struct Slot {
        address auditor;
        uint48 eligibleFrom;
        uint48 eligibleUntil;
    }

    /// @notice May forfeit bonds (the dispute contract, for meta-audits and silent panelists).
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");
    /// @dev eligibleUntil of a membership that has not ended.
    uint48 private constant _OPEN = type(uint48).max;
    /// @dev Layout of a tree node's head word: value in bits [0, 32), key (unix seconds) in [32, 80), the number of
    /// older checkpoints in `_history` from bit 80. A history entry is (key << 32) | value, one per word (packing three
    /// to a word measured slower draws and no cheaper first exits).
    uint256 private constant _VALUE_BITS = 32;
    uint256 private constant _KEY_BITS = 48;
    uint256 private constant _ENTRY_MASK = (1 << 80) - 1;

    IERC20 private immutable _token;
    uint256 private immutable _minBond;
    uint64 private immutable _exitDelaySeconds;
    uint64 private immutable _activationDelaySeconds;

    mapping(address auditor => Record) private _records;
    /// @dev Every listed auditor (active, inactive, exiting) until it leaves, for enumeration only; its order is not
    /// canonical (leave swaps the last member into the hole) and draws never read it.
    address[] private _members;
    /// @dev Memberships by slot number (1-based, activation order; eligibleFrom is non-decreasing in the slot).
    mapping(uint256 slot => Slot) private _slots;
    uint256 private _slotCount;
    /// @dev Earlier slots of auditors that re-activated, oldest first (kept while a drawable snapshot can fall in
    /// them).
    mapping(address auditor => uint32[]) private _past;
    /// @dev Fenwick node j counts the open memberships among slots (j - lowbit(j), j]; its head word holds the latest
    /// value and the time it was set, `_history` the earlier (time, value) checkpoints, ascending.
    mapping(uint256 node => uint256 head) private _heads;
    mapping(uint256 node => mapping(uint256 i => uint256 entry)) private _history;
    mapping(address account => uint256 amount) private _credits;
    /// @dev When `auditor` last forfeited any of its bond (0: never). A dispute counts no vote of a member that forfeited
    /// after the second the dispute was opened (IAuditorRegistry.forfeitedAt).
    mapping(address auditor => uint64 at) private _forfeitedAt;

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

    // ---- attestation forfeiture: the ProviderRegistry forfeits the signers of a statement a dispute found false.
    // NOTE: kept in one place (role, modifier, wiring) apart from the dispute role's code.

    /// @notice May forfeit bonds too: the ProviderRegistry, for signers of a false attestation statement.
    bytes32 public constant ATTESTATION_ROLE = keccak256("ATTESTATION_ROLE");

    modifier onlyForfeiter() {
        if (!hasRole(DISPUTE_ROLE, msg.sender) && !hasRole(ATTESTATION_ROLE, msg.sender)) {
            revert AccessControlUnauthorizedAccount(msg.sender, DISPUTE_ROLE);
        }
        _;
    }

    /// @notice Wire the ProviderRegistry that may forfeit signers of false statements (deployer, once, before `wire`
    /// ends wiring).
    function wireAttestation(address providerRegistry) external onlyWirer {
        // INVARIANT: the attestation forfeiting role has at most one holder, fixed here forever.
        if (providerRegistry == address(0)) revert FixedRolesZeroHolder(ATTESTATION_ROLE);
        address holder = this.roleHolder(ATTESTATION_ROLE);
        if (holder != address(0)) revert FixedRolesImmutable(ATTESTATION_ROLE, providerRegistry);
        _wireRole(ATTESTATION_ROLE, providerRegistry);
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
        uint48 at = (block.timestamp + _exitDelaySeconds).toUint48();
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
        // Its slots stay (ended, so counted by no drawable snapshot); only the enumerable list and the record go.
        _removeMember(r.indexPlusOne - 1);
        delete _past[msg.sender];
        delete _records[msg.sender];
        emit AuditorLeft(msg.sender, amount);
        if (amount != 0) _token.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IAuditorRegistry
    function forfeit(address auditor, uint256 amount, address to) external onlyForfeiter {
        if (amount == 0) revert AuditorRegistryZeroAmount();
        if (to == address(0)) revert AuditorRegistryZeroRecipient();
        Record storage r = _records[auditor];
        // INVARIANT: a forfeit never exceeds the bond.
        if (amount > r.bond) revert AuditorRegistryForfeitExceedsBond(auditor, r.bond, amount);
        unchecked {
            // bound: checked just above
            r.bond -= uint128(amount);
        }
        _forfeitedAt[auditor] = uint64(block.timestamp);
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
        _checkSnapshot(asOf);
        uint256 prefix = _prefixAt(asOf);
        // Drawn and excluded slots are taken out in memory (an auditor has at most one slot eligible at asOf). Sized
        // before the count is known: k beyond the prefix fails the check below anyway.
        uint256[] memory taken = new uint256[](exclude.length + (k < prefix ? k : prefix));
        uint256 nTaken = _excludedSlots(exclude, asOf, taken);
        uint256 have = _countAt(prefix, asOf) - nTaken;
        if (k > have) revert AuditorRegistryNotEnoughAuditors(have, k);
        panel = new address[](k);
        if (k == 0) return panel;
        uint256 top = 1 << Math.log2(prefix);
        // NOTE: the taken slots are counted per tree node either by scanning the list (about 20 gas per entry per level:
        // k * (k + excluded) * log(prefix) in all) or from a Fenwick tree of them in memory (3 * prefix + prefix^2 / 512
        // gas of memory, then O(log prefix) per slot); whichever costs less. Both give the same panel.
        uint256 listCost = k * (k + nTaken) * Math.log2(prefix) * 20;
        uint256[] memory takenTree;
        if (3 * prefix + (prefix * prefix) / 512 < listCost) {
            takenTree = new uint256[](prefix + 1);
            for (uint256 t; t < nTaken; ++t) _mark(takenTree, taken[t], prefix);
        }
        for (uint256 i; i < k; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i))) % (have - i);
            uint256 slot = takenTree.length == 0
                ? _select(r, prefix, top, asOf, taken, nTaken)
                : _selectWithTree(r, prefix, top, asOf, takenTree);
            if (takenTree.length == 0) taken[nTaken++] = slot;
            else _mark(takenTree, slot, prefix);
            panel[i] = _slots[slot].auditor;
        }
    }

    /// @inheritdoc IAuditorRegistry
    function poolSize(uint64 asOf, address[] calldata exclude) external view returns (uint256) {
        _checkSnapshot(asOf);
        uint256 prefix = _prefixAt(asOf);
        uint256[] memory taken = new uint256[](exclude.length);
        return _countAt(prefix, asOf) - _excludedSlots(exclude, asOf, taken);
    }

    /// @inheritdoc IAuditorRegistry
    function eligibleAuditors(uint64 asOf) external view returns (address[] memory pool) {
        _checkSnapshot(asOf);
        uint256 n = _members.length;
        pool = new address[](n);
        uint256 m;
        for (uint256 i; i < n; ++i) {
            address a = _members[i];
            if (_slotAt(a, asOf) != 0) pool[m++] = a;
        }
        assembly ("memory-safe") {
            mstore(pool, m) // shrink to the m filled entries (m <= n)
        }
        if (m > 1) _sort(pool, 0, m - 1);
    }

    /// @inheritdoc IAuditorRegistry
    function isEligible(address auditor, uint64 asOf) external view returns (bool) {
        return _slotAt(auditor, asOf) != 0;
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
        if (r.slot != 0) {
            Slot storage s = _slots[r.slot];
            a.eligibleFrom = s.eligibleFrom;
            a.eligibleUntil = s.eligibleUntil == _OPEN ? type(uint64).max : s.eligibleUntil;
        }
    }

    /// @inheritdoc IAuditorRegistry
    function forfeitedAt(address auditor) external view returns (uint64) {
        return _forfeitedAt[auditor];
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
            address a = _members[i];
            if (_records[a].status == AuditorStatus.Active) active[m++] = a;
        }
        assembly ("memory-safe") {
            mstore(active, m) // shrink to the m filled entries (m <= n)
        }
    }

    /// @inheritdoc IAuditorRegistry
    function members() external view returns (address[] memory) {
        return _members;
    }

    /// @inheritdoc IAuditorRegistry
    function creditOf(address account) external view returns (uint256) {
        return _credits[account];
    }

    /// @dev Starts a new membership of `auditor` in a new slot, eligible from now + activationDelay. A listed
    /// (inactive) auditor keeps the slot of the membership that ended in `_past` while a drawable snapshot can still
    /// fall inside it.
    function _activate(address auditor, Record storage r) private {
        uint48 from = (block.timestamp + _activationDelaySeconds).toUint48();
        r.status = AuditorStatus.Active;
        if (r.indexPlusOne == 0) {
            _members.push(auditor);
            r.indexPlusOne = _members.length.toUint32();
        } else if (r.slot != 0) {
            Slot storage s = _slots[r.slot];
            // A snapshot is drawable while asOf >= now - exitDelay, so an ended membership [from, until) still matters
            // iff until > now - exitDelay (and it is not empty).
            if (s.eligibleFrom < s.eligibleUntil && uint256(s.eligibleUntil) + _exitDelaySeconds > block.timestamp) {
                _past[auditor].push(r.slot);
            }
        }
        r.slot = _openSlot(auditor, from).toUint32();
        emit AuditorActivated(auditor, from);
    }

    /// @dev Appends slot q = count + 1 for a membership that is open now, and its tree node: node q counts the slots
    /// (q - lowbit(q), q], i.e. q itself and the nodes q - 1, q - 2, q - 4, ... below lowbit(q). No existing node
    /// covers q, so nothing else is written. The node's first checkpoint is now: it is read only for snapshots at or
    /// after slot q's eligibleFrom (> now).
    function _openSlot(address auditor, uint48 from) private returns (uint256 q) {
        q = _slotCount + 1;
        // INVARIANT: slot numbers and tree values fit their 32-bit fields.
        if (q > type(uint32).max) revert SafeCast.SafeCastOverflowedUintDowncast(32, q);
        _slotCount = q;
        _slots[q] = Slot({auditor: auditor, eligibleFrom: from, eligibleUntil: _OPEN});
        uint256 value = 1;
        uint256 low = q & (~q + 1);
        for (uint256 step = 1; step < low; step <<= 1) {
            value += uint32(_heads[q - step]);
        }
        _heads[q] = (block.timestamp << _VALUE_BITS) | value;
    }

    /// @dev Ends the current membership now: snapshots at or after now no longer count it. Every tree node covering
    /// its slot takes one less from now on; the value before stays in the node's history for earlier snapshots.
    function _endMembership(Record storage r) private {
        uint256 q = r.slot;
        _slots[q].eligibleUntil = uint48(block.timestamp); // fits: block.timestamp < _OPEN
        uint256 n = _slotCount;
        for (uint256 j = q; j <= n; j += j & (~j + 1)) {
            uint256 h = _heads[j];
            // INVARIANT: an open slot is counted in every node covering it, so no node goes below zero.
            uint256 value = uint32(h) - 1;
            if ((h >> _VALUE_BITS) & ((1 << _KEY_BITS) - 1) == block.timestamp) {
                // same second: no snapshot at or after now is drawable yet, so the value is replaced in place
                _heads[j] = (h & ~uint256(type(uint32).max)) | value;
            } else {
                uint256 len = h >> (_VALUE_BITS + _KEY_BITS);
                _history[j][len] = h & _ENTRY_MASK;
                _heads[j] = ((len + 1) << (_VALUE_BITS + _KEY_BITS)) | (block.timestamp << _VALUE_BITS) | value;
            }
        }
    }

    function _removeMember(uint256 idx) private {
        uint256 last = _members.length - 1;
        if (idx != last) {
            address moved = _members[last];
            _members[idx] = moved;
            _records[moved].indexPlusOne = uint32(idx + 1); // fits: idx < length <= type(uint32).max
        }
        _members.pop();
    }

    /// @dev INVARIANT: a snapshot is drawn only while nothing done from now on can change it: it is in the past
    /// (later actions this second could still end or start a membership at asOf) and no member eligible at it can
    /// have left yet (leave needs an exit request after asOf plus the exit delay).
    function _checkSnapshot(uint64 asOf) private view {
        if (asOf >= block.timestamp) revert AuditorRegistrySnapshotNotPast(asOf, block.timestamp);
        if (uint256(asOf) + _exitDelaySeconds < block.timestamp) {
            revert AuditorRegistrySnapshotTooOld(asOf, block.timestamp, _exitDelaySeconds);
        }
    }

    /// @dev The number of slots with eligibleFrom <= asOf (a prefix: eligibleFrom is non-decreasing in the slot).
    function _prefixAt(uint64 asOf) private view returns (uint256 lo) {
        uint256 hi = _slotCount;
        while (lo < hi) {
            uint256 mid = (lo + hi + 1) >> 1;
            if (_slots[mid].eligibleFrom <= asOf) lo = mid;
            else hi = mid - 1;
        }
    }

    /// @dev The members eligible at asOf: the open slots among 1..prefix at asOf (a Fenwick prefix sum).
    function _countAt(uint256 prefix, uint64 asOf) private view returns (uint256 count) {
        for (uint256 j = prefix; j != 0; j -= j & (~j + 1)) {
            count += _valueAt(j, asOf);
        }
    }

    /// @dev The slot of the (r+1)-th eligible, untaken slot among 1..prefix at asOf (Fenwick descent from `top`, the
    /// highest power of two <= prefix). Only nodes inside 1..prefix are read, so slots opened after asOf never matter.
    function _select(uint256 r, uint256 prefix, uint256 top, uint64 asOf, uint256[] memory taken, uint256 nTaken)
        private
        view
        returns (uint256)
    {
        uint256 pos;
        for (uint256 step = top; step != 0; step >>= 1) {
            uint256 next = pos + step;
            if (next > prefix) continue;
            uint256 v = _valueAt(next, asOf);
            for (uint256 t; t < nTaken; ++t) {
                uint256 s = taken[t];
                if (s > pos && s <= next) --v; // a taken slot is eligible, so counted in v
            }
            if (v <= r) {
                pos = next;
                r -= v;
            }
        }
        return pos + 1;
    }

    /// @dev `_select` with the taken slots counted by a Fenwick tree in memory (`takenTree[j]`: taken slots in node j).
    function _selectWithTree(uint256 r, uint256 prefix, uint256 top, uint64 asOf, uint256[] memory takenTree)
        private
        view
        returns (uint256)
    {
        uint256 pos;
        for (uint256 step = top; step != 0; step >>= 1) {
            uint256 next = pos + step;
            if (next > prefix) continue;
            uint256 v = _valueAt(next, asOf) - takenTree[next];
            if (v <= r) {
                pos = next;
                r -= v;
            }
        }
        return pos + 1;
    }

    /// @dev Counts slot `s` (1..prefix) as taken in every node of `takenTree` that covers it.
    function _mark(uint256[] memory takenTree, uint256 s, uint256 prefix) private pure {
        for (uint256 j = s; j <= prefix; j += j & (~j + 1)) {
            ++takenTree[j];
        }
    }

    /// @dev Writes into `taken` the distinct slots eligible at asOf of the addresses in `exclude`; returns how many.
    function _excludedSlots(address[] calldata exclude, uint64 asOf, uint256[] memory taken)
        private
        view
        returns (uint256 n)
    {
        for (uint256 i; i < exclude.length; ++i) {
            uint256 s = _slotAt(exclude[i], asOf);
            if (s == 0) continue;
            bool seen;
            for (uint256 t; t < n; ++t) {
                if (taken[t] == s) {
                    seen = true;
                    break;
                }
            }
            if (!seen) taken[n++] = s;
        }
    }

    /// @dev Node j's value at asOf: the latest checkpoint with key <= asOf (the head, else a galloping search back
    /// through the history, so a node that changed c times since asOf costs O(log c) reads).
    function _valueAt(uint256 j, uint64 asOf) private view returns (uint256) {
        uint256 h = _heads[j];
        if ((h >> _VALUE_BITS) & ((1 << _KEY_BITS) - 1) <= asOf) return uint32(h);
        mapping(uint256 => uint256) storage hist = _history[j];
        uint256 hi = h >> (_VALUE_BITS + _KEY_BITS); // hist[hi] (or the head) has key > asOf
        uint256 lo;
        uint256 step = 1;
        while (true) {
            // NOTE: node j is read only for asOf >= eligibleFrom of slot j > its first checkpoint, so some entry has
            // key <= asOf; index 0 is the floor of the search.
            uint256 i = step < hi ? hi - step : 0;
            if (hist[i] >> _VALUE_BITS <= asOf) {
                lo = i;
                break;
            }
            if (i == 0) return 0;
            hi = i;
            step <<= 1;
        }
        while (hi - lo > 1) {
            uint256 mid = (lo + hi) >> 1;
            if (hist[mid] >> _VALUE_BITS <= asOf) lo = mid;
            else hi = mid;
        }
        return uint32(hist[lo]);
    }

    /// @dev The slot of `auditor`'s membership eligible at asOf (eligibleFrom <= asOf < eligibleUntil), or 0.
    /// Memberships are disjoint and ordered, so the latest one that began counting by asOf decides.
    function _slotAt(address auditor, uint64 asOf) private view returns (uint256) {
        uint256 q = _records[auditor].slot;
        if (q == 0) return 0;
        Slot memory s = _slots[q];
        if (s.eligibleFrom > asOf) {
            uint32[] storage past = _past[auditor];
            uint256 i = past.length;
            while (true) {
                if (i == 0) return 0;
                q = past[--i];
                s = _slots[q];
                if (s.eligibleFrom <= asOf) break;
            }
        }
        return asOf < s.eligibleUntil ? q : 0;
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
