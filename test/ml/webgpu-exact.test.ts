import { expect } from "chai";
import { matmulRef, type MatmulLayout } from "../../verifier/src/ml/kernels/index.ts";
import { CANONICAL_NAN, exactMatmulBits } from "../../verifier/src/ml/webgpu/exact-matmul.ts";
import { firstBitDifference, operands, rng, type InputKind } from "../../verifier/src/ml/webgpu/operands.ts";

const KINDS: InputKind[] = ["random", "wide", "adversarial", "cancel", "subnormal"];
const LAYOUTS: MatmulLayout[] = ["nn", "tn", "nt"];

/** exactMatmulBits with matmulRef's operand layouts. */
function exact(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: MatmulLayout): Float32Array {
  const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
  const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
  const c = exactMatmulBits(new Uint32Array(a.buffer), new Uint32Array(b.buffer), M, K, N, aRow, aInner, bInner, bCol);
  return new Float32Array(c.buffer);
}

/** The reference with one change: k summed in descending order inside each block (a different summation order). */
function reversedBlocks(a: Float32Array, b: Float32Array, M: number, K: number, N: number): Float32Array {
  const c = new Float32Array(M * N);
  for (let k0 = 0; k0 < K; k0 += 48) {
    const kEnd = Math.min(k0 + 48, K);
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let sum = 0.0;
        for (let k = kEnd - 1; k >= k0; k--) sum += a[i * K + k]! * b[k * N + j]!;
        c[i * N + j] = c[i * N + j]! + sum;
      }
    }
  }
  return c;
}

describe("ml/webgpu/exact-matmul: the integer construction of the WGSL matmul equals the reference bit for bit", () => {
  for (const kind of KINDS) {
    it(`equals kernels/reference.ts matmulRef on ${kind} operands, every layout, K across block edges`, () => {
      const rand = rng(0x3200 + KINDS.indexOf(kind));
      let elements = 0;
      for (const layout of LAYOUTS) {
        for (const K of [1, 2, 47, 48, 49, 96, 97, 130]) {
          const M = 1 + Math.floor(rand() * 6);
          const N = 1 + Math.floor(rand() * 6);
          const a = operands(M * K, kind, rand);
          const b = operands(K * N, kind, rand);
          const want = matmulRef(a, b, M, K, N, layout);
          const got = exact(a, b, M, K, N, layout);
          const i = firstBitDifference(want, got);
          expect(i, `${kind} ${layout} ${M}x${K}x${N} element ${i}: reference ${want[i]}, exact ${got[i]}`).to.equal(-1);
          elements += M * N;
        }
      }
      expect(elements).to.be.greaterThan(24);
    });
  }

  it("gives signed zeros, subnormals, overflow to Inf and canonical NaN as the reference does (fixed vectors)", () => {
    const cases: [number[], number[], number][] = [
      [[-0], [1], 0], // +0 + (-0 * 1): the block sum starts at +0, so C is +0
      [[2 ** -100], [-(2 ** -100)], -0], // -2^-200 rounds to -0 in float32
      [[2 ** -75], [2 ** -75], 2 ** -150 * 0], // exactly half the smallest subnormal: ties to even, +0
      [[2 ** -75], [2 ** -74], 2 ** -149], // the smallest subnormal
      [[3.4028235e38], [2], Infinity], // overflow in the final float32 rounding
      [[2 ** 27, 1, -(2 ** 27)], [2 ** 26, 1, 2 ** 26], 0], // 2^53 + 1 is a float64 tie: to even (2^53), then cancels
      [[2 ** 27, 3, -(2 ** 27)], [2 ** 26, 1, 2 ** 26], 4], // 2^53 + 3: the tie goes up to the even 2^53 + 4
      [[1, 3], [1, 2 ** -24], 1 + 2 ** -22], // 1 + 3*2^-24 is a float32 tie: up to the even 1 + 2^-22
      [[1, 1], [1, 2 ** -24], 1], // 1 + 2^-24: the tie goes down to the even 1
      [[Infinity], [0], NaN],
      [[Infinity, -Infinity], [1, 1], NaN],
      [[2 ** 30, 1, -(2 ** 30)], [1, 1, 1], 1], // float64 keeps the 1 that a float32 sum would lose
      [[1, 2 ** 30, -(2 ** 30)], [1, 2 ** 30, 2 ** 30], 0], // 1 + 2^60 rounds to 2^60 in float64, then cancels
    ];
    for (const [x, y, want] of cases) {
      const got = exact(Float32Array.from(x), Float32Array.from(y), 1, x.length, 1, "nn");
      const ref = matmulRef(Float32Array.from(x), Float32Array.from(y), 1, x.length, 1);
      expect(Object.is(got[0], want) || (Number.isNaN(want) && Number.isNaN(got[0])), `${x}.${y}: ${got[0]}, want ${want}`).to.equal(true);
      expect(firstBitDifference(ref, got)).to.equal(-1);
    }
    const nan = exact(Float32Array.of(NaN), Float32Array.of(1), 1, 1, 1, "nn");
    expect(new Uint32Array(nan.buffer)[0]).to.equal(CANONICAL_NAN);
  });

  it("the inputs tell summation orders apart: a reference summing each block in reverse differs from the construction", () => {
    // products 1, 2^60, -2^60: in order (1 + 2^60) - 2^60 = 0 in float64; reversed -2^60 + 2^60 + 1 = 1
    const a = Float32Array.of(1, 2 ** 30, -(2 ** 30));
    const b = Float32Array.of(1, 2 ** 30, 2 ** 30);
    expect(exact(a, b, 1, 3, 1, "nn")[0]).to.equal(0);
    expect(reversedBlocks(a, b, 1, 3, 1)[0]).to.equal(1);
    expect(firstBitDifference(reversedBlocks(a, b, 1, 3, 1), exact(a, b, 1, 3, 1, "nn"))).to.equal(0);
  });
});
