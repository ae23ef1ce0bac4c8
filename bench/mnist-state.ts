/**
 * A state of the size the mnist-mlp 784-128-10 Adam digest benches hash (1.22 MB): weights and biases, both Adam
 * moments, and the two beta powers, filled with xorshift values in [-0.5, 0.5) (finite, fixed by seed). Shared by
 * bench/digest.ts and bench/nan-canonical.ts.
 */
export const H = 128;
export const shapes = [784 * H, H, H * 10, 10];

export function xorshiftArray(n: number, seed: number): Float32Array {
  const a = new Float32Array(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; a[i] = (x >>> 8) / 2 ** 24 - 0.5; }
  return a;
}

export function mnistAdamState(): { params: Float32Array[]; opt: Float32Array[] } {
  const params = shapes.map((n, i) => xorshiftArray(n, i + 1));
  const opt = [...shapes, ...shapes].map((n, i) => xorshiftArray(n, i + 11)).concat([Float32Array.of(0.9), Float32Array.of(0.999)]);
  return { params, opt };
}
