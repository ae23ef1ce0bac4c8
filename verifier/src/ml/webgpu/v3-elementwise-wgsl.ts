/**
 * The WGSL elementwise ops of numerics bitwise-v3 (kernels/reference-v3.ts "Elementwise ops"): every float32
 * operation of the reference (+, -, *, /, sqrt) is computed by an integer soft-float on the operands' u32 bit
 * patterns, correctly rounded to nearest-even with gradual underflow, exactly as JavaScript's `Math.fround` of
 * the float64 operation. The shaders contain NO floating-point instruction, so nothing a WGSL implementation
 * may do to f32 reaches them: contraction of a*b+c into an FMA (allowed by WGSL, done by NVIDIA), flushing
 * subnormals (allowed), division and sqrt to 2.5 ulp (WGSL's accuracy), assuming NaN and Inf never occur
 * (allowed). What WGSL does define exactly is all they use: wrapping u32 +, -, *, shifts below 32,
 * countLeadingZeros, comparisons, select.
 *
 * The soft-float follows Berkeley SoftFloat 3's f32 routines (roundPackToF32, addMags/subMags, mul, div with a
 * restoring division, sqrt by a bit-by-bit integer square root): a significand with 7 rounding bits below
 * the kept 24, the bits shifted out ORed into the last ("jamming"), round to nearest with ties to even, overflow
 * to Inf. Any NaN result is the canonical 0x7fc00000 (the sha256-v2 digest hashes every NaN alike).
 *
 * exp32 and log32 are transformer-ref.ts's algorithms op for op; the row kernels (causal softmax, layer norm,
 * softmax cross-entropy) fold each row in one invocation in the reference's order; Adam is one invocation per
 * element. The constants are the reference's float32 constants, injected as bit patterns.
 */

const f = Math.fround;
const cf = new Float32Array(1);
const cu = new Uint32Array(cf.buffer);
/** `0x...u`: the float32 bit pattern of x as a WGSL u32 literal. */
function b(x: number): string {
  cf[0] = f(x);
  return `0x${cu[0]!.toString(16)}u`;
}

/** The ops of the elementwise kernel, in op-code order. */
export const V3_OPS = ["add", "sub", "mul", "div", "sqrt", "exp32", "log32"] as const;
export type V3Op = (typeof V3_OPS)[number];

// exp32/log32 constants: transformer-ref.ts's (rounded to float32 there as here)
const LOG2E = 1.44269504088896341;
const LN2_HI = 0.693359375;
const LN2_LO = -2.12194440e-4;
const EXP_P = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1];
const LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1];
const SQRTHF = 0.707106781186547524;
const LN_EPSILON = 1e-5;

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

/** One op per element: OUT[i] = op(X[i], Y[i]) (op codes: V3_OPS order). */
export const V3_ELEMENTWISE_WGSL = /* wgsl */ `
${SOFTFLOAT_WGSL}
struct P { n: u32, op: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> X: array<u32>;
@group(0) @binding(1) var<storage, read> Y: array<u32>;
@group(0) @binding(2) var<storage, read_write> OUT: array<u32>;
@group(0) @binding(3) var<uniform> d: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x;
  if (i >= d.n) { return; }
  let x = X[i];
  let y = Y[i];
  var r: u32;
  switch (d.op) {
    case 0u: { r = sf_add(x, y); }
    case 1u: { r = sf_sub(x, y); }
    case 2u: { r = sf_mul(x, y); }
    case 3u: { r = sf_div(x, y); }
    case 4u: { r = sf_sqrt(x); }
    case 5u: { r = exp32(x); }
    default: { r = log32(x); }
  }
  OUT[i] = r;
}
`;

/** The uniform of every row kernel: rows, width, then the kernel's scalars (float32 bits). */
const ROW_HEAD = `struct P { rows: u32, width: u32, p0: u32, p1: u32, p2: u32, p3: u32, p4: u32, p5: u32, p6: u32, p7: u32, pad0: u32, pad1: u32 }`;

/** `bound`: the number of invocations that do work (d.rows unless the kernel says otherwise). */
function rowKernel(bindings: string[], body: string, bound = "d.rows"): string {
  const decls = bindings.map((name, i) => `@group(0) @binding(${i}) var<storage, read> ${name}: array<u32>;`).join("\n");
  return /* wgsl */ `
${SOFTFLOAT_WGSL}
${ROW_HEAD}
${decls}
@group(0) @binding(${bindings.length}) var<storage, read_write> OUT: array<u32>;
@group(0) @binding(${bindings.length + 1}) var<uniform> d: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let r = g.x;
  if (r >= ${bound}) { return; }
${body}
}
`;
}

export type V3RowKernel = "causalSoftmax" | "causalSoftmaxBack" | "layerNorm" | "layerNormBack" | "softmaxXent" | "adam";

/** Invocations a row kernel needs: one per row, except layerNormBack (one per row for dx, then one per column for dg, db). */
export function v3RowInvocations(kernel: V3RowKernel, rows: number, width: number): number {
  return kernel === "layerNormBack" ? rows + width : rows;
}

/**
 * The row kernels, one invocation per row (per element for adam), each the reference-v3.ts function of the
 * same name op for op (read them for the folds' order). Outputs, packed in OUT:
 *   causalSoftmax      S [rows = count*T, width T]   -> P [rows*T]
 *   causalSoftmaxBack  P, dP [rows = count*T, T]      -> dS [rows*T]
 *   layerNorm      X [rows, d], G [d], B [d]         -> y [rows*d], xhat [rows*d], rstd [rows]
 *   layerNormBack  dY, xhat [rows, d], rstd [rows], G [d] -> dx [rows*d], dg [d], db [d] (dg, db: column folds
 *                  over the rows ascending, one invocation per column after the row invocations)
 *   softmaxXent    Z [rows, V], targets [rows] (u32) -> dz [rows*V], row loss [rows], correct [rows] (0/1); p0 = f(rows)
 *   adam           W, M, V, G [rows = n, width 1]    -> w' [n], m' [n], v' [n]; p0..p7 = b1, b2, 1-b1, 1-b2, lr, eps, c1, c2
 */
export const V3_ROW_WGSL: Record<V3RowKernel, string> = {
  causalSoftmax: rowKernel(["S"], `
  let T = d.width;
  let o = r * T;
  let i = r % T;
  var m = S[o];
  for (var j: u32 = 1u; j <= i; j = j + 1u) {
    let v = S[o + j];
    if (sf_gt(v, m) || is_nan(v)) { m = v; }
  }
  var sum: u32 = 0u;
  for (var j: u32 = 0u; j <= i; j = j + 1u) {
    let e = exp32(sf_sub(S[o + j], m));
    OUT[o + j] = e;
    sum = sf_add(sum, e);
  }
  for (var j: u32 = 0u; j <= i; j = j + 1u) { OUT[o + j] = sf_div(OUT[o + j], sum); }
  for (var j: u32 = i + 1u; j < T; j = j + 1u) { OUT[o + j] = 0u; }`),

  causalSoftmaxBack: rowKernel(["PR", "DP"], `
  let T = d.width;
  let o = r * T;
  let i = r % T;
  var rr: u32 = 0u;
  for (var j: u32 = 0u; j <= i; j = j + 1u) { rr = sf_add(rr, sf_mul(DP[o + j], PR[o + j])); }
  for (var j: u32 = 0u; j <= i; j = j + 1u) { OUT[o + j] = sf_mul(PR[o + j], sf_sub(DP[o + j], rr)); }
  for (var j: u32 = i + 1u; j < T; j = j + 1u) { OUT[o + j] = 0u; }`),

  layerNormBack: rowKernel(["DY", "XH", "RSTD", "G"], `
  let w = d.width;
  let rows = d.rows;
  if (r >= rows) { // column j: dg_j, db_j folded over the rows in ascending order from +0
    let j = r - rows;
    var dg: u32 = 0u;
    var db: u32 = 0u;
    for (var q: u32 = 0u; q < rows; q = q + 1u) {
      dg = sf_add(dg, sf_mul(DY[q * w + j], XH[q * w + j]));
      db = sf_add(db, DY[q * w + j]);
    }
    OUT[rows * w + j] = dg;
    OUT[rows * w + w + j] = db;
    return;
  }
  let o = r * w;
  let fd = i2f(i32(w));
  var sa: u32 = 0u;
  var sb: u32 = 0u;
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let dh = sf_mul(DY[o + j], G[j]);
    sa = sf_add(sa, dh);
    sb = sf_add(sb, sf_mul(dh, XH[o + j]));
  }
  let ma = sf_div(sa, fd);
  let mb = sf_div(sb, fd);
  let rs = RSTD[r];
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let dh = sf_mul(DY[o + j], G[j]); // recomputed: the same operation on the same operands, the same bits
    OUT[o + j] = sf_mul(rs, sf_sub(sf_sub(dh, ma), sf_mul(XH[o + j], mb)));
  }`, "d.rows + d.width"),

  layerNorm: rowKernel(["X", "G", "B"], `
  let w = d.width;
  let o = r * w;
  let xh = d.rows * w; // xhat's offset in OUT
  let fd = i2f(i32(w));
  var s: u32 = 0u;
  for (var j: u32 = 0u; j < w; j = j + 1u) { s = sf_add(s, X[o + j]); }
  let mean = sf_div(s, fd);
  var sq: u32 = 0u;
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let c = sf_sub(X[o + j], mean);
    OUT[xh + o + j] = c;
    sq = sf_add(sq, sf_mul(c, c));
  }
  let rs = sf_div(ONE, sf_sqrt(sf_add(sf_div(sq, fd), ${b(LN_EPSILON)})));
  OUT[2u * xh + r] = rs;
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let h = sf_mul(OUT[xh + o + j], rs);
    OUT[xh + o + j] = h;
    OUT[o + j] = sf_add(sf_mul(h, G[j]), B[j]);
  }`),

  softmaxXent: rowKernel(["Z", "TARGET"], `
  let V = d.width;
  let o = r * V;
  let y = TARGET[r];
  let fr = d.p0;
  let lossAt = d.rows * V;
  if (y >= V) { // no such class: the row's outputs are NaN (the caller checks targets first)
    for (var j: u32 = 0u; j < V; j = j + 1u) { OUT[o + j] = QNAN; }
    OUT[lossAt + r] = QNAN;
    OUT[lossAt + d.rows + r] = 0u;
    return;
  }
  var m = Z[o];
  var arg: u32 = 0u;
  for (var j: u32 = 1u; j < V; j = j + 1u) {
    let v = Z[o + j];
    if (sf_gt(v, m) || is_nan(v)) {
      m = v;
      arg = j;
    }
  }
  var s: u32 = 0u;
  for (var j: u32 = 0u; j < V; j = j + 1u) {
    let e = exp32(sf_sub(Z[o + j], m));
    OUT[o + j] = e;
    s = sf_add(s, e);
  }
  for (var j: u32 = 0u; j < V; j = j + 1u) {
    OUT[o + j] = sf_div(sf_sub(sf_div(OUT[o + j], s), select(0u, ONE, j == y)), fr);
  }
  OUT[lossAt + r] = sf_sub(sf_add(log32(s), m), Z[o + y]);
  OUT[lossAt + d.rows + r] = bitu(arg == y);`),

  adam: rowKernel(["W", "M", "V", "G"], `
  let n = d.rows;
  let gi = G[r];
  let mi = sf_add(sf_mul(d.p0, M[r]), sf_mul(d.p2, gi));
  let vi = sf_add(sf_mul(d.p1, V[r]), sf_mul(d.p3, sf_mul(gi, gi)));
  let u = sf_div(sf_div(mi, d.p6), sf_add(sf_sqrt(sf_div(vi, d.p7)), d.p5));
  OUT[r] = sf_sub(W[r], sf_mul(d.p4, u));
  OUT[n + r] = mi;
  OUT[2u * n + r] = vi;`),
};
