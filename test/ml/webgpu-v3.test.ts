import { expect } from "chai";
import { adamV3Powers, adamV3Ref, adamV3Scalars, causalSoftmaxBackV3Ref, causalSoftmaxV3Ref, CANONICAL_NAN_BITS, exp32V3, layerNormBackV3Ref, layerNormV3Ref, log32V3, matmulV3Ref, softmaxXentV3Ref } from "../../verifier/src/ml/kernels/reference-v3.ts";
import type { Layout } from "../../verifier/src/ml/kernels/transformer-ref.ts";
import { useSwiftShaderWhenNoIcd, WebGpuUnavailableError } from "../../verifier/src/ml/webgpu/device.ts";
import { firstBitDifference, operands, rng, specialsOnlyIn, type InputKind } from "../../verifier/src/ml/webgpu/operands.ts";
import { GpuV3 } from "../../verifier/src/ml/webgpu/v3-device.ts";
import { V3_MATMUL_WGSL } from "../../verifier/src/ml/webgpu/v3-matmul-wgsl.ts";

// The numerics bitwise-v3 WGSL kernels on whatever adapter Dawn finds (SwiftShader on a machine without a GPU:
// chromium + libvulkan1, as .ci/run installs) against the plain-JS reference that defines the bits. The suite
// skips, saying why, only when no adapter is found.

const f = Math.fround;
const LAYOUTS: Layout[] = ["nn", "tn", "nt"];
const bitsOf = (x: Float32Array): Uint32Array => new Uint32Array(x.buffer, x.byteOffset, x.length);
const floatsOf = (x: Uint32Array): Float32Array => new Float32Array(x.buffer, x.byteOffset, x.length);

/** Every NaN the kernel wrote is the canonical one (the references leave NaN bits open; the GPU must not). */
function nansCanonical(x: Uint32Array): boolean {
  return x.every((v) => (v & 0x7fffffff) <= 0x7f800000 || v === CANONICAL_NAN_BITS);
}

function expectSameBits(want: Float32Array, got: Uint32Array, what: string): void {
  expect(got.length, `${what}: length`).to.equal(want.length);
  const i = firstBitDifference(want, floatsOf(got));
  expect(i, `${what}: element ${i}: reference ${want[i]} (0x${bitsOf(want)[i]?.toString(16)}), webgpu ${floatsOf(got)[i]} (0x${got[i]?.toString(16)})`).to.equal(-1);
  expect(nansCanonical(got), `${what}: a NaN that is not 0x7fc00000`).to.equal(true);
}

/** Random float32 bit patterns: every exponent, sign, subnormal, Inf and NaN payload, uniformly. */
function randomBits(n: number, rand: () => number): Uint32Array {
  return Uint32Array.from({ length: n }, () => Math.floor(rand() * 2 ** 32) >>> 0);
}

describe("ml/webgpu v3: the numerics bitwise-v3 WGSL kernels equal reference-v3.ts bit for bit", function () {
  this.timeout(900_000); // SwiftShader compiles each soft-float shader in seconds to a minute on a loaded machine
  let gpu: GpuV3 | null = null;

  before(async function () {
    useSwiftShaderWhenNoIcd();
    try {
      gpu = await GpuV3.create();
    } catch (err) {
      if (!(err instanceof WebGpuUnavailableError)) throw err;
      console.log(`      SKIPPED: no WebGPU adapter (${err.message}${err.details ? `: ${err.details}` : ""})`);
      this.skip();
    }
  });

  after(() => gpu?.destroy());

  const g = (): GpuV3 => gpu!;

  async function gpuMatmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count = 1): Promise<Uint32Array> {
    return g().matmul(bitsOf(a), bitsOf(b), M, K, N, layout, count);
  }

  describe("matmul (16x16 output tiles, k sequential per output)", () => {
    const kinds: InputKind[] = ["random", "wide", "subnormal", "cancel", "adversarial", "v3-edges"];
    for (const kind of kinds) {
      it(`equals matmulV3Ref on ${kind} operands: random shapes, every layout, K across the tile edges, batches`, async () => {
        const rand = rng(0x3300 + kinds.indexOf(kind));
        let nans = 0, finite = 0;
        for (const layout of LAYOUTS) {
          for (const K of [1, 15, 16, 17, 40]) {
            const M = 1 + Math.floor(rand() * 20), N = 1 + Math.floor(rand() * 20), count = 1 + Math.floor(rand() * 2);
            const a = operands(count * M * K, kind, rand), b = operands(count * K * N, kind, rand);
            // A's rows (as stored) and B's rows: specials kept in two of each, so most outputs are finite
            specialsOnlyIn(a, count * (layout === "tn" ? K : M), layout === "tn" ? M : K, [0, 3]);
            specialsOnlyIn(b, count * (layout === "nt" ? N : K), layout === "nt" ? K : N, [1]);
            const want = matmulV3Ref(a, b, M, K, N, layout, count);
            expectSameBits(want, await gpuMatmul(a, b, M, K, N, layout, count), `${kind} ${layout} ${count}x${M}x${K}x${N}`);
            for (const v of want) v !== v ? nans++ : finite++;
          }
        }
        expect(finite, "finite outputs compared").to.be.greaterThan(100);
        if (kind === "adversarial" || kind === "v3-edges") expect(nans, "NaN outputs compared").to.be.greaterThan(0);
      });
    }

    it("follows the rules at their edges: bf16 ties to even, the 2^-56 flush, the 2^48 and Inf/NaN rows, -0 (fixed vectors)", async () => {
      const cases: [number[], number[], number][] = [
        [[-0], [1], 0], // a -0 operand is flushed to +0: C = +0
        [[-(2 ** -60)], [2 ** 10], 0], // below 2^-56: flushed, +0 (not -0)
        [[f(2 ** -56 * (1 - 2 ** -9))], [1], 2 ** -56], // bf16 rounding lifts it to 2^-56: kept
        [[f(2 ** -56 * (1 - 2 ** -8))], [1], 0], // rounds to 2^-56 - 2^-64 < 2^-56: flushed
        [[f(1 + 2 ** -8)], [1], 1], // a bf16 tie: to even (1)
        [[f(1 + 3 * 2 ** -8)], [1], 1 + 2 ** -6], // a bf16 tie: to even (1 + 2^-6)
        [[f(2 ** 48 * (1 - 2 ** -9))], [0], NaN], // bf16 rounds it up to 2^48: special, even times 0
        [[f(2 ** 48 * (1 - 2 ** -8))], [2], 2 ** 49 * (1 - 2 ** -8)], // stays below 2^48: a number
        [[Infinity, 1], [0, 0], NaN],
        [[2 ** 24, 1, 1, -(2 ** 24)], [1, 1, 1, 1], 0], // 2^24 + 1 ties to 2^24 twice, then cancels
      ];
      for (const [x, y, want] of cases) {
        const got = floatsOf(await gpuMatmul(Float32Array.from(x), Float32Array.from(y), 1, x.length, 1, "nn"))[0]!;
        const ref = matmulV3Ref(Float32Array.from(x), Float32Array.from(y), 1, x.length, 1)[0]!;
        expect(Object.is(got, want) || (want !== want && got !== got), `${x}.${y}: webgpu ${got}, want ${want}`).to.equal(true);
        expect(Object.is(ref, want) || (want !== want && ref !== ref), `${x}.${y}: reference ${ref}, want ${want}`).to.equal(true);
      }
    });

    it("tells summation orders apart: a kernel that sums each k tile in reverse gives other bits, and the test sees it", async () => {
      // per row, products 2^24, then K-2 ones, then -2^24: in order every +1 ties back to 2^24 and C = 0; any
      // order that adds a 1 after the -2^24 (reversed, split-K, a tree) gives a non-zero C
      const M = 5, K = 40, N = 3;
      const a = new Float32Array(M * K).fill(1), b = new Float32Array(K * N).fill(1);
      for (let i = 0; i < M; i++) {
        a[i * K] = 2 ** 24;
        a[i * K + K - 1 - i] = -(2 ** 24); // the -2^24 at several k, across the tile edge at 16 and 32
      }
      const want = matmulV3Ref(a, b, M, K, N, "nn");
      expect(Array.from(want.subarray(0, N))).to.deep.equal([0, 0, 0]);
      expectSameBits(want, await gpuMatmul(a, b, M, K, N, "nn"), "crafted order vector");
      // the same kernel with each 16-wide k tile summed in descending kk
      const reversed = V3_MATMUL_WGSL.replace("let x = As[l.y][kk];", "let x = As[l.y][kn - 1u - kk];").replace("let y = Bs[kk][l.x];", "let y = Bs[kn - 1u - kk][l.x];");
      expect(reversed, "the variant must differ from the kernel (did the kernel text change?)").to.not.equal(V3_MATMUL_WGSL);
      const variant = await GpuV3.create({ matmulSource: reversed });
      try {
        const other = floatsOf(await variant.matmul(bitsOf(a), bitsOf(b), M, K, N, "nn"));
        expect(firstBitDifference(want, other), "a reversed-tile kernel must not pass").to.not.equal(-1);
      } finally {
        variant.destroy();
      }
      // and split-K in two halves (the plain-JS variant), which the crafted vector also tells apart
      const split = new Float32Array(M * N);
      for (let i = 0; i < M; i++) {
        for (let j = 0; j < N; j++) {
          let lo = 0, hi = 0;
          for (let k = 0; k < K / 2; k++) lo = f(lo + f(a[i * K + k]! * b[k * N + j]!));
          for (let k = K / 2; k < K; k++) hi = f(hi + f(a[i * K + k]! * b[k * N + j]!));
          split[i * N + j] = f(lo + hi);
        }
      }
      expect(firstBitDifference(want, split)).to.not.equal(-1);
    });
  });

  describe("the integer soft-float (add, sub, mul, div, sqrt) and exp32, log32", () => {
    const F32 = (x: number) => x;
    const ops = {
      add: (x: number, y: number) => f(x + y),
      sub: (x: number, y: number) => f(x - y),
      mul: (x: number, y: number) => f(x * y),
      div: (x: number, y: number) => f(x / y),
      sqrt: (x: number) => f(Math.sqrt(x)),
      exp32: (x: number) => F32(exp32V3(x)),
      log32: (x: number) => F32(log32V3(x)),
    } as const;
    // signed zeros, subnormals (smallest, largest), the smallest normal, ones, the largest float, Inf, NaN, and
    // pairs whose sum or product lands on a rounding tie, a subnormal result or an overflow
    const EDGE = [0, -0, 2 ** -149, -(2 ** -149), 2 ** -126 - 2 ** -149, 2 ** -126, -(2 ** -126), 1, -1, 1 + 2 ** -23, 1.5, 3, 2 ** -24, 2 ** -25, 3 * 2 ** -25,
      3.4028235e38, -3.4028235e38, 2 ** 127, 2 ** 64, 2 ** -64, 2 ** -100, 0.1, -0.7, 88.5, -87.5, 87.9, -103, Infinity, -Infinity, NaN].map(f);

    for (const [op, fn] of Object.entries(ops) as [keyof typeof ops, (x: number, y: number) => number][]) {
      it(`${op}: equals Math.fround of the float64 operation${op.endsWith("32") ? " (the reference algorithm)" : ""} on every pair of edge values and random bit patterns`, async () => {
        const rand = rng(0x3400 + Object.keys(ops).indexOf(op));
        const xs: number[] = [], ys: number[] = [];
        for (const x of EDGE) for (const y of EDGE) { xs.push(x); ys.push(y); }
        const x = new Float32Array(xs.length + 6000), y = new Float32Array(x.length);
        x.set(xs);
        y.set(ys);
        bitsOf(x).set(randomBits(3000, rand), xs.length);
        bitsOf(y).set(randomBits(3000, rand), xs.length);
        // values of ordinary size (where exp and log do their work) and near-equal pairs (cancellation)
        for (let i = xs.length + 3000; i < x.length; i++) {
          x[i] = (rand() * 2 - 1) * 2 ** Math.floor(rand() * 14 - 7) * (op === "exp32" ? 40 : 1);
          y[i] = rand() < 0.3 ? f(x[i]! * (1 + (rand() - 0.5) * 2 ** -20)) : (rand() * 2 - 1) * 2 ** Math.floor(rand() * 14 - 7);
        }
        if (op === "log32" || op === "sqrt") for (let i = xs.length + 3000; i < x.length; i++) x[i] = Math.abs(x[i]!);
        const want = Float32Array.from(x, (v, i) => fn(v, y[i]!));
        expectSameBits(want, await g().op(op, bitsOf(x), bitsOf(y)), op);
      });
    }
  });

  describe("row kernels against the reference functions", () => {
    it("causal softmax: equals causalSoftmaxV3Ref on random scores with -Inf, Inf, NaN and wide magnitudes", async () => {
      const rand = rng(0x3500);
      const T = 9, count = 3;
      const s = Float32Array.from({ length: count * T * T }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 12 - 4));
      s[T * T + 5 * T] = -Infinity;
      s[2 * T * T + 7 * T + 3] = Infinity;
      s[2 * T * T + 8 * T + 2] = NaN;
      s[4 * T + 1] = 2 ** -140;
      expectSameBits(causalSoftmaxV3Ref(s, T, count), await g().rows("causalSoftmax", [bitsOf(s)], count * T, T, count * T * T), "causalSoftmax");
    });

    it("layer norm: equals layerNormV3Ref (y, xhat, rstd) on random rows, a constant row, a subnormal row and a NaN", async () => {
      const rand = rng(0x3501);
      const rows = 7, d = 24;
      const x = Float32Array.from({ length: rows * d }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 8 - 4));
      x.fill(0.25, d, 2 * d); // a constant row: xc = 0, var = 0, rstd = 1/sqrt(eps)
      for (let j = 0; j < d; j++) x[2 * d + j] = (rand() - 0.5) * 2 ** -130; // subnormals
      x[5 * d + 3] = NaN;
      const gamma = Float32Array.from({ length: d }, () => rand() * 2), beta = Float32Array.from({ length: d }, () => rand() - 0.5);
      const ref = layerNormV3Ref(x, gamma, beta, rows, d);
      const want = new Float32Array(2 * rows * d + rows);
      want.set(ref.y);
      want.set(ref.xhat, rows * d);
      want.set(ref.rstd, 2 * rows * d);
      expectSameBits(want, await g().rows("layerNorm", [bitsOf(x), bitsOf(gamma), bitsOf(beta)], rows, d, want.length), "layerNorm");
    });

    it("causal softmax backward: equals causalSoftmaxBackV3Ref on softmax outputs and wide, signed, subnormal gradients", async () => {
      const rand = rng(0x3504);
      const T = 10, count = 2;
      const p = causalSoftmaxV3Ref(Float32Array.from({ length: count * T * T }, () => rand() * 6 - 3), T, count);
      const dp = operands(count * T * T, "subnormal", rand);
      dp[T + 1] = NaN;
      dp[3 * T + 2] = -0;
      expectSameBits(causalSoftmaxBackV3Ref(p, dp, T, count), await g().rows("causalSoftmaxBack", [bitsOf(p), bitsOf(dp)], count * T, T, count * T * T), "causalSoftmaxBack");
    });

    it("layer norm backward: equals layerNormBackV3Ref (dx per row, dg and db folded over the rows)", async () => {
      const rand = rng(0x3505);
      const rows = 13, d = 20;
      const x = Float32Array.from({ length: rows * d }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 8 - 4));
      const gamma = Float32Array.from({ length: d }, () => rand() * 2), beta = new Float32Array(d);
      const { xhat, rstd } = layerNormV3Ref(x, gamma, beta, rows, d);
      const dy = operands(rows * d, "wide", rand).map((v) => v * 2 ** -60);
      dy[2 * d + 5] = Infinity;
      const ref = layerNormBackV3Ref(dy, xhat, rstd, gamma, rows, d);
      const want = new Float32Array(rows * d + 2 * d);
      want.set(ref.dx);
      want.set(ref.dg, rows * d);
      want.set(ref.db, rows * d + d);
      expectSameBits(want, await g().rows("layerNormBack", [bitsOf(dy), bitsOf(xhat), bitsOf(rstd), bitsOf(gamma)], rows, d, want.length), "layerNormBack");
    });

    it("softmax cross-entropy: equals softmaxXentV3Ref (dz, each row's loss, the argmax hits)", async () => {
      const rand = rng(0x3502);
      const rows = 11, V = 17;
      const z = Float32Array.from({ length: rows * V }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 8 - 2));
      z[3 * V + 4] = 120; // exp32 of the others' differences underflows to +0
      z[6 * V] = -Infinity;
      const targets = Uint32Array.from({ length: rows }, () => Math.floor(rand() * V));
      targets[3] = 4;
      const rowLoss = new Float32Array(rows);
      const ref = softmaxXentV3Ref(z, targets, rows, V, rowLoss);
      const out = await g().rows("softmaxXent", [bitsOf(z), targets], rows, V, rows * V + 2 * rows, [bitsOf(Float32Array.of(rows))[0]!]);
      expectSameBits(ref.dz, out.subarray(0, rows * V), "softmaxXent dz");
      expectSameBits(rowLoss, out.subarray(rows * V, rows * V + rows), "softmaxXent row loss");
      expect(out.subarray(rows * V + rows).reduce((s, v) => s + v, 0), "argmax hits").to.equal(ref.correct);
    });

    it("adam: equals adamV3Ref (w', m', v') on random tensors with zeros, subnormal gradients and a NaN", async () => {
      const rand = rng(0x3503);
      const n = 500;
      const w = operands(n, "random", rand), m = operands(n, "random", rand), g2 = operands(n, "subnormal", rand);
      const v = Float32Array.from(operands(n, "random", rand), Math.abs);
      g2[7] = NaN;
      g2[8] = 0;
      m[9] = -0;
      const s = adamV3Scalars({ lr: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 });
      const { c1, c2 } = adamV3Powers(s, 0.9 ** 3, 0.999 ** 3);
      const outW = new Float32Array(n), outM = new Float32Array(n), outV = new Float32Array(n);
      adamV3Ref(s, c1, c2, w, m, v, g2, outW, outM, outV);
      const want = new Float32Array(3 * n);
      want.set(outW);
      want.set(outM, n);
      want.set(outV, 2 * n);
      const params = bitsOf(Float32Array.of(s.beta1, s.beta2, s.oneMinusBeta1, s.oneMinusBeta2, s.lr, s.epsilon, c1, c2));
      expectSameBits(want, await g().rows("adam", [bitsOf(w), bitsOf(m), bitsOf(v), bitsOf(g2)], n, 1, 3 * n, Array.from(params)), "adam");
    });
  });
});
