// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {PeerDirectory} from "./PeerDirectory.sol";

/// The caps of PeerDirectory.announce (the event itself is read back in test/chain/peer-directory.test.ts).
contract PeerDirectoryTest is TestBase {
    PeerDirectory internal dir;

    function setUp() public {
        dir = new PeerDirectory();
    }

    function _addrs(uint256 count, uint256 length) internal pure returns (string[] memory a) {
        a = new string[](count);
        for (uint256 i = 0; i < count; ++i) a[i] = string(new bytes(length));
    }

    function test_announce_acceptsUpToTheCaps() public {
        dir.announce(_addrs(8, 256));
        dir.announce(_addrs(1, 1));
        dir.announce(new string[](0)); // withdraws
    }

    function testFuzz_announce_rejectsMoreThanEightAddrs(uint8 extra) public {
        uint256 n = 9 + bound(extra, 0, 20);
        vm.expectRevert(abi.encodeWithSelector(PeerDirectory.PeerDirectoryTooManyAddrs.selector, n, 8));
        dir.announce(_addrs(n, 10));
    }

    function test_announce_rejectsAnOverlongAddr() public {
        string[] memory a = _addrs(3, 10);
        a[2] = string(new bytes(257));
        vm.expectRevert(abi.encodeWithSelector(PeerDirectory.PeerDirectoryBadAddrLength.selector, 2, 257, 256));
        dir.announce(a);
    }

    function test_announce_rejectsAnEmptyAddr() public {
        string[] memory a = _addrs(2, 10);
        a[0] = "";
        vm.expectRevert(abi.encodeWithSelector(PeerDirectory.PeerDirectoryBadAddrLength.selector, 0, 0, 256));
        dir.announce(a);
    }
}
