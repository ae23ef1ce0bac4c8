/**
 * The WGSL matmul of the webgpu engine: C = A . B with the bits of kernels/reference.ts `matmulRef` (the
 * "bitwise" mnist-mlp numerics), computed with u32 operations only. exact-matmul.ts is the same
 * construction in TypeScript, function for function (read it for the argument); keep the two in step.
 *
 * One invocation per output element C[i,j] and 48-wide block of k; the blocks are dispatched in ascending
 * order (device.ts), each: the block's exact products, k ascending, summed by a binary64 soft-float add
 * (round to nearest, ties to even) from +0, then C = RN32(RN64(C + blockSum)). No split-K, no reduction across
 * invocations, so the workgroup size and the dispatch shape change no bit. Operands and result are float32 bit patterns in array<u32>: the shader
 * contains no floating-point arithmetic at all, so FMA contraction, denormal flushing and fast-math cannot
 * reach it on any driver.
 */

/** Workgroup tile (x over columns j, y over rows i). */
export const WORKGROUP_X = 8;
export const WORKGROUP_Y = 8;

export const MATMUL_WGSL = /* wgsl */ `
struct Dims { M: u32, K: u32, N: u32, aRow: u32, aInner: u32, bInner: u32, bCol: u32, k0: u32 }
@group(0) @binding(0) var<storage, read> A: array<u32>;
@group(0) @binding(1) var<storage, read> B: array<u32>;
@group(0) @binding(2) var<storage, read_write> C: array<u32>;
@group(0) @binding(3) var<uniform> d: Dims;

const FINITE: u32 = 0u;
const POS_INF: u32 = 1u;
const NEG_INF: u32 = 2u;
const NAN: u32 = 3u;
const CANONICAL_NAN: u32 = 0x7fc00000u;
const BLOCK: u32 = 48u;

struct U64 { hi: u32, lo: u32 }
// finite binary64 (-1)^s * m * 2^e, m = hi*2^32 + lo, 2^52 <= m < 2^53, or m = 0 (a zero of sign s)
struct F { s: u32, e: i32, hi: u32, lo: u32 }

fn bit(c: bool) -> u32 { return select(0u, 1u, c); }

fn clz64(v: U64) -> u32 {
  if (v.hi != 0u) { return countLeadingZeros(v.hi); }
  return 32u + countLeadingZeros(v.lo);
}

fn shl64(v: U64, n: u32) -> U64 {
  if (n == 0u) { return v; }
  if (n >= 32u) { return U64(v.lo << (n - 32u), 0u); }
  return U64((v.hi << n) | (v.lo >> (32u - n)), v.lo << n);
}

// v >> n, every shifted-out bit ORed into bit 0
fn shrJam64(v: U64, n: u32) -> U64 {
  if (n == 0u) { return v; }
  if (n >= 64u) { return U64(0u, bit((v.hi | v.lo) != 0u)); }
  if (n >= 32u) {
    let m = n - 32u;
    if (m == 0u) { return U64(0u, v.hi | bit(v.lo != 0u)); }
    let lost = v.lo | (v.hi << (32u - m));
    return U64(0u, (v.hi >> m) | bit(lost != 0u));
  }
  let lost = v.lo << (32u - n);
  return U64(v.hi >> n, (v.lo >> n) | (v.hi << (32u - n)) | bit(lost != 0u));
}

fn add64(a: U64, b: U64) -> U64 {
  let lo = a.lo + b.lo;
  return U64(a.hi + b.hi + bit(lo < a.lo), lo);
}

fn sub64(a: U64, b: U64) -> U64 {
  return U64(a.hi - b.hi - bit(a.lo < b.lo), a.lo - b.lo);
}

fn classOf(x: u32) -> u32 {
  if ((x & 0x7f800000u) != 0x7f800000u) { return FINITE; }
  if ((x & 0x007fffffu) != 0u) { return NAN; }
  return select(POS_INF, NEG_INF, (x >> 31u) != 0u);
}

fn addClass(a: u32, b: u32) -> u32 {
  if (a == NAN || b == NAN) { return NAN; }
  if ((a == POS_INF && b == NEG_INF) || (a == NEG_INF && b == POS_INF)) { return NAN; }
  return select(b, a, a != FINITE);
}

fn mulClass(a: u32, b: u32) -> u32 {
  let ca = classOf(a);
  let cb = classOf(b);
  if (ca == NAN || cb == NAN) { return NAN; }
  if (ca == FINITE && cb == FINITE) { return FINITE; }
  if ((a & 0x7fffffffu) == 0u || (b & 0x7fffffffu) == 0u) { return NAN; }
  return select(POS_INF, NEG_INF, ((a ^ b) >> 31u) != 0u);
}

fn fromF32(x: u32) -> F {
  let s = x >> 31u;
  let ex = (x >> 23u) & 0xffu;
  let frac = x & 0x7fffffu;
  let m = select(frac | 0x800000u, frac, ex == 0u);
  let e = select(i32(ex) - 150, -149, ex == 0u);
  if (m == 0u) { return F(s, 0, 0u, 0u); }
  let n = countLeadingZeros(m) + 21u;
  let v = shl64(U64(0u, m), n);
  return F(s, e - i32(n), v.hi, v.lo);
}

fn mulExact(a: u32, b: u32) -> F {
  let fa = fromF32(a);
  let fb = fromF32(b);
  let s = fa.s ^ fb.s;
  if ((fa.hi | fa.lo) == 0u || (fb.hi | fb.lo) == 0u) { return F(s, 0, 0u, 0u); }
  let ma = (fa.hi << 3u) | (fa.lo >> 29u);
  let mb = (fb.hi << 3u) | (fb.lo >> 29u);
  let ea = fa.e + 29;
  let eb = fb.e + 29;
  let ah = ma >> 16u;
  let al = ma & 0xffffu;
  let bh = mb >> 16u;
  let bl = mb & 0xffffu;
  let mid = ah * bl + al * bh;
  let low = al * bl;
  var p = add64(U64(ah * bh, low), U64(mid >> 16u, (mid & 0xffffu) << 16u));
  let n = clz64(p) - 11u;
  p = shl64(p, n);
  return F(s, ea + eb - i32(n), p.hi, p.lo);
}

fn fadd(x0: F, y0: F) -> F {
  if ((y0.hi | y0.lo) == 0u) {
    if ((x0.hi | x0.lo) == 0u) { return F(x0.s & y0.s, 0, 0u, 0u); }
    return x0;
  }
  if ((x0.hi | x0.lo) == 0u) { return y0; }
  var x = x0;
  var y = y0;
  if (x.e < y.e || (x.e == y.e && (x.hi < y.hi || (x.hi == y.hi && x.lo < y.lo)))) {
    x = y0;
    y = x0;
  }
  var r = shl64(U64(x.hi, x.lo), 10u);
  let ys = shrJam64(shl64(U64(y.hi, y.lo), 10u), u32(x.e - y.e));
  var e = x.e;
  if (x.s == y.s) {
    r = add64(r, ys);
    if ((r.hi >> 31u) != 0u) {
      r = shrJam64(r, 1u);
      e = e + 1;
    }
  } else {
    r = sub64(r, ys);
    if ((r.hi | r.lo) == 0u) { return F(0u, 0, 0u, 0u); }
    let n = clz64(r) - 1u;
    r = shl64(r, n);
    e = e - i32(n);
  }
  let roundBits = r.lo & 0x3ffu;
  r = add64(r, U64(0u, 0x200u));
  var mh = r.hi >> 10u;
  var ml = (r.lo >> 10u) | (r.hi << 22u);
  if (roundBits == 0x200u) { ml = ml & 0xfffffffeu; }
  if ((mh >> 21u) != 0u) {
    ml = (ml >> 1u) | (mh << 31u);
    mh = mh >> 1u;
    e = e + 1;
  }
  return F(x.s, e, mh, ml);
}

fn toF32(x: F) -> u32 {
  let sign = x.s << 31u;
  if ((x.hi | x.lo) == 0u) { return sign; }
  let E = x.e + 52;
  if (E > 127) { return sign | 0x7f800000u; }
  var shift: u32 = 29u;
  if (E < -126) { shift = u32(-149 - x.e); }
  if (shift >= 64u) { return sign; }
  var r: u32;
  var above: bool;
  var tie: bool;
  if (shift >= 32u) {
    let k = shift - 32u;
    if (k == 0u) {
      r = x.hi;
      above = x.lo > 0x80000000u;
      tie = x.lo == 0x80000000u;
    } else {
      r = x.hi >> k;
      let remHi = x.hi & ((1u << k) - 1u);
      let halfHi = 1u << (k - 1u);
      above = remHi > halfHi || (remHi == halfHi && x.lo != 0u);
      tie = remHi == halfHi && x.lo == 0u;
    }
  } else {
    r = (x.lo >> shift) | (x.hi << (32u - shift));
    let rem = x.lo & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    above = rem > half;
    tie = rem == half;
  }
  if (above || (tie && (r & 1u) == 1u)) { r = r + 1u; }
  var mag = r;
  if (E >= -126) { mag = (u32(E + 126) << 23u) + r; }
  if (mag >= 0x7f800000u) { return sign | 0x7f800000u; }
  return sign | mag;
}

@compute @workgroup_size(${WORKGROUP_X}, ${WORKGROUP_Y})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j = gid.x;
  let i = gid.y;
  if (i >= d.M || j >= d.N) { return; }
  let a0 = i * d.aRow;
  let b0 = j * d.bCol;
  // one 48-wide block of k per dispatch (d.k0 = 0, 48, 96, .. in queue order): C holds the sum of the
  // blocks before it, rounded to float32 after each, exactly as the reference; the first block starts from +0
  var c: u32 = 0u;
  if (d.k0 != 0u) { c = C[i * d.N + j]; }
  let kEnd = min(d.k0 + BLOCK, d.K);
  var cls = FINITE;
  var sum = F(0u, 0, 0u, 0u);
  for (var k: u32 = d.k0; k < kEnd; k = k + 1u) {
    let x = A[a0 + k * d.aInner];
    let y = B[b0 + k * d.bInner];
    cls = addClass(cls, mulClass(x, y));
    if (cls == FINITE) { sum = fadd(sum, mulExact(x, y)); }
  }
  let total = addClass(classOf(c), cls);
  if (total == NAN) { c = CANONICAL_NAN; }
  else if (total == POS_INF) { c = 0x7f800000u; }
  else if (total == NEG_INF) { c = 0xff800000u; }
  else { c = toF32(fadd(fromF32(c), sum)); }
  C[i * d.N + j] = c;
}
`;
