/**
 * Plain-JavaScript reference kernels: these DEFINE the bits of the "pouw" engine. Every fast kernel
 * (kernels/wasm.ts) must equal them bit for bit, and they equal what @tensorflow/tfjs-backend-cpu
 * 4.22.0 computes for the same op (test/ml/kernels.test.ts checks both on random and adversarial
 * inputs, tfjs-cpu being the oracle).
 *
 * Float semantics: JavaScript numbers are IEEE float64; storing into a Float32Array rounds to
 * nearest-even float32. For +, -, *, / and sqrt of float32 operands the float64 result rounded to
 * float32 equals the correctly rounded float32 operation (53 >= 2*24+2), so an op "in float32" below
 * is `fround(a op b)` and wasm's f32x4 arithmetic gives the same bits. A float32 x float32 product
 * is exact in float64 (24+24 <= 53 bits).
 */
import type { AdamScalars, Kernels, MatmulLayout } from "./types.ts";

/** tfjs-cpu's matMul block size (backend.blockSize): part of the summation order, so of the bits. */
export const MATMUL_BLOCK = 48;

/**
 * Operand layouts of C[M,N] = A . B with inner dimension K:
 *   "nn": a is A [M,K], b is B [K,N]        (fwd1 X.W1, fwd2 a1.W2)
 *   "tn": a is A^T stored [K,M], b is B [K,N] (bwdW2 a1^T.dz2, bwdW1 X^T.dz1)
 *   "nt": a is A [M,K], b is B^T stored [N,K] (bwdA1 dz2.W2^T)
 * The layout only says where A[i,k] and B[k,j] are read from; the summation order (below) is the
 * same in all three, so tf.matMul(tf.transpose(x), y) and matmul(x, y, "tn") agree bit for bit.
 */
export type { MatmulLayout } from "./types.ts";

/**
 * C = A . B exactly as tfjs-cpu's BatchMatMul kernel: C starts at +0 (a zeroed Float32Array); for
 * each block k0 = 0, 48, 96, .. of the inner dimension, in that order, the block's products
 * A[i,k] * B[k,j] (k ascending) are summed in float64 starting from +0.0, and the block sum is
 * added to C[i,j] in float64 and rounded to float32 (C[i,j] = fround(C[i,j] + sum)). The i/j tiling
 * of the kernel does not change any element's arithmetic, so it is not reproduced.
 */
export function matmulRef(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: MatmulLayout = "nn"): Float32Array {
  checkMatmulShapes(a, b, M, K, N);
  const c = new Float32Array(M * N);
  // A[i,k] = a[i*aRow + k*aInner], B[k,j] = b[k*bInner + j*bCol]
  const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
  const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
  for (let k0 = 0; k0 < K; k0 += MATMUL_BLOCK) {
    const kEnd = Math.min(k0 + MATMUL_BLOCK, K);
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let sum = 0.0;
        for (let k = k0; k < kEnd; k++) sum += a[i * aRow + k * aInner]! * b[k * bInner + j * bCol]!;
        c[i * N + j] = c[i * N + j]! + sum; // float64 add, rounded to float32 on store
      }
    }
  }
  return c;
}

export function checkMatmulShapes(a: Float32Array, b: Float32Array, M: number, K: number, N: number): void {
  for (const [name, v] of [["M", M], ["K", K], ["N", N]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`matmul: ${name} = ${v} is not a size`);
  }
  if (a.length !== M * K) throw new RangeError(`matmul: a has ${a.length} elements, [M=${M}, K=${K}] needs ${M * K}`);
  if (b.length !== K * N) throw new RangeError(`matmul: b has ${b.length} elements, [K=${K}, N=${N}] needs ${K * N}`);
}

export type { AdamScalars } from "./types.ts";

export function adamScalars(cfg: { lr: number; beta1: number; beta2: number; epsilon: number }): AdamScalars {
  const f = Math.fround;
  // tf.scalar(1 - beta1): the difference is taken in float64, then rounded (not fround(1 - fround(beta1)))
  return { beta1: f(cfg.beta1), beta2: f(cfg.beta2), oneMinusBeta1: f(1 - cfg.beta1), oneMinusBeta2: f(1 - cfg.beta2), lr: f(cfg.lr), epsilon: f(cfg.epsilon) };
}

/** The bias-correction powers and divisors of one step: p' = p*beta (float32), c = 1 - p' (float32). */
export function adamPowers(s: AdamScalars, beta1Power: number, beta2Power: number): { p1: number; p2: number; c1: number; c2: number } {
  const f = Math.fround;
  const p1 = f(f(beta1Power) * s.beta1);
  const p2 = f(f(beta2Power) * s.beta2);
  return { p1, p2, c1: f(1 - p1), c2: f(1 - p2) };
}

/**
 * One Adam update of one tensor, op by op as optimizer.ts's tf ops on tfjs-cpu (each op's output is
 * a float32 tensor, so each line rounds once):
 *   m' = b1*m + (1-b1)*g                 mul, mul, add
 *   v' = b2*v + (1-b2)*(g*g)             mul, mul, mul, add
 *   w' = w - lr * ((m'/c1) / (sqrt(v'/c2) + eps))   div, div, sqrt, add, div, mul, sub
 * Writes w', m', v' into the out arrays (which may not alias the inputs).
 */
export function adamRef(
  s: AdamScalars, c1: number, c2: number,
  w: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array,
  outW: Float32Array, outM: Float32Array, outV: Float32Array,
): void {
  checkAdamShapes(w, m, v, g, outW, outM, outV);
  const n = w.length;
  const f = Math.fround;
  const { beta1: b1, beta2: b2, oneMinusBeta1: o1, oneMinusBeta2: o2, lr, epsilon: eps } = s;
  for (let i = 0; i < n; i++) {
    const gi = g[i]!;
    const mi = f(f(b1 * m[i]!) + f(o1 * gi));
    const vi = f(f(b2 * v[i]!) + f(o2 * f(gi * gi)));
    const u = f(f(mi / c1) / f(f(Math.sqrt(f(vi / c2))) + eps));
    outW[i] = w[i]! - f(lr * u);
    outM[i] = mi;
    outV[i] = vi;
  }
}

export function checkAdamShapes(w: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array, outW: Float32Array, outM: Float32Array, outV: Float32Array): void {
  const n = w.length;
  if (m.length !== n || v.length !== n || g.length !== n || outW.length !== n || outM.length !== n || outV.length !== n) {
    throw new RangeError(`adam: a tensor of ${n} elements needs m, v, g and outputs of the same length`);
  }
}

/** The reference kernels behind the Kernels interface (the fallback when wasm SIMD is unavailable). */
export const jsKernels: Kernels = {
  name: "js",
  matmul: matmulRef,
  adam: adamRef,
};

/** Plain SGD of one tensor as optimizer.ts: w' = w - lr*g (mul, sub in float32). */
export function sgdRef(lr32: number, w: Float32Array, g: Float32Array, outW: Float32Array): void {
  if (g.length !== w.length || outW.length !== w.length) throw new RangeError(`sgd: tensors of ${w.length} elements need g and output of the same length`);
  for (let i = 0; i < w.length; i++) outW[i] = w[i]! - Math.fround(lr32 * g[i]!);
}
