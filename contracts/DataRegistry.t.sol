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
        assertEq(c.registrant, OWNER, "registrant");
        assertEq(c.payout, payout, "payout");
        assertEq(c.contentDigest, digest, "digest");
        assertEq(c.termsHash, terms, "terms");
        assertEq(keccak256(bytes(c.licence)), keccak256("CC-BY-4.0"), "licence");
        assertEq(keccak256(bytes(c.contentCid)), keccak256(bytes(CID)), "cid");
        assertTrue(!c.retired, "not retired");
        uint64[] memory listed = data.corpusIdsOf(digest, payout);
        assertEq(listed.length, 1, "listed once under its payout");
        assertEq(listed[0], id, "listed id");
        assertEq(data.registrationOf(digest, OWNER), id, "by registrant");
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

    function test_register_sameContentTwiceBySameRegistrant_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryDuplicateContent.selector, keccak256("corpus"), OWNER, id));
        data.register(keccak256("corpus"), CID, "MIT", STRANGER, bytes32(0));
    }

    /// Squatting: a squatter who registers the digest FIRST, with its own payout, neither blocks the
    /// contributor's registration nor appears under the contributor's payout (what a buyer looks up).
    function test_register_squatterFirst_doesNotBlockOrShadowTheContributor() public {
        bytes32 digest = keccak256("corpus");
        vm.prank(STRANGER);
        uint64 squat = data.register(digest, CID, "CC-BY-4.0", STRANGER, keccak256("terms"));
        uint64 id = _register(digest);
        assertTrue(squat != id, "two registrations of one digest");
        uint64[] memory listed = data.corpusIdsOf(digest, PAYOUT);
        assertEq(listed.length, 1, "only the contributor's under its payout");
        assertEq(listed[0], id, "contributor's id");
        assertEq(data.corpusIdsOf(digest, STRANGER)[0], squat, "the squatter is listed under its own payout");
    }

    /// Mempool copy: a squatter who sends the contributor's exact calldata from its own account gets a
    /// registration whose payout is the contributor's and which it can never move.
    function test_register_copiedCalldata_paysTheCopiedPayoutForever() public {
        bytes32 digest = keccak256("corpus");
        bytes memory call_ = abi.encodeCall(DataRegistry.register, (digest, CID, "CC-BY-4.0", PAYOUT, keccak256("terms")));
        vm.prank(STRANGER);
        // solhint-disable-next-line avoid-low-level-calls
        (bool ok, bytes memory ret) = address(data).call(call_);
        assertTrue(ok, "copy registered");
        uint64 copy = abi.decode(ret, (uint64));
        vm.prank(OWNER);
        // solhint-disable-next-line avoid-low-level-calls
        (ok, ret) = address(data).call(call_);
        assertTrue(ok, "the original still registers");
        assertEq(data.corpusIdsOf(digest, PAYOUT).length, 2, "both pay PAYOUT");
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryNotPayout.selector, copy, STRANGER, PAYOUT));
        data.setPayout(copy, STRANGER);
        assertEq(data.payoutOf(copy), PAYOUT, "the copy still pays the contributor");
    }

    function test_setPayout_byPayout_movesAndLists() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(PAYOUT);
        data.setPayout(id, STRANGER);
        assertEq(data.payoutOf(id), STRANGER, "new payout");
        assertEq(data.corpusIdsOf(keccak256("corpus"), STRANGER)[0], id, "listed under the new payout");
        assertEq(data.corpusIdsOf(keccak256("corpus"), PAYOUT)[0], id, "still listed under the one that moved it");
    }

    function test_setPayout_byRegistrant_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryNotPayout.selector, id, OWNER, PAYOUT));
        data.setPayout(id, OWNER);
    }

    function test_setPayout_zero_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(PAYOUT);
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
        // The payout address can still move payouts of jobs that referenced it before retirement.
        vm.prank(PAYOUT);
        data.setPayout(id, STRANGER);
        assertEq(data.payoutOf(id), STRANGER, "payout of a retired corpus");
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryRetired.selector, id));
        data.retire(id);
    }

    function test_retire_byPayout_retires() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(PAYOUT);
        data.retire(id);
        assertTrue(data.corpusOf(id).retired, "retired by its payout");
    }

    function test_retire_byStranger_reverts() public {
        uint64 id = _register(keccak256("corpus"));
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryNotRegistrantOrPayout.selector, id, STRANGER));
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
        vm.prank(OWNER);
        vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryUnknownCorpus.selector, id));
        data.setPayout(id, OWNER);
    }

    /// Payout rule under random moves: whoever calls, a registration's payout changes only when the caller
    /// is its current payout, and it is then listed under the new payout.
    function testFuzz_setPayout_onlyByCurrentPayout(address caller, address next) public {
        vm.assume(next != address(0));
        uint64 id = _register(keccak256("corpus"));
        vm.prank(caller);
        if (caller != PAYOUT) {
            vm.expectRevert(abi.encodeWithSelector(IDataRegistry.DataRegistryNotPayout.selector, id, caller, PAYOUT));
            data.setPayout(id, next);
            assertEq(data.payoutOf(id), PAYOUT, "unchanged");
        } else {
            data.setPayout(id, next);
            assertEq(data.payoutOf(id), next, "moved by its payout");
            uint64[] memory listed = data.corpusIdsOf(keccak256("corpus"), next);
            assertEq(listed[listed.length - 1], id, "listed under the new payout");
        }
    }
}
