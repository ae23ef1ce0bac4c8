/**
 * The integer construction of the WebGPU matmul (matmul.wgsl), in TypeScript, line for line: the reference
 * numerics of the "bitwise" mnist-mlp (kernels/reference.ts `matmulRef`: per 48-wide block of k, exact
 * float32 x float32 products summed in float64 from +0, the block sum added to C in float64 and rounded to
 * float32) computed with 32-bit unsigned integer operations only.
 *
 * Why integers: WGSL has no f64, and a GPU compiler may contract a*b+c into one fused rounding (NVIDIA's
 * does; SwiftShader's does not) and may flush subnormals. None of that applies to u32 arithmetic, which
 * WGSL defines exactly (wrapping add/sub/mul, shifts below 32, countLeadingZeros). The kernel reads the
 * float32 operands as u32 bit patterns, never executes a floating-point instruction, and writes u32 bits,
 * so its results cannot depend on fusion, denormal mode or the compiler: it is a soft-float that implements
 * IEEE-754 binary64 addition (round to nearest, ties to even) and the final binary32 rounding.
 *
 * This file exists so the construction can be checked against JavaScript's own float64 on millions of
 * inputs without a GPU (test/ml/webgpu-exact.test.ts); the WGSL is checked against the reference on an
 * adapter by scripts/gpu-check.ts. Keep the two in step.
 *
 * Value domain (why no f64 subnormals or overflow are handled): a product of two float32 is m * 2^e with
 * m < 2^48 and e >= -298, |p| < 2^256; a block sum of at most 48 such products is a multiple of 2^-298 below
 * 2^262, so every finite intermediate is 0 or a normal binary64. Inf and NaN are tracked as a class beside
 * the finite part; every NaN result is written as the canonical 0x7fc00000.
 */

/** Finite binary64 value (-1)^s * m * 2^e, m = hi * 2^32 + lo with 2^52 <= m < 2^53, or m = 0 (a zero of sign s). */
type F = { s: number; e: number; hi: number; lo: number };

/** Special classes of a value. */
export const FINITE = 0;
export const POS_INF = 1;
export const NEG_INF = 2;
export const NAN = 3;
export const CANONICAL_NAN = 0x7fc00000;

const u = (x: number) => x >>> 0;

function clz64(hi: number, lo: number): number {
  return hi !== 0 ? Math.clz32(hi) : 32 + Math.clz32(lo);
}

/** (hi, lo) << n for 0 <= n < 64. */
function shl64(hi: number, lo: number, n: number): [number, number] {
  if (n === 0) return [hi, lo];
  if (n >= 32) return [u(lo << (n - 32)), 0];
  return [u((hi << n) | (lo >>> (32 - n))), u(lo << n)];
}

/** (hi, lo) >> n with every shifted-out bit ORed into bit 0 ("jamming"), n >= 0. */
function shrJam64(hi: number, lo: number, n: number): [number, number] {
  if (n === 0) return [hi, lo];
  if (n >= 64) return [0, hi !== 0 || lo !== 0 ? 1 : 0];
  if (n >= 32) {
    const m = n - 32;
    const lost = m === 0 ? lo : u(lo | (hi << (32 - m)));
    const r = m === 0 ? hi : hi >>> m;
    return [0, u(r | (lost !== 0 ? 1 : 0))];
  }
  const lost = u(lo << (32 - n));
  return [hi >>> n, u((lo >>> n) | (hi << (32 - n)) | (lost !== 0 ? 1 : 0))];
}

function add64(ah: number, al: number, bh: number, bl: number): [number, number] {
  const lo = u(al + bl);
  return [u(ah + bh + (lo < al ? 1 : 0)), lo];
}

function sub64(ah: number, al: number, bh: number, bl: number): [number, number] {
  const lo = u(al - bl);
  return [u(ah - bh - (al < bl ? 1 : 0)), lo];
}

/** The class of a float32 bit pattern. */
export function classOf(bits: number): number {
  if ((bits & 0x7f800000) !== 0x7f800000) return FINITE;
  if ((bits & 0x007fffff) !== 0) return NAN;
  return bits >>> 31 ? NEG_INF : POS_INF;
}

/** The class of a + b for classes a, b (inf - inf is NaN). */
export function addClass(a: number, b: number): number {
  if (a === NAN || b === NAN) return NAN;
  if ((a === POS_INF && b === NEG_INF) || (a === NEG_INF && b === POS_INF)) return NAN;
  return a !== FINITE ? a : b;
}

/** A finite float32 bit pattern as F (exact). */
function fromF32(bits: number): F {
  const s = bits >>> 31;
  const ex = (bits >>> 23) & 0xff;
  const frac = bits & 0x7fffff;
  const m = ex === 0 ? frac : frac | 0x800000;
  const e = ex === 0 ? -149 : ex - 150;
  if (m === 0) return { s, e: 0, hi: 0, lo: 0 };
  const n = Math.clz32(m) + 21; // top bit to 52 (clz64 of m is 32 + clz32(m)); m < 2^24, so n >= 29
  const [hi, lo] = shl64(0, m, n);
  return { s, e: e - n, hi, lo };
}

/** The class of a * b for float32 bit patterns (NaN for 0 * inf). */
export function mulClass(a: number, b: number): number {
  const ca = classOf(a);
  const cb = classOf(b);
  if (ca === NAN || cb === NAN) return NAN;
  if (ca === FINITE && cb === FINITE) return FINITE;
  const zeroA = (a & 0x7fffffff) === 0;
  const zeroB = (b & 0x7fffffff) === 0;
  if (zeroA || zeroB) return NAN;
  return ((a ^ b) >>> 31) !== 0 ? NEG_INF : POS_INF;
}

/** The exact product of two finite float32 bit patterns (48 significant bits at most: no rounding). */
function mulExact(a: number, b: number): F {
  const fa = fromF32(a);
  const fb = fromF32(b);
  const s = (fa.s ^ fb.s) >>> 0;
  if ((fa.hi | fa.lo) === 0 || (fb.hi | fb.lo) === 0) return { s, e: 0, hi: 0, lo: 0 };
  // the 24-bit significands back (fromF32 put their top bit at 52: bits 29..52)
  const ma = u((fa.hi << 3) | (fa.lo >>> 29));
  const mb = u((fb.hi << 3) | (fb.lo >>> 29));
  const ea = fa.e + 29;
  const eb = fb.e + 29;
  // ma * mb (< 2^48) from 16-bit halves: ah, bh < 2^8
  const ah = ma >>> 16, al = ma & 0xffff, bh = mb >>> 16, bl = mb & 0xffff;
  const mid = ah * bl + al * bh; // < 2^25
  const low = al * bl; // < 2^32
  let [hi, lo] = add64(ah * bh, low, mid >>> 16, u((mid & 0xffff) << 16));
  // normalise the product to 2^52 <= m < 2^53 (exact: 2^47 <= m < 2^48 since both significands are normal here)
  const n = clz64(hi, lo) - 11;
  [hi, lo] = shl64(hi, lo, n);
  return { s, e: ea + eb - n, hi, lo };
}

/** RN64(x + y): binary64 addition, round to nearest, ties to even (SoftFloat's method: 10 extra bits, jamming). */
function add(x: F, y: F): F {
  if ((y.hi | y.lo) === 0) {
    if ((x.hi | x.lo) === 0) return { s: x.s & y.s, e: 0, hi: 0, lo: 0 };
    return x;
  }
  if ((x.hi | x.lo) === 0) return y;
  // order by magnitude: |x| >= |y|
  if (x.e < y.e || (x.e === y.e && (x.hi < y.hi || (x.hi === y.hi && x.lo < y.lo)))) [x, y] = [y, x];
  let [xh, xl] = shl64(x.hi, x.lo, 10); // top bit at 62
  const [yh0, yl0] = shl64(y.hi, y.lo, 10);
  const [yh, yl] = shrJam64(yh0, yl0, x.e - y.e);
  let e = x.e;
  if (x.s === y.s) {
    [xh, xl] = add64(xh, xl, yh, yl);
    if (xh >>> 31) {
      [xh, xl] = shrJam64(xh, xl, 1);
      e += 1;
    }
  } else {
    [xh, xl] = sub64(xh, xl, yh, yl);
    if ((xh | xl) === 0) return { s: 0, e: 0, hi: 0, lo: 0 }; // exact cancellation is +0 under ties-to-even
    const n = clz64(xh, xl) - 1;
    [xh, xl] = shl64(xh, xl, n);
    e -= n;
  }
  // round the 63-bit significand to 53 bits: 10 round bits, ties to even
  const roundBits = xl & 0x3ff;
  [xh, xl] = add64(xh, xl, 0, 0x200);
  let mh = xh >>> 10;
  let ml = u((xl >>> 10) | (xh << 22));
  if (roundBits === 0x200) ml = u(ml & ~1); // a tie: back to even
  if (mh >>> 21) {
    // the increment carried to 2^53
    [mh, ml] = [mh >>> 1, u((ml >>> 1) | (mh << 31))];
    e += 1;
  }
  return { s: x.s, e, hi: mh, lo: ml };
}

/** RN32(x): a finite binary64 F rounded to float32 bits (ties to even; overflow to inf, gradual underflow). */
function toF32(x: F): number {
  const sign = u(x.s << 31);
  if ((x.hi | x.lo) === 0) return sign;
  const E = x.e + 52; // unbiased exponent of the leading bit
  if (E > 127) return u(sign | 0x7f800000);
  const shift = E >= -126 ? 29 : -149 - x.e; // keep 24 bits, or down to 2^-149
  if (shift >= 64) return sign; // below 2^-150: rounds to zero
  // r = m >> shift, rem = the shifted-out bits compared with half
  let r: number;
  let above: boolean; // rem > half
  let tie: boolean; // rem == half
  if (shift >= 32) {
    const k = shift - 32;
    r = k === 0 ? x.hi : x.hi >>> k;
    const remHi = k === 0 ? 0 : x.hi & ((1 << k) - 1); // bits k-1..0 of hi, then lo
    const halfHi = k === 0 ? 0 : u(1 << (k - 1));
    if (k === 0) {
      above = x.lo > 0x80000000;
      tie = x.lo === 0x80000000;
    } else {
      above = remHi > halfHi || (remHi === halfHi && x.lo !== 0);
      tie = remHi === halfHi && x.lo === 0;
    }
  } else {
    r = u((x.lo >>> shift) | (x.hi << (32 - shift)));
    const rem = x.lo & (u(1 << shift) - 1);
    const half = u(1 << (shift - 1));
    above = rem > half;
    tie = rem === half;
  }
  if (above || (tie && (r & 1) === 1)) r += 1;
  // normal: (E+126) << 23 plus r (r carries the hidden bit; r = 2^24 steps the exponent); subnormal: r itself
  const mag = E >= -126 ? u(((E + 126) << 23) + r) : r;
  if (mag >= 0x7f800000) return u(sign | 0x7f800000);
  return u(sign | mag);
}

/** Block width of the reference summation order (kernels/reference.ts MATMUL_BLOCK). */
export const EXACT_BLOCK = 48;

/**
 * C = A . B in the order of kernels/reference.ts `matmulRef`, by the integer construction above; NaN results
 * are canonical. Strides as matmulRef: A[i,k] = a[i*aRow + k*aInner], B[k,j] = b[k*bInner + j*bCol].
 */
export function exactMatmulBits(a: Uint32Array, b: Uint32Array, M: number, K: number, N: number, aRow: number, aInner: number, bInner: number, bCol: number): Uint32Array {
  const c = new Uint32Array(M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) c[i * N + j] = exactDot(a, b, i * aRow, aInner, j * bCol, bInner, K);
  }
  return c;
}

/** One element of exactMatmulBits: sum over k of a[a0 + k*aStep] * b[b0 + k*bStep] in blocks of 48. */
export function exactDot(a: Uint32Array, b: Uint32Array, a0: number, aStep: number, b0: number, bStep: number, K: number): number {
  let c = 0; // +0
  for (let k0 = 0; k0 < K; k0 += EXACT_BLOCK) {
    const kEnd = Math.min(k0 + EXACT_BLOCK, K);
    let sumCls = FINITE;
    let sum: F = { s: 0, e: 0, hi: 0, lo: 0 };
    for (let k = k0; k < kEnd; k++) {
      const x = a[a0 + k * aStep]!;
      const y = b[b0 + k * bStep]!;
      sumCls = addClass(sumCls, mulClass(x, y));
      if (sumCls === FINITE) sum = add(sum, mulExact(x, y));
    }
    const cls = addClass(classOf(c), sumCls);
    if (cls === NAN) c = CANONICAL_NAN;
    else if (cls === POS_INF) c = 0x7f800000;
    else if (cls === NEG_INF) c = 0xff800000;
    else c = toF32(add(fromF32(c), sum));
  }
  return c;
}
