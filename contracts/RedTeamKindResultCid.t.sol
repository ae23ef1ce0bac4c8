// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IKindRecords} from "./interfaces/IKindRecords.sol";
import {KindRecords} from "./KindRecords.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice Red team: anyone records a finalized generate job's result first, with a `resultCid` of its choosing, and
/// the job's real dataset can then never be recorded. `recordResult` checks the end state against the committed leaf
/// h(N) (whose preimage is public: the provider's last state, or the honest recorder's pending transaction) but not
/// `resultCid`, and records a job once, never rewritten. The generated dataset's provenance (kinds/dataset-provenance.ts
/// verifyGeneratedProvenance) needs a KindRecords record of a generate job whose resultCidHash is the dataset's CID, so
/// after the front-run every training job on that dataset is refused ("no generate job ... has it recorded"): the buyer
/// paid the whole generate job for a dataset that can never travel. Cost: one transaction's gas, for any generate job.
/// Fix: do not let the first caller fix the CID for everyone: key records by (jobId, keccak256(resultCid)) (the score
/// is h(N)'s either way, and readers already check a dataset's bytes against the recorded chain), or let only the
/// job's buyer or provider record, or bind the result CID into h(N).
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

    function test_frontRunRecordResult_bogusCid_locksOutTheRealDataset() public {
        vm.prank(BUYER);
        uint256 id = market.createKindJob(
            keccak256("generate-manifest"), "cid:m", address(token), 1e18, policy(1, 10e18), GENERATE, keccak256(bytes(MODEL))
        );
        IKindRecords.EndState memory e;
        e.kind = GENERATE;
        e.item = keccak256("sample 3");
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
        // the honest record of the real dataset is refused for good
        vm.expectRevert(abi.encodeWithSelector(IKindRecords.KindRecordsAlreadyRecorded.selector, id));
        vm.prank(BUYER);
        kinds.recordResult(id, root, e, MODEL, DATASET);

        IKindRecords.Result memory r = kinds.resultOf(id);
        assertEq(r.resultCidHash, keccak256(bytes("bafy-garbage")), "the griefer's CID is the job's record");
        uint256[] memory jobs = kinds.jobsForModel(MODEL);
        for (uint256 i; i < jobs.length; ++i) {
            assertTrue(kinds.resultOf(jobs[i]).resultCidHash != keccak256(bytes(DATASET)), "no record names the dataset");
        }
    }
}
