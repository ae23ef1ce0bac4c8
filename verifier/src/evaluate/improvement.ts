/**
 * Improvement weights for contributor payouts (docs/data.md, "Payout rule"): a crude, cheap leave-one-out
 * measurement. For a job trained on corpora 1..n, train n more models, each without one corpus, and
 * evaluate all n+1 with evaluate jobs on the same evaluation set (same evalSet.contentId):
 *
 *   improvement_i = max(0, loss(without i) - loss(with all))
 *   weightE6_i    = round(1e6 * improvement_i / mean_j improvement_j)      (1e6 = neutral weight 1.0)
 *
 * so a corpus of average usefulness weighs 1.0 and DataShares credits tokens_i * weightE6_i. If no
 * corpus improved the loss, every weight is 0 and the contract sends the data pool to the provider.
 *
 * Limits: leave-one-out costs n extra trainings; it ignores interactions between corpora (two
 * redundant corpora both score ~0); one evaluation set and one seed make it noisy; attribution at scale
 * (per example, per contributor among thousands) is unsolved. It is better than paying nothing.
 */
import { InputError } from "../errors/index.ts";

export function improvementWeightsE6(lossWithAll: number, lossWithout: readonly number[]): bigint[] {
  if (!Number.isFinite(lossWithAll) || lossWithout.some((l) => !Number.isFinite(l))) throw new InputError("improvement weights need finite losses");
  if (lossWithout.length === 0) return [];
  const gains = lossWithout.map((l) => Math.max(0, l - lossWithAll));
  const mean = gains.reduce((a, b) => a + b, 0) / gains.length;
  if (mean === 0) return gains.map(() => 0n);
  return gains.map((g) => BigInt(Math.round((1e6 * g) / mean)));
}
