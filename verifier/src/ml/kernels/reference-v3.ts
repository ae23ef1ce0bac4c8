/**
 * Numerics "bitwise-v3" (portable): the plain-JS reference that DEFINES the bits of the contraction-proof
 * matmul every implementation (this file, the wasm SIMD kernel, the WGSL kernel) must reproduce, whatever
 * the hardware does about fused multiply-add, subnormals or NaN/Inf.
 *
 * Why these rules (the argument, one line each):
 *   1. Operands are rounded to bfloat16 (8 significant bits), so A[i,k]*B[k,j] has at most 16 significant
 *      bits and is EXACT in float32: a fused multiply-add round(acc + a*b) equals the unfused
 *      round(acc + round(a*b)). A compiler that contracts or not gives the same bits.
 *   2. Operands whose bf16 magnitude is below 2^-56 (subnormals included) become +0. Every remaining
 *      operand is a multiple of 2^-63 (8 significant bits at exponent >= -56), every product a multiple of
 *      2^-126, and so is every partial sum: float32's grid at and above 2^-126 consists of multiples of
 *      2^-126, so rounding keeps that property. A non-zero partial sum is therefore >= 2^-126, a normal
 *      number: no subnormal ever appears, so flush-to-zero hardware computes the same values.
 *   3. Operands that are NaN, +-Inf, or of bf16 magnitude >= 2^48 are "special": every output element whose
 *      row of A or column of B holds a special operand is the canonical NaN 0x7fc00000. All other products
 *      are below 2^96 and a sum of fewer than 2^24 of them below 2^120: no float instruction ever sees or
 *      makes an Inf or NaN (WGSL lets an implementation assume they never occur).
 *   4. Accumulation: acc starts at +0, k ascends from 0 to K-1, acc = round32(acc + p_k), no split-K, no
 *      tree. A -0 never arises (acc starts at +0; x + (-x) and +0 + -0 are +0 under round-to-nearest).
 *   5. Threads, workgroups or SIMD lanes may split the OUTPUT elements any way they like, never the k loop.
 *
 * bf16 rounding is round-to-nearest-even on the float32 bit pattern (add 0x7fff + lsb of the kept half,
 * truncate the low 16 bits), done on integers so that every implementation computes it identically.
 */
import type { Layout } from "./transformer-ref.ts";
import { checkMatmul32 } from "./transformer-ref.ts";

export const CANONICAL_NAN_BITS = 0x7fc00000;
/** bf16 magnitudes below 2^-56 are flushed to +0 (rule 2). As float32 bits: exponent field 127-56 = 71. */
export const V3_MIN_EXP_FIELD = 71;
/** bf16 magnitudes at or above 2^48 are special (rule 3). As float32 bits: exponent field 127+48 = 175. */
export const V3_MAX_EXP_FIELD = 175;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The bit pattern of one operand after rule 1-3: a float32 whose low 16 bits are zero (a bf16 value), +0,
 * or `null` for a special operand. Pure integer arithmetic on the float32 bits `bits`.
 */
export function quantizeV3Bits(bits: number): number | null {
  const x = bits >>> 0;
  if ((x & 0x7f800000) === 0x7f800000) return null; // NaN or +-Inf
  const r = (x + 0x7fff + ((x >>> 16) & 1)) >>> 0; // round to nearest even at bit 16 (cannot pass Inf: checked below)
  const q = (r & 0xffff0000) >>> 0;
  const e = (q >>> 23) & 0xff;
  if (e >= V3_MAX_EXP_FIELD) return null;
  if (e < V3_MIN_EXP_FIELD) return 0;
  return q;
}

/** The float32 value of `quantizeV3Bits` of `x` (NaN for a special operand): what enters the products. */
export function quantizeV3(x: number): number {
  f32[0] = x;
  const q = quantizeV3Bits(u32[0]!);
  if (q === null) return NaN;
  u32[0] = q;
  return f32[0]!;
}

/**
 * `count` independent products C_q [M,N] = A_q . B_q in numerics bitwise-v3 (layouts as matmul32Ref:
 * "tn" = A stored transposed [K,M], "nt" = B stored transposed [N,K]). Rules 1-5 above.
 */
export function matmulV3Ref(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
  checkMatmul32(a, b, M, K, N, count);
  const c = new Float32Array(count * M * N);
  const cBits = new Uint32Array(c.buffer);
  const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
  const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
  const qa = new Float32Array(M * K), qb = new Float32Array(K * N);
  const rowSpecial = new Uint8Array(M), colSpecial = new Uint8Array(N);
  for (let q = 0; q < count; q++) {
    const ao = q * M * K, bo = q * K * N, co = q * M * N;
    rowSpecial.fill(0);
    colSpecial.fill(0);
    for (let i = 0; i < M; i++) {
      for (let k = 0; k < K; k++) {
        const v = quantizeV3(a[ao + i * aRow + k * aInner]!);
        if (v !== v) rowSpecial[i] = 1;
        qa[i * K + k] = v;
      }
    }
    for (let k = 0; k < K; k++) {
      for (let j = 0; j < N; j++) {
        const v = quantizeV3(b[bo + k * bInner + j * bCol]!);
        if (v !== v) colSpecial[j] = 1;
        qb[k * N + j] = v;
      }
    }
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        if (rowSpecial[i] || colSpecial[j]) {
          cBits[co + i * N + j] = CANONICAL_NAN_BITS;
          continue;
        }
        let acc = 0;
        // the product is exact (rule 1), so Math.fround(acc + p) is the one float32 rounding of the add
        for (let k = 0; k < K; k++) acc = Math.fround(acc + qa[i * K + k]! * qb[k * N + j]!);
        c[co + i * N + j] = acc;
      }
    }
  }
  return c;
}

/*
 * Elementwise ops (everything in a training step that is not a matmul): exp32, log32, the causal softmax and its
 * backward, layer norm and its backward, softmax cross-entropy (transformer-ref.ts) and Adam (reference.ts
 * `adamRef`). In bitwise-v3 they are DEFINED as in bitwise-v2, op for op: each step is one correctly rounded
 * float32 +, -, *, / or sqrt (round to nearest even, gradual underflow, IEEE Inf rules), in the fixed order
 * those functions state; exp32 and log32 are our polynomial algorithms built from the same five operations and
 * integer bit manipulation, never a platform exp or log. NaN payloads are not part of the definition (the
 * sha256-v2 digest hashes every NaN alike).
 *
 * Why that definition is portable without restructuring any expression:
 *   - JavaScript (Math.fround of the float64 operation, 53 >= 2*24+2 bits) and WebAssembly's f32 instructions
 *     compute exactly these correctly rounded operations: V8 never contracts a*b+c, never flushes subnormals.
 *   - A GPU does NOT, in general: WGSL lets a compiler fuse a*b+c, flush subnormals, compute x/y and sqrt to
 *     2.5 ulp and assume no NaN or Inf. So the WGSL kernels (webgpu/v3-softfloat-wgsl.ts, v3-elementwise-wgsl.ts) execute no float
 *     instruction at all: each operation is an integer soft-float on the u32 bit patterns (Berkeley SoftFloat's
 *     algorithms), which reproduces the correctly rounded result, subnormals, signed zeros and Inf included,
 *     and writes every NaN as 0x7fc00000. Integer operations have one meaning on every WGSL implementation.
 *   - The cost is ~100 integer operations per float operation, on O(n) elementwise work next to the O(n^1.5)
 *     of the matmuls, whose float arithmetic rules 1-5 above make portable.
 * The names below are the v3 entry points; they are the v2 functions, so a v2 kernel already equal to them
 * (wasm/transformer.wat, the wasm Adam) is a v3 kernel too.
 */
export { exp32 as exp32V3, log32 as log32V3, causalSoftmaxRef as causalSoftmaxV3Ref, causalSoftmaxBackRef as causalSoftmaxBackV3Ref } from "./transformer-ref.ts";
export { layerNormRef as layerNormV3Ref, layerNormBackRef as layerNormBackV3Ref, softmaxXentRef as softmaxXentV3Ref } from "./transformer-ref.ts";
export { adamRef as adamV3Ref, adamScalars as adamV3Scalars, adamPowers as adamV3Powers } from "./reference.ts";
