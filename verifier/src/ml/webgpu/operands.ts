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

/**
 * Around the bitwise-v3 operand bounds (reference-v3.ts rules 2 and 3): magnitudes a little below and above
 * 2^-56 and 2^48, including the float32 values whose bf16 rounding crosses the bound.
 */
const V3_EDGES = [2 ** -56, 2 ** -56 * (1 - 2 ** -9), 2 ** -56 * (1 - 2 ** -8), 2 ** -56 * (1 + 2 ** -7), 2 ** -57, 2 ** 48, 2 ** 48 * (1 - 2 ** -9), 2 ** 48 * (1 - 2 ** -8), 2 ** 47 * 1.5, 2 ** 49];

export type InputKind = "random" | "wide" | "adversarial" | "cancel" | "subnormal" | "v3-edges";

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
      case "v3-edges":
        out[i] = r < 0.3 ? (rand() < 0.5 ? -1 : 1) * Math.fround(V3_EDGES[Math.floor(rand() * V3_EDGES.length)]!)
          : r < 0.35 ? SPECIAL[Math.floor(rand() * SPECIAL.length)]! : (rand() * 2 - 1) * 2 ** Math.floor(rand() * 100 - 50);
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

/**
 * Replaces the special bitwise-v3 operands (NaN, Inf, magnitude >= 2^47) by 1.5 in every row of x [rows, width]
 * except those in `keep`: a special operand makes its whole output row or column NaN (reference-v3.ts rule 3),
 * so without this most outputs of a long product would be NaN and compare nothing.
 */
export function specialsOnlyIn(x: Float32Array, rows: number, width: number, keep: number[]): void {
  for (let r = 0; r < rows; r++) {
    if (keep.includes(r)) continue;
    for (let c = 0; c < width; c++) {
      const v = x[r * width + c]!;
      if (!Number.isFinite(v) || Math.abs(v) >= 2 ** 47) x[r * width + c] = 1.5;
    }
  }
}
