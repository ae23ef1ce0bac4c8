/**
 * checks/ segmentRoot (the leaves' root on bytes, what the screen and a sampled step verify) against SegmentTree
 * (trace/, OpenZeppelin's SimpleMerkleTree: the tree JobMarket's root is checked against in Trace.t.sol) and a fixed
 * root from test/trace/vectors.json's layout, for every segment size from 1 to 65 leaves and random leaves.
 */
import { expect } from "chai";
import { keccak256, toHex, type Hex } from "viem";
import { segmentLeaves } from "../../verifier/src/checks/segment.ts";
import { segmentRoot } from "../../verifier/src/checks/segment-root.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";

const leaf = (k: number): Hex => keccak256(toHex(`leaf ${k}`));

describe("checks: segmentRoot", () => {
  it("equals SegmentTree's root for 2..65 leaves at several first steps", () => {
    for (let n = 2; n <= 65; n++) {
      for (const first of [0, 50, 2 ** 40]) {
        const hashes = Array.from({ length: n }, (_, j) => leaf(n * 1000 + j));
        expect(segmentRoot(first, hashes), `n = ${n}, first = ${first}`).to.equal(new SegmentTree(first, hashes).root);
      }
    }
  });

  it("a single leaf is its own root: keccak256(uint64 step || h)", () => {
    const h = leaf(1);
    expect(segmentRoot(7, [h])).to.equal(keccak256(`0x${"0000000000000007"}${h.slice(2)}`));
  });

  it("segmentLeaves rejects one changed leaf, and its lazily built tree proves the same root", () => {
    const K = 4;
    const hashes = Array.from({ length: K + 1 }, (_, j) => leaf(j));
    const root = new SegmentTree(4, hashes).root;
    const target = { run: { manifest: { training: { stepsPerSegment: K } } }, commitments: [{ index: 0, traceRoot: root, checkpointCid: "x", stateHashes: hashes }] } as never;
    // segment 0 of a K = 4 job holds states 0..4: a different first step gives a different root
    const r0 = segmentLeaves(target, 0);
    expect(r0.ok).to.equal(false);
    const t1 = { run: { manifest: { training: { stepsPerSegment: K } } }, commitments: [{ index: 0, traceRoot: "0x", stateHashes: hashes }, { index: 1, traceRoot: root, checkpointCid: "x", stateHashes: hashes }] } as never;
    const r1 = segmentLeaves(t1, 1);
    expect(r1.ok).to.equal(true);
    if (r1.ok) expect(r1.value.tree.root).to.equal(root);
    const bad = [...hashes];
    bad[2] = leaf(99);
    const t2 = { run: { manifest: { training: { stepsPerSegment: K } } }, commitments: [{ index: 0, traceRoot: "0x", stateHashes: hashes }, { index: 1, traceRoot: root, checkpointCid: "x", stateHashes: bad }] } as never;
    const r2 = segmentLeaves(t2, 1);
    expect(r2.ok).to.equal(false);
    if (!r2.ok) expect(r2.failure.kind).to.equal("trace-leaf-mismatch");
  });
});
