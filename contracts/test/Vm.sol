// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice The subset of the Foundry/Hardhat 3 (EDR) cheatcodes our Solidity tests use. forge-std is not
/// available offline, so this is our own minimal interface; every function here was exercised under
/// `npx hardhat test solidity`.
// solhint-disable-next-line interface-starts-with-i
interface Vm {
    function prank(address sender) external;
    function startPrank(address sender) external;
    function stopPrank() external;
    function warp(uint256 newTimestamp) external;
    function roll(uint256 newHeight) external;
    function chainId(uint256 newChainId) external;
    function expectRevert(bytes calldata revertData) external;
    function expectPartialRevert(bytes4 selector) external;
    function expectRevert() external;
    function expectEmit(bool checkTopic1, bool checkTopic2, bool checkTopic3, bool checkData, address emitter) external;
    function assume(bool condition) external;
    function label(address account, string calldata newLabel) external;
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
    function addr(uint256 privateKey) external pure returns (address keyAddr);
}

/// @dev The cheatcode address: address(uint160(uint256(keccak256("hevm cheat code")))).
Vm constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
