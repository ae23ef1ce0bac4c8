/**
 * The kernel layer of the "pouw" engine: plain-JS reference kernels that define the bits
 * (reference.ts, elementwise.ts) and WebAssembly SIMD128 versions of the hot ones (wasm.ts), equal
 * to the reference bit for bit. See docs/engine.md "Kernel layer".
 */
import { logger } from "../../log/index.ts";
import { jsKernels } from "./reference.ts";
import type { Kernels } from "./types.ts";
import { WasmKernels, wasmKernelsUnavailable } from "./wasm.ts";
import { jsTransformerKernels, type TransformerKernels } from "./transformer.ts";
import { transformerWasmUnavailable, WasmTransformerKernels } from "./transformer-wasm.ts";

export type { Kernels } from "./types.ts";
export { jsKernels, matmulRef, adamRef, sgdRef, adamScalars, adamPowers, MATMUL_BLOCK, type MatmulLayout, type AdamScalars } from "./reference.ts";
export { WasmKernels, wasmKernelsUnavailable, KERNELS_WASM_URL, WasmMatmulV3, matmulV3WasmUnavailable, MATMUL_V3_WASM_URL } from "./wasm.ts";
export { mlpEvalBatch, mlpSquaredErrorBatch, mlpStep, type MlpStepResult } from "./mlp.ts";
export { WasmTransformerKernels, transformerWasmUnavailable, TRANSFORMER_WASM_URL } from "./transformer-wasm.ts";
export { ThreadedKernels, THREAD_MIN_MACS, MAX_THREADS } from "./threads.ts";

const log = logger("kernels");
let fastest: Kernels | undefined;

/**
 * The wasm SIMD128 kernels built from `bytes` when this runtime can run them, else the JS reference
 * (the same bits, 5-10x slower) and the reason.
 */
export function selectKernels(bytes?: Uint8Array<ArrayBuffer>): { kernels: Kernels; fallbackReason: string | null } {
  const why = wasmKernelsUnavailable(bytes);
  if (why !== null) return { kernels: jsKernels, fallbackReason: why };
  try {
    return { kernels: new WasmKernels(bytes), fallbackReason: null };
  } catch (err) {
    return { kernels: jsKernels, fallbackReason: `kernels.wasm failed to instantiate: ${(err as Error).message}` };
  }
}

/**
 * The fastest kernels this runtime can run (chosen once per process): the wasm SIMD128 ones, or the
 * JS reference after one warning saying why not.
 */
export function fastestKernels(): Kernels {
  if (fastest) return fastest;
  const { kernels, fallbackReason } = selectKernels();
  if (fallbackReason !== null) log.warn({ reason: fallbackReason }, `${fallbackReason}; the pouw engine uses the JS reference kernels (same bits, slower)`);
  fastest = kernels;
  return fastest;
}

export { jsTransformerKernels, transformerPass, kernelOracle, attentionScale, type TransformerKernels, type ProductOracle, type TransformerDims, type TransformerPass } from "./transformer.ts";
export { matmul32Ref, exp32, log32, causalSoftmaxRef, causalSoftmaxBackRef, layerNormRef, layerNormBackRef, softmaxXentRef } from "./transformer-ref.ts";

let fastestTransformer: TransformerKernels | undefined;

/**
 * The fastest bitwise-v2 transformer kernels this runtime can run (chosen once per process): the wasm
 * SIMD128 module (wasm/transformer.wat), or the JS reference after one warning saying why not.
 */
export function fastestTransformerKernels(): TransformerKernels {
  if (fastestTransformer) return fastestTransformer;
  const why = transformerWasmUnavailable();
  if (why === null) {
    try {
      fastestTransformer = new WasmTransformerKernels();
      return fastestTransformer;
    } catch (err) {
      log.warn({ err }, "transformer.wasm failed to instantiate; the pouw engine uses the JS reference transformer kernels (same bits, slower)");
    }
  } else log.warn({ reason: why }, `${why}; the pouw engine uses the JS reference transformer kernels (same bits, slower)`);
  fastestTransformer = jsTransformerKernels;
  return fastestTransformer;
}

export { fastestTransformerKernelsV3, jsTransformerKernelsV3, quantizeOperandsV3, v3TransformerKernels } from "./transformer-v3.ts";
export { matmulV3Ref, quantizeV3, quantizeV3Bits } from "./reference-v3.ts";
