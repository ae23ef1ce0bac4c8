// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";

contract AuditorRegistryTest is TestBase, MarketFixture {
    uint256 internal constant N = 8;
    address[] internal _auditors;

    function setUp() public {
        for (uint256 i = 1; i <= N; ++i) {
            address a = address(uint160(0xAD00 + i));
            _auditors.push(a);
            token.mint(a, 1e24);
            vm.startPrank(a);
            token.approve(address(registry), type(uint256).max);
            registry.postBond(MIN_BOND);
            vm.stopPrank();
        }
    }

    function testFuzz_drawPanel_distinctActiveNotExcludedAndDeterministic(bytes32 seed, uint256 k, uint256 excludeMask)
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
        address[] memory panel = registry.drawPanel(seed, k, exclude);
        address[] memory again = registry.drawPanel(seed, k, exclude);
        assertEq(panel.length, k, "panel size");
        for (uint256 i; i < k; ++i) {
            assertEq(panel[i], again[i], "deterministic");
            assertTrue(registry.isActive(panel[i]), "active");
            for (uint256 j; j < excluded; ++j) {
                assertTrue(panel[i] != exclude[j], "not excluded");
            }
            for (uint256 j; j < i; ++j) {
                assertTrue(panel[i] != panel[j], "distinct");
            }
        }
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
    }
}
