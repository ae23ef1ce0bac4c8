/**
 * The WebGPU matmul of the mnist-mlp numerics (docs/gpu.md): an integer-only construction of
 * kernels/reference.ts `matmulRef` (exact-matmul.ts), its WGSL kernel (matmul-wgsl.ts) and a Dawn device
 * that runs it (device.ts). Not yet an engine: no model calls it.
 */
export { exactMatmulBits, exactDot, CANONICAL_NAN, EXACT_BLOCK } from "./exact-matmul.ts";
export { MATMUL_WGSL } from "./matmul-wgsl.ts";
export { GpuMatmul, useSwiftShaderWhenNoIcd, WebGpuError, WebGpuUnavailableError, SWIFTSHADER_ICD, type AdapterInfo } from "./device.ts";
export { operands, rng, firstBitDifference, type InputKind } from "./operands.ts";
