/**
 * The WGSL matmul of numerics bitwise-v3: the bits of kernels/reference-v3.ts `matmulV3Ref` (read its header
 * for the argument; rules 1-5 are referred to by number here).
 *
 * Summation order: one invocation per output element C[i,j]; a 16x16 workgroup computes a 16x16 tile of C and
 * walks k in 16-wide tiles, ascending, staging the quantized operands in workgroup memory; inside a tile kk
 * ascends. So each output sees acc = +0, then acc = RN32(acc + p_k) for k = 0, 1, .., K-1 in order (rule 4):
 * the reference's order. No split-K and no reduction across invocations: the tile sizes and the dispatch
 * shape change no bit (rule 5).
 *
 * Why the float instructions here are portable: `acc + x*y` is the only float arithmetic, x and y are bf16 values
 * (low 16 bits zero) of exponent in [-56, 47], so x*y is exact and a driver that fuses it (NVIDIA) or not
 * (SwiftShader) computes RN32(acc + x*y) alike (rule 1); no operand, product or partial sum is subnormal
 * (rule 2), so flush-to-zero modes change nothing; no NaN or Inf ever reaches a float instruction (rule 3):
 * quantization runs on u32 bits, a special operand is staged as the marker SPECIAL and only sets a flag.
 * WGSL defines f32 + and * as correctly rounded, which is all the kernel relies on.
 */

/** Output tile edge (and k tile width): a workgroup is TILE x TILE invocations. */
export const V3_TILE = 16;

/** The uniform block of the matmul: the operand strides of the three layouts and the batch count. */
export const V3_MATMUL_DIMS_WORDS = 8;

export const V3_MATMUL_WGSL = /* wgsl */ `
struct Dims { M: u32, K: u32, N: u32, aRow: u32, aInner: u32, bInner: u32, bCol: u32, count: u32 }
@group(0) @binding(0) var<storage, read> A: array<u32>;
@group(0) @binding(1) var<storage, read> B: array<u32>;
@group(0) @binding(2) var<storage, read_write> C: array<u32>;
@group(0) @binding(3) var<uniform> d: Dims;

const TILE: u32 = ${V3_TILE}u;
const CANONICAL_NAN: u32 = 0x7fc00000u;
// a quantized operand has its low 16 bits zero, so this pattern never is one
const SPECIAL: u32 = 0xffffffffu;

var<workgroup> As: array<array<u32, ${V3_TILE}>, ${V3_TILE}>; // [row][k]
var<workgroup> Bs: array<array<u32, ${V3_TILE}>, ${V3_TILE}>; // [k][col]

// reference-v3.ts quantizeV3Bits: round to nearest even at bit 16; magnitude < 2^-56 -> +0; NaN, Inf, >= 2^48 -> SPECIAL
fn quantize(x: u32) -> u32 {
  if ((x & 0x7f800000u) == 0x7f800000u) { return SPECIAL; }
  let q = (x + 0x7fffu + ((x >> 16u) & 1u)) & 0xffff0000u;
  let e = (q >> 23u) & 0xffu;
  if (e >= 175u) { return SPECIAL; }
  if (e < 71u) { return 0u; }
  return q;
}

@compute @workgroup_size(${V3_TILE}, ${V3_TILE})
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let q = w.z;
  let i = w.y * TILE + l.y;
  let j = w.x * TILE + l.x;
  let ao = q * d.M * d.K;
  let bo = q * d.K * d.N;
  var acc: f32 = 0.0;
  var special = false;
  for (var k0: u32 = 0u; k0 < d.K; k0 = k0 + TILE) {
    let ak = k0 + l.x;
    var av: u32 = 0u;
    if (i < d.M && ak < d.K) { av = quantize(A[ao + i * d.aRow + ak * d.aInner]); }
    As[l.y][l.x] = av;
    let bk = k0 + l.y;
    var bv: u32 = 0u;
    if (bk < d.K && j < d.N) { bv = quantize(B[bo + bk * d.bInner + j * d.bCol]); }
    Bs[l.y][l.x] = bv;
    workgroupBarrier();
    let kn = min(TILE, d.K - k0);
    for (var kk: u32 = 0u; kk < kn; kk = kk + 1u) {
      let x = As[l.y][kk];
      let y = Bs[kk][l.x];
      if (x == SPECIAL || y == SPECIAL) {
        special = true;
      } else {
        // INVARIANT: x*y is exact (bf16 x bf16, exponents bounded): fused or not, one rounding of the add
        acc = acc + bitcast<f32>(x) * bitcast<f32>(y);
      }
    }
    workgroupBarrier();
  }
  if (i < d.M && j < d.N) {
    C[q * d.M * d.N + i * d.N + j] = select(bitcast<u32>(acc), CANONICAL_NAN, special);
  }
}
`;
