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
export { mlpStep, type MlpStepResult } from "./mlp.ts";

const log = logger("kernels");
let fastest: Kernels | undefined;

/**
 * The fastest kernels this runtime can run: the wasm SIMD128 ones, or, when the runtime cannot run
 * them, the JS reference (same bits, ~20x slower) after one warning saying why.
 */
export function fastestKernels(): Kernels {
  if (fastest) return fastest;
  const why = wasmKernelsUnavailable();
  if (why === null) {
    try {
      fastest = new WasmKernels();
      return fastest;
    } catch (err) {
      log.warn({ err }, "wasm SIMD128 kernels failed to instantiate; using the JS reference kernels (same bits, slower)");
    }
  } else {
    log.warn({ reason: why }, `wasm SIMD128 kernels unavailable: ${why}; using the JS reference kernels (same bits, slower)`);
  }
  fastest = jsKernels;
  return fastest;
}
