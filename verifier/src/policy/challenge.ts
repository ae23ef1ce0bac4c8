/**
 * What a challenge on a truly faulty step pays its challenger, by DisputeGame's settlement rule (docs/disputes.md,
 * "Rewards a sybil cannot take"): the slash's challenger share lam L of the provider's lock L pays the deciding panel's
 * fees first, the deposit covers the rest, and the bond comes back. So with no other dispute sharing the reward the
 * challenger nets lam L - n f, where n f is the panel's fees (panelSize * panelFee): a lock with lam L < n f makes
 * catching the cheat cost the challenger the difference (the provider side loses L; contracts/DisputeGameAttacks.t.sol
 * test_tinyLock_honestChallengerPaysThePanel). Gas is not counted. All amounts in wei of the stake token.
 */
import { PolicyParamError } from "./params.ts";

export type ChallengeRewardParams = {
  /** L: StakeVault.lockedFor(provider, job), wei. */
  lockWei: bigint;
  /** lam in basis points: the job policy's challengerBps (0..10,000). */
  challengerBps: number;
  /** n: DisputeGame panelSize (>= 1). */
  panelSize: number;
  /** f: DisputeGame panelFee, wei. */
  panelFeeWei: bigint;
};

export type ChallengeReward = {
  /** lam L, rounded down as JobMarket.settleProviderFault does. */
  rewardWei: bigint;
  /** n f: the fees a drawn panel earns when all of it votes with the majority. */
  panelFeesWei: bigint;
  /** lam L - n f: the challenger's net on a fault its own dispute decides alone (negative: a loss). */
  netWei: bigint;
};

export function challengeReward(p: ChallengeRewardParams): ChallengeReward {
  if (p.lockWei < 0n) throw new PolicyParamError(`lockWei must be >= 0, got ${p.lockWei}`);
  if (!Number.isInteger(p.challengerBps) || p.challengerBps < 0 || p.challengerBps > 10_000) throw new PolicyParamError(`challengerBps must be a whole number in [0, 10000], got ${p.challengerBps}`);
  if (!Number.isInteger(p.panelSize) || p.panelSize < 1) throw new PolicyParamError(`panelSize must be a whole number >= 1, got ${p.panelSize}`);
  if (p.panelFeeWei < 0n) throw new PolicyParamError(`panelFeeWei must be >= 0, got ${p.panelFeeWei}`);
  const rewardWei = (p.lockWei * BigInt(p.challengerBps)) / 10_000n;
  const panelFeesWei = BigInt(p.panelSize) * p.panelFeeWei;
  return { rewardWei, panelFeesWei, netWei: rewardWei - panelFeesWei };
}
