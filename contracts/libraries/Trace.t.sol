// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";
import {Trace} from "./Trace.sol";
import {TestBase} from "../test/TestBase.sol";

/// @notice Trace.sol against the fixed vectors of test/trace/vectors.json (made by scripts/trace-vectors.ts
/// from verifier/src/trace). The values are copied here by hand: if either side changes, this test or
/// test/trace/trace.test.ts fails.
contract TraceTest is TestBase {
    uint256 internal constant JOB_ID = 7;
    uint256 internal constant STEP = 3;
    bytes internal constant WEIGHTS = hex"0000003f0000a0bf00004040";
    bytes internal constant OPTIMIZER = hex"000000000000000000000000";
    bytes32 internal constant WEIGHTS_HASH = 0x81be3aac5627b19e4437336af46b40a6e35e9fa4cfdeae379bd309504b534754;
    bytes32 internal constant OPTIMIZER_HASH = 0x30e2bfdaad2f3c218a1a8cc54fa1c4e6182b6b7f3bca273390cf587b50b47311;
    bytes32 internal constant H = 0x20d22118a7305453a6e9b3d3683167b603022352f9f17ebb29dd9b102281c030;
    uint64 internal constant FIRST_STEP = 4;
    bytes32 internal constant ROOT = 0x4a4922a0019e36911a2f43a6c4513457d55741456cd15a9fd8cb7df3aaac2853;
    bytes32 internal constant END_STATE_HASH = 0x437eb46546ab5197a491ab42923018b33302e1db639e246d90f18e390d3db135;

    function _states() internal pure returns (bytes32[5] memory) {
        return [
            bytes32(0x3871ead5f1cffcd99558b3e349b8305aa3bfd88962329b852148ab174234f407),
            bytes32(0xd6b0b7b9d521c1b834226c5db16775ba6864dd2fe89d327366804e63e0b07bdc),
            bytes32(0x2ffbadada32d50bc7e37cf1ced312d2fdf575572d9d3cd7b34ff5b87f044089d),
            bytes32(0xa63693ad496209549f08673ae0d61b6a1f137c9f99eecb306e728d50ce785ca3),
            bytes32(0x437eb46546ab5197a491ab42923018b33302e1db639e246d90f18e390d3db135)
        ];
    }

    function _leaves() internal pure returns (bytes32[5] memory) {
        return [
            bytes32(0x74a5d5b9c622de772e7cf40a8ec21ffe3ca1951403e40a58cf07c66f043a95e1),
            bytes32(0x01ef7665e3d1e81118c5d9775590ccc830b95fc74669bd13c4e140c617cb997b),
            bytes32(0x4c5be89f6d9be7657a9934e4a04dcce880afcb8c70827c15af71185ca2480e4d),
            bytes32(0xa5044f1e8b10578545def9e38c1bce47a23351b20dc3704a7500d6113d38bb16),
            bytes32(0x30ce3cb424ff7842edc4eca1b18e893c03162956989184b945eaa85ad96c024b)
        ];
    }

    function _proofOfStep6() internal pure returns (bytes32[] memory p) {
        p = new bytes32[](2);
        bytes32[2] memory fixedProof = [
            bytes32(0xa5044f1e8b10578545def9e38c1bce47a23351b20dc3704a7500d6113d38bb16),
            bytes32(0xf6105bcadf4a1f724ee23744e2e802cdbc75830e63d7df0292b1a086b5f4392f)
        ];
        p[0] = fixedProof[0];
        p[1] = fixedProof[1];
    }

    /// @dev OpenZeppelin's tree layout (complete binary tree in an array, leaves reversed at the end),
    /// rebuilt independently of MerkleProof.
    function _referenceRoot(bytes32[5] memory leaves) internal pure returns (bytes32) {
        uint256 n = leaves.length;
        bytes32[] memory tree = new bytes32[](2 * n - 1);
        for (uint256 i; i < n; ++i) {
            tree[tree.length - 1 - i] = leaves[i];
        }
        for (uint256 i = tree.length - 1 - n + 1; i > 0; --i) {
            tree[i - 1] = Hashes.commutativeKeccak256(tree[2 * (i - 1) + 1], tree[2 * (i - 1) + 2]);
        }
        return tree[0];
    }

    function test_stateHash_matchesFixedVector() public pure {
        assertEq(keccak256(WEIGHTS), WEIGHTS_HASH, "weightsHash");
        assertEq(keccak256(OPTIMIZER), OPTIMIZER_HASH, "optimizerHash");
        assertEq(Trace.stateHash(JOB_ID, STEP, WEIGHTS_HASH, OPTIMIZER_HASH), H, "h(t)");
    }

    function test_leaves_matchFixedVector() public pure {
        bytes32[5] memory states = _states();
        bytes32[5] memory leaves = _leaves();
        for (uint256 j; j < 5; ++j) {
            assertEq(Trace.leaf(FIRST_STEP + uint64(j), states[j]), leaves[j], "leaf");
        }
    }

    function test_root_matchesFixedVector() public pure {
        assertEq(_referenceRoot(_leaves()), ROOT, "root");
        assertEq(_states()[4], END_STATE_HASH, "end state hash is the last leaf's h");
    }

    /// @dev External so that `stateHashes` is calldata, as in JobMarket.commitSegment.
    function rootCalldata(uint256 first, bytes32[] calldata stateHashes) external pure returns (bytes32, bool) {
        return Trace.segmentRootCalldata(first, stateHashes);
    }

    function test_segmentRootCalldata_matchesFixedVector() public view {
        bytes32[5] memory states = _states();
        bytes32[] memory hs = new bytes32[](5);
        for (uint256 j; j < 5; ++j) {
            hs[j] = states[j];
        }
        (bytes32 root, bool anyZero) = this.rootCalldata(FIRST_STEP, hs);
        assertEq(root, ROOT, "calldata root = fixed vector");
        assertTrue(!anyZero, "no zero state");
        assertEq(Trace.segmentRoot(FIRST_STEP, hs), ROOT, "memory root = fixed vector");
    }

    function test_segmentRootCalldata_flagsAZeroState() public view {
        bytes32[5] memory states = _states();
        for (uint256 z; z < 5; ++z) {
            bytes32[] memory hs = new bytes32[](5);
            for (uint256 j; j < 5; ++j) {
                hs[j] = j == z ? bytes32(0) : states[j];
            }
            (, bool anyZero) = this.rootCalldata(FIRST_STEP, hs);
            assertTrue(anyZero, "zero state flagged");
        }
    }

    /// The assembly root equals the Solidity one for every leaf count 1..70 (odd and even, unbalanced trees) and any
    /// first step.
    function testFuzz_segmentRootCalldata_equalsSegmentRoot(uint32 first, bytes32 seed) public view {
        for (uint256 n = 1; n <= 70; n += 3) {
            bytes32[] memory hs = new bytes32[](n);
            for (uint256 j; j < n; ++j) {
                hs[j] = keccak256(abi.encode(seed, n, j));
            }
            (bytes32 root,) = this.rootCalldata(first, hs);
            assertEq(root, Trace.segmentRoot(first, hs), "assembly root = Solidity root");
        }
    }

    function test_verifyState_proofOfStep6_verifies() public pure {
        bytes32[5] memory states = _states();
        bytes32[] memory proof = _proofOfStep6();
        assertTrue(Trace.verifyState(ROOT, 6, states[2], proof), "proof of step 6");
        assertTrue(!Trace.verifyState(ROOT, 7, states[2], proof), "wrong step rejected");
        assertTrue(!Trace.verifyState(ROOT, 6, states[3], proof), "wrong hash rejected");
        assertTrue(!Trace.verifyState(END_STATE_HASH, 6, states[2], proof), "wrong root rejected");
    }

    function test_segmentStates_coversKPlusOneStates() public pure {
        (uint256 first, uint256 last) = Trace.segmentStates(1, 4);
        assertEq(first, FIRST_STEP, "first");
        assertEq(last, 8, "last");
        assertTrue(Trace.inSegment(1, 4, 4) && Trace.inSegment(1, 4, 8), "bounds inclusive");
        assertTrue(!Trace.inSegment(1, 4, 3) && !Trace.inSegment(1, 4, 9), "outside");
    }

    function test_commitment_isAbiEncodeHash() public pure {
        assertEq(Trace.commitment(ROOT, END_STATE_HASH), keccak256(abi.encode(ROOT, END_STATE_HASH)), "commitment");
    }

    function testFuzz_verifyState_twoLeafTree(uint64 t, bytes32 h0, bytes32 h1) public pure {
        if (t == type(uint64).max) t = t - 1;
        bytes32 l0 = Trace.leaf(t, h0);
        bytes32 l1 = Trace.leaf(t + 1, h1);
        bytes32 root = Hashes.commutativeKeccak256(l0, l1);
        bytes32[] memory p0 = new bytes32[](1);
        p0[0] = l1;
        bytes32[] memory p1 = new bytes32[](1);
        p1[0] = l0;
        assertTrue(Trace.verifyState(root, t, h0, p0), "left leaf");
        assertTrue(Trace.verifyState(root, t + 1, h1, p1), "right leaf");
        if (h0 != h1) assertTrue(!Trace.verifyState(root, t, h1, p0), "swapped hash rejected");
    }

    function test_jobSalt_matchesFixedVector() public pure {
        assertEq(
            Trace.jobSalt(31337, 0x5FbDB2315678afecb367f032d93F642f64180aa3, JOB_ID),
            0x600d7561e5b8a47d73ef0f72e8c1894308cef63728783388f43a30f61cba4b15,
            "salt(job)"
        );
    }

    function testFuzz_jobSalt_bindsEveryInput(uint256 chainId, address market, uint256 jobId) public pure {
        bytes32 s = Trace.jobSalt(chainId, market, jobId);
        assertEq(s, keccak256(abi.encode(chainId, market, jobId)), "abi.encode");
        assertTrue(s != Trace.jobSalt(chainId ^ 1, market, jobId), "chain id");
        assertTrue(s != Trace.jobSalt(chainId, address(uint160(market) ^ 1), jobId), "market");
        assertTrue(s != Trace.jobSalt(chainId, market, jobId ^ 1), "job id");
    }

    function testFuzz_commitment_matchesAbiEncode(bytes32 root, bytes32 end) public pure {
        assertEq(Trace.commitment(root, end), keccak256(abi.encode(root, end)), "commitment");
    }

    /// @notice The sha256-v1 state digest (verifier/src/trace/digest.ts) recomputed with the EVM's sha256 precompile:
    /// an implementation independent of node:crypto. No contract computes this h (the inner digests are off-chain
    /// only; leaves and roots are the same for every scheme), so this is a test of the TypeScript vector, not of
    /// Trace.sol: h(t) = keccak256(abi.encode(TAG, jobId, t, sha256(weightsBytes), sha256(optimizerStateBytes))).
    function test_stateHashSha256V1_matchesFixedVector() public pure {
        bytes32 tag = keccak256("pouw/state-digest/sha256-v1");
        assertEq(tag, 0xbead1f8c1e9a87e681148e6b2d4453eebaa569fcb3a54b43533ce53c1dffbfa0, "tag");
        bytes32 w = sha256(WEIGHTS);
        bytes32 o = sha256(OPTIMIZER);
        assertEq(w, 0xed21e3285b6d7a8d2f34ae3a076ccb7583f2a8c5d2b6d619cbaba5cfce970f0c, "weights digest");
        assertEq(o, 0x15ec7bf0b50732b49f8228e07d24365338f9e3ab994b00af08e5a3bffe55fd8b, "optimizer digest");
        bytes32 h = keccak256(abi.encode(tag, JOB_ID, STEP, w, o));
        assertEq(h, 0x57b8ec84885f9d4407ae123d3cc47614804a9b72a90049f4242c36712d0d8308, "h(t) sha256-v1");
        assertTrue(h != H, "differs from the keccak256 scheme's h of the same state");
        // the SGD vector: two weight chunks hashed as their concatenation, an empty optimizer group
        bytes32 w2 = sha256(hex"0000803f00000080e6b802000000807f9ec97fff");
        assertEq(w2, 0x9db4a44f4f80c2a3c23f5c7d3b148e2582cd645450335f9a9de13b293834c803, "sgd weights digest");
        assertEq(sha256(""), 0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, "empty digest");
        assertEq(
            keccak256(abi.encode(tag, uint256(9), uint256(12), w2, sha256(""))),
            0x764d1ea3b0612f76cc3774d0ec086b7d82f3d261a49d6d43d0d17a2a2f43c753,
            "sgd h(t)"
        );
    }
}
