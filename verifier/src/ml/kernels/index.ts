/**
 * The kernel layer of the "pouw" engine: plain-JS reference kernels that define the bits
 * (reference.ts, elementwise.ts) and WebAssembly SIMD128 versions of the hot ones (wasm.ts), equal
 * to the reference bit for bit. See docs/engine.md "Kernel layer".
 */
import { logger } from "../../log/index.ts";
import { jsKernels } from "./reference.ts";
import type { Kernels } from "./types.ts";
import { WasmKernels, wasmKernelsUnavailable } from "./wasm.ts";

export type { Kernels } from "./types.ts";
export { jsKernels, matmulRef, adamRef, sgdRef, adamScalars, adamPowers, MATMUL_BLOCK, type MatmulLayout, type AdamScalars } from "./reference.ts";
export { WasmKernels, wasmKernelsUnavailable, KERNELS_WASM_URL } from "./wasm.ts";
export { mlpEvalBatch, mlpStep, type MlpStepResult } from "./mlp.ts";
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
