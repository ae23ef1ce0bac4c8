/**
 * What forging an attestation tier costs a sybil minority against what it saves (docs/checks.md, "Forging a tier:
 * cost against saving"). Pure; amounts in tokens (numbers: these are sizing figures, never amounts sent).
 *
 *   p     = P(at least q of a committee of c drawn from N eligible auditors are among the attacker's a)
 *           (hypergeometric: equal bonds, drawn without replacement)
 *   cost  = requestFee / p + pi * q * bond     (fees until a forged record, plus the signers' bonds an upheld dispute takes)
 *   saved = (1 - f(tier)) * stake             (the stake a tier discounts on the jobs accepted under it)
 * Forging does not pay iff cost > saved; `breakEvenStake` is the stake at which they are equal.
 *
 * @example
 *   forgedTierCost({ eligible: 12, attacker: 2, committee: 3, quorum: 2, requestFee: 1, bond: 100, disputeChance: 1, tier: 1 })
 *   // { p: 0.04545..., feeCost: 22, forfeit: 200, cost: 222, breakEvenStake: 444, ... }
 */
import { InputError } from "../errors/index.ts";

/** The share of the required stake a tier locks (JobMarket.acceptJob; docs/economics.md). */
export const TIER_STAKE_FACTOR: Readonly<Record<1 | 2 | 3, number>> = { 1: 0.5, 2: 0.625, 3: 0.75 };

export type ForgedTierParameters = {
  /** Eligible auditors in the committee's snapshot, the attacker's included (the provider itself is excluded). */
  eligible: number;
  /** How many of them the attacker controls. */
  attacker: number;
  committee: number;
  quorum: number;
  /** Burned per request (tokens). */
  requestFee: number;
  /** Each signer's bond (tokens): the AuditorRegistry minimum bond at least. */
  bond: number;
  /** Chance that someone disputes the recorded forgery while it stands (0..1). */
  disputeChance: number;
  tier: 1 | 2 | 3;
};

export type ForgedTierCost = {
  /** Chance per request that the attacker's auditors make a quorum of the drawn committee. */
  p: number;
  /** Expected fees until one forged record: requestFee / p (Infinity when p = 0). */
  feeCost: number;
  /** Expected bonds forfeited: disputeChance * quorum * bond. */
  forfeit: number;
  cost: number;
  /** The quoted required stake (over the jobs accepted under the forged tier) at which the saving equals the cost. */
  breakEvenStake: number;
};

function choose(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 0; i < k; i++) r = (r * BigInt(n - i)) / BigInt(i + 1);
  return r;
}

/** Exact hypergeometric tail P(X >= q), X = attacker members among c drawn from N with a attacker's. */
export function quorumChance(eligible: number, attacker: number, committee: number, quorum: number): number {
  let hit = 0n;
  for (let x = quorum; x <= committee; x++) hit += choose(attacker, x) * choose(eligible - attacker, committee - x);
  return Number(hit) / Number(choose(eligible, committee));
}

export function forgedTierCost(p: ForgedTierParameters): ForgedTierCost {
  const ints = { eligible: p.eligible, attacker: p.attacker, committee: p.committee, quorum: p.quorum };
  for (const [k, v] of Object.entries(ints)) if (!Number.isInteger(v) || v < 0) throw new InputError(`${k} must be a non-negative integer, got ${v}`);
  if (p.attacker > p.eligible) throw new InputError(`attacker ${p.attacker} exceeds eligible ${p.eligible}`);
  if (p.committee > p.eligible || p.committee === 0) throw new InputError(`committee ${p.committee} must be 1..eligible (${p.eligible})`);
  if (p.quorum === 0 || p.quorum > p.committee) throw new InputError(`quorum ${p.quorum} must be 1..committee (${p.committee})`);
  if (!(p.disputeChance >= 0 && p.disputeChance <= 1)) throw new InputError(`disputeChance must be in [0, 1], got ${p.disputeChance}`);
  if (!(p.requestFee > 0) || !(p.bond >= 0)) throw new InputError(`requestFee must be > 0 and bond >= 0`);
  const chance = quorumChance(p.eligible, p.attacker, p.committee, p.quorum);
  const feeCost = chance === 0 ? Infinity : p.requestFee / chance;
  const forfeit = p.disputeChance * p.quorum * p.bond;
  const cost = feeCost + forfeit;
  return { p: chance, feeCost, forfeit, cost, breakEvenStake: cost / (1 - TIER_STAKE_FACTOR[p.tier]) };
}
