import { expect } from "chai";
import { concat, keccak256, numberToHex, sha256, toHex, type Hex } from "viem";
import vectors from "./vectors.json" with { type: "json" };
import { InputError } from "../../verifier/src/errors/index.ts";
import {
  hashBytes,
  innerDigest,
  SHA256_V1_TAG,
  SHA256_V2_TAG,
  sha256Chunks,
  stateHash,
  stateHashFromDigests,
  tensorStateHash,
  type StateDigest,
} from "../../verifier/src/trace/index.ts";

const hexToBytes = (h: string) => Uint8Array.from(Buffer.from(h.slice(2), "hex"));
const word = (x: bigint | number) => numberToHex(BigInt(x), { size: 32 });

// Deterministic pseudo-random bytes (xorshift32), so a failure reproduces.
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

// NOTE: the independent side is viem (@noble/hashes: pure-JS sha256 and keccak256) and the ABI encoding written
// out by hand as 32-byte words; the implementation under test uses node:crypto (OpenSSL) and hash-wasm.
describe("trace/digest: state-digest schemes (fixed vectors, independent sha256 and keccak)", () => {
  const v = vectors.stateHashSha256V1;

  it("has the tag keccak256(\"pouw/state-digest/sha256-v1\")", () => {
    expect(SHA256_V1_TAG).to.equal(keccak256(toHex(v.tagPreimage)));
    expect(v.tag).to.equal(SHA256_V1_TAG);
  });

  it("computes the sha256-v1 inner digests and h(t) of the fixed vector, as viem's sha256 and a hand-written abi.encode give them", () => {
    const w = hexToBytes(v.weightsBytes), o = hexToBytes(v.optimizerBytes);
    expect(innerDigest("sha256-v1", [w])).to.equal(v.weightsHash);
    expect(innerDigest("sha256-v1", [o])).to.equal(v.optimizerHash);
    expect(sha256(w)).to.equal(v.weightsHash);
    expect(sha256(o)).to.equal(v.optimizerHash);
    const byHand = keccak256(concat([SHA256_V1_TAG, word(BigInt(v.jobId)), word(v.step), sha256(w), sha256(o)]));
    expect(byHand).to.equal(v.h);
    expect(tensorStateHash("sha256-v1", BigInt(v.jobId), v.step, [w], [o])).to.equal(v.h);
    expect(stateHashFromDigests("sha256-v1", BigInt(v.jobId), v.step, v.weightsHash as Hex, v.optimizerHash as Hex)).to.equal(v.h);
  });

  it("hashes several chunks as their concatenation and an empty group (SGD) as sha256 of nothing (FIPS 180-2 value)", () => {
    const s = v.sgd;
    const chunks = s.weightsChunks.map(hexToBytes);
    expect(innerDigest("sha256-v1", chunks)).to.equal(s.weightsHash);
    expect(sha256(concat(s.weightsChunks as Hex[]))).to.equal(s.weightsHash);
    expect(s.optimizerHash).to.equal("0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(innerDigest("sha256-v1", [])).to.equal(s.optimizerHash);
    expect(keccak256(concat([SHA256_V1_TAG, word(BigInt(s.jobId)), word(s.step), s.weightsHash as Hex, s.optimizerHash as Hex]))).to.equal(s.h);
    expect(tensorStateHash("sha256-v1", BigInt(s.jobId), s.step, chunks, [])).to.equal(s.h);
  });

  it("keeps the keccak256 scheme exactly the original h(t) (vectors.json stateHash, Trace.t.sol checks the same value)", () => {
    const k = vectors.stateHash;
    const w = hexToBytes(k.weightsBytes), o = hexToBytes(k.optimizerBytes);
    expect(tensorStateHash("keccak256", BigInt(k.jobId), k.step, [w], [o])).to.equal(k.h);
    expect(innerDigest("keccak256", [w])).to.equal(k.weightsHash);
    expect(stateHashFromDigests("keccak256", BigInt(k.jobId), k.step, k.weightsHash as Hex, k.optimizerHash as Hex)).to.equal(
      stateHash(BigInt(k.jobId), k.step, hashBytes(w), hashBytes(o)),
    );
  });

  it("separates the schemes: the same state hashes to other values, and so do the same inner digests", () => {
    const w = hexToBytes(v.weightsBytes), o = hexToBytes(v.optimizerBytes);
    expect(tensorStateHash("sha256-v1", 7n, 3, [w], [o])).to.not.equal(tensorStateHash("keccak256", 7n, 3, [w], [o]));
    const d = v.weightsHash as Hex, e = v.optimizerHash as Hex;
    expect(stateHashFromDigests("sha256-v1", 7n, 3, d, e)).to.not.equal(stateHashFromDigests("keccak256", 7n, 3, d, e));
  });

  it("binds job, step and both groups in sha256-v1", () => {
    const w = hexToBytes(v.weightsBytes), o = hexToBytes(v.optimizerBytes);
    const base = tensorStateHash("sha256-v1", 7n, 3, [w], [o]);
    expect(tensorStateHash("sha256-v1", 8n, 3, [w], [o])).to.not.equal(base);
    expect(tensorStateHash("sha256-v1", 7n, 4, [w], [o])).to.not.equal(base);
    expect(tensorStateHash("sha256-v1", 7n, 3, [o], [w])).to.not.equal(base);
    // moving bytes from one group to the other changes h even though the concatenation is the same
    expect(tensorStateHash("sha256-v1", 7n, 3, [w, o], [])).to.not.equal(tensorStateHash("sha256-v1", 7n, 3, [w], [o]));
  });

  it("sha256Chunks equals viem's sha256 on lengths around the 64-byte block and wherever the cuts fall", () => {
    for (const [i, n] of [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 4096, 1_000_003].entries()) {
      const b = bytes(n, i + 3);
      expect(sha256Chunks([b]), `length ${n}`).to.equal(sha256(b));
    }
    const b = bytes(1000, 11);
    for (const cuts of [[0], [1], [63, 64], [64, 128], [500, 500, 999], [1000]]) {
      const parts: Uint8Array[] = [];
      let from = 0;
      for (const c of cuts) { parts.push(b.subarray(from, c)); from = c; }
      parts.push(b.subarray(from));
      expect(sha256Chunks(parts), `cuts ${cuts.join(",")}`).to.equal(sha256(b));
    }
  });

  it("hashes float32 views in place (a subarray with a byte offset) as their bytes", () => {
    const big = new Float32Array(bytes(4 * 1000, 5).buffer);
    const view = big.subarray(10, 500);
    const chunk = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    expect(innerDigest("sha256-v1", [chunk])).to.equal(sha256(Uint8Array.from(chunk)));
  });

  it("builds the same preimage by hand (tensorStateHash) as viem's abi.encode (stateHashFromDigests), for both schemes and any uint256", () => {
    for (const scheme of ["keccak256", "sha256-v1"] as const) {
      for (const [jobId, step] of [[0n, 0], [1n, 1], [(1n << 256n) - 1n, 2 ** 53 - 1], [1n << 255n, 255], [0x1234567890abcdefn, 70000]] as const) {
        const w = [bytes(100, Number(jobId % 97n) + 1), bytes(3, 2)], o = [bytes(77, step % 89)];
        expect(tensorStateHash(scheme, jobId, step, w, o), `${scheme} ${jobId} ${step}`).to.equal(
          stateHashFromDigests(scheme, jobId, step, innerDigest(scheme, w), innerDigest(scheme, o)),
        );
      }
      expect(() => tensorStateHash(scheme, 1n << 256n, 0, [], [])).to.throw(InputError);
      expect(() => tensorStateHash(scheme, -1n, 0, [], [])).to.throw(InputError);
    }
  });

  describe("sha256-v2: the NaN-canonical digest (every NaN hashed as 0x7FC00000, -0 and +0 distinct)", () => {
    const n = vectors.stateHashSha256V2;
    const u32 = (bits: number[]) => new Uint8Array(Uint32Array.from(bits).buffer);

    it("has the tag keccak256(\"pouw/state-digest/sha256-v2\") and the fixed vector's h, from the canonical bytes by hand", () => {
      expect(SHA256_V2_TAG).to.equal(keccak256(toHex(n.tagPreimage)));
      expect(n.tag).to.equal(SHA256_V2_TAG);
      const w = hexToBytes(n.weightsBytes), o = hexToBytes(n.optimizerBytes);
      // independent side: viem's sha256 over the canonical bytes written out in vectors.json, abi.encode by hand
      expect(innerDigest("sha256-v2", [w])).to.equal(sha256(hexToBytes(n.canonicalWeightsBytes)));
      expect(innerDigest("sha256-v2", [o])).to.equal(sha256(hexToBytes(n.canonicalOptimizerBytes)));
      const byHand = keccak256(concat([SHA256_V2_TAG, word(BigInt(n.jobId)), word(n.step), sha256(hexToBytes(n.canonicalWeightsBytes)), sha256(hexToBytes(n.canonicalOptimizerBytes))]));
      expect(byHand).to.equal(n.h);
      expect(tensorStateHash("sha256-v2", BigInt(n.jobId), n.step, [w], [o])).to.equal(n.h);
      expect(stateHashFromDigests("sha256-v2", BigInt(n.jobId), n.step, n.weightsHash as Hex, n.optimizerHash as Hex)).to.equal(n.h);
    });

    it("gives an x86-64 NaN state (0xFFC00000) and an arm64 one (0x7FC00000) one h; sha256-v1 and keccak256 do not", () => {
      const x86 = [u32([0x3f800000, 0xffc00000, 0xffc00000])], arm = [u32([0x3f800000, 0x7fc00000, 0x7fc00000])];
      const opt = [u32([0xffc00000]), u32([0x00000000])], optArm = [u32([0x7fc00000]), u32([0x00000000])];
      expect(tensorStateHash("sha256-v2", 5n, 2, x86, opt)).to.equal(tensorStateHash("sha256-v2", 5n, 2, arm, optArm));
      expect(tensorStateHash("sha256-v1", 5n, 2, x86, opt)).to.not.equal(tensorStateHash("sha256-v1", 5n, 2, arm, optArm));
      expect(tensorStateHash("keccak256", 5n, 2, x86, opt)).to.not.equal(tensorStateHash("keccak256", 5n, 2, arm, optArm));
      // a NaN is still not a number: it hashes apart from every finite value and from the infinities
      for (const other of [0x3f800000, 0x7f800000, 0xff800000, 0x00000000]) {
        expect(tensorStateHash("sha256-v2", 5n, 2, [u32([other])], [])).to.not.equal(tensorStateHash("sha256-v2", 5n, 2, [u32([0xffc00000])], []));
      }
    });

    it("keeps -0 and +0 distinct, and every finite state's inner digests equal sha256-v1's (only the tag differs)", () => {
      expect(innerDigest("sha256-v2", [u32([0x80000000])])).to.not.equal(innerDigest("sha256-v2", [u32([0])]));
      for (const [i, len] of [0, 4, 400, 4096].entries()) {
        const f = new Float32Array(bytes(len, i + 17).buffer.slice(0));
        for (let j = 0; j < f.length; j++) if (Number.isNaN(f[j])) f[j] = j; // finite (and infinite) values only
        const c = new Uint8Array(f.buffer);
        expect(innerDigest("sha256-v2", [c]), `length ${len}`).to.equal(innerDigest("sha256-v1", [c]));
      }
      const w = hexToBytes(v.weightsBytes), o = hexToBytes(v.optimizerBytes);
      expect(tensorStateHash("sha256-v2", 7n, 3, [w], [o])).to.not.equal(tensorStateHash("sha256-v1", 7n, 3, [w], [o]));
    });

    it("reads a value split across chunks and an unaligned view whole, and leaves the caller's bytes untouched", () => {
      const raw = hexToBytes(n.weightsBytes);
      const copy = Uint8Array.from(raw);
      // cut inside the NaN at bytes 4..7 and inside the last one; and a view at byte offset 1 of a larger buffer
      const parts = [raw.subarray(0, 6), raw.subarray(6, 17), raw.subarray(17)];
      const shifted = new Uint8Array(raw.length + 1);
      shifted.set(raw, 1);
      const expected = sha256(hexToBytes(n.canonicalWeightsBytes));
      expect(innerDigest("sha256-v2", parts)).to.equal(expected);
      expect(innerDigest("sha256-v2", [shifted.subarray(1)])).to.equal(expected);
      expect(raw).to.deep.equal(copy);
      expect(() => innerDigest("sha256-v2", [raw.subarray(0, 6)])).to.throw(RangeError, /multiple of 4/);
    });
  });

  it("refuses an unknown scheme with InputError", () => {
    expect(() => innerDigest("blake3" as StateDigest, [])).to.throw(InputError, /unknown state digest "blake3"/);
    expect(() => tensorStateHash("sha3" as StateDigest, 0n, 0, [], [])).to.throw(InputError);
    expect(() => stateHashFromDigests("md5" as StateDigest, 0n, 0, SHA256_V1_TAG, SHA256_V1_TAG)).to.throw(InputError);
  });
});
