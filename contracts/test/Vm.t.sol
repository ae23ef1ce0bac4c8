// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
import {TestBase} from "./TestBase.sol";
import {vm} from "./Vm.sol";
contract Target { error Boom(uint256 x); function f(uint256 x) external view returns (address) { if (x == 1) revert Boom(x); return msg.sender; } }
/// @notice Checks that the cheatcodes in Vm.sol behave as our tests assume under Hardhat 3 (EDR).
contract VmTest is TestBase {
    Target internal t;
    function setUp() public { t = new Target(); }
    function test_cheatcodes_behaveAsAssumed() public {
        vm.prank(address(0xBEEF));
        assertEq(t.f(0), address(0xBEEF), "prank");
        vm.startPrank(address(0xCAFE));
        assertEq(t.f(0), address(0xCAFE), "startPrank");
        vm.stopPrank();
        vm.warp(12345);
        assertEq(block.timestamp, 12345, "warp");
        vm.roll(777);
        assertEq(block.number, 777, "roll");
        vm.expectRevert(abi.encodeWithSelector(Target.Boom.selector, 1));
        t.f(1);
        vm.expectPartialRevert(Target.Boom.selector);
        t.f(1);
        vm.expectRevert();
        t.f(1);
        vm.label(address(t), "target");
    }
    function testFuzz_assume_skipsRejectedInputs(uint256 x) public {
        vm.assume(x != 1);
        t.f(x);
    }
}
