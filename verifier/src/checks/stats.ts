/**
 * Small statistics helpers for calibrating thresholds (pure functions).
 */

/**
 * Inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9),
 * for 0 < p < 1.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile(${p}): p must be in (0, 1)`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/** Quantiles (linear interpolation) of a sample; `qs` in [0, 1]. */
export function quantiles(sample: readonly number[], qs: readonly number[]): number[] {
  if (sample.length === 0) return qs.map(() => NaN);
  const s = [...sample].sort((x, y) => x - y);
  return qs.map((q) => {
    const pos = q * (s.length - 1);
    const i = Math.floor(pos);
    const f = pos - i;
    return i + 1 < s.length ? s[i]! * (1 - f) + s[i + 1]! * f : s[i]!;
  });
}

/** Mean and sample standard deviation. */
export function meanSd(sample: readonly number[]): { mean: number; sd: number } {
  const n = sample.length;
  const mean = sample.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(sample.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd };
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; relative error < 1e-13 on the range used here). */
function logGamma(x: number): number {
  const g = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const y = x - 1;
  let a = g[0]!;
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += g[i]! / (y + i);
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized incomplete beta I_x(a, b) (continued fraction by the modified Lentz method). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(1 - x, b, a);
  const front = Math.exp(a * Math.log(x) + b * Math.log(1 - x) - (logGamma(a) + logGamma(b) - logGamma(a + b))) / a;
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let f = d;
  for (let m = 1; m <= 300; m++) {
    for (const num of [(m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)), -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))]) {
      d = 1 + num * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (Math.abs(c) < tiny) c = tiny;
      f *= c * d;
    }
    if (Math.abs(c * d - 1) < 1e-15) break;
  }
  return front * f;
}

/** CDF of Student's t distribution with `dof` degrees of freedom. */
export function studentTCdf(t: number, dof: number): number {
  const tail = 0.5 * incompleteBeta(dof / (dof + t * t), dof / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Inverse of Student's t CDF, for 0 < p < 1 and dof >= 1 (bisection on studentTCdf to 1e-12 relative). */
export function studentTQuantile(p: number, dof: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTQuantile(${p}): p must be in (0, 1)`);
  if (!(dof >= 1)) throw new RangeError(`studentTQuantile: dof must be >= 1, got ${dof}`);
  if (p < 0.5) return -studentTQuantile(1 - p, dof);
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, dof) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, dof) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * How many sample standard deviations above the sample mean a new observation stays below with
 * probability 1 - `tail` (one-sided normal prediction bound), from a calibration sample of n:
 * t(1 - tail, n - 1) * sqrt(1 + 1/n). With n = 20 and tail = 0.005 it is 2.93, where the normal
 * quantile z(0.995) = 2.58 would treat the sample mean and sd as exact.
 */
export function predictionMultiplier(tail: number, n: number): number {
  if (!Number.isInteger(n) || n < 2) throw new RangeError(`predictionMultiplier: needs a sample of at least 2, got ${n}`);
  return studentTQuantile(1 - tail, n - 1) * Math.sqrt(1 + 1 / n);
}
