/**
 * Closed forms that size stakes, audit rates and bonds. Pure functions: validated numbers in, plain
 * records out, never NaN or Infinity (see params.ts). Money is in one token unit throughout (any unit,
 * as long as every money parameter of one call uses the same one); rates are probabilities per audit
 * opportunity. docs/economics.md derives each formula and says where its conclusion flips.
 */
import {
  finiteResult,
  integerAtLeast,
  nonNegative,
  positive,
  positiveProbability,
  probability,
  probabilityBelowOne,
  PolicyParamError,
} from "./params.ts";

// ---------------------------------------------------------------------------------------------
// Inspection game (one worker, one auditor)
// ---------------------------------------------------------------------------------------------

export type InspectionParams = {
  /** s: what the worker saves by cheating (tokens). */
  s: number;
  /** S: stake the worker loses when caught (tokens). */
  S: number;
  /** k: the auditor's cost of one check (tokens). */
  k: number;
  /** lam: share of the slashed stake paid to the auditor for a catch (dimensionless, [0, 1]). */
  lam: number;
  /** h: harm the auditor suffers when a cheat goes unchecked (tokens). */
  h: number;
};

export type InspectionResult = {
  /** x: equilibrium probability that the worker cheats. */
  x: number;
  /** y: equilibrium probability that the auditor checks. */
  y: number;
  /** "mixed" (interior equilibrium) or "no-check" (k >= lam*S + h: nobody checks, everybody cheats). */
  regime: "mixed" | "no-check";
};

/**
 * Inspection game. The worker is indifferent when y*(s + S) = s, so y* = s/(s+S); the auditor is
 * indifferent when x*(lam*S + h) = k, so x* = k/(lam*S + h). When k >= lam*S + h checking never pays,
 * so nobody checks and the worker always cheats: (x, y) = (1, 0).
 *
 * @example inspection({ s: 1, S: 4, k: 0.5, lam: 0.5, h: 0 }) // { x: 0.25, y: 0.2, regime: "mixed" }
 */
export function inspection(p: InspectionParams): InspectionResult {
  const s = nonNegative("s", p.s);
  const S = nonNegative("S", p.S);
  const k = nonNegative("k", p.k);
  const lam = probability("lam", p.lam);
  const h = nonNegative("h", p.h);
  const catchValue = lam * S + h;
  if (k >= catchValue) return { x: 1, y: 0, regime: "no-check" };
  if (s + S === 0) throw new PolicyParamError("s + S must be > 0 (y* = s/(s+S) divides by it)");
  finiteResult("s + S", s + S);
  return { x: finiteResult("x", k / catchValue), y: finiteResult("y", s / (s + S)), regime: "mixed" };
}

// ---------------------------------------------------------------------------------------------
// m independent auditors
// ---------------------------------------------------------------------------------------------

export type MultiAuditorParams = InspectionParams & {
  /** m: number of independent auditors (integer >= 1). */
  m: number;
};

export type MultiAuditorResult = {
  /** D: probability that at least one auditor checks, the worker's detection probability. */
  D: number;
  /** y: each auditor's check probability. */
  y: number;
  /** x: the worker's cheat probability. */
  x: number;
  /** totalCheckCost: expected check spending of all auditors together, k*m*y (tokens). */
  totalCheckCost: number;
  /**
   * "mixed": interior equilibrium from the formulas; "no-check": k >= lam*S + h, nobody checks;
   * "always-cheat": lam*S*D/(m*y) + h <= k < lam*S + h, no interior equilibrium: the worker always
   * cheats and each auditor checks with the y at which checking breaks even (x = 1).
   */
  regime: "mixed" | "no-check" | "always-cheat";
};

/**
 * m auditors check independently and share the catch reward lam*S equally among those who checked.
 * The worker is indifferent when the detection probability is D = s/(s+S); each auditor then checks
 * with y = 1 - (1-D)^(1/m). An auditor's expected benefit of one check against a cheat is
 * lam*S*D/(m*y) + h, so it is indifferent when x = k*m*y / (lam*S*D + h*m*y); the total check cost is
 * k*m*y, which grows with m (towards -k*ln(1-D)) while detection stays D.
 *
 * @example multiAuditor({ s: 1, S: 4, k: 0.5, lam: 0.5, h: 0, m: 1 }) // same as inspection: x 0.25, y 0.2
 */
export function multiAuditor(p: MultiAuditorParams): MultiAuditorResult {
  const s = nonNegative("s", p.s);
  const S = nonNegative("S", p.S);
  const k = nonNegative("k", p.k);
  const lam = probability("lam", p.lam);
  const h = nonNegative("h", p.h);
  const m = integerAtLeast("m", p.m, 1);
  if (k >= lam * S + h) return { D: 0, y: 0, x: 1, totalCheckCost: 0, regime: "no-check" };
  if (s + S === 0) throw new PolicyParamError("s + S must be > 0 (D = s/(s+S) divides by it)");
  finiteResult("s + S", s + S);
  const D = s / (s + S);
  if (D === 0) {
    // s = 0: nothing to gain by cheating, so nobody needs to check and nobody cheats.
    return { D: 0, y: 0, x: 0, totalCheckCost: 0, regime: "mixed" };
  }
  const y = 1 - Math.pow(1 - D, 1 / m);
  const x = (k * m * y) / (lam * S * D + h * m * y);
  if (x <= 1) return { D, y, x: finiteResult("x", x), totalCheckCost: k * m * y, regime: "mixed" };
  // No interior equilibrium: the worker always cheats; the auditors' symmetric mixed check rate y
  // solves lam*S*(1-(1-y)^m)/(m*y) + h = k (left side falls from lam*S + h at y -> 0 to lam*S/m + h).
  const benefit = (yy: number) => (lam * S * (1 - Math.pow(1 - yy, m))) / (m * yy) + h;
  let yc: number;
  if (benefit(1) >= k) yc = 1;
  else {
    let lo = 0, hi = 1;
    for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
      const mid = (lo + hi) / 2;
      if (mid > 0 && benefit(mid) > k) lo = mid; else hi = mid;
    }
    yc = (lo + hi) / 2;
  }
  const Dc = 1 - Math.pow(1 - yc, m);
  return { D: Dc, y: yc, x: 1, totalCheckCost: k * m * yc, regime: "always-cheat" };
}

// ---------------------------------------------------------------------------------------------
// Deterrence with a known audit probability
// ---------------------------------------------------------------------------------------------

export type DeterrenceParams = {
  /** g: gain from a cheat that is not audited, lost if audited (tokens). */
  g: number;
  /** S: stake lost when the cheat is audited (tokens). */
  S: number;
  /** p: audit probability of the job. */
  p: number;
};

export type DeterrenceResult = {
  /** cheatPays: (1-p)*g > p*S. */
  cheatPays: boolean;
  /** advantage: (1-p)*g - p*S, the expected profit of cheating over honesty (tokens). */
  advantage: number;
  /** pThreshold: smallest audit probability that deters, g/(g+S). */
  pThreshold: number;
};

/**
 * Cheating pays iff (1-p)*g > p*S; the threshold audit probability is p >= g/(g+S).
 *
 * @example deterrence({ g: 1, S: 3, p: 0.2 }) // { cheatPays: true, advantage: 0.2, pThreshold: 0.25 }
 */
export function deterrence(params: DeterrenceParams): DeterrenceResult {
  const g = nonNegative("g", params.g);
  const S = nonNegative("S", params.S);
  const p = probability("p", params.p);
  if (g + S === 0) throw new PolicyParamError("g + S must be > 0 (pThreshold = g/(g+S) divides by it)");
  finiteResult("g + S", g + S);
  const advantage = (1 - p) * g - p * S;
  return { cheatPays: advantage > 0, advantage: finiteResult("advantage", advantage), pThreshold: g / (g + S) };
}

export type MinStakeParams = { /** g: gain from an unaudited cheat (tokens). */ g: number; /** p: audit probability, (0, 1]. */ p: number };
export type MinStakeResult = { /** S: minimum stake that deters, g*(1-p)/p (tokens). */ S: number };

/**
 * Minimum stake that deters a cheat of gain g audited with probability p: S >= g*(1-p)/p.
 *
 * @example minStake({ g: 1, p: 0.25 }) // { S: 3 }
 */
export function minStake(params: MinStakeParams): MinStakeResult {
  const g = nonNegative("g", params.g);
  const p = positiveProbability("p", params.p);
  return { S: finiteResult("S", (g * (1 - p)) / p) };
}

export type BudgetStakeParams = {
  /** g: gain from an unaudited cheat per job (tokens). */
  g: number;
  /** n: number of identical jobs (integer >= 1). */
  n: number;
  /** B: audit budget, the number of jobs that can be audited, 0 < B <= n (may be fractional). */
  B: number;
};
export type BudgetStakeResult = { /** p: audit probability per job, B/n. */ p: number; /** S: minimum stake g*(n/B - 1) (tokens). */ S: number };

/**
 * With n identical jobs and a budget to audit B of them (each job audited with p = B/n), the
 * minimum deterring stake is S* = g*(1-p)/p = g*(n/B - 1).
 *
 * @example budgetStake({ g: 2, n: 100, B: 10 }) // { p: 0.1, S: 18 }
 */
export function budgetStake(params: BudgetStakeParams): BudgetStakeResult {
  const g = nonNegative("g", params.g);
  const n = integerAtLeast("n", params.n, 1);
  const B = positive("B", params.B);
  if (B > n) throw new PolicyParamError(`B must be <= n (cannot audit more jobs than exist), got B=${B}, n=${n}`);
  return { p: B / n, S: finiteResult("S", g * (n / B - 1)) };
}

// ---------------------------------------------------------------------------------------------
// Spot checks with proportional slashing
// ---------------------------------------------------------------------------------------------

export type SpotCheckParams = {
  /** T: steps in the job (integer >= 1). */
  T: number;
  /** g: gain per corrupted step (tokens). */
  g: number;
  /** F: flat slash, the cap on the total penalty, typically the whole stake (tokens). */
  F: number;
  /** f: slash per audited step found corrupted (tokens). */
  f: number;
  /** k: number of audited steps (integer >= 0). */
  k: number;
};
export type SpotCheckResult = {
  /** penalty: min(F, f*k), what corrupting every step costs when all k audits hit (tokens). */
  penalty: number;
  /** gain: T*g, what corrupting every step gains (tokens). */
  gain: number;
  /** deterred: min(F, f*k) >= T*g. */
  deterred: boolean;
};

/**
 * A job of T steps gaining g per corrupted step is deterred iff min(F, f*k) >= T*g: corrupting all T
 * steps makes every one of the k audits hit, each costing f, capped by the flat slash F.
 *
 * @example spotCheck({ T: 100, g: 0.1, F: 20, f: 1, k: 10 }) // { penalty: 10, gain: 10, deterred: true }
 */
export function spotCheck(params: SpotCheckParams): SpotCheckResult {
  const T = integerAtLeast("T", params.T, 1);
  const g = nonNegative("g", params.g);
  const F = nonNegative("F", params.F);
  const f = nonNegative("f", params.f);
  const k = integerAtLeast("k", params.k, 0);
  const penalty = finiteResult("penalty", Math.min(F, f * k));
  const gain = finiteResult("gain", T * g);
  return { penalty, gain, deterred: penalty >= gain };
}

// ---------------------------------------------------------------------------------------------
// Replicated execution
// ---------------------------------------------------------------------------------------------

export type ReplicationParams = {
  /** G: gain from a cheat that goes through (tokens). */
  G: number;
  /** beta: fraction of workers that collude, [0, 1). */
  beta: number;
  /** k: replicas per job, secretly assigned (integer >= 1). */
  k: number;
};
export type ReplicationResult = {
  /** p: probability that all k-1 other replicas collude, beta^(k-1): the cheat is not exposed. */
  p: number;
  /** S: minimum stake for honesty to be the unique equilibrium, G*p/(1-p) (tokens). */
  S: number;
};

/**
 * Replicated execution with secret assignment to k workers of whom a fraction beta collude: a cheat
 * passes only if all k-1 co-replicas collude, p = beta^(k-1); honesty is the unique equilibrium iff
 * S >= G*p/(1-p). With k = 1 or beta = 1 (p = 1) no stake deters: rejected with a clear error.
 *
 * @example replicationStake({ G: 10, beta: 0.5, k: 3 }) // { p: 0.25, S: 10/3 }
 */
export function replicationStake(params: ReplicationParams): ReplicationResult {
  const G = nonNegative("G", params.G);
  const beta = probability("beta", params.beta);
  const k = integerAtLeast("k", params.k, 1);
  const p = Math.pow(beta, k - 1);
  if (p === 1) {
    throw new PolicyParamError(
      `beta^(k-1) = 1 (beta=${beta}, k=${k}): with ${k === 1 ? "a single replica" : "every co-replica colluding"} no stake deters; S = G*p/(1-p) divides by zero`,
    );
  }
  return { p, S: finiteResult("S", (G * p) / (1 - p)) };
}

// ---------------------------------------------------------------------------------------------
// Bribable auditors
// ---------------------------------------------------------------------------------------------

export type BribeFloorParams = {
  /** lam: auditor's share of the slashed stake for a catch, [0, 1]. */
  lam: number;
  /** S: provider stake (tokens). */
  S: number;
  /** h: harm the auditor suffers from an unchecked cheat (tokens). */
  h: number;
  /** phi: rate of planted faults among audited jobs, [0, 1). */
  phi: number;
  /** J: jackpot paid for catching a planted fault (tokens). */
  J: number;
  /** k: cost of one check (tokens). */
  k: number;
  /** x: rate at which real jobs are cheats, (0, 1]. */
  x: number;
};
export type BribeFloorResult = {
  /** b: the bribe floor b*(x) = lam*S + h + (phi*J - k)/((1-phi)*x) (tokens). */
  b: number;
  /** checksUnbribed: b > 0; when b <= 0 the auditor does not check even without a bribe (k too high). */
  checksUnbribed: boolean;
};

/**
 * Smallest bribe a cheating provider must offer an auditor to stay silent, when planted faults
 * (rate phi, jackpot J) keep the auditor checking: b*(x) = lam*S + h + (phi*J - k)/((1-phi)*x).
 * Rewards alone do not stop bribery: the provider can always pay up to its own loss S, which
 * exceeds lam*S; hence the auditor bond (see auditorBond).
 *
 * @example bribeFloor({ lam: 0.5, S: 10, h: 0, phi: 0.1, J: 20, k: 1, x: 0.5 }) // b = 5 + 1/0.45
 */
export function bribeFloor(params: BribeFloorParams): BribeFloorResult {
  const lam = probability("lam", params.lam);
  const S = nonNegative("S", params.S);
  const h = nonNegative("h", params.h);
  const phi = probabilityBelowOne("phi", params.phi);
  const J = nonNegative("J", params.J);
  const k = nonNegative("k", params.k);
  const x = positiveProbability("x", params.x);
  const b = finiteResult("b", lam * S + h + (phi * J - k) / ((1 - phi) * x));
  return { b, checksUnbribed: b > 0 };
}

export type CollusionStakeParams = {
  /** s: what the provider saves by cheating (tokens). */
  s: number;
  /** m: auditors that must all be bribed (integer >= 1). */
  m: number;
  /** phi: planted-fault rate, [0, 1). */
  phi: number;
  /** J: planted-fault jackpot (tokens). */
  J: number;
  /** k: cost of one check (tokens). */
  k: number;
  /** h: harm an auditor suffers from an unchecked cheat (tokens). */
  h: number;
  /** lam: auditor's share of the slashed stake, (0, 1]. */
  lam: number;
};
export type CollusionStakeResult = {
  /** bonus: planted-fault surplus of m auditors, max(0, m*(phi*J - k)/(1-phi)) (tokens). */
  bonus: number;
  /** Sc: collusion-proof stake max(0, ((s - bonus)/m - h)/lam) (tokens). */
  Sc: number;
};

/**
 * Stake at which a provider cannot afford to bribe all m auditors: each must be paid at least
 * lam*S + h, less its share of the planted-fault bonus; S_c = max(0, ((s - bonus)/m - h)/lam) with
 * bonus = max(0, m*(phi*J - k)/(1-phi)).
 *
 * @example collusionStake({ s: 10, m: 2, phi: 0, J: 0, k: 0, h: 1, lam: 0.5 }) // { bonus: 0, Sc: 8 }
 */
export function collusionStake(params: CollusionStakeParams): CollusionStakeResult {
  const s = nonNegative("s", params.s);
  const m = integerAtLeast("m", params.m, 1);
  const phi = probabilityBelowOne("phi", params.phi);
  const J = nonNegative("J", params.J);
  const k = nonNegative("k", params.k);
  const h = nonNegative("h", params.h);
  const lam = positiveProbability("lam", params.lam);
  const bonus = finiteResult("bonus", Math.max(0, (m * (phi * J - k)) / (1 - phi)));
  return { bonus, Sc: finiteResult("Sc", Math.max(0, ((s - bonus) / m - h) / lam)) };
}

// ---------------------------------------------------------------------------------------------
// Effort elicitation for score payments
// ---------------------------------------------------------------------------------------------

export type BrierRentParams = {
  /** a: first Beta prior parameter (> 0). */
  a: number;
  /** b: second Beta prior parameter (> 0). */
  b: number;
  /** n: held-out examples the score is computed on (integer >= 1). */
  n: number;
};
export type BrierRentResult = { /** rent: information rent per unit of effort cost, (n-1)/(a+b). */ rent: number };

/**
 * Rent a Brier-score payment leaves to the worker per unit of effort cost, for a Beta(a, b) prior
 * and n held-out examples: (n-1)/(a+b); docs/economics.md states its assumptions.
 *
 * @example brierRent({ a: 2, b: 3, n: 11 }) // { rent: 2 }
 */
export function brierRent(params: BrierRentParams): BrierRentResult {
  const a = positive("a", params.a);
  const b = positive("b", params.b);
  const n = integerAtLeast("n", params.n, 1);
  return { rent: finiteResult("rent", (n - 1) / (a + b)) };
}
