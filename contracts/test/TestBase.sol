// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Vm, vm} from "./Vm.sol";

/// @notice Assertion helpers and input bounding for Solidity tests (a small stand-in for forge-std's Test).
/// A failed assertion reverts with a custom error naming the values, which fails the test.
abstract contract TestBase {
    error AssertEqUint(string what, uint256 left, uint256 right);
    error AssertEqAddress(string what, address left, address right);
    error AssertEqBytes32(string what, bytes32 left, bytes32 right);
    error AssertLe(string what, uint256 left, uint256 right);
    error AssertGe(string what, uint256 left, uint256 right);
    error AssertTrue(string what);
    error BoundInvalid(uint256 min, uint256 max);

    Vm internal constant VM = vm;

    function assertEq(uint256 left, uint256 right, string memory what) internal pure {
        if (left != right) revert AssertEqUint(what, left, right);
    }

    function assertEq(address left, address right, string memory what) internal pure {
        if (left != right) revert AssertEqAddress(what, left, right);
    }

    function assertEq(bytes32 left, bytes32 right, string memory what) internal pure {
        if (left != right) revert AssertEqBytes32(what, left, right);
    }

    function assertLe(uint256 left, uint256 right, string memory what) internal pure {
        if (left > right) revert AssertLe(what, left, right);
    }

    function assertGe(uint256 left, uint256 right, string memory what) internal pure {
        if (left < right) revert AssertGe(what, left, right);
    }

    function assertTrue(bool condition, string memory what) internal pure {
        if (!condition) revert AssertTrue(what);
    }

    /// @notice Maps `x` into [min, max] (uniform enough for fuzzing; keeps small values unchanged).
    function bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256) {
        if (min > max) revert BoundInvalid(min, max);
        if (x >= min && x <= max) return x;
        uint256 size = max - min;
        if (size == type(uint256).max) return x;
        return min + (x % (size + 1));
    }
}

/// @notice What Foundry's (and EDR's) invariant runner reads to restrict fuzzed calls, as in forge-std's
/// StdInvariant: `targetContracts()` and `targetSelectors()`.
abstract contract InvariantBase is TestBase {
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    address[] private _targetedContracts;
    FuzzSelector[] private _targetedSelectors;

    function targetContract(address target) internal {
        _targetedContracts.push(target);
    }

    function targetSelector(FuzzSelector memory selector) internal {
        _targetedSelectors.push(selector);
    }

    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetedSelectors;
    }
}
