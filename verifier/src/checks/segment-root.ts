/**
 * A segment's trace root on bytes (what the screen and a sampled step verify a segment's leaves with) and the memo of
 * the segment trees that claims take their proofs from. Pure functions of (first step, leaves); checks/segment.ts
 * uses them.
 */
import { bytesToHex, hexToBytes, keccak256 } from "viem";
import { InputError } from "../errors/index.ts";
import { SegmentTree, type Bytes32 } from "../trace/index.ts";

/**
 * Segment trees by their exact inputs (first step and leaves): a pure function's memo, so that the screen of segment
 * i, the screen of i+1 (which checks i's end leaf as its start) and the segment's recompute or sampled steps build
 * each segment's tree once (about 3.5 ms of keccak for K = 50 here) instead of once per check.
 * INVARIANT: the key is every input of the tree, so a changed leaf never hits an old tree.
 */
const trees = new Map<string, SegmentTree>();
const TREE_CACHE = 256;
export function segmentTreeOf(first: number, hashes: readonly Bytes32[]): SegmentTree {
  const key = `${first}:${hashes.join("")}`;
  let tree = trees.get(key);
  if (!tree) {
    tree = new SegmentTree(first, hashes);
    if (trees.size >= TREE_CACHE) trees.delete(trees.keys().next().value!);
    trees.set(key, tree);
  }
  return tree;
}

/**
 * The trace root of a segment's leaves h(first) .. h(last), on bytes: leaf j = keccak256(uint64 (first + j) || h), the
 * tree OpenZeppelin's SimpleMerkleTree builds (leaves unsorted at tree[2n-2-j], node i = keccak256 of its two children
 * sorted), which is what JobMarket computes on chain and SegmentTree (trace/) builds with proofs. About 2n keccaks with
 * no hex round trips: the screen and a sampled step verify a segment's leaves at this cost (test/checks/segment-root:
 * equal to SegmentTree's root).
 */
export function segmentRoot(first: number, hashes: readonly Bytes32[]): Bytes32 {
  const n = hashes.length;
  if (n < 1) throw new InputError("a segment root needs at least one leaf");
  const nodes: Uint8Array[] = new Array(2 * n - 1);
  const pre = new Uint8Array(40);
  const view = new DataView(pre.buffer);
  for (let j = 0; j < n; j++) {
    view.setBigUint64(0, BigInt(first + j));
    pre.set(hexToBytes(hashes[j]!), 8);
    nodes[2 * n - 2 - j] = keccak256(pre, "bytes");
  }
  const pair = new Uint8Array(64);
  for (let i = n - 2; i >= 0; i--) {
    const a = nodes[2 * i + 1]!;
    const b = nodes[2 * i + 2]!;
    const aFirst = compareBytes(a, b) <= 0;
    pair.set(aFirst ? a : b, 0);
    pair.set(aFirst ? b : a, 32);
    nodes[i] = keccak256(pair, "bytes");
  }
  return bytesToHex(nodes[0]!) as Bytes32;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** Forgets every memoised segment tree (a benchmark that measures a first verification). */
export function clearSegmentTrees(): void {
  trees.clear();
}
