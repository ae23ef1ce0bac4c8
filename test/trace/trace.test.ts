import { expect } from "chai";
import { concat, keccak256, numberToHex, type Hex } from "viem";
import vectors from "./vectors.json" with { type: "json" };
import { hashBytes, jobSalt, SegmentTree, segmentStateRange, stateHash, traceLeaf, verifyTraceProof } from "../../verifier/src/trace/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

const hexToBytes = (h: string) => Uint8Array.from(Buffer.from(h.slice(2), "hex"));

// Independent re-implementation of OpenZeppelin's sorted-pair Merkle root for odd-sized levels:
// the tree is built as a complete binary tree in an array (as @openzeppelin/merkle-tree does).
function referenceRoot(leaves: Hex[]): Hex {
  const n = leaves.length;
  const tree: Hex[] = new Array(2 * n - 1);
  for (let i = 0; i < n; i++) tree[tree.length - 1 - i] = leaves[i]!;
  for (let i = tree.length - 1 - n; i >= 0; i--) {
    const a = tree[2 * i + 1]!, b = tree[2 * i + 2]!;
    tree[i] = keccak256(BigInt(a) < BigInt(b) ? concat([a, b]) : concat([b, a]));
  }
  return tree[0]!;
}

describe("trace: state hash, leaves and segment roots (fixed vectors)", () => {
  const v = vectors.stateHash;
  const s = vectors.segment;

  it("hashes weight and optimizer bytes to the fixed vector", () => {
    expect(hashBytes(hexToBytes(v.weightsBytes))).to.equal(v.weightsHash);
    expect(hashBytes(hexToBytes(v.optimizerBytes))).to.equal(v.optimizerHash);
  });

  it("computes h(t) = keccak256(abi.encode(jobId, t, wHash, oHash)) as the fixed vector", () => {
    expect(stateHash(BigInt(v.jobId), v.step, v.weightsHash as Hex, v.optimizerHash as Hex)).to.equal(v.h);
  });

  it("changes h(t) when any input changes", () => {
    const base = stateHash(BigInt(v.jobId), v.step, v.weightsHash as Hex, v.optimizerHash as Hex);
    expect(stateHash(BigInt(v.jobId) + 1n, v.step, v.weightsHash as Hex, v.optimizerHash as Hex)).to.not.equal(base);
    expect(stateHash(BigInt(v.jobId), v.step + 1, v.weightsHash as Hex, v.optimizerHash as Hex)).to.not.equal(base);
    expect(stateHash(BigInt(v.jobId), v.step, v.optimizerHash as Hex, v.weightsHash as Hex)).to.not.equal(base);
  });

  it("computes salt(job) = keccak256(abi.encode(chainId, jobMarket, jobId)) as the fixed vector (Trace.t.sol checks the same value)", () => {
    const j = vectors.jobSalt;
    const input = { chainId: j.chainId, jobMarket: j.jobMarket as Hex, jobId: BigInt(j.jobId) };
    expect(jobSalt(input)).to.equal(j.salt);
    // by hand: three 32-byte words, the address left-padded
    const word = (x: bigint) => numberToHex(x, { size: 32 });
    expect(keccak256(concat([word(BigInt(j.chainId)), word(BigInt(j.jobMarket)), word(BigInt(j.jobId))]))).to.equal(j.salt);
    expect(jobSalt({ ...input, chainId: j.chainId + 1 })).to.not.equal(j.salt);
    expect(jobSalt({ ...input, jobMarket: "0x5fbdb2315678afecb367f032d93f642f64180aa4" })).to.not.equal(j.salt);
    expect(jobSalt({ ...input, jobId: input.jobId + 1n })).to.not.equal(j.salt);
  });

  it("builds the segment leaves and root of the fixed vector", () => {
    const tree = new SegmentTree(s.firstStep, s.stateHashes as Hex[]);
    expect(tree.leaves).to.deep.equal(s.leaves);
    expect(tree.root).to.equal(s.root);
    expect(referenceRoot(s.leaves as Hex[])).to.equal(s.root);
    expect(tree.endStateHash).to.equal(s.endStateHash);
    expect(tree.proof(6)).to.deep.equal(s.proofOfStep6);
  });

  it("verifies every state's proof and rejects a proof for the wrong step or hash", () => {
    const tree = new SegmentTree(s.firstStep, s.stateHashes as Hex[]);
    for (let t = 4; t <= 8; t++) {
      expect(verifyTraceProof(tree.root, t, tree.stateHashes[t - 4]!, tree.proof(t))).to.equal(true);
    }
    expect(verifyTraceProof(tree.root, 7, tree.stateHashes[2]!, tree.proof(6))).to.equal(false);
    expect(verifyTraceProof(tree.root, 6, tree.stateHashes[3]!, tree.proof(6))).to.equal(false);
  });

  it("leaf binds the step number", () => {
    expect(traceLeaf(1, s.stateHashes[0] as Hex)).to.not.equal(traceLeaf(2, s.stateHashes[0] as Hex));
  });

  it("rejects bad inputs with InputError", () => {
    expect(() => new SegmentTree(0, [s.stateHashes[0] as Hex])).to.throw(InputError);
    expect(() => new SegmentTree(4, s.stateHashes as Hex[]).proof(9)).to.throw(InputError);
    expect(() => traceLeaf(-1, s.stateHashes[0] as Hex)).to.throw(InputError);
    expect(() => segmentStateRange(-1, 4)).to.throw(InputError);
    expect(() => segmentStateRange(0, 0)).to.throw(InputError);
    expect(segmentStateRange(2, 4)).to.deep.equal({ first: 8, last: 12 });
  });
});
