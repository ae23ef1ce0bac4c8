// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {DataRegistry} from "./DataRegistry.sol";
import {IDataRegistry} from "./interfaces/IDataRegistry.sol";

contract DataRegistryTest is TestBase {
    address internal constant OWNER = address(0xD1);
    address internal constant PAYOUT = address(0xD2);
    address internal constant STRANGER = address(0xD3);
    string internal constant CID = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy";

    DataRegistry internal data;

    function setUp() public {
        data = new DataRegistry();
    }

    function _register(bytes32 digest) internal returns (uint64 id) {
        vm.prank(OWNER);
        id = data.register(digest, CID, "CC-BY-4.0", PAYOUT, keccak256("terms"));
    }

    function testFuzz_register_recordsCorpus(bytes32 digest, address payout, bytes32 terms) public {
        vm.assume(digest != bytes32(0) && payout != address(0));
        vm.prank(OWNER);
        uint64 id = data.register(digest, CID, "CC-BY-4.0", payout, terms);
        assertEq(id, 1, "first id");
        IDataRegistry.Corpus memory c = data.corpusOf(id);
        assertEq(c.owner, OWNER, "owner");
        assertEq(c.payout, payout, "payout");
        assertEq(c.contentDigest, digest, "digest");
        assertEq(c.termsHash, terms, "terms");
        assertEq(keccak256(bytes(c.licence)), keccak256("CC-BY-4.0"), "licence");
        assertEq(keccak256(bytes(c.contentCid)), keccak256(bytes(CID)), "cid");
        assertTrue(!c.retired, "not retired");
        assertEq(data.corpusIdOf(digest), id, "by content");
        assertEq(data.payoutOf(id), payout, "payoutOf");
        assertEq(data.corpusCount(), 1, "count");
        data.requireAttachable(id);
    }

    function test_register_badInputs_revert() public {
        vm.startPrank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryZeroContent.selector));
        data.register(bytes32(0), CID, "MIT", PAYOUT, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryEmptyCid.selector));
        data.register(keccak256("a"), "", "MIT", PAYOUT, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryEmptyLicence.selector));
        data.register(keccak256("a"), CID, "", PAYOUT, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryZeroPayout.selector));
        data.register(keccak256("a"), CID, "MIT", address(0), bytes32(0));
        vm.stopPrank();
    }

    function test_register_sameContentTwice_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryDuplicateContent.selector, keccak256("corpus"), id));
        data.register(keccak256("corpus"), CID, "MIT", STRANGER, bytes32(0));
    }

    function test_setPayout_byOwner_changesPayout() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(OWNER);
        data.setPayout(id, STRANGER);
        assertEq(data.payoutOf(id), STRANGER, "new payout");
    }

    function test_setPayout_notOwner_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryNotOwner.selector, id, STRANGER, OWNER));
        data.setPayout(id, STRANGER);
    }

    function test_setPayout_zero_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryZeroPayout.selector));
        data.setPayout(id, address(0));
    }

    function test_retire_blocksAttachButKeepsPayout() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(OWNER);
        data.retire(id);
        assertTrue(data.corpusOf(id).retired, "retired");
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryRetired.selector, id));
        data.requireAttachable(id);
        // The owner can still redirect payouts of jobs that referenced it before retirement.
        vm.prank(OWNER);
        data.setPayout(id, STRANGER);
        assertEq(data.payoutOf(id), STRANGER, "payout of a retired corpus");
        vm.prank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryRetired.selector, id));
        data.retire(id);
    }

    function test_retire_notOwner_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryNotOwner.selector, id, STRANGER, OWNER));
        data.retire(id);
    }

    function testFuzz_unknownCorpus_reverts(uint64 id) public {
        vm.assume(id != 0);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryUnknownCorpus.selector, id));
        data.requireAttachable(id);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryUnknownCorpus.selector, id));
        data.payoutOf(id);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryUnknownCorpus.selector, id));
        data.corpusOf(id);
        vm.prank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryUnknownCorpus.selector, id));
        data.retire(id);
    }
}
