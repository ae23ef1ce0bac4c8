/**
 * Freivalds verification of float32 matrix products with a rigorous rounding-error bound.
 *
 * Claim checked: C = op(A) · op(B), where op is the identity or the transpose, A, B, C are float32
 * (row-major Float32Array), op(A) is m x n, op(B) is n x p and C is m x p, and C was computed in
 * floating point by any summation order. The check costs O(mn + np + mp) per random vector instead
 * of the O(mnp) of recomputing the product. docs/checks.md has the full proof; in short:
 *
 *   r_1..r_k   k independent vectors of p integers, each uniform on [R, 2R), R = 2^bits
 *   residual   d = fl64(C r) - fl64(A fl64(B r))           (float64 arithmetic throughout)
 *   H_i        rigorous upper bound, per unit of r, on |((C - AB) r)_i| for an honest C plus the
 *              float64 error of the check itself (see rowSlack below)
 *   accept     iff |d_i| <= tau_i = 2R * H_i for every row i and every vector
 *
 * Guarantees (proved in docs/checks.md), with beta_i = 4 * H_i * (1 + 2^-30):
 *   - completeness: an honest C (|C - AB| <= gamma |A||B| elementwise, any summation order) is
 *     always accepted; no false alarm is possible.
 *   - single-entry soundness: if C equals an honest result except in one entry (i, j) that is off by
 *     more than beta_i, the check rejects with certainty, whatever the vectors.
 *   - general soundness: if |C_ij - (AB)_ij| = delta for some entry, the check accepts with
 *     probability at most (2 beta_i / delta + 2^-bits)^k (any number of corrupted entries).
 *
 * IMPORTANT: the vectors must be drawn after the provider committed C (they are secret until the
 * audit); a provider who knows r can forge C r.
 */
import { randomFillSync } from "node:crypto";
import { InputError } from "../errors/index.ts";
import { freivaldsWasm, type DotLoop } from "./freivalds-wasm.ts";

/** A row-major float32 matrix. `shape` is [rows, cols] of the data as stored (before any transpose). */
export type Matrix = {
  readonly data: Float32Array;
  readonly shape: readonly [number, number];
};

export type ProductClaim = {
  /** Label for reports, e.g. "layer1.forward" or "dW1". */
  readonly name: string;
  readonly A: Matrix;
  readonly B: Matrix;
  /** The claimed product op(A) · op(B), m x p. */
  readonly C: Matrix;
  /** Use Aᵀ (A stored as n x m). */
  readonly transposeA?: boolean;
  /** Use Bᵀ (B stored as p x n). */
  readonly transposeB?: boolean;
};

export type FreivaldsOptions = {
  /** Number of independent random vectors k. Default 2. */
  readonly vectors?: number;
  /** Random bits per vector entry: entries are uniform on [2^bits, 2^(bits+1)). Default 21, max 26. */
  readonly bits?: number;
  /**
   * Unit roundoff of the arithmetic that produced C. Default 2^-24 (IEEE float32, round to nearest).
   * Use 2^-11 for TF32 or 2^-8 for bfloat16 accumulations.
   */
  readonly unitRoundoff?: number;
  /**
   * Largest absolute error one underflowing operation of that arithmetic can make. Default 2^-149
   * (gradual underflow to float32 subnormals; the exact bound is 2^-150). Use 2^-126 for hardware
   * that flushes subnormals to zero.
   */
  readonly underflow?: number;
  /** Source of randomness (tests only). Default: node:crypto. Must fill the array with uniform bits. */
  readonly fillRandom?: (words: Uint32Array) => void;
  /**
   * Which implementation runs the matrix-vector loops: "wasm" (freivalds-wasm.ts, SIMD128) or "js" (the
   * loops below). Both sum in the same order, so the result is the same bit for bit; default "wasm" where
   * the runtime can run it, else "js".
   */
  readonly loops?: "wasm" | "js";
};

type Loops = { rowDots: DotLoop; colDots: DotLoop };
const JS_LOOPS: Loops = { rowDots: (m, r, c, v, k, w, o, a) => rowDots(m, r, c, v, k, w, o, a), colDots: (m, r, c, v, k, w, o, a) => colDots(m, r, c, v, k, w, o, a) };

function loopsFor(options: FreivaldsOptions): Loops {
  if (options.loops === "js") return JS_LOOPS;
  const wasm = freivaldsWasm();
  if (wasm) return wasm;
  if (options.loops === "wasm") throw new FreivaldsOptionsError("loops: \"wasm\" was asked for but freivalds.wasm cannot run here");
  return JS_LOOPS;
}

export type ProductResult = {
  readonly name: string;
  readonly ok: boolean;
  /** Dimensions of op(A) · op(B): m x n times n x p. */
  readonly m: number;
  readonly n: number;
  readonly p: number;
  /** Non-finite value in A, B or C: the product cannot be checked and is reported as a fault. */
  readonly nonFinite: boolean;
  /** First row (and vector) whose residual exceeded its threshold, or -1. */
  readonly badRow: number;
  readonly badVector: number;
  /** max over rows and vectors of |d_i| / tau_i; <= 1 means accepted. */
  readonly worstRatio: number;
  /** Smallest and largest single-entry bound beta_i over the rows (see module comment). */
  readonly minRowBound: number;
  readonly maxRowBound: number;
  readonly vectors: number;
  readonly bits: number;
};

/** Bad dimensions or data lengths in a product claim. */
export class FreivaldsShapeError extends InputError {
  override name = "FreivaldsShapeError";
  override readonly code: string = "FREIVALDS_SHAPE";
}

/** Invalid check options (vectors, bits, unit roundoff). */
export class FreivaldsOptionsError extends InputError {
  override name = "FreivaldsOptionsError";
  override readonly code: string = "FREIVALDS_OPTIONS";
}

const U64 = 2 ** -53;
/** Relative inflation that covers the float64 rounding of the few operations computing tau and beta. */
const INFLATE = 1 + 2 ** -30;

/** gamma for a product of (1 + delta_i) with sum of |delta_i| <= s: (prod - 1) <= s / (1 - s). */
export function gamma(s: number): number {
  if (!(s >= 0 && s < 0.5)) throw new FreivaldsOptionsError(`rounding budget ${s} is outside [0, 0.5)`);
  return s / (1 - s);
}

type Dims = { m: number; n: number; p: number };

function checkDims(claim: ProductClaim): Dims {
  const { A, B, C, name } = claim;
  for (const [label, M] of [["A", A], ["B", B], ["C", C]] as const) {
    if (!M || !(M.data instanceof Float32Array)) {
      throw new FreivaldsShapeError(`${name}: ${label} must be a Float32Array matrix`);
    }
    const [r, c] = M.shape;
    if (!Number.isInteger(r) || !Number.isInteger(c) || r < 1 || c < 1) {
      throw new FreivaldsShapeError(`${name}: ${label} has invalid shape [${r}, ${c}]`);
    }
    if (M.data.length !== r * c) {
      throw new FreivaldsShapeError(`${name}: ${label} has ${M.data.length} values but shape [${r}, ${c}]`, {
        details: `expected ${r * c} values`,
      });
    }
  }
  const [m, nA] = claim.transposeA ? [A.shape[1], A.shape[0]] : [A.shape[0], A.shape[1]];
  const [nB, p] = claim.transposeB ? [B.shape[1], B.shape[0]] : [B.shape[0], B.shape[1]];
  if (nA !== nB) {
    throw new FreivaldsShapeError(`${name}: inner dimensions differ (${nA} vs ${nB})`, {
      details: `op(A) is ${m}x${nA}, op(B) is ${nB}x${p}`,
    });
  }
  if (C.shape[0] !== m || C.shape[1] !== p) {
    throw new FreivaldsShapeError(`${name}: C is [${C.shape[0]}, ${C.shape[1]}] but op(A)·op(B) is [${m}, ${p}]`);
  }
  return { m, n: nA, p };
}

function resolveOptions(o: FreivaldsOptions): { k: number; bits: number; u: number; eta: number } {
  const k = o.vectors ?? 2;
  const bits = o.bits ?? 21;
  const u = o.unitRoundoff ?? 2 ** -24;
  const eta = o.underflow ?? 2 ** -149;
  if (!Number.isInteger(k) || k < 1 || k > 64) throw new FreivaldsOptionsError(`vectors must be an integer in [1, 64], got ${k}`);
  // INVARIANT: 2^(bits+1) * 2^24 <= 2^53 keeps B·r with float32 B exact-product friendly and r exact.
  if (!Number.isInteger(bits) || bits < 1 || bits > 26) throw new FreivaldsOptionsError(`bits must be an integer in [1, 26], got ${bits}`);
  if (!(u > 0 && u < 2 ** -4)) throw new FreivaldsOptionsError(`unitRoundoff must be in (0, 2^-4), got ${u}`);
  if (!(eta >= 0 && eta < 1)) throw new FreivaldsOptionsError(`underflow must be in [0, 1), got ${eta}`);
  return { k, bits, u, eta };
}

/**
 * Draws k vectors of p integers uniform on [2^bits, 2^(bits+1)), stored as float64 (exact).
 * Layout: r[j * k + v] is entry j of vector v (interleaved so one pass over B serves all vectors).
 */
export function drawVectors(p: number, k: number, bits: number, fill: (w: Uint32Array) => void = randomFillSync): Float64Array {
  const words = new Uint32Array(p * k);
  fill(words);
  const r = new Float64Array(p * k);
  const mask = 2 ** bits - 1;
  const base = 2 ** bits;
  for (let i = 0; i < r.length; i++) {
    // bits <= 26 < 32: masking a uniform 32-bit word gives a uniform value on [0, 2^bits)
    r[i] = base + (words[i]! & mask);
  }
  return r;
}

/**
 * For a row-major rows x cols matrix M and k interleaved vectors v (v[j*k + t]):
 * out[i*k + t] = sum_j M[i][j] * v[j*k + t] and absOut[i] = sum_j |M[i][j]| * w[j] (w = null: w = 1).
 * Vectors go in groups of up to 4 (one sequential pass over M per group, unrolled accumulators);
 * the absolute sums ride along with the first group.
 */
export function rowDots(m: ArrayLike<number>, rows: number, cols: number, v: Float64Array, k: number, w: Float64Array | null, out: Float64Array, absOut: Float64Array): void {
  for (let g = 0; g < k; g += 4) {
    rowDotsGroup(m, rows, cols, v, k, g, Math.min(4, k - g), w, out, g === 0 ? absOut : null);
  }
}

function rowDotsGroup(
  m: ArrayLike<number>,
  rows: number,
  cols: number,
  v: Float64Array,
  k: number,
  g: number,
  size: number,
  w: Float64Array | null,
  out: Float64Array,
  absOut: Float64Array | null,
): void {
  for (let i = 0; i < rows; i++) {
    const off = i * cols;
    let sa = 0;
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    if (size === 1) {
      for (let j = 0; j < cols; j++) {
        const x = m[off + j]!;
        a0 += x * v[j * k + g]!;
        sa += Math.abs(x) * (w === null ? 1 : w[j]!);
      }
    } else if (size === 2) {
      for (let j = 0; j < cols; j++) {
        const x = m[off + j]!;
        const b = j * k + g;
        a0 += x * v[b]!;
        a1 += x * v[b + 1]!;
        sa += Math.abs(x) * (w === null ? 1 : w[j]!);
      }
    } else if (size === 3) {
      for (let j = 0; j < cols; j++) {
        const x = m[off + j]!;
        const b = j * k + g;
        a0 += x * v[b]!;
        a1 += x * v[b + 1]!;
        a2 += x * v[b + 2]!;
        sa += Math.abs(x) * (w === null ? 1 : w[j]!);
      }
    } else {
      for (let j = 0; j < cols; j++) {
        const x = m[off + j]!;
        const b = j * k + g;
        a0 += x * v[b]!;
        a1 += x * v[b + 1]!;
        a2 += x * v[b + 2]!;
        a3 += x * v[b + 3]!;
        sa += Math.abs(x) * (w === null ? 1 : w[j]!);
      }
    }
    const o = i * k + g;
    out[o] = a0;
    if (size > 1) out[o + 1] = a1;
    if (size > 2) out[o + 2] = a2;
    if (size > 3) out[o + 3] = a3;
    if (absOut !== null) absOut[i] = sa;
  }
}

/**
 * Same results as rowDots for the transpose of a row-major stored matrix S (stored rows x cols, used
 * as cols x rows): out[l*k + t] = sum_j S[j][l] * v[j*k + t], absOut[l] = sum_j |S[j][l]| * w[j].
 * Streams S row by row (axpy form).
 */
export function colDots(m: ArrayLike<number>, rows: number, cols: number, v: Float64Array, k: number, w: Float64Array | null, out: Float64Array, absOut: Float64Array): void {
  out.fill(0);
  absOut.fill(0);
  for (let j = 0; j < rows; j++) {
    const off = j * cols;
    const wj = w === null ? 1 : w[j]!;
    if (k === 1) {
      const v0 = v[j]!;
      for (let l = 0; l < cols; l++) {
        const x = m[off + l]!;
        out[l] = out[l]! + x * v0;
        absOut[l] = absOut[l]! + Math.abs(x) * wj;
      }
    } else if (k === 2) {
      const v0 = v[2 * j]!, v1 = v[2 * j + 1]!;
      for (let l = 0; l < cols; l++) {
        const x = m[off + l]!;
        out[2 * l] = out[2 * l]! + x * v0;
        out[2 * l + 1] = out[2 * l + 1]! + x * v1;
        absOut[l] = absOut[l]! + Math.abs(x) * wj;
      }
    } else {
      for (let l = 0; l < cols; l++) {
        const x = m[off + l]!;
        for (let t = 0; t < k; t++) out[l * k + t] = out[l * k + t]! + x * v[j * k + t]!;
        absOut[l] = absOut[l]! + Math.abs(x) * wj;
      }
    }
  }
}

/** x = op(B) · r for all k vectors at once (x[l*k + t]) and s = |op(B)| · 1. op(B) is n x p. */
function applyB(L: Loops, B: Matrix, transposeB: boolean, d: Dims, r: Float64Array, k: number): { x: Float64Array; s: Float64Array } {
  const x = new Float64Array(d.n * k);
  const s = new Float64Array(d.n);
  if (!transposeB) L.rowDots(B.data, d.n, d.p, r, k, null, x, s);
  else L.colDots(B.data, d.p, d.n, r, k, null, x, s);
  return { x, s };
}

/** y = op(A) · x (k vectors) and S = |op(A)| · s. op(A) is m x n. */
function applyA(L: Loops, A: Matrix, transposeA: boolean, d: Dims, x: Float64Array, s: Float64Array, k: number): { y: Float64Array; S: Float64Array } {
  const y = new Float64Array(d.m * k);
  const S = new Float64Array(d.m);
  if (!transposeA) L.rowDots(A.data, d.m, d.n, x, k, s, y, S);
  else L.colDots(A.data, d.n, d.m, x, k, s, y, S);
  return { y, S };
}

/** z = C · r (k vectors) and N = |C| · 1. C is m x p. */
function applyC(L: Loops, C: Matrix, d: Dims, r: Float64Array, k: number): { z: Float64Array; N: Float64Array } {
  const z = new Float64Array(d.m * k);
  const N = new Float64Array(d.m);
  L.rowDots(C.data, d.m, d.p, r, k, null, z, N);
  return { z, N };
}

/**
 * Coefficients of the per-row bound H_i = cS * S_i + cN * N_i + cEta, where S = |A|(|B| 1) and
 * N = |C| 1 are computed in float64 (docs/checks.md, "Claim and check"):
 *   honest error   |C - AB| <= g32 |A||B| + n*eta,   g32 = gamma(n*u + 2n*u64)
 *   check error    phi <= (g64n (1 + g64p) + g64p) |A||B| r + g64p |C| r,  g64q = gamma(q*u64)
 *   computed sums of non-negative terms under-estimate by at most a factor (1 - g64)
 */
export function boundCoefficients(dims: Dims, u: number, eta: number): { cS: number; cN: number; cEta: number } {
  const { n, p } = dims;
  const g32 = gamma(n * u + 2 * n * U64);
  const g64n = gamma(n * U64);
  const g64p = gamma(p * U64);
  // S is computed as |A| (|B| 1): two nested non-negative sums, each under-estimating by <= (1 - g64)
  const underS = (1 - g64n) * (1 - g64p);
  const underN = 1 - g64p;
  // (1 + U64) covers the rounding of the final subtraction d = z - y
  const cS = ((g32 + g64n * (1 + g64p) + g64p) * (1 + U64)) / underS;
  const cN = (g64p * (1 + U64)) / underN;
  const cEta = n * eta * p * (1 + U64);
  return { cS: cS * INFLATE, cN: cN * INFLATE, cEta: cEta * INFLATE };
}

/**
 * Verifies one product claim with the given vectors (interleaved layout of drawVectors).
 * Pure: the same inputs give the same result.
 */
export function checkProductWith(claim: ProductClaim, r: Float64Array, options: FreivaldsOptions = {}): ProductResult {
  const dims = checkDims(claim);
  const { k, bits, u, eta } = resolveOptions(options);
  const { m, n, p } = dims;
  if (r.length !== p * k) throw new FreivaldsShapeError(`${claim.name}: expected ${p * k} vector entries, got ${r.length}`);
  const R = 2 ** bits;
  for (let i = 0; i < r.length; i++) {
    const v = r[i]!;
    if (!Number.isInteger(v) || v < R || v >= 2 * R) {
      throw new FreivaldsOptionsError(`${claim.name}: vector entry ${v} is outside [2^${bits}, 2^${bits + 1})`);
    }
  }
  const base = { name: claim.name, m, n, p, vectors: k, bits };
  const L = loopsFor(options);
  const { x, s } = applyB(L, claim.B, claim.transposeB === true, dims, r, k);
  const { y, S } = applyA(L, claim.A, claim.transposeA === true, dims, x, s, k);
  const { z, N } = applyC(L, claim.C, dims, r, k);
  // NOTE: a NaN or infinity anywhere in A or B makes every S_i non-finite (|a| * Inf or 0 * Inf), one
  // in row i of C makes N_i non-finite; finite float32 inputs cannot overflow these float64 sums.
  // So the passes above double as the finiteness scan.
  for (let i = 0; i < m; i++) {
    if (!Number.isFinite(S[i]!) || !Number.isFinite(N[i]!)) {
      return { ...base, ok: false, nonFinite: true, badRow: i, badVector: -1, worstRatio: Infinity, minRowBound: NaN, maxRowBound: NaN };
    }
  }
  const { cS, cN, cEta } = boundCoefficients(dims, u, eta);

  let ok = true;
  let badRow = -1;
  let badVector = -1;
  let worstRatio = 0;
  let minRowBound = Infinity;
  let maxRowBound = 0;
  for (let i = 0; i < m; i++) {
    const H = (cS * S[i]! + cN * N[i]! + cEta) * INFLATE;
    const tau = 2 * R * H;
    const beta = 4 * H * INFLATE;
    if (beta < minRowBound) minRowBound = beta;
    if (beta > maxRowBound) maxRowBound = beta;
    for (let t = 0; t < k; t++) {
      const dres = Math.abs(z[i * k + t]! - y[i * k + t]!);
      // tau == 0 only for an all-zero row of A·B and C with eta = 0; then any residual is a fault
      const ratio = tau > 0 ? dres / tau : dres > 0 ? Infinity : 0;
      if (ratio > worstRatio) worstRatio = ratio;
      if (!(dres <= tau) && ok) {
        ok = false;
        badRow = i;
        badVector = t;
      }
    }
  }
  return { ...base, ok, nonFinite: false, badRow, badVector, worstRatio, minRowBound, maxRowBound };
}

/** Verifies one product claim with fresh secret random vectors. */
export function checkProduct(claim: ProductClaim, options: FreivaldsOptions = {}): ProductResult {
  const dims = checkDims(claim);
  const { k, bits } = resolveOptions(options);
  const r = drawVectors(dims.p, k, bits, options.fillRandom);
  return checkProductWith(claim, r, options);
}

/**
 * The single-entry bound beta_i for every row (for tests and reports): if C equals an honest result
 * except for one entry in row i that is off by more than beta_i, the check always rejects.
 */
export function rowBounds(claim: ProductClaim, options: FreivaldsOptions = {}): Float64Array {
  const dims = checkDims(claim);
  const { u, eta } = resolveOptions(options);
  const ones = new Float64Array(dims.p).fill(1);
  const L = loopsFor(options);
  const { s } = applyB(L, claim.B, claim.transposeB === true, dims, ones, 1);
  const { S } = applyA(L, claim.A, claim.transposeA === true, dims, new Float64Array(dims.n), s, 1);
  const { N } = applyC(L, claim.C, dims, ones, 1);
  const { cS, cN, cEta } = boundCoefficients(dims, u, eta);
  const out = new Float64Array(dims.m);
  for (let i = 0; i < dims.m; i++) out[i] = 4 * (cS * S[i]! + cN * N[i]! + cEta) * INFLATE * INFLATE;
  return out;
}

/**
 * Smallest lambda such that any entry with |C_ij - (AB)_ij| >= lambda * beta_i is accepted with
 * probability at most 2^-log2Target: solves (2 / lambda + 2^-bits)^k <= 2^-log2Target.
 * Returns Infinity when no lambda suffices (2^-bits alone is too large for k vectors).
 */
export function generalDetectionFactor(k: number, bits: number, log2Target = 40): number {
  const perVector = 2 ** (-log2Target / k);
  const room = perVector - 2 ** -bits;
  return room > 0 ? 2 / room : Infinity;
}

export type StepVerification = {
  readonly ok: boolean;
  readonly products: readonly ProductResult[];
  /** Names of the products that failed, in input order. */
  readonly failed: readonly string[];
};

/**
 * Verifies every matrix product of a step (forward and backward pass). Each product gets its own
 * fresh vectors. Shape errors throw FreivaldsShapeError naming the product.
 */
export function verifyProducts(products: readonly ProductClaim[], options: FreivaldsOptions = {}): StepVerification {
  const names = new Set<string>();
  for (const pr of products) {
    if (names.has(pr.name)) throw new FreivaldsShapeError(`duplicate product name "${pr.name}"`);
    names.add(pr.name);
  }
  const results = products.map((pr) => checkProduct(pr, options));
  const failed = results.filter((r) => !r.ok).map((r) => r.name);
  return { ok: failed.length === 0, products: results, failed };
}
