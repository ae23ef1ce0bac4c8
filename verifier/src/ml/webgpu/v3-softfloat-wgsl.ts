/**
 * The integer soft-float of numerics bitwise-v3's WGSL kernels (kernels/reference-v3.ts "Elementwise ops"): every
 * float32 operation of the reference (+, -, *, /, sqrt) computed on the operands' u32 bit patterns, correctly rounded
 * to nearest-even with gradual underflow, exactly as JavaScript's `Math.fround` of the float64 operation, and exp32
 * and log32 (transformer-ref.ts's algorithms op for op). The WGSL contains NO floating-point instruction, so nothing
 * a WGSL implementation may do to f32 reaches it: contraction of a*b+c into an FMA (allowed by WGSL, done by NVIDIA),
 * flushing subnormals (allowed), division and sqrt to 2.5 ulp (WGSL's accuracy), assuming NaN and Inf never occur
 * (allowed). What WGSL does define exactly is all it uses: wrapping u32 +, -, *, shifts below 32,
 * countLeadingZeros, comparisons, select.
 *
 * It follows Berkeley SoftFloat 3's f32 routines (roundPackToF32, addMags/subMags, mul, div with a restoring
 * division, sqrt by a bit-by-bit integer square root): a significand with 7 rounding bits below the kept 24, the
 * bits shifted out ORed into the last ("jamming"), round to nearest with ties to even, overflow to Inf. Any NaN
 * result is the canonical 0x7fc00000 (the sha256-v2 digest hashes every NaN alike). The kernels that use it:
 * v3-elementwise-wgsl.ts.
 */

const f = Math.fround;
const cf = new Float32Array(1);
const cu = new Uint32Array(cf.buffer);
/** `0x...u`: the float32 bit pattern of x as a WGSL u32 literal. */
export function b(x: number): string {
  cf[0] = f(x);
  return `0x${cu[0]!.toString(16)}u`;
}

// exp32/log32 constants: transformer-ref.ts's (rounded to float32 there as here)
const LOG2E = 1.44269504088896341;
const LN2_HI = 0.693359375;
const LN2_LO = -2.12194440e-4;
const EXP_P = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1];
const LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1];
const SQRTHF = 0.707106781186547524;

/** Horner's rule unrolled (WGSL const arrays cannot be indexed by a loop variable on every compiler). */
function horner(acc: string, x: string, coeffs: number[]): string {
  return coeffs.slice(1).map((c) => `  ${acc} = sf_add(sf_mul(${acc}, ${x}), ${b(c)});`).join("\n");
}

export const SOFTFLOAT_WGSL = /* wgsl */ `
const QNAN: u32 = 0x7fc00000u;
const INF: u32 = 0x7f800000u;
const ONE: u32 = 0x3f800000u;

fn is_nan(x: u32) -> bool { return (x & 0x7fffffffu) > INF; }
fn bitu(c: bool) -> u32 { return select(0u, 1u, c); }

// v >> n with every bit shifted out ORed into bit 0
fn shr_jam(v: u32, n: u32) -> u32 {
  if (n == 0u) { return v; }
  if (n >= 31u) { return bitu(v != 0u); }
  return (v >> n) | bitu((v << (32u - n)) != 0u);
}

// the 64-bit product a*b as (hi, lo), from 16-bit halves
fn mul64(a: u32, b: u32) -> vec2<u32> {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let ll = al * bl;
  let lh = al * bh;
  let mid = lh + ah * bl;
  let midCarry = bitu(mid < lh);
  let lo = ll + (mid << 16u);
  return vec2<u32>(ah * bh + (mid >> 16u) + (midCarry << 16u) + bitu(lo < ll), lo);
}

// SoftFloat roundPackToF32: the value sig * 2^(e - 156), sig < 2^31 (leading one at bit 30 for a normal
// result), rounded to nearest even on the 7 bits below the kept 24; gradual underflow, overflow to Inf
fn round_pack(s: u32, e0: i32, sig0: u32) -> u32 {
  var e = e0;
  var sig = sig0;
  var roundBits = sig & 0x7fu;
  if (e < 0) {
    sig = shr_jam(sig, u32(-e));
    e = 0;
    roundBits = sig & 0x7fu;
  } else if (e > 0xfd || (e == 0xfd && sig + 0x40u >= 0x80000000u)) {
    return (s << 31u) | INF;
  }
  sig = (sig + 0x40u) >> 7u;
  if (roundBits == 0x40u) { sig = sig & 0xfffffffeu; }
  if (sig == 0u) { e = 0; }
  return (s << 31u) + (u32(e) << 23u) + sig;
}

// a finite non-zero magnitude as (exponent, significand with its leading one at bit 23): value = sig * 2^(e - 150)
fn unpack(m: u32) -> vec2<i32> {
  let ex = m >> 23u;
  if (ex != 0u) { return vec2<i32>(i32(ex), i32((m & 0x7fffffu) | 0x800000u)); }
  let sh = countLeadingZeros(m) - 8u;
  return vec2<i32>(1 - i32(sh), i32(m << sh));
}

fn sf_add(a: u32, b: u32) -> u32 {
  if (is_nan(a) || is_nan(b)) { return QNAN; }
  let ma = a & 0x7fffffffu;
  let mb = b & 0x7fffffffu;
  if (ma == INF || mb == INF) {
    if (ma == INF && mb == INF && a != b) { return QNAN; }
    return select(b, a, ma == INF);
  }
  if (ma == 0u && mb == 0u) { return a & b & 0x80000000u; } // -0 only for -0 + -0
  if (mb == 0u) { return a; }
  if (ma == 0u) { return b; }
  var x = a;
  var y = b;
  if (mb > ma) { x = b; y = a; }
  let ex = max((x >> 23u) & 0xffu, 1u);
  let ey = max((y >> 23u) & 0xffu, 1u);
  // value = sig * 2^(e - 156) after the shift by 6; a subnormal has exponent 1 and no implicit bit
  let sx = ((x & 0x7fffffu) | select(0u, 0x800000u, ((x >> 23u) & 0xffu) != 0u)) << 6u;
  let sy = shr_jam(((y & 0x7fffffu) | select(0u, 0x800000u, ((y >> 23u) & 0xffu) != 0u)) << 6u, ex - ey);
  var sum: u32;
  if ((x >> 31u) == (y >> 31u)) {
    sum = sx + sy;
  } else {
    sum = sx - sy;
    if (sum == 0u) { return 0u; } // x - x = +0 under round to nearest
  }
  let sh = countLeadingZeros(sum) - 1u;
  return round_pack(x >> 31u, i32(ex) - i32(sh), sum << sh);
}

fn sf_sub(a: u32, b: u32) -> u32 { return sf_add(a, b ^ 0x80000000u); }

fn sf_mul(a: u32, b: u32) -> u32 {
  if (is_nan(a) || is_nan(b)) { return QNAN; }
  let s = (a ^ b) >> 31u;
  let ma = a & 0x7fffffffu;
  let mb = b & 0x7fffffffu;
  if (ma == INF || mb == INF) {
    if (ma == 0u || mb == 0u) { return QNAN; }
    return (s << 31u) | INF;
  }
  if (ma == 0u || mb == 0u) { return s << 31u; }
  let ua = unpack(ma);
  let ub = unpack(mb);
  let p = mul64(u32(ua.y) << 7u, u32(ub.y) << 8u);
  var sig = p.x | bitu(p.y != 0u);
  var e = ua.x + ub.x - 0x7f;
  if (sig < 0x40000000u) {
    e = e - 1;
    sig = sig << 1u;
  }
  return round_pack(s, e, sig);
}

fn sf_div(a: u32, b: u32) -> u32 {
  if (is_nan(a) || is_nan(b)) { return QNAN; }
  let s = (a ^ b) >> 31u;
  let ma = a & 0x7fffffffu;
  let mb = b & 0x7fffffffu;
  if (ma == INF) {
    if (mb == INF) { return QNAN; }
    return (s << 31u) | INF;
  }
  if (mb == INF) { return s << 31u; }
  if (mb == 0u) {
    if (ma == 0u) { return QNAN; }
    return (s << 31u) | INF;
  }
  if (ma == 0u) { return s << 31u; }
  let ua = unpack(ma);
  let ub = unpack(mb);
  var e = ua.x - ub.x + 0x7e;
  var rem = u32(ua.y);
  let d = u32(ub.y);
  if (rem < d) {
    e = e - 1;
    rem = rem << 1u;
  }
  // restoring division: q = floor(rem * 2^30 / d) in [2^30, 2^31), the remainder's non-zeroness jammed into bit 0
  var q: u32 = 0u;
  for (var i: u32 = 0u; i < 31u; i = i + 1u) {
    q = q << 1u;
    if (rem >= d) {
      rem = rem - d;
      q = q | 1u;
    }
    rem = rem << 1u;
  }
  return round_pack(s, e, q | bitu(rem != 0u));
}

fn sf_sqrt(a: u32) -> u32 {
  if (is_nan(a)) { return QNAN; }
  if ((a & 0x7fffffffu) == 0u) { return a; } // sqrt(-0) = -0
  if ((a >> 31u) != 0u) { return QNAN; }
  if (a == INF) { return INF; }
  let ua = unpack(a);
  // a = sig * 2^E with E = e - 150; make E even with sig in [2^24, 2^26), then r = floor(sqrt(sig * 2^36)) in [2^30, 2^31)
  let E = ua.x - 150;
  var sig = u32(ua.y);
  var Ee: i32;
  if ((E & 1) != 0) {
    sig = sig << 1u;
    Ee = E - 1;
  } else {
    sig = sig << 2u;
    Ee = E - 2;
  }
  let radHi = sig << 4u; // the radicand sig * 2^36 is (radHi, 0)
  var r: u32 = 0u;
  for (var k: u32 = 0u; k < 31u; k = k + 1u) {
    let c = r | (0x40000000u >> k);
    let p = mul64(c, c);
    if (p.x < radHi || (p.x == radHi && p.y == 0u)) { r = c; }
  }
  let p = mul64(r, r);
  let inexact = p.x != radHi || p.y != 0u;
  return round_pack(0u, Ee / 2 + 138, r | bitu(inexact));
}

// a > b as JavaScript compares numbers (false when either is NaN; +0 and -0 equal)
fn sf_gt(a: u32, b: u32) -> bool {
  if (is_nan(a) || is_nan(b)) { return false; }
  if (((a | b) & 0x7fffffffu) == 0u) { return false; }
  let ka = select(a | 0x80000000u, ~a, (a >> 31u) != 0u);
  let kb = select(b | 0x80000000u, ~b, (b >> 31u) != 0u);
  return ka > kb;
}

// an integer |n| < 2^24 as float32 (exact)
fn i2f(n: i32) -> u32 {
  if (n == 0) { return 0u; }
  let s = bitu(n < 0);
  let m = u32(abs(n));
  let sh = countLeadingZeros(m) - 8u; // leading one to bit 23
  return (s << 31u) | ((u32(150) - sh) << 23u) | ((m << sh) & 0x7fffffu);
}

// Math.floor of a finite float32 as an integer (|x| < 2^31 required by the callers)
fn floor_int(x: u32) -> i32 {
  let m = x & 0x7fffffffu;
  let neg = (x >> 31u) != 0u;
  let e = i32(m >> 23u);
  if (e < 127) { return select(0, -1, neg && m != 0u); } // |x| < 1
  let sig = (m & 0x7fffffu) | 0x800000u;
  var ip: u32;
  var frac = false;
  if (e >= 150) {
    ip = sig << u32(e - 150);
  } else {
    let sh = u32(150 - e);
    ip = sig >> sh;
    frac = (sig & ((1u << sh) - 1u)) != 0u;
  }
  if (neg) { return -i32(ip) - select(0, 1, frac); }
  return i32(ip);
}

// transformer-ref.ts exp32, op for op
fn exp32(x: u32) -> u32 {
  if (is_nan(x)) { return QNAN; }
  if (sf_gt(x, ${b(88)})) { return INF; }
  if (sf_gt(${b(-87)}, x)) { return 0u; }
  let n = floor_int(sf_add(sf_mul(x, ${b(LOG2E)}), 0x3f000000u));
  let nf = i2f(n);
  let r = sf_sub(sf_sub(x, sf_mul(nf, ${b(LN2_HI)})), sf_mul(nf, ${b(LN2_LO)}));
  var p: u32 = ${b(EXP_P[0]!)};
${horner("p", "r", EXP_P)}
  let y = sf_add(sf_add(sf_mul(p, sf_mul(r, r)), r), ONE);
  return sf_mul(y, u32(n + 127) << 23u);
}

// transformer-ref.ts log32 (cephes logf), op for op
fn log32(x: u32) -> u32 {
  if (is_nan(x)) { return QNAN; }
  if ((x & 0x7fffffffu) == 0u) { return 0xff800000u; }
  if ((x >> 31u) != 0u) { return QNAN; }
  if (x == INF) { return INF; }
  var v = x;
  var e: i32 = 0;
  if (v < 0x00800000u) {
    v = sf_mul(v, 0x4b800000u); // 2^24, exact
    e = -24;
  }
  e = e + i32((v >> 23u) & 0xffu) - 126;
  var m = (v & 0x007fffffu) | 0x3f000000u;
  if (m < ${b(SQRTHF)}) { // both positive: the bit patterns order as the values
    e = e - 1;
    m = sf_sub(sf_add(m, m), ONE);
  } else {
    m = sf_sub(m, ONE);
  }
  let z = sf_mul(m, m);
  var y: u32 = ${b(LOG_P[0]!)};
${horner("y", "m", LOG_P)}
  y = sf_mul(sf_mul(y, m), z);
  let fe = i2f(e);
  y = sf_add(y, sf_mul(fe, ${b(LN2_LO)}));
  y = sf_add(y, sf_mul(0xbf000000u, z));
  let r = sf_add(m, y);
  return sf_add(r, sf_mul(fe, ${b(LN2_HI)}));
}
`;

