/**
 * Writes test/trace/vectors.json: fixed inputs and the hashes the TypeScript trace module gives for them.
 * The TypeScript test (test/trace/trace.test.ts) and the Solidity test (contracts/libraries/Trace.t.sol)
 * both check against this file's values, so the two implementations cannot drift apart.
 * Run: node scripts/trace-vectors.ts (only when the definition changes on purpose).
 */
import { writeFileSync } from "node:fs";
import { keccak256, toHex } from "viem";
import { hashBytes, innerDigest, jobSalt, SegmentTree, SHA256_V1_TAG, SHA256_V2_TAG, stateHash, tensorStateHash } from "../verifier/src/trace/index.ts";

const jobId = 7n;
const weights = new Uint8Array(new Float32Array([0.5, -1.25, 3]).buffer);
const optim = new Uint8Array(new Float32Array([0, 0, 0]).buffer);
const weightsHash = hashBytes(weights);
const optimizerHash = hashBytes(optim);
const h = stateHash(jobId, 3n, weightsHash, optimizerHash);
// the sha256-v1 state digest (verifier/src/trace/digest.ts) over the same bytes, plus a state of several tensors
// per group with an empty optimizer group (SGD) to pin the chunking and the empty-input digest
const sha = {
  weightsHash: innerDigest("sha256-v1", [weights]),
  optimizerHash: innerDigest("sha256-v1", [optim]),
  h: tensorStateHash("sha256-v1", jobId, 3n, [weights], [optim]),
};
const w2 = [Float32Array.of(1, -0, 2.5e-40), Float32Array.of(Number.POSITIVE_INFINITY, -3.4e38)].map((a) => new Uint8Array(a.buffer));
const sgd = { weightsHash: innerDigest("sha256-v1", w2), optimizerHash: innerDigest("sha256-v1", []), h: tensorStateHash("sha256-v1", 9n, 12n, w2, []) };
// the sha256-v2 (NaN-canonical) digest: a state with NaNs of several sign and payload bits (x86-64's 0xFFC00000, a
// payload, a signalling NaN), -0 and an infinity, and the canonical bytes it is hashed as (every NaN 0x7FC00000)
const u32Bytes = (bits: number[]) => new Uint8Array(Uint32Array.from(bits).buffer);
const v2Weights = u32Bytes([0x3f000000, 0xffc00000, 0x80000000, 0x7f800000, 0x7fc00001]);
const v2Optim = u32Bytes([0x7f800001, 0x3f800000, 0xff800000]);
const v2 = {
  tag: SHA256_V2_TAG,
  tagPreimage: "pouw/state-digest/sha256-v2",
  jobId: "7",
  step: 3,
  weightsBytes: toHex(v2Weights),
  optimizerBytes: toHex(v2Optim),
  canonicalWeightsBytes: toHex(u32Bytes([0x3f000000, 0x7fc00000, 0x80000000, 0x7f800000, 0x7fc00000])),
  canonicalOptimizerBytes: toHex(u32Bytes([0x7fc00000, 0x3f800000, 0xff800000])),
  weightsHash: innerDigest("sha256-v2", [v2Weights]),
  optimizerHash: innerDigest("sha256-v2", [v2Optim]),
  h: tensorStateHash("sha256-v2", jobId, 3n, [v2Weights], [v2Optim]),
};
const states = [0, 1, 2, 3, 4].map((i) => keccak256(toHex(`state-${i}`)));
const seg = new SegmentTree(4, states);
// the hardhat node's chain id and the first contract address its first account deploys
const saltInput = { chainId: 31337, jobMarket: "0x5FbDB2315678afecb367f032d93F642f64180aa3", jobId: 7n } as const;
const vectors = {
  stateHash: { jobId: jobId.toString(), step: 3, weightsBytes: toHex(weights), optimizerBytes: toHex(optim), weightsHash, optimizerHash, h },
  segment: { firstStep: 4, stateHashes: states, leaves: seg.leaves, root: seg.root, proofOfStep6: seg.proof(6), endStateHash: seg.endStateHash },
  stateHashSha256V1: {
    tag: SHA256_V1_TAG,
    tagPreimage: "pouw/state-digest/sha256-v1",
    jobId: jobId.toString(),
    step: 3,
    weightsBytes: toHex(weights),
    optimizerBytes: toHex(optim),
    ...sha,
    sgd: { jobId: "9", step: 12, weightsChunks: w2.map((c) => toHex(c)), ...sgd },
  },
  stateHashSha256V2: v2,
  jobSalt: { chainId: saltInput.chainId, jobMarket: saltInput.jobMarket, jobId: saltInput.jobId.toString(), salt: jobSalt(saltInput) },
};
writeFileSync(new URL("../test/trace/vectors.json", import.meta.url), JSON.stringify(vectors, null, 2) + "\n");
console.log(JSON.stringify(vectors, null, 2));
