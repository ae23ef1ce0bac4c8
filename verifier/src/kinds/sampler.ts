/**
 * Exact sampling for generate jobs: temperature and top-k over float32 logits with integer weights and the seeded
 * integer PRNG (ml/prng.ts), so a sample's bytes are the same on every machine (docs/kinds.md "Sampling").
 *
 *   candidates  = the top-k indices by (logit descending, index ascending); k = 0 means all; NaN counts as -Infinity
 *   temperature = temperatureMilli / 1000; 0 picks the first candidate (argmax, lowest index on ties)
 *   q_c         = floor((l_max - l_c) * LOG2E * 16 * 1000 / temperatureMilli)      (float64, left to right)
 *   w_c         = EXP2_TABLE[q_c mod 16] >> floor(q_c / 16), 0 once the shift reaches 23    (~ 2^22 * e^((l_c - l_max)/T))
 *   pick        = the first candidate whose running sum of weights exceeds rng.nextInt(sum of weights)
 *
 * INVARIANT: no transcendental function runs at sampling time: the exponential is the 16-entry table of integer
 * literals below (round(2^22 * 2^(-r/16))), and every float64 operation is a single IEEE-exact rounding, which
 * JavaScript performs identically on x86-64 and arm64 (no fused multiply-add).
 */
import { InputError } from "../errors/index.ts";
import type { Rng } from "../ml/prng.ts";

export const EXP2_TABLE: readonly number[] = [4194304, 4016479, 3846194, 3683128, 3526975, 3377443, 3234251, 3097129, 2965821, 2840080, 2719670, 2604365, 2493948, 2388213, 2286960, 2190001];
const LOG2E = 1.4426950408889634;

export type Sampling = { readonly temperatureMilli: number; readonly topK: number };

/** The candidates (top-k order) and their integer weights. */
export function samplingWeights(logits: ArrayLike<number>, s: Sampling): { candidates: number[]; weights: number[] } {
  if (!Number.isInteger(s.temperatureMilli) || s.temperatureMilli < 0) throw new InputError(`temperatureMilli must be a non-negative integer, got ${s.temperatureMilli}`);
  if (!Number.isInteger(s.topK) || s.topK < 0) throw new InputError(`topK must be a non-negative integer, got ${s.topK}`);
  if (logits.length === 0) throw new InputError("no logits to sample from");
  const value = (i: number) => (Number.isNaN(logits[i]!) ? -Infinity : logits[i]!);
  // NOTE: compared, never subtracted: (-Inf) - (-Inf) is NaN, which would leave the order to the sort's algorithm
  const order = Array.from({ length: logits.length }, (_, i) => i).sort((a, b) => (value(a) === value(b) ? a - b : value(b) > value(a) ? 1 : -1));
  const candidates = s.topK === 0 ? order : order.slice(0, Math.min(s.topK, order.length));
  if (s.temperatureMilli === 0) return { candidates, weights: candidates.map((_, j) => (j === 0 ? 1 : 0)) };
  const max = value(candidates[0]!);
  const weights = candidates.map((c) => {
    const l = value(c);
    if (l === max) return EXP2_TABLE[0]!;
    const q = Math.floor((((max - l) * LOG2E) * 16 * 1000) / s.temperatureMilli);
    if (!Number.isFinite(q)) return 0;
    const shift = Math.floor(q / 16);
    return shift >= 23 ? 0 : EXP2_TABLE[q % 16]! >>> shift;
  });
  return { candidates, weights };
}

/** One token drawn from `logits` (see the header for the exact rule). */
export function sampleToken(logits: ArrayLike<number>, s: Sampling, rng: Rng): number {
  const { candidates, weights } = samplingWeights(logits, s);
  let sum = 0;
  for (const w of weights) sum += w;
  // INVARIANT: the weights are integers of at most 2^22 each; nextInt takes at most 2^32, so at most 1024 candidates
  if (sum > 0x1_0000_0000) throw new InputError(`${candidates.length} candidates are too many for exact sampling (set topK <= 1024)`);
  if (sum === 0) return candidates[0]!;
  const u = rng.nextInt(sum);
  let acc = 0;
  for (let j = 0; j < candidates.length; j++) {
    acc += weights[j]!;
    if (u < acc) return candidates[j]!;
  }
  return candidates[candidates.length - 1]!;
}
