/**
 * Operand generators for the WebGPU differential checks (tests, scripts/gpu-check.ts): random float32 over a wide exponent range and
 * adversarial values (signed zeros, subnormals, Inf, NaN, the largest floats, exact cancellation, ties).
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPECIAL = [0, -0, Infinity, -Infinity, NaN, 2 ** -149, -(2 ** -149), 2 ** -126, 1.1754942e-38, -1.1754942e-38, 3.4028235e38, -3.4028235e38, 1, -1, 2 ** 64, 2 ** -64];

export type InputKind = "random" | "wide" | "adversarial" | "cancel" | "subnormal";

/** n float32 values of the given kind. "cancel" draws from a small pool so that +x and -x products meet in one sum. */
export function operands(n: number, kind: InputKind, rand: () => number): Float32Array {
  const out = new Float32Array(n);
  const pool = Float32Array.from({ length: 4 }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 40 - 20));
  for (let i = 0; i < n; i++) {
    const r = rand();
    switch (kind) {
      case "random":
        out[i] = (rand() * 2 - 1) * 2 ** Math.floor(rand() * 16 - 8);
        break;
      case "wide":
        out[i] = (rand() * 2 - 1) * 2 ** Math.floor(rand() * 250 - 125);
        break;
      case "subnormal":
        out[i] = r < 0.5 ? (rand() * 2 - 1) * 2 ** -127 * rand() : (rand() * 2 - 1) * 2 ** Math.floor(rand() * 40 - 20);
        break;
      case "cancel":
        out[i] = r < 0.5 ? pool[Math.floor(rand() * 4)]! : -pool[Math.floor(rand() * 4)]!;
        break;
      case "adversarial":
        out[i] = r < 0.05 ? SPECIAL[Math.floor(rand() * SPECIAL.length)]! : r < 0.5 ? (rand() * 2 - 1) * 2 ** Math.floor(rand() * 250 - 125) : (rand() * 2 - 1);
        break;
    }
  }
  return out;
}

/** Index of the first element whose bits differ (NaN equals NaN whatever its payload: the digest canonicalises NaN), or -1. */
export function firstBitDifference(x: Float32Array, y: Float32Array): number {
  if (x.length !== y.length) return 0;
  const xb = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const yb = new Uint32Array(y.buffer, y.byteOffset, y.length);
  for (let i = 0; i < x.length; i++) {
    if (xb[i] === yb[i]) continue;
    if (Number.isNaN(x[i]) && Number.isNaN(y[i])) continue;
    return i;
  }
  return -1;
}
