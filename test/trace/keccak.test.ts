import { expect } from "chai";
import { keccak256 } from "viem";
import { hashBytes } from "../../verifier/src/trace/index.ts";
import { keccakChunks } from "../../verifier/src/trace/keccak.ts";
import { float32Bytes, float32Chunks } from "../../verifier/src/ml/tensors.ts";

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

describe("trace: the WebAssembly keccak256 used for state hashes", () => {
  // 136 bytes is keccak256's rate: lengths around it and its multiples exercise the padding paths
  const lengths = [0, 1, 31, 32, 135, 136, 137, 271, 272, 273, 4096, 1_000_003];

  it("equals viem's keccak256 on every length around the sponge rate", () => {
    for (const [i, n] of lengths.entries()) {
      const b = bytes(n, i + 7);
      expect(hashBytes(b), `length ${n}`).to.equal(keccak256(b));
    }
  });

  it("hashes chunks as their concatenation, wherever the cuts fall", () => {
    const b = bytes(1000, 99);
    const whole = keccak256(b);
    for (const cuts of [[0], [1], [135, 136], [136, 272], [500, 500, 999], [1000]]) {
      const parts: Uint8Array[] = [];
      let from = 0;
      for (const c of cuts) { parts.push(b.subarray(from, c)); from = c; }
      parts.push(b.subarray(from));
      expect(keccakChunks(parts), `cuts ${cuts.join(",")}`).to.equal(whole);
    }
    expect(keccakChunks([])).to.equal(keccak256(new Uint8Array(0)));
  });

  it("hashes float32 tensors in place exactly as their little-endian concatenation", () => {
    const big = new Float32Array(bytes(4 * 1000, 3).buffer);
    const arrays = [Float32Array.of(1, -2.5, Number.NaN), big.subarray(10, 500), new Float32Array(0), Float32Array.of(-0)];
    expect(hashBytes(...float32Chunks(arrays))).to.equal(keccak256(float32Bytes(arrays)));
  });

  it("changes when one byte of one chunk changes", () => {
    const a = bytes(300, 5), b = bytes(300, 6);
    const h = hashBytes(a, b);
    b[150] = b[150]! ^ 1;
    expect(hashBytes(a, b)).to.not.equal(h);
  });
});
