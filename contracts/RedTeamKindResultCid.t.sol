// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IKindRecords} from "./interfaces/IKindRecords.sol";
import {KindRecords} from "./KindRecords.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice Red team, now a regression: anyone could record a finalized generate job's result first, with a `resultCid`
/// of its choosing, and the job's real dataset could then never be recorded (`recordResult` checks the end state against
/// the committed leaf h(N), whose preimage is public, but not `resultCid`, and recorded a job once). The generated
/// dataset's provenance (kinds/dataset-provenance.ts verifyGeneratedProvenance) needs a record of a generate job naming
/// the dataset's CID, so after the front-run every training job on that dataset was refused, for one transaction's gas.
/// The rule now: the score (bound by h(N)) is recorded once, the result CIDs are claims anyone adds (each once), and a
/// reader keeps the one whose bytes chain to the recorded `chain`: a bogus CID sits beside the true one, never in its
/// place, and no party has to be online first.
contract RedTeamKindResultCidTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant GRIEFER = address(0x6E);
    uint8 internal constant GENERATE = 2;
    uint16 internal constant K = 4;
    string internal constant MODEL = "bafy-model";
    string internal constant DATASET = "bafy-the-generated-dataset";

    KindRecords internal kinds;

    function setUp() public {
        vm.warp(1_700_000_000);
        kinds = new KindRecords(market, 5e18);
        address[2] memory who = [BUYER, PROVIDER];
        for (uint256 i; i < who.length; ++i) {
            token.mint(who[i], 1e30);
            vm.startPrank(who[i]);
            token.approve(address(market), type(uint256).max);
            token.approve(address(vault), type(uint256).max);
            vault.deposit(1e24);
            vm.stopPrank();
        }
    }

    function _hN(uint256 jobId, IKindRecords.EndState memory e) internal pure returns (bytes32) {
        return keccak256(
            bytes.concat(
                abi.encode(jobId, uint256(K), e.kind, keccak256(bytes(MODEL)), e.item),
                abi.encode(e.score, e.hit, e.total, e.hits, e.chain)
            )
        );
    }

    function test_frontRunRecordResult_bogusCid_realDatasetStillRecorded() public {
        vm.prank(BUYER);
        uint256 id = market.createKindJob(
            keccak256("generate-manifest"), "cid:m", address(token), 1e18, policy(1, 10e18), GENERATE, keccak256(bytes(MODEL))
        );
        IKindRecords.EndState memory e;
        e.kind = GENERATE;
        e.item = keccak256("sample 3");
        e.total = 32;
        e.chain = keccak256("the samples' chain");
        bytes32[] memory leaves = new bytes32[](K + 1);
        for (uint256 i; i < K; ++i) {
            leaves[i] = keccak256(abi.encode("state", id, i));
        }
        leaves[K] = _hN(id, e);
        bytes32 root = Trace.segmentRoot(0, leaves);
        vm.prank(PROVIDER);
        market.acceptJob(id);
        vm.prank(PROVIDER);
        market.commitSegment(id, 0, leaves, 1, "bafy-states");
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(id);

        // the griefer copies the honest recorder's pending arguments and swaps the CID
        vm.prank(GRIEFER);
        kinds.recordResult(id, root, e, MODEL, "bafy-garbage");
        // the honest record of the real dataset still lands after it
        vm.prank(BUYER);
        kinds.recordResult(id, root, e, MODEL, DATASET);
        assertTrue(kinds.hasResultCid(id, DATASET), "the real dataset is named for the job");
        assertTrue(kinds.hasResultCid(id, "bafy-garbage"), "beside the bogus CID, which a reader refuses by its bytes");
        assertTrue(!kinds.hasResultCid(id, "bafy-never-named"), "a CID nobody named is not");
        // the same CID twice is refused by name; the score and the model's list are written once
        vm.expectRevert(abi.encodeWithSelector(IKindRecords.KindRecordsAlreadyRecorded.selector, id, DATASET));
        vm.prank(GRIEFER);
        kinds.recordResult(id, root, e, MODEL, DATASET);
        IKindRecords.Result memory r = kinds.resultOf(id);
        assertEq(r.kind, GENERATE, "recorded as a generate job");
        assertEq(r.total, 32, "the score h(N) binds");
        assertEq(r.chain, e.chain, "the chain a reader checks the dataset's bytes against");
        assertEq(kinds.jobsForModel(MODEL).length, 1, "the job is listed for its model once");
        // a CID named with another end state than h(N)'s preimage is still refused
        e.total = 33;
        vm.expectRevert(abi.encodeWithSelector(IKindRecords.KindRecordsEndStateMismatch.selector, id, 0, _hN(id, e)));
        vm.prank(GRIEFER);
        kinds.recordResult(id, root, e, MODEL, "bafy-other");
    }
}
