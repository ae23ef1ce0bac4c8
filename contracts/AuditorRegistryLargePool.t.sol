// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {PanelReference} from "./test/PanelReference.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";

/// @notice Panel draws from a large registry with a long history: thousands of bonds, exits, forfeits below the
/// minimum and re-bonds before and after the snapshot. Every draw equals the reference rule over a model of the
/// slots kept here, and its gas stays within DRAW7_GAS_BOUND (it would be about 3,100 gas per listed auditor, over
/// 13M here, if the draw looped over the pool).
contract AuditorRegistryLargePoolTest is TestBase {
    uint256 internal constant MIN_BOND = 100e18;
    uint64 internal constant EXIT_DELAY = 14 days;
    uint64 internal constant ACTIVATION_DELAY = 1 hours;
    uint256 internal constant MEMBERS = 4_096;
    uint256 internal constant CHURN = 600;
    /// @dev A bound for a 7-seat draw with 3 exclusions from about 5,000 slots after 1,200 changes around the
    /// snapshot (measured here 408,309 in one test transaction, where storage the churn touched is warm; bench:gas
    /// gives cold figures: 386,660 at 1,000 and 579,411 at 10,000 auditors after exits). A draw that looped over the
    /// pool would cost over 13M here.
    uint256 internal constant DRAW7_GAS_BOUND = 600_000;

    TestToken internal token;
    AuditorRegistry internal registry;

    /// @dev Model of the registry's slots (index = slot - 1): member, eligibleFrom, eligibleUntil.
    address[] internal _who;
    uint64[] internal _from;
    uint64[] internal _until;
    mapping(address auditor => uint256 slotPlusOne) internal _current;
    uint256 internal _fresh;

    function setUp() public {
        vm.warp(1_700_000_000);
        token = new TestToken("Test", "TST");
        registry = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        registry.wire(address(this)); // this test forfeits
        for (uint256 i; i < MEMBERS; ++i) {
            _bond(_newAuditor());
            if (i % 64 == 63) vm.warp(block.timestamp + 1 minutes);
        }
        vm.warp(block.timestamp + ACTIVATION_DELAY + 1);
    }

    /// Churn before the snapshot, a snapshot, churn after it (new bonds, exits, forfeits, re-bonds within the exit
    /// delay), then draws at the snapshot: each equals the reference over the model's pool, and stays in the bound.
    function test_largePool_drawEqualsReferenceWithinGasBound() public {
        _churn(1, CHURN);
        uint64 asOf = uint64(block.timestamp);
        vm.warp(block.timestamp + 1);
        address[] memory exclude = _someEligible(asOf, 3);
        bytes32 seed = keccak256("large");
        address[] memory before7 = registry.drawPanel(seed, 7, exclude, asOf);

        _churn(2, CHURN);
        for (uint256 i; i < 200; ++i) _bond(_newAuditor());

        address[] memory pool = _modelPool(asOf, exclude);
        assertGe(pool.length, 3_000, "a pool of thousands");
        assertEq(registry.poolSize(asOf, exclude), pool.length, "poolSize = model");
        uint256[3] memory ks = [uint256(3), 7, 25];
        for (uint256 t; t < ks.length; ++t) {
            uint256 k = ks[t];
            uint256 g = gasleft();
            address[] memory panel = registry.drawPanel(seed, k, exclude, asOf);
            g -= gasleft();
            address[] memory expected = PanelReference.panel(seed, pool, k);
            for (uint256 i; i < k; ++i) {
                assertEq(panel[i], expected[i], "reference over the model's pool");
            }
            if (k == 7) {
                assertLe(g, DRAW7_GAS_BOUND, "7-seat draw gas");
                for (uint256 i; i < 7; ++i) {
                    assertEq(panel[i], before7[i], "unchanged by the churn after the snapshot");
                }
            }
        }
    }

    /// More than the pool is refused with the pool size; asking for exactly the pool draws everyone once.
    function test_largePool_tooFewAndWholePool() public {
        _churn(3, CHURN);
        uint64 asOf = uint64(block.timestamp);
        vm.warp(block.timestamp + 1);
        address[] memory none = new address[](0);
        uint256 have = registry.poolSize(asOf, none);
        assertEq(have, _modelPool(asOf, none).length, "poolSize = model");
        vm.expectRevert(abi.encodeWithSelector(IAuditorRegistry.AuditorRegistryNotEnoughAuditors.selector, have, have + 1));
        registry.drawPanel(bytes32(0), have + 1, none, asOf);
    }

    function _newAuditor() internal returns (address a) {
        a = address(uint160(0x1000000 + _fresh++));
        token.mint(a, 10 * MIN_BOND);
        vm.prank(a);
        token.approve(address(registry), type(uint256).max);
    }

    function _bond(address a) internal {
        vm.prank(a);
        registry.postBond(MIN_BOND);
        _who.push(a);
        _from.push(uint64(block.timestamp + ACTIVATION_DELAY));
        _until.push(type(uint64).max);
        _current[a] = _who.length;
    }

    /// @dev `steps` random actions on existing members: exit requests, forfeits below the minimum, re-bonds of
    /// forfeited members, and time.
    function _churn(uint256 script, uint256 steps) internal {
        for (uint256 s; s < steps; ++s) {
            uint256 r = uint256(keccak256(abi.encode(script, s)));
            address a = address(uint160(0x1000000 + (r >> 8) % _fresh));
            IAuditorRegistry.AuditorStatus st = registry.auditorOf(a).status;
            uint256 op = r % 4;
            if (op == 0 && st == IAuditorRegistry.AuditorStatus.Active) {
                vm.prank(a);
                registry.requestExit();
                _until[_current[a] - 1] = uint64(block.timestamp);
            } else if (op == 1 && st == IAuditorRegistry.AuditorStatus.Active) {
                registry.forfeit(a, 1, address(this));
                _until[_current[a] - 1] = uint64(block.timestamp);
            } else if (op == 2 && st == IAuditorRegistry.AuditorStatus.Inactive) {
                // a top-up back to the minimum: a new membership in a new slot
                vm.prank(a);
                registry.postBond(1);
                _who.push(a);
                _from.push(uint64(block.timestamp + ACTIVATION_DELAY));
                _until.push(type(uint64).max);
                _current[a] = _who.length;
            } else if (op == 3) {
                vm.warp(block.timestamp + 1 + (r >> 32) % 20 minutes);
            }
        }
    }

    /// @dev The model's members eligible at asOf, in slot order, less `exclude`.
    function _modelPool(uint64 asOf, address[] memory exclude) internal view returns (address[] memory pool) {
        pool = new address[](_who.length);
        uint256 m;
        for (uint256 i; i < _who.length; ++i) {
            if (_from[i] > asOf || asOf >= _until[i]) continue;
            bool skip;
            for (uint256 j; j < exclude.length; ++j) {
                if (exclude[j] == _who[i]) skip = true;
            }
            if (!skip) pool[m++] = _who[i];
        }
        assembly ("memory-safe") {
            mstore(pool, m)
        }
    }

    /// @dev `n` members eligible at asOf, spread over the slots.
    function _someEligible(uint64 asOf, uint256 n) internal view returns (address[] memory out) {
        out = new address[](n);
        uint256 got;
        for (uint256 i = 17; got < n; i += 1_009) {
            uint256 idx = i % _who.length;
            if (_from[idx] <= asOf && asOf < _until[idx]) out[got++] = _who[idx];
        }
    }
}
