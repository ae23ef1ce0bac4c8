/**
 * The WebGPU kernels (docs/gpu.md): the mnist-mlp matmul of numerics "bitwise" as an integer construction of
 * kernels/reference.ts `matmulRef` (exact-matmul.ts, matmul-wgsl.ts), the numerics bitwise-v3 kernels (the tiled
 * matmul and the soft-float elementwise ops of kernels/reference-v3.ts: v3-*.ts) and a Dawn device that runs them
 * (device.ts, v3-device.ts), and the `webgpu` engine's synchronous kernels (sync-kernels.ts: the v3 matmul on a worker
 * thread that owns the device, gpu-worker.ts).
 */
export { exactMatmulBits, exactDot, CANONICAL_NAN, EXACT_BLOCK } from "./exact-matmul.ts";
export { MATMUL_WGSL } from "./matmul-wgsl.ts";
export { GpuMatmul, openWebGpu, useSwiftShaderWhenNoIcd, WebGpuError, WebGpuUnavailableError, SWIFTSHADER_ICD, type AdapterInfo } from "./device.ts";
export { GpuV3 } from "./v3-device.ts";
export { openWebGpuKernelsV3, webgpuTransformerKernelsV3, WebGpuMatmulV3 } from "./sync-kernels.ts";
export { V3_MATMUL_WGSL, V3_TILE } from "./v3-matmul-wgsl.ts";
export { V3_ELEMENTWISE_WGSL, V3_OPS, V3_ROW_WGSL, v3RowInvocations, type V3Op, type V3RowKernel } from "./v3-elementwise-wgsl.ts";
export { SOFTFLOAT_WGSL } from "./v3-softfloat-wgsl.ts";
export { operands, rng, firstBitDifference, specialsOnlyIn, type InputKind } from "./operands.ts";
