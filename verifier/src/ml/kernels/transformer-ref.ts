/**
 * Numerics "bitwise-v2": the plain-JS reference kernels that DEFINE the bits of the pouw engine's
 * char-transformer step (kernels/transformer.ts). The wasm module wasm/transformer.wat must equal them
 * bit for bit (test/ml/transformer-kernels.test.ts). Unlike reference.ts (which reproduces tfjs-cpu's
 * float64 block sums), every value here is float32 and every operation rounds once to float32, in an
 * order fixed below, so a SIMD lane that owns one output element reproduces it exactly:
 *
 *   `f(a op b)` for +, -, *, /, sqrt: the float64 result rounded to float32 equals the correctly rounded
 *   float32 operation (53 >= 2*24+2), which is what wasm's f32 / f32x4 instructions compute. No FMA.
 *
 *   matmul    C[i,j] = acc over k = 0..K-1 ascending, acc starting at +0: acc = f(acc + f(A[i,k]*B[k,j]))
 *   sum       the same left fold from +0 over the index order stated at each use
 *   exp32     our own algorithm (below), never Math.exp: wasm has no exp instruction, and Math.exp's
 *             last bit is up to the JavaScript engine
 *   log32     our own algorithm (cephes logf), used only for the reported loss
 *
 * NaN payloads are not part of the definition (as in reference.ts).
 */
import { scratchF32 } from "./scratch.ts";

const f = Math.fround;

export type Layout = "nn" | "tn" | "nt";

/**
 * `count` independent products C_q [M,N] = A_q . B_q, the q-th operands at offset q*M*K (a) and q*K*N (b).
 * Layouts as reference.ts's MatmulLayout: "tn" = A stored transposed [K,M], "nt" = B stored transposed [N,K].
 */
export function matmul32Ref(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
  checkMatmul32(a, b, M, K, N, count);
  const c = new Float32Array(count * M * N);
  const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
  const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
  for (let q = 0; q < count; q++) {
    const ao = q * M * K, bo = q * K * N, co = q * M * N;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let acc = 0;
        for (let k = 0; k < K; k++) acc = f(acc + f(a[ao + i * aRow + k * aInner]! * b[bo + k * bInner + j * bCol]!));
        c[co + i * N + j] = acc;
      }
    }
  }
  return c;
}

export function checkMatmul32(a: Float32Array, b: Float32Array, M: number, K: number, N: number, count: number): void {
  for (const [name, v] of [["M", M], ["K", K], ["N", N], ["count", count]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`matmul32: ${name} = ${v} is not a size`);
  }
  if (a.length !== count * M * K) throw new RangeError(`matmul32: a has ${a.length} elements, ${count} x [${M},${K}] needs ${count * M * K}`);
  if (b.length !== count * K * N) throw new RangeError(`matmul32: b has ${b.length} elements, ${count} x [${K},${N}] needs ${count * K * N}`);
}

// exp32: cephes expf's range reduction and polynomial, every step one float32 operation.
export const EXP_HI = 88; // x > EXP_HI -> +Inf (keeps 2^n a normal float32: n <= 127)
export const EXP_LO = -87; // x < EXP_LO -> +0 (n >= -126)
const LOG2E = f(1.44269504088896341);
const LN2_HI = 0.693359375; // 355/512: n * LN2_HI is exact for |n| <= 2^14
const LN2_LO = f(-2.12194440e-4);
const EXP_P = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1].map(f) as [number, number, number, number, number, number];

const bits = new Float32Array(1);
const bitsI = new Int32Array(bits.buffer);
/** 2^n as float32, n an integer in [-126, 127], from its bit pattern (no Math.pow). */
function pow2(n: number): number {
  bitsI[0] = (n + 127) << 23;
  return bits[0]!;
}

/**
 * exp(x) in float32, our fixed algorithm (wasm/transformer.wat `$exp4` is the same, lane by lane):
 *   NaN -> NaN;  x > 88 -> +Inf;  x < -87 -> +0
 *   n = floor(f(f(x * LOG2E) + 0.5));  r = f(f(x - f(n*LN2_HI)) - f(n*LN2_LO))
 *   p = Horner(EXP_P, r) in float32;  y = f(f(f(f(p * f(r*r)) + r) + 1));  exp32(x) = f(y * 2^n)
 * Relative error ~2 ulp on [-87, 88] (test/ml/transformer-kernels.test.ts measures it against Math.exp).
 */
export function exp32(x: number): number {
  if (x !== x) return x;
  if (x > EXP_HI) return Infinity;
  if (x < EXP_LO) return 0;
  const n = Math.floor(f(f(x * LOG2E) + 0.5));
  const r = f(f(x - f(n * LN2_HI)) - f(n * LN2_LO));
  let p = EXP_P[0];
  for (let i = 1; i < 6; i++) p = f(f(p * r) + EXP_P[i]!);
  const y = f(f(f(p * f(r * r)) + r) + 1);
  return f(y * pow2(n));
}

const LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1].map(f);
const SQRTHF = f(0.707106781186547524);

/** log(x) in float32 (cephes logf), every step one float32 operation. Only the reported loss uses it. */
export function log32(x: number): number {
  if (x !== x || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return Infinity;
  bits[0] = x;
  let e = 0;
  if (bitsI[0]! < 0x00800000) { // subnormal: scale by 2^24 (exact)
    bits[0] = f(x * 16777216);
    e = -24;
  }
  const ix = bitsI[0]!;
  e += ((ix >>> 23) & 0xff) - 126; // x = m * 2^e, m in [0.5, 1)
  bitsI[0] = (ix & 0x007fffff) | 0x3f000000;
  let m = bits[0]!;
  if (m < SQRTHF) {
    e -= 1;
    m = f(f(m + m) - 1);
  } else m = f(m - 1);
  const z = f(m * m);
  let y = LOG_P[0]!;
  for (let i = 1; i < 9; i++) y = f(f(y * m) + LOG_P[i]!);
  y = f(f(y * m) * z);
  const fe = f(e);
  y = f(y + f(fe * LN2_LO));
  y = f(y + f(-0.5 * z));
  let r = f(m + y);
  r = f(r + f(fe * LN2_HI));
  return r;
}

/** Sum of x[o], x[o+stride], ... (n terms) as a float32 left fold from +0. */
export function sum32(x: Float32Array, o: number, n: number, stride = 1): number {
  let s = 0;
  for (let i = 0; i < n; i++) s = f(s + x[o + i * stride]!);
  return s;
}

/**
 * Causal softmax of `count` T x T score blocks, in place of nothing (returns P): for row i, the
 * valid columns are j <= i; m = max over them (first value, then any larger one; NaN wins), e_j =
 * exp32(f(s_ij - m)), s = sum of e_j over j = 0..i ascending, p_ij = f(e_j / s); p_ij = +0 for j > i.
 */
export function causalSoftmaxRef(s: Float32Array, T: number, count: number): Float32Array {
  if (s.length !== count * T * T) throw new RangeError(`causalSoftmax: ${s.length} scores, ${count} x [${T},${T}] needs ${count * T * T}`);
  const p = new Float32Array(s.length);
  for (let q = 0; q < count; q++) {
    for (let i = 0; i < T; i++) {
      const o = (q * T + i) * T;
      let m = s[o]!;
      for (let j = 1; j <= i; j++) {
        const v = s[o + j]!;
        if (v > m || v !== v) m = v;
      }
      let sum = 0;
      for (let j = 0; j <= i; j++) {
        const e = exp32(f(s[o + j]! - m));
        p[o + j] = e;
        sum = f(sum + e);
      }
      for (let j = 0; j <= i; j++) p[o + j] = f(p[o + j]! / sum);
    }
  }
  return p;
}

/**
 * Backward of causalSoftmax: dS_ij = f(p_ij * f(dP_ij - r_i)) for j <= i, with r_i = sum over j = 0..i
 * ascending of f(dP_ij * p_ij); dS_ij = +0 for j > i.
 */
export function causalSoftmaxBackRef(p: Float32Array, dp: Float32Array, T: number, count: number): Float32Array {
  if (p.length !== count * T * T || dp.length !== p.length) throw new RangeError(`causalSoftmaxBack: needs ${count} x [${T},${T}] probabilities and gradients`);
  const ds = new Float32Array(p.length);
  for (let q = 0; q < count; q++) {
    for (let i = 0; i < T; i++) {
      const o = (q * T + i) * T;
      let r = 0;
      for (let j = 0; j <= i; j++) r = f(r + f(dp[o + j]! * p[o + j]!));
      for (let j = 0; j <= i; j++) ds[o + j] = f(p[o + j]! * f(dp[o + j]! - r));
    }
  }
  return ds;
}

export const LN_EPSILON = f(1e-5);

/**
 * LayerNorm of `rows` rows of width d: mean = f(sum(x)/d); xc = f(x - mean); var = f(sum(f(xc*xc))/d);
 * rstd = f(1 / f(sqrt(f(var + eps)))); xhat = f(xc * rstd); y = f(f(xhat * g) + b). Sums left folds over
 * the row. Returns y, xhat and rstd (the backward pass needs the last two).
 */
export function layerNormRef(x: Float32Array, g: Float32Array, b: Float32Array, rows: number, d: number): { y: Float32Array; xhat: Float32Array; rstd: Float32Array } {
  if (x.length !== rows * d || g.length !== d || b.length !== d) throw new RangeError(`layerNorm: needs x [${rows},${d}], g and b [${d}]`);
  // scratch (scratch.ts) inside a pass: every element of the three is written below
  const y = scratchF32(rows * d);
  const xhat = scratchF32(rows * d);
  const rstd = scratchF32(rows);
  const fd = f(d);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    const mean = f(sum32(x, o, d) / fd);
    let sq = 0;
    for (let j = 0; j < d; j++) {
      const c = f(x[o + j]! - mean);
      xhat[o + j] = c;
      sq = f(sq + f(c * c));
    }
    const rs = f(1 / f(Math.sqrt(f(f(sq / fd) + LN_EPSILON))));
    rstd[r] = rs;
    for (let j = 0; j < d; j++) {
      const h = f(xhat[o + j]! * rs);
      xhat[o + j] = h;
      y[o + j] = f(f(h * g[j]!) + b[j]!);
    }
  }
  return { y, xhat, rstd };
}

/**
 * Backward of layerNorm: per row dxhat = f(dy * g), ma = f(sum(dxhat)/d), mb = f(sum(f(dxhat * xhat))/d),
 * dx = f(rstd * f(f(dxhat - ma) - f(xhat * mb))); dg_j = column fold over rows ascending of f(dy * xhat),
 * db_j = column fold of dy.
 */
export function layerNormBackRef(dy: Float32Array, xhat: Float32Array, rstd: Float32Array, g: Float32Array, rows: number, d: number): { dx: Float32Array; dg: Float32Array; db: Float32Array } {
  if (dy.length !== rows * d || xhat.length !== rows * d || rstd.length !== rows || g.length !== d) throw new RangeError(`layerNormBack: needs dy, xhat [${rows},${d}], rstd [${rows}], g [${d}]`);
  const dx = scratchF32(rows * d); // every element written below
  const dg = new Float32Array(d);
  const db = new Float32Array(d);
  const fd = f(d);
  const t = new Float32Array(d);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let sa = 0, sb = 0;
    for (let j = 0; j < d; j++) {
      const dh = f(dy[o + j]! * g[j]!);
      t[j] = dh;
      sa = f(sa + dh);
      sb = f(sb + f(dh * xhat[o + j]!));
      dg[j] = f(dg[j]! + f(dy[o + j]! * xhat[o + j]!));
      db[j] = f(db[j]! + dy[o + j]!);
    }
    const ma = f(sa / fd), mb = f(sb / fd), rs = rstd[r]!;
    for (let j = 0; j < d; j++) dx[o + j] = f(rs * f(f(t[j]! - ma) - f(xhat[o + j]! * mb)));
  }
  return { dx, dg, db };
}

/**
 * One logit row z[o .. o+V) of the cross-entropy: m = its max (a NaN wins, the first index on ties) with its argmax,
 * e_j = exp32(f(z_j - m)) written to out[eo + j], and s = the float32 fold of the e_j in j order. The one definition of
 * these ops for softmaxXentRef and distillation's hard-label term (ml/distill/loss.ts).
 */
export function rowExpSum(z: Float32Array, o: number, V: number, out: Float32Array, eo: number): { m: number; arg: number; s: number } {
  let m = z[o]!;
  let arg = 0;
  for (let j = 1; j < V; j++) {
    const v = z[o + j]!;
    if (v > m || v !== v) {
      m = v;
      arg = j;
    }
  }
  let s = 0;
  for (let j = 0; j < V; j++) {
    const e = exp32(f(z[o + j]! - m));
    out[eo + j] = e;
    s = f(s + e);
  }
  return { m, arg, s };
}

/**
 * Softmax cross-entropy of `rows` logit rows of width V against `targets`: per row m = max (as
 * causalSoftmax), e = exp32(f(z - m)), s = fold of e, p = f(e / s), row loss = f(f(log32(s) + m) - z_y);
 * loss = f(fold of row losses / rows) (rows ascending); dz = f(f(p - onehot) / rows). `rowLoss`, when
 * given, receives each row's loss.
 */
export function softmaxXentRef(z: Float32Array, targets: ArrayLike<number>, rows: number, V: number, rowLoss?: Float32Array): { loss: number; dz: Float32Array; correct: number } {
  if (z.length !== rows * V || targets.length !== rows) throw new RangeError(`softmaxXent: needs logits [${rows},${V}] and ${rows} targets`);
  const dz = new Float32Array(rows * V);
  const fr = f(rows);
  let total = 0;
  let correct = 0;
  for (let r = 0; r < rows; r++) {
    const o = r * V;
    const y = targets[r]!;
    const { m, arg, s } = rowExpSum(z, o, V, dz, o);
    if (arg === y) correct++;
    for (let j = 0; j < V; j++) dz[o + j] = f(f(f(dz[o + j]! / s) - (j === y ? 1 : 0)) / fr);
    const lr = f(f(log32(s) + m) - z[o + y]!);
    if (rowLoss) rowLoss[r] = lr;
    total = f(total + lr);
  }
  return { loss: f(total / fr), dz, correct };
}
