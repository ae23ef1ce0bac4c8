/** Where a matmul reads A[i,k] and B[k,j] (reference.ts matmulRef): "tn" stores A transposed [K,M], "nt" stores B transposed [N,K]. */
export type MatmulLayout = "nn" | "tn" | "nt";

/** Adam's float32 scalars, rounded once as tf.scalar rounds them (optimizer.ts). */
export type AdamScalars = { beta1: number; beta2: number; oneMinusBeta1: number; oneMinusBeta2: number; lr: number; epsilon: number };

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
