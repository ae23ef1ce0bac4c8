import type { AdamScalars, MatmulLayout } from "./reference.ts";

/**
 * The kernels of an mnist-mlp training step. Every implementation gives the bits of the reference
 * kernels (reference.ts); they differ only in speed.
 */
export interface Kernels {
  /** "js" (reference.ts) or "wasm-simd128" (wasm.ts). */
  readonly name: string;
  /** C [M,N] = A . B in tfjs-cpu's blocked order (reference.ts `matmulRef`); a fresh array. */
  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout?: MatmulLayout): Float32Array;
  /** One Adam update of one tensor into outW/outM/outV (reference.ts `adamRef`). */
  adam(s: AdamScalars, c1: number, c2: number, w: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array,
    outW: Float32Array, outM: Float32Array, outV: Float32Array): void;
}
