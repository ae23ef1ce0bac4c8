/**
 * What a challenge on a truly faulty step pays its challenger, by DisputeGame's settlement rule (docs/disputes.md,
 * "Rewards a sybil cannot take"): the slash's challenger share lam L of the provider's lock L pays the deciding panel's
 * fees first, the deposit covers the rest, and the bond comes back. So with no other dispute sharing the reward the
 * challenger nets lam L - n f, where n f is the panel's fees (panelSize * panelFee): a lock with lam L < n f makes
 * catching the cheat cost the challenger the difference, so JobMarket.acceptJob refuses such a lock
 * (JobMarketLockCannotPayPanel; lockPaysPanel below; contracts/DisputeGameAttacks.t.sol test_tinyLock_acceptRefused).
 * Gas is not counted. All amounts in wei of the stake token.
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

export type LockPaysPanelParams = {
  /** L: the lock acceptJob would take (JobMarket.requiredStakeFor), wei. */
  lockWei: bigint;
  /** lam in basis points: the job policy's challengerBps (0..10,000). */
  challengerBps: number;
  /** n f: JobMarket.panelFees() (the DisputeGame's panelSize * panelFee, read at wiring), wei. */
  panelFeesWei: bigint;
};

export type LockPaysPanel = {
  /** lam L, rounded down as JobMarket does. */
  rewardWei: bigint;
  panelFeesWei: bigint;
  /** JobMarket.acceptJob takes the lock iff lam L >= n f (else it reverts JobMarketLockCannotPayPanel). */
  ok: boolean;
};

/**
 * JobMarket.acceptJob's rule, as the contract computes it: a lock L is taken iff its challenger share lam L (rounded
 * down) pays the panel fees n f, so that an honest challenger never loses by catching a cheat on it. `pouw provider
 * accept` checks it before sending, so a refused lock is explained up front.
 */
export function lockPaysPanel(p: LockPaysPanelParams): LockPaysPanel {
  if (p.lockWei < 0n) throw new PolicyParamError(`lockWei must be >= 0, got ${p.lockWei}`);
  if (!Number.isInteger(p.challengerBps) || p.challengerBps < 0 || p.challengerBps > 10_000) throw new PolicyParamError(`challengerBps must be a whole number in [0, 10000], got ${p.challengerBps}`);
  if (p.panelFeesWei < 0n) throw new PolicyParamError(`panelFeesWei must be >= 0, got ${p.panelFeesWei}`);
  const rewardWei = (p.lockWei * BigInt(p.challengerBps)) / 10_000n;
  return { rewardWei, panelFeesWei: p.panelFeesWei, ok: rewardWei >= p.panelFeesWei };
}

export function challengeReward(p: ChallengeRewardParams): ChallengeReward {
  if (p.lockWei < 0n) throw new PolicyParamError(`lockWei must be >= 0, got ${p.lockWei}`);
  if (!Number.isInteger(p.challengerBps) || p.challengerBps < 0 || p.challengerBps > 10_000) throw new PolicyParamError(`challengerBps must be a whole number in [0, 10000], got ${p.challengerBps}`);
  if (!Number.isInteger(p.panelSize) || p.panelSize < 1) throw new PolicyParamError(`panelSize must be a whole number >= 1, got ${p.panelSize}`);
  if (p.panelFeeWei < 0n) throw new PolicyParamError(`panelFeeWei must be >= 0, got ${p.panelFeeWei}`);
  const rewardWei = (p.lockWei * BigInt(p.challengerBps)) / 10_000n;
  const panelFeesWei = BigInt(p.panelSize) * p.panelFeeWei;
  return { rewardWei, panelFeesWei, netWei: rewardWei - panelFeesWei };
}
