/**
 * The char-transformer step of numerics "bitwise-v3" (reference-v3.ts defines the bits): the same pass as
 * bitwise-v2 (kernels/transformer.ts `transformerPass`), with every product computed by the v3 matmul (operands
 * rounded to bf16, f32 accumulation in ascending k, specials to the canonical NaN) and every elementwise op the
 * bitwise-v2 kernel (reference-v3.ts: v3's elementwise ops ARE v2's op sequences).
 *
 *   js        matmulV3Ref + transformer-ref.ts's elementwise references: the definition, the base of every test
 *   wasm      WasmMatmulV3 (wasm/matmul-v3.wat) + WasmTransformerKernels' softmax kernels (wasm/transformer.wat)
 *   threaded  ThreadedKernels.matmulV3 (rows of C over worker threads; the same bits) + the same elementwise kernels
 *
 * INVARIANT: the pass hands its product oracle the QUANTIZED operands (`quantize` below). The trainer's matmul
 * quantizes again (idempotent: a quantized value quantizes to itself), so its bits do not change; the Freivalds
 * step check (checks/stepwitness.ts) records each claim with the operands the oracle receives, so it checks
 * C = Q(A) . Q(B), the product the numerics actually computes. With the raw operands the claim would be off by
 * the bf16 rounding (~2^-9 relative), far outside the float32 rounding bound, and every honest witness would fail.
 */
import { logger } from "../../log/index.ts";
import { CANONICAL_NAN_BITS, matmulV3Ref, V3_MAX_EXP_FIELD, V3_MIN_EXP_FIELD } from "./reference-v3.ts";
import { causalSoftmaxBackRef, causalSoftmaxRef, layerNormBackRef, layerNormRef, type Layout } from "./transformer-ref.ts";
import type { TransformerKernels } from "./transformer.ts";
import { transformerWasmUnavailable, WasmTransformerKernels } from "./transformer-wasm.ts";
import { scratchF32 } from "./scratch.ts";
import type { ThreadedKernels } from "./threads.ts";
import { matmulV3WasmUnavailable, WasmMatmulV3 } from "./wasm.ts";

const log = logger("kernels");

type MatmulV3 = (a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number) => Float32Array;

/**
 * Every element of `x` as the v3 matmul multiplies it (reference-v3.ts `quantizeV3Bits`, rules 1-3): rounded to
 * bf16 (nearest even, on the integer bits), magnitudes below 2^-56 to +0, NaN, +-Inf and magnitudes >= 2^48 to the
 * canonical NaN (which quantizes to itself, so the product's row or column stays special). A fresh array (a scratch
 * one inside a transformer pass, scratch.ts).
 */
export function quantizeOperandsV3(x: Float32Array): Float32Array {
  const out = scratchF32(x.length); // every element written below
  const src = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const dst = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < src.length; i++) {
    const v = src[i]!;
    if ((v & 0x7f800000) === 0x7f800000) {
      dst[i] = CANONICAL_NAN_BITS;
      continue;
    }
    const q = ((v + 0x7fff + ((v >>> 16) & 1)) & 0xffff0000) >>> 0;
    const e = (q >>> 23) & 0xff;
    dst[i] = e >= V3_MAX_EXP_FIELD ? CANONICAL_NAN_BITS : e < V3_MIN_EXP_FIELD ? 0 : q;
  }
  return out;
}

/** A bitwise-v3 kernel set: `matmul` (bits of matmulV3Ref) over `elementwise`'s bitwise-v2 softmax and layer norm. */
export function v3TransformerKernels(name: string, matmul: MatmulV3, elementwise: TransformerKernels): TransformerKernels {
  return {
    name,
    numerics: "bitwise-v3",
    matmul,
    quantize: quantizeOperandsV3,
    causalSoftmax: (s, T, count) => elementwise.causalSoftmax(s, T, count),
    causalSoftmaxBack: (p, dp, T, count) => elementwise.causalSoftmaxBack(p, dp, T, count),
    layerNorm: (x, g, b, rows, d) => elementwise.layerNorm(x, g, b, rows, d),
    layerNormBack: (dy, xhat, rstd, g, rows, d) => elementwise.layerNormBack(dy, xhat, rstd, g, rows, d),
  };
}

/** The plain-JS reference kernels of bitwise-v3: the definition of its bits. */
export const jsTransformerKernelsV3: TransformerKernels = v3TransformerKernels("js", matmulV3Ref, {
  name: "js",
  matmul: matmulV3Ref,
  causalSoftmax: causalSoftmaxRef,
  causalSoftmaxBack: causalSoftmaxBackRef,
  layerNorm: layerNormRef,
  layerNormBack: layerNormBackRef,
});

let fastestV3: TransformerKernels | undefined;

/**
 * The fastest bitwise-v3 kernels this runtime can run: the matmul of `threaded` (ThreadedKernels.matmulV3) when
 * given, else WasmMatmulV3, else matmulV3Ref; the elementwise ops of wasm/transformer.wat, else the references.
 * Each fallback logs one warning saying why (same bits, slower). Without `threaded` the set is built once per process.
 */
export function fastestTransformerKernelsV3(threaded?: ThreadedKernels): TransformerKernels {
  if (!threaded && fastestV3) return fastestV3;
  let elementwise: TransformerKernels = jsTransformerKernelsV3;
  const whyElementwise = transformerWasmUnavailable();
  if (whyElementwise === null) {
    try {
      elementwise = new WasmTransformerKernels();
    } catch (err) {
      log.warn({ err }, "transformer.wasm failed to instantiate; the bitwise-v3 softmax runs the JS reference (same bits, slower)");
    }
  } else log.warn({ reason: whyElementwise }, `${whyElementwise}; the bitwise-v3 softmax runs the JS reference (same bits, slower)`);
  let matmul: MatmulV3 = matmulV3Ref;
  let name = "js";
  if (threaded) {
    matmul = (a, b, M, K, N, layout, count) => threaded.matmulV3(a, b, M, K, N, layout, count);
    name = threaded.name;
  } else {
    const whyMatmul = matmulV3WasmUnavailable();
    if (whyMatmul === null) {
      try {
        const wasm = new WasmMatmulV3();
        matmul = (a, b, M, K, N, layout, count) => wasm.matmul(a, b, M, K, N, layout, count);
        name = wasm.name;
      } catch (err) {
        log.warn({ err }, "matmul-v3.wasm failed to instantiate; the bitwise-v3 matmul runs the JS reference (same bits, slower)");
      }
    } else log.warn({ reason: whyMatmul }, `${whyMatmul}; the bitwise-v3 matmul runs the JS reference (same bits, slower)`);
  }
  const kernels = v3TransformerKernels(name, matmul, elementwise);
  if (!threaded) fastestV3 = kernels;
  return kernels;
}
