// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {PanelReference} from "./test/PanelReference.sol";

/// @notice AuditorRegistry: bonds, forfeits and the snapshot rule of panel draws. The model tests keep the whole
/// membership history in the test (no pruning, leavers kept) and check that the registry's pool at any drawable
/// snapshot is exactly the model's, and that no action after the snapshot changes a drawn panel.
contract AuditorRegistryTest is TestBase, MarketFixture {
    uint256 internal constant N = 8;
    uint256 internal constant ACTORS = 6;
    uint64 internal constant OPEN = type(uint64).max;

    struct Span {
        uint64 from;
        uint64 until;
    }

    /// @dev A membership of the model in the order memberships began (the registry's slot order).
    struct Started {
        address actor;
        uint256 span;
    }

    address[] internal _auditors;
    /// @dev Model: every membership an actor ever had, [from, until), on the registry `_r` of the model tests.
    mapping(address actor => Span[]) internal _model;
    Started[] internal _started;
    AuditorRegistry internal _r;

    function setUp() public {
        vm.warp(1_700_000_000);
        for (uint256 i = 1; i <= N; ++i) {
            address a = address(uint160(0xAD00 + i));
            _auditors.push(a);
            token.mint(a, 1e24);
            vm.startPrank(a);
            token.approve(address(registry), type(uint256).max);
            registry.postBond(MIN_BOND);
            vm.stopPrank();
        }
        // one second more than the delay: snapshots at now - 1 count the bonds
        vm.warp(block.timestamp + ACTIVATION_DELAY + 1);
    }

    // ---------------------------------------------------------------- draws

    function testFuzz_drawPanel_distinctEligibleNotExcludedAndDeterministic(bytes32 seed, uint256 k, uint256 excludeMask)
        public
        view
    {
        excludeMask = bound(excludeMask, 0, (1 << N) - 1);
        address[] memory exclude = new address[](N);
        uint256 excluded;
        for (uint256 i; i < N; ++i) {
            if (excludeMask & (1 << i) != 0) exclude[excluded++] = _auditors[i];
        }
        assembly ("memory-safe") {
            mstore(exclude, excluded)
        }
        k = bound(k, 0, N - excluded);
        uint64 asOf = uint64(block.timestamp - 1);
        address[] memory panel = registry.drawPanel(seed, k, exclude, asOf);
        address[] memory again = registry.drawPanel(seed, k, exclude, asOf);
        assertEq(panel.length, k, "panel size");
        for (uint256 i; i < k; ++i) {
            assertEq(panel[i], again[i], "deterministic");
            assertTrue(registry.isEligible(panel[i], asOf), "eligible");
            for (uint256 j; j < excluded; ++j) {
                assertTrue(panel[i] != exclude[j], "not excluded");
            }
            for (uint256 j; j < i; ++j) {
                assertTrue(panel[i] != panel[j], "distinct");
            }
        }
    }

    /// A fixed vector: the pool is the eligible members in slot (bond) order; position i is the (r_i + 1)-th member
    /// still left, r_i = keccak(seed, i) mod (N - i) (computed by hand here for k = 3, without the reference library).
    function test_drawPanel_fixedVector_slotOrder() public view {
        uint64 asOf = uint64(block.timestamp - 1);
        bytes32 seed = keccak256("vector");
        address[] memory panel = registry.drawPanel(seed, 3, new address[](0), asOf);
        bool[] memory gone = new bool[](N);
        for (uint256 i; i < 3; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i))) % (N - i);
            uint256 at;
            for (uint256 j; j < N; ++j) {
                if (gone[j]) continue;
                if (r == 0) {
                    at = j;
                    break;
                }
                --r;
            }
            gone[at] = true;
            assertEq(panel[i], _auditors[at], "position i");
        }
    }

    /// The draw equals the reference (a plain list with removal) for any seed, size and excluded subset, and an
    /// exclude list with repeats and outsiders excludes each member once.
    function testFuzz_drawPanel_equalsReference(bytes32 seed, uint256 k, uint256 excludeMask) public view {
        excludeMask = bound(excludeMask, 0, (1 << N) - 1);
        address[] memory exclude = new address[](2 * N + 1);
        address[] memory pool = new address[](N);
        uint256 e;
        uint256 m;
        for (uint256 i; i < N; ++i) {
            if (excludeMask & (1 << i) != 0) {
                exclude[e++] = _auditors[i];
                exclude[e++] = _auditors[i]; // repeated
            } else {
                pool[m++] = _auditors[i];
            }
        }
        exclude[e++] = address(0xDEAD); // never bonded
        assembly ("memory-safe") {
            mstore(exclude, e)
            mstore(pool, m)
        }
        uint64 asOf = uint64(block.timestamp - 1);
        assertEq(registry.poolSize(asOf, exclude), m, "poolSize");
        k = bound(k, 0, m);
        address[] memory panel = registry.drawPanel(seed, k, exclude, asOf);
        address[] memory expected = PanelReference.panel(seed, pool, k);
        for (uint256 i; i < k; ++i) {
            assertEq(panel[i], expected[i], "reference");
        }
    }

    function test_drawPanel_tooFew_reverts() public {
        uint64 asOf = uint64(block.timestamp - 1);
        address[] memory exclude = new address[](1);
        exclude[0] = _auditors[0];
        vm.expectRevert(abi.encodeWithSelector(IAuditorRegistry.AuditorRegistryNotEnoughAuditors.selector, N - 1, N));
        registry.drawPanel(bytes32(0), N, exclude, asOf);
    }

    /// The snapshot must be in the past (this second could still change it) and no older than the exit delay.
    function test_drawPanel_snapshotOutOfRange_reverts() public {
        uint64 nowTs = uint64(block.timestamp);
        vm.expectRevert(abi.encodeWithSelector(IAuditorRegistry.AuditorRegistrySnapshotNotPast.selector, nowTs, nowTs));
        registry.drawPanel(bytes32(0), 1, new address[](0), nowTs);
        vm.expectRevert(abi.encodeWithSelector(IAuditorRegistry.AuditorRegistrySnapshotNotPast.selector, nowTs + 5, nowTs));
        registry.eligibleAuditors(nowTs + 5);
        vm.warp(block.timestamp + EXIT_DELAY);
        // exactly exitDelay old is still drawable
        assertEq(registry.eligibleAuditors(nowTs).length, N, "oldest drawable snapshot");
        vm.warp(block.timestamp + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAuditorRegistry.AuditorRegistrySnapshotTooOld.selector, nowTs, block.timestamp, EXIT_DELAY
            )
        );
        registry.drawPanel(bytes32(0), 1, new address[](0), nowTs);
    }

    /// Bonds younger than the activation delay at the snapshot are never drawn, whatever the seed.
    function testFuzz_youngBond_neverDrawn(bytes32 seed, uint32 age) public {
        address fresh = address(0xF0F0);
        token.mint(fresh, MIN_BOND);
        vm.startPrank(fresh);
        token.approve(address(registry), MIN_BOND);
        registry.postBond(MIN_BOND);
        vm.stopPrank();
        uint256 bondedAt = block.timestamp;
        uint256 ageAtSnapshot = bound(age, 0, ACTIVATION_DELAY - 1);
        uint64 asOf = uint64(bondedAt + ageAtSnapshot);
        vm.warp(asOf + 1);
        assertTrue(!registry.isEligible(fresh, asOf), "too young");
        address[] memory panel = registry.drawPanel(seed, N, new address[](0), asOf);
        for (uint256 i; i < N; ++i) {
            assertTrue(panel[i] != fresh, "never drawn");
        }
        // one activation delay after the bond it counts
        vm.warp(bondedAt + ACTIVATION_DELAY + 1);
        assertTrue(registry.isEligible(fresh, uint64(bondedAt + ACTIVATION_DELAY)), "counted after the delay");
        assertEq(registry.auditorOf(fresh).eligibleFrom, bondedAt + ACTIVATION_DELAY, "eligibleFrom");
    }

    /// leave swaps the last listed member into the leaver's place in the enumerable list; draws never read that list
    /// (slots are append-only), so the panel is unchanged.
    function test_leave_reordersStorage_panelUnchanged() public {
        address leaver = _auditors[0];
        vm.prank(leaver);
        registry.requestExit();
        uint64 asOf = uint64(block.timestamp + 1);
        vm.warp(block.timestamp + EXIT_DELAY);
        bytes32 seed = keccak256("reorder");
        address[] memory before = registry.drawPanel(seed, 5, new address[](0), asOf);
        address lastBefore = registry.members()[N - 1];
        vm.prank(leaver);
        registry.leave();
        assertEq(registry.members()[0], lastBefore, "storage reordered");
        address[] memory afterLeave = registry.drawPanel(seed, 5, new address[](0), asOf);
        for (uint256 i; i < 5; ++i) {
            assertEq(afterLeave[i], before[i], "same panel");
        }
    }

    /// A member eligible at asOf that is forfeited below the minimum and re-bonds after asOf is still in asOf's pool
    /// (its ended membership is kept), and its new membership counts only after the activation delay.
    function test_rebondAfterForfeit_keepsPastMembership() public {
        address a = _auditors[3];
        uint64 asOf = uint64(block.timestamp);
        vm.warp(block.timestamp + 10);
        vm.prank(address(dispute));
        registry.forfeit(a, 1, address(this));
        assertTrue(!registry.isActive(a), "deactivated");
        vm.prank(a);
        registry.postBond(1);
        assertTrue(registry.isActive(a), "re-activated");
        assertTrue(registry.isEligible(a, asOf), "still in the old snapshot");
        assertTrue(!registry.isEligible(a, uint64(block.timestamp)), "not in a snapshot of the gap");
        assertEq(registry.eligibleAuditors(asOf).length, N, "old pool intact");
        assertEq(registry.auditorOf(a).eligibleFrom, block.timestamp + ACTIVATION_DELAY, "new membership waits");
    }

    /// An exiting member stays listed and forfeitable until it leaves, and stops counting at its request.
    function test_exitingMember_listedAndForfeitableUntilLeave() public {
        address a = _auditors[5];
        uint64 before = uint64(block.timestamp - 1);
        vm.prank(a);
        registry.requestExit();
        assertEq(registry.members().length, N, "still listed");
        assertEq(registry.activeAuditors().length, N - 1, "not active");
        assertTrue(registry.isEligible(a, before), "eligible before the request");
        vm.warp(block.timestamp + 1);
        assertTrue(!registry.isEligible(a, uint64(block.timestamp - 1)), "not at or after it");
        assertEq(registry.auditorOf(a).eligibleUntil, block.timestamp - 1, "eligibleUntil");
        vm.prank(address(dispute));
        registry.forfeit(a, 1e18, address(this));
        assertEq(registry.auditorOf(a).bond, MIN_BOND - 1e18, "forfeited while exiting");
        vm.warp(block.timestamp + EXIT_DELAY);
        vm.prank(a);
        registry.leave();
        assertEq(registry.members().length, N - 1, "gone");
    }

    function test_constructor_zeroDelays_revert() public {
        vm.expectRevert(abi.encodeWithSelector(IAuditorRegistry.AuditorRegistryZeroActivationDelay.selector));
        new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, 0, address(this));
        vm.expectRevert(abi.encodeWithSelector(IAuditorRegistry.AuditorRegistryZeroExitDelay.selector));
        new AuditorRegistry(token, MIN_BOND, 0, ACTIVATION_DELAY, address(this));
        assertEq(registry.activationDelaySeconds(), ACTIVATION_DELAY, "view");
    }

    function testFuzz_forfeit_neverExceedsBondAndDeactivatesBelowMinimum(uint256 amount) public {
        address a = _auditors[0];
        amount = bound(amount, 1, MIN_BOND);
        vm.prank(address(dispute));
        registry.forfeit(a, amount, address(this));
        assertEq(registry.auditorOf(a).bond, MIN_BOND - amount, "bond reduced");
        assertEq(registry.creditOf(address(this)), amount, "credited");
        assertTrue(!registry.isActive(a), "below minimum: inactive");
        assertEq(registry.activeAuditors().length, N - 1, "active set shrank");
        assertEq(registry.members().length, N, "still listed (forfeitable)");
    }

    // ---------------------------------------------------------------- the snapshot rule against a model

    /// Panel membership depends only on the snapshot and the seed: a random history, a panel drawn at asOf, then a
    /// random run of later actions (bonds, top-ups, exit requests, leaves, forfeits, re-bonds, time) within the exit
    /// delay, and the same draw at asOf again. Both pools equal the model's pool at asOf.
    function testFuzz_panel_dependsOnlyOnSnapshotAndSeed(uint256 history, uint256 later, bytes32 seed, uint8 k)
        public
    {
        _newModel();
        _run(history, 16, type(uint256).max);
        vm.warp(block.timestamp + 1);
        uint64 asOf = uint64(block.timestamp - 1 - (history % 2 hours) % (block.timestamp - _start()));
        address[] memory pool = _r.eligibleAuditors(asOf);
        _assertModelPool(pool, asOf);
        address[] memory exclude = new address[](1);
        exclude[0] = _actor(uint256(seed) % ACTORS);
        address[] memory ordered = _modelPoolInSlotOrder(asOf, exclude[0]);
        assertEq(_r.poolSize(asOf, exclude), ordered.length, "poolSize = model");
        uint256 size = bound(k, 0, ordered.length);
        address[] memory panel = _r.drawPanel(seed, size, exclude, asOf);
        address[] memory expected = PanelReference.panel(seed, ordered, size);
        for (uint256 i; i < size; ++i) {
            assertEq(panel[i], expected[i], "reference over the model's pool");
        }

        _run(later, 24, uint256(asOf) + EXIT_DELAY);

        address[] memory poolAfter = _r.eligibleAuditors(asOf);
        _assertModelPool(poolAfter, asOf);
        address[] memory panelAfter = _r.drawPanel(seed, size, exclude, asOf);
        for (uint256 i; i < size; ++i) {
            assertEq(panelAfter[i], panel[i], "same panel");
        }
        for (uint256 i; i < ACTORS; ++i) {
            address a = _actor(i);
            assertTrue(_r.isEligible(a, asOf) == _modelEligible(a, asOf), "isEligible = model, leavers included");
        }
    }

    /// The registry's pool equals the model's at every drawable snapshot after a random history.
    function testFuzz_pool_matchesModel(uint256 script, uint32 back) public {
        _newModel();
        _run(script, 32, type(uint256).max);
        vm.warp(block.timestamp + 1);
        uint256 span = block.timestamp - _start();
        if (span > EXIT_DELAY) span = EXIT_DELAY;
        uint64 asOf = uint64(block.timestamp - 1 - bound(back, 0, span - 1));
        _assertModelPool(_r.eligibleAuditors(asOf), asOf);
    }

    function _newModel() internal {
        _r = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        _r.wire(address(this)); // this test forfeits in the model run
        for (uint256 i; i < ACTORS; ++i) {
            address a = _actor(i);
            token.mint(a, 1e24);
            vm.prank(a);
            token.approve(address(_r), type(uint256).max);
        }
    }

    /// @dev The first moment of the model run (setUp's time).
    function _start() internal pure returns (uint256) {
        return 1_700_000_000 + uint256(ACTIVATION_DELAY) + 1;
    }

    /// @dev Hashed addresses, so that list order and address order differ and the pool's sort is exercised.
    function _actor(uint256 i) internal pure returns (address) {
        return address(uint160(uint256(keccak256(abi.encode("actor", i)))));
    }

    /// @dev Up to `steps` random actions from `script`; time never passes `until`.
    function _run(uint256 script, uint256 steps, uint256 until) internal {
        for (uint256 s; s < steps; ++s) {
            uint256 r = uint256(keccak256(abi.encode(script, s)));
            address a = _actor((r >> 8) % ACTORS);
            uint256 op = r % 6;
            if (op == 0) _bond(a, (r >> 16) % 3);
            else if (op == 1) _exit(a);
            else if (op == 2) _leave(a);
            else if (op == 3) _forfeit(a, (r >> 16) % (MIN_BOND / 2) + 1);
            else _warp(1 + (r >> 16) % (op == 4 ? 2 hours : 5 days), until);
        }
    }

    function _bond(address a, uint256 extra) internal {
        IAuditorRegistry.Auditor memory x = _r.auditorOf(a);
        if (x.status == IAuditorRegistry.AuditorStatus.Exiting) return;
        bool activates = x.status != IAuditorRegistry.AuditorStatus.Active;
        uint256 amount = (activates ? MIN_BOND - x.bond : 0) + extra + 1;
        vm.prank(a);
        _r.postBond(amount);
        if (activates) {
            _started.push(Started(a, _model[a].length));
            _model[a].push(Span(uint64(block.timestamp + ACTIVATION_DELAY), OPEN));
        }
    }

    function _exit(address a) internal {
        IAuditorRegistry.AuditorStatus s = _r.auditorOf(a).status;
        if (s != IAuditorRegistry.AuditorStatus.Active && s != IAuditorRegistry.AuditorStatus.Inactive) return;
        vm.prank(a);
        _r.requestExit();
        if (s == IAuditorRegistry.AuditorStatus.Active) _endModel(a);
    }

    function _leave(address a) internal {
        IAuditorRegistry.Auditor memory x = _r.auditorOf(a);
        if (x.status != IAuditorRegistry.AuditorStatus.Exiting || block.timestamp < x.exitableAt) return;
        vm.prank(a);
        _r.leave();
    }

    function _forfeit(address a, uint256 amount) internal {
        IAuditorRegistry.Auditor memory x = _r.auditorOf(a);
        if (x.bond == 0) return;
        if (amount > x.bond) amount = x.bond;
        _r.forfeit(a, amount, address(this));
        if (x.status == IAuditorRegistry.AuditorStatus.Active && x.bond - amount < MIN_BOND) _endModel(a);
    }

    function _warp(uint256 dt, uint256 until) internal {
        if (block.timestamp + dt > until) return;
        vm.warp(block.timestamp + dt);
    }

    function _endModel(address a) internal {
        Span[] storage spans = _model[a];
        spans[spans.length - 1].until = uint64(block.timestamp);
    }

    function _modelEligible(address a, uint64 asOf) internal view returns (bool) {
        Span[] storage spans = _model[a];
        for (uint256 i; i < spans.length; ++i) {
            if (spans[i].from <= asOf && asOf < spans[i].until) return true;
        }
        return false;
    }

    /// @dev The model's members eligible at `asOf` but `excluded`, in the order their memberships began.
    function _modelPoolInSlotOrder(uint64 asOf, address excluded) internal view returns (address[] memory pool) {
        pool = new address[](_started.length);
        uint256 m;
        for (uint256 i; i < _started.length; ++i) {
            Started memory st = _started[i];
            Span memory sp = _model[st.actor][st.span];
            if (st.actor != excluded && sp.from <= asOf && asOf < sp.until) pool[m++] = st.actor;
        }
        assembly ("memory-safe") {
            mstore(pool, m)
        }
    }

    /// @dev `pool` must be the model's eligible actors at `asOf`, ascending (insertion-sorted here).
    function _assertModelPool(address[] memory pool, uint64 asOf) internal view {
        address[] memory expected = new address[](ACTORS);
        uint256 m;
        for (uint256 i; i < ACTORS; ++i) {
            address a = _actor(i);
            if (!_modelEligible(a, asOf)) continue;
            uint256 j = m++;
            while (j > 0 && expected[j - 1] > a) {
                expected[j] = expected[j - 1];
                --j;
            }
            expected[j] = a;
        }
        assertEq(pool.length, m, "pool size = model");
        for (uint256 i; i < m; ++i) {
            assertEq(pool[i], expected[i], "pool = model, ascending");
        }
    }
}
