/**
 * Adam's largest per-coordinate update (magnitude.ts derives it): with m, v starting at 0, Cauchy-Schwarz gives
 * |m_hat| / sqrt(v_hat) <= (1 - b1) / (1 - b1^t) * sqrt(S * (1 - b2^t) / (1 - b2)), S = sum_{j<t} (b1^2 / b2)^j.
 * Shared by the magnitude check (one step) and the state screen (a window of steps).
 */

/** Largest |m_hat / (sqrt(v_hat) + eps)| Adam can produce at step t (b1^t, b2^t given). */
export function adamRatioBound(beta1: number, beta2: number, beta1PowT: number, beta2PowT: number, t: number): number {
  const rho = (beta1 * beta1) / beta2;
  const S = rho < 1 ? 1 / (1 - rho) : t * rho ** Math.max(0, t - 1);
  if (beta1PowT >= 1) return 0;
  return ((1 - beta1) / (1 - beta1PowT)) * Math.sqrt((S * (1 - beta2PowT)) / (1 - beta2));
}
