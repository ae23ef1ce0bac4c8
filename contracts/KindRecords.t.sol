// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IKindRecords} from "./interfaces/IKindRecords.sol";
import {KindRecords} from "./KindRecords.sol";
import {Trace} from "./libraries/Trace.sol";

/// @notice KindRecords records a finalized inference job's result only for the kind and model the job was created with
/// (JobMarket.createKindJob), and only when its provider locked at least `minStake` at any tier: a self-dealt job (one
/// party buys, accepts and commits whatever last leaf it likes, nobody challenges) created as a training job, or for
/// another model, or with a token stake, records nothing.
contract KindRecordsTest is TestBase, MarketFixture {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    uint8 internal constant EVALUATE = 1;
    uint8 internal constant GENERATE = 2;
    uint16 internal constant K = 4;
    string internal constant MODEL = "bafy-model";
    string internal constant OTHER_MODEL = "bafy-other-model";

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

    // ---------------------------------------------------------------- helpers

    /// @dev A 12/12 evaluation aggregate: the score a self-dealer wants on record.
    function _end(uint8 kind) internal pure returns (IKindRecords.EndState memory e) {
        e.kind = kind;
        e.item = keccak256("item");
        e.score = 1;
        e.hit = 1;
        e.total = 12;
        e.hits = 12;
        e.chain = keccak256("chain");
    }

    /// @dev h(N) as KindRecords recomputes it (docs/kinds.md).
    function _hN(uint256 jobId, IKindRecords.EndState memory e, string memory modelCid) internal pure returns (bytes32) {
        return keccak256(
            bytes.concat(
                abi.encode(jobId, uint256(K), e.kind, keccak256(bytes(modelCid)), e.item),
                abi.encode(e.score, e.hit, e.total, e.hits, e.chain)
            )
        );
    }

    /// @dev One segment of K examples whose last leaf binds `e` for `leafModel`, accepted and committed by PROVIDER,
    /// finalized after its window with nobody challenging. Returns the job and its trace root.
    function _finalized(uint256 jobId, IKindRecords.EndState memory e, string memory leafModel)
        internal
        returns (bytes32 root)
    {
        bytes32[] memory leaves = new bytes32[](K + 1);
        for (uint256 i; i < K; ++i) {
            leaves[i] = keccak256(abi.encode("state", jobId, i));
        }
        leaves[K] = _hN(jobId, e, leafModel);
        root = Trace.segmentRoot(0, leaves);
        vm.prank(PROVIDER);
        market.acceptJob(jobId);
        vm.prank(PROVIDER);
        market.commitSegment(jobId, 0, leaves, 1, "bafy-states");
        vm.warp(block.timestamp + 1 days + 1);
        market.finalize(jobId);
    }

    function _kindJob(uint8 kind, string memory modelCid, uint128 stake) internal returns (uint256 id) {
        vm.prank(BUYER);
        id = market.createKindJob(
            keccak256("kind-manifest"), "cid:m", address(token), 1e18, policy(1, stake), kind, keccak256(bytes(modelCid))
        );
    }

    /// @dev The provider records with its result CID.
    function _record(uint256 jobId, bytes32 root, IKindRecords.EndState memory e, string memory modelCid) internal {
        vm.prank(PROVIDER);
        kinds.recordResult(jobId, root, e, modelCid, "bafy-result");
    }

    // ---------------------------------------------------------------- the rule

    /// The job's kind and model are fixed at creation and readable; a result for them is recorded.
    function test_kindJob_recordsForItsKindAndModel() public {
        uint256 id = _kindJob(EVALUATE, MODEL, 10e18);
        (uint8 kind, bytes32 model) = market.kindOf(id);
        assertEq(kind, EVALUATE, "kind fixed at creation");
        assertEq(model, keccak256(bytes(MODEL)), "model fixed at creation");
        IKindRecords.EndState memory e = _end(EVALUATE);
        bytes32 root = _finalized(id, e, MODEL);
        _record(id, root, e, MODEL);
        assertEq(kinds.resultOf(id).hits, 12, "recorded");
        assertEq(kinds.jobsForModel(MODEL).length, 1, "cited by the model's CID");
    }

    /// A self-dealt job posted as a training job (createJob: no kind on chain) whose last leaf names an evaluation of
    /// MODEL: refused by name. Without the rule this recorded a 12/12 score for MODEL.
    function test_trainingJob_withKindLeaves_refused() public {
        vm.prank(BUYER);
        uint256 id = market.createJob(keccak256("m"), "cid:m", address(token), 1e18, policy(1, 10e18));
        IKindRecords.EndState memory e = _end(EVALUATE);
        bytes32 root = _finalized(id, e, MODEL);
        vm.expectRevert(
            abi.encodeWithSelector(
                IKindRecords.KindRecordsKindMismatch.selector, id, 0, bytes32(0), EVALUATE, keccak256(bytes(MODEL))
            )
        );
        _record(id, root, e, MODEL);
    }

    /// A job posted for one model whose provider's last leaf names another (or another kind): refused by name.
    function test_otherModelOrKind_refused() public {
        uint256 id = _kindJob(EVALUATE, MODEL, 10e18);
        IKindRecords.EndState memory e = _end(EVALUATE);
        bytes32 root = _finalized(id, e, OTHER_MODEL);
        vm.expectRevert(
            abi.encodeWithSelector(
                IKindRecords.KindRecordsKindMismatch.selector,
                id,
                EVALUATE,
                keccak256(bytes(MODEL)),
                EVALUATE,
                keccak256(bytes(OTHER_MODEL))
            )
        );
        _record(id, root, e, OTHER_MODEL);
        uint256 id2 = _kindJob(GENERATE, MODEL, 10e18);
        IKindRecords.EndState memory e2 = _end(EVALUATE);
        bytes32 root2 = _finalized(id2, e2, MODEL);
        vm.expectRevert(
            abi.encodeWithSelector(
                IKindRecords.KindRecordsKindMismatch.selector,
                id2,
                GENERATE,
                keccak256(bytes(MODEL)),
                EVALUATE,
                keccak256(bytes(MODEL))
            )
        );
        _record(id2, root2, e2, MODEL);
    }

    /// A token stake: its least lock (requiredStake at tier 1's 50%) is below minStake, so the record is refused, the
    /// least stake that passes is recorded.
    function test_stakeBelowMinimum_refused() public {
        uint256 id = _kindJob(EVALUATE, MODEL, 9.99e18);
        IKindRecords.EndState memory e = _end(EVALUATE);
        bytes32 root = _finalized(id, e, MODEL);
        vm.expectRevert(abi.encodeWithSelector(IKindRecords.KindRecordsStakeTooLow.selector, id, 4.995e18, 5e18));
        _record(id, root, e, MODEL);
        uint256 id2 = _kindJob(EVALUATE, MODEL, 10e18);
        bytes32 root2 = _finalized(id2, e, MODEL);
        _record(id2, root2, e, MODEL);
        assertEq(kinds.minStake(), 5e18, "minStake");
    }

    /// Anyone records the score with no result CID (the bot); the score is written once; the provider's result CID is
    /// added beside it later, and a repeat of either is refused by name.
    function test_strangerRecordsScore_providerAddsResultCid() public {
        address stranger = address(0x5757);
        uint256 id = _kindJob(GENERATE, MODEL, 10e18);
        IKindRecords.EndState memory e = _end(GENERATE);
        bytes32 root = _finalized(id, e, MODEL);
        vm.prank(stranger);
        kinds.recordResult(id, root, e, MODEL, "");
        assertEq(kinds.resultOf(id).hits, 12, "score recorded by a stranger");
        assertTrue(!kinds.hasResultCid(id, "bafy-result"), "no result CID yet");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(IKindRecords.KindRecordsAlreadyRecorded.selector, id, ""));
        kinds.recordResult(id, root, e, MODEL, "");
        _record(id, root, e, MODEL);
        assertTrue(kinds.hasResultCid(id, "bafy-result"), "the provider's result CID");
        assertEq(kinds.resultOf(id).hits, 12, "the score unchanged");
        assertEq(kinds.jobsForModel(MODEL).length, 1, "listed once");
        vm.expectRevert(abi.encodeWithSelector(IKindRecords.KindRecordsAlreadyRecorded.selector, id, "bafy-result"));
        _record(id, root, e, MODEL);
    }

    /// createKindJob refuses kind 0 (training) and a zero model hash by name.
    function test_createKindJob_invalidKind_reverts() public {
        vm.startPrank(BUYER);
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidKind.selector, 0, keccak256(bytes(MODEL))));
        market.createKindJob(keccak256("m"), "cid:m", address(token), 1e18, policy(1, 10e18), 0, keccak256(bytes(MODEL)));
        vm.expectRevert(abi.encodeWithSelector(IJobMarket.JobMarketInvalidKind.selector, EVALUATE, bytes32(0)));
        market.createKindJob(keccak256("m"), "cid:m", address(token), 1e18, policy(1, 10e18), EVALUATE, bytes32(0));
        vm.stopPrank();
    }
}
