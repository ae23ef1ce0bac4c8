/**
 * Decimal text -> float32, the one rounding rule of `pouw data add` (docs/data.md "Numbers"): the float32 nearest to
 * the EXACT value of the decimal, ties to even (IEEE 754 roundTiesToEven applied once).
 *
 * NOTE: `Math.fround(Number(text))` rounds twice (decimal -> float64 -> float32) and is wrong exactly when the float64
 * lands on a float32 midpoint that the decimal itself is not: "1.000000059604644775390626" is just above the midpoint
 * 1 + 2^-24 between 1 and 1 + 2^-23, so the correct float32 is 1 + 2^-23, but its nearest float64 IS the midpoint, and
 * the second rounding's tie goes to even, 1. Why the fix below suffices: every float32 midpoint is a float64, and
 * rounding is monotonic, so when Number(text) is not a midpoint it lies on the same side of every midpoint as the
 * exact decimal and fround gives the right answer; when it is a midpoint, the exact decimal is compared with it in
 * integer arithmetic (BigInt) and the side decides.
 */

/** The decimal grammar of a numeric cell: optional sign, digits with an optional point, optional exponent. */
export const DECIMAL_RE = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/** Longest numeric cell accepted (characters): keeps the exact comparison's integers small. */
export const MAX_DECIMAL_CHARS = 64;

export type DecimalResult = { ok: true; value: number } | { ok: false; reason: "not-decimal" | "too-long" | "out-of-range" };

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float32 adjacent to `f` (a float32 value, finite) towards `towards`. */
function nextFloat32(f: number, towards: number): number {
  if (f === 0) {
    u32[0] = 1; // smallest subnormal
    return towards > 0 ? f32[0]! : -f32[0]!;
  }
  f32[0] = f;
  // away from zero when |towards| > |f|, towards zero otherwise
  u32[0] = Math.abs(towards) > Math.abs(f) ? u32[0]! + 1 : u32[0]! - 1;
  return f32[0]!;
}

/** A finite float64 as M * 2^k with M an integer. */
function dyadic(x: number): { m: bigint; k: number } {
  let k = 0;
  let v = Math.abs(x);
  while (!Number.isInteger(v)) {
    v *= 2; // exact: v is a float64 with fewer than 53 significant bits left of the point
    k--;
  }
  return { m: BigInt(v), k };
}

/** Sign of |decimal| - |m| where the decimal is digits * 10^e10 (exact). */
function compareExact(digits: bigint, e10: number, m: number): number {
  const d = dyadic(m);
  let lhs = digits;
  let rhs = d.m;
  if (e10 >= 0) lhs *= 10n ** BigInt(e10);
  else rhs *= 10n ** BigInt(-e10);
  if (d.k >= 0) rhs <<= BigInt(d.k);
  else lhs <<= BigInt(-d.k);
  return lhs === rhs ? 0 : lhs > rhs ? 1 : -1;
}

/**
 * The float32 of a decimal cell under the rule above. Refuses text outside DECIMAL_RE (no "NaN", "Infinity", hex,
 * spaces or empty text), text over MAX_DECIMAL_CHARS, and values that round beyond the float32 range (to +-Infinity).
 * -0 stays -0; values below the smallest subnormal round to (signed) zero as the rule says.
 */
export function decimalToFloat32(text: string): DecimalResult {
  if (text.length > MAX_DECIMAL_CHARS) return { ok: false, reason: "too-long" };
  if (!DECIMAL_RE.test(text)) return { ok: false, reason: "not-decimal" };
  const d = Number(text);
  const f = Math.fround(d);
  if (!Number.isFinite(f)) return { ok: false, reason: "out-of-range" };
  if (f === d) return { ok: true, value: f };
  const g = nextFloat32(f, d);
  const mid = (f + g) / 2; // exact in float64: f and g are adjacent float32 values
  if (d !== mid) return { ok: true, value: f };
  // the double rounding case: the float64 is a float32 midpoint; decide by the exact decimal
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(text)!;
  const intPart = m[2] ?? "";
  const frac = m[3] ?? "";
  const digits = BigInt((intPart + frac).replace(/^0+(?=.)/, "") || "0");
  const e10 = Number(m[4] ?? "0") - frac.length;
  const c = compareExact(digits, e10, mid);
  if (c === 0) return { ok: true, value: f }; // a true tie: fround already chose the even neighbour
  // c > 0: the decimal is farther from zero than the midpoint, so the neighbour farther from zero is nearest
  const far = Math.abs(f) > Math.abs(g) ? f : g;
  const near = far === f ? g : f;
  const value = c > 0 ? far : near;
  if (!Number.isFinite(value)) return { ok: false, reason: "out-of-range" };
  return { ok: true, value };
}
