/**
 * Closed forms for the dispute side, used by the contract optimiser (policy/contract.ts): the panel's error, the
 * challenger bond a frivolous challenge must lose, the stake an honest challenge must win, and the auditor bond that
 * makes bribes not pay. Pure functions with the same rules as formulas.ts (validated numbers in, never NaN or
 * Infinity); docs/economics.md derives each.
 */
import { finiteResult, integerAtLeast, nonNegative, positiveProbability, probability, probabilityBelowOne, PolicyParamError } from "./params.ts";

/**
 * Probability that a panel of n jurors, each independently wrong with probability e, reaches a wrong
 * majority: P(Binomial(n, e) > n/2). n must be odd (no ties).
 */
export function panelError(n: number, e: number): number {
  integerAtLeast("n", n, 1);
  if (n % 2 === 0) throw new PolicyParamError(`panel size n must be odd (no ties), got ${n}`);
  probability("jurorError", e);
  let total = 0;
  // log-space binomial terms keep large n finite
  const logC = (nn: number, kk: number) => {
    let r = 0;
    for (let i = 1; i <= kk; i++) r += Math.log(nn - kk + i) - Math.log(i);
    return r;
  };
  for (let i = (n + 1) / 2; i <= n; i++) {
    if (e === 0) break;
    if (e === 1) { total = 1; break; }
    total += Math.exp(logC(n, i) + i * Math.log(e) + (n - i) * Math.log(1 - e));
  }
  return Math.min(1, total);
}

export type ChallengeBondParams = {
  /** lam: challenger's share of the slashed stake, (0, 1]. */
  lam: number;
  /** S: provider stake (tokens). */
  S: number;
  /** eps: probability the panel decides a challenge wrongly, [0, 0.5). */
  eps: number;
  /** grief: value a malicious challenger gets from a frivolous challenge regardless of outcome (tokens). */
  grief: number;
};

/**
 * Challenger bond: a frivolous challenge (against a correct step) wins lam*S only when the panel
 * errs (probability eps) and otherwise loses the bond, so it is deterred iff
 * eps*lam*S + grief <= (1-eps)*B, i.e. B >= (expected gain) / (probability it loses)
 * = (eps*lam*S + grief)/(1-eps).
 */
export function challengeBond(params: ChallengeBondParams): { B: number } {
  const lam = positiveProbability("lam", params.lam);
  const S = nonNegative("S", params.S);
  const eps = probabilityBelowOne("eps", params.eps);
  const grief = nonNegative("grief", params.grief);
  return { B: finiteResult("B", (eps * lam * S + grief) / (1 - eps)) };
}

/**
 * Smallest stake at which an honest challenger still gains while a frivolous one does not, with the
 * bond at its lower bound: (1-eps)*lam*S >= eps*B + kc + fees and B = (eps*lam*S + grief)/(1-eps) give
 * S >= (eps*grief + (1-eps)*(kc + fees)) / (lam*(1-2*eps)). `fees` is what the challenger pays the panel
 * when the panel decides (DisputeGame: at most n * panelFee, the fees of the members who reveal on the
 * winning side; 0 when the provider concedes or proves): it counts like the challenger's own cost kc.
 * Needs eps < 1/2: a panel no better than a coin makes every bond either deter honest challengers or
 * admit frivolous ones.
 */
export function challengerStake(params: { lam: number; eps: number; grief: number; kc: number; fees?: number }): { S: number } {
  const lam = positiveProbability("lam", params.lam);
  const eps = probability("eps", params.eps);
  const grief = nonNegative("grief", params.grief);
  const kc = nonNegative("kc", params.kc);
  const fees = nonNegative("fees", params.fees ?? 0);
  if (eps >= 0.5) throw new PolicyParamError(`panel error eps must be < 0.5 for any challenger bond to work, got ${eps}`);
  return { S: finiteResult("S", (eps * grief + (1 - eps) * (kc + fees)) / (lam * (1 - 2 * eps))) };
}

export type AuditorBondParams = {
  /** lam: auditor's share of the slashed stake for a catch, [0, 1]. */
  lam: number;
  /** S: provider stake (tokens). */
  S: number;
  /** F: payment the provider forfeits when caught (tokens). */
  F: number;
  /** mu: probability that one audit is meta-audited, (0, 1]. */
  mu: number;
  /** W: providers the auditor audits at once, each able to bribe it (integer >= 1). */
  W: number;
};

/**
 * Auditor bond forfeited on a failed meta-audit. A caught provider can offer up to its whole loss
 * S + F to stay unreported; the auditor forgoes lam*S per bribe and loses its bond once if any of
 * its W bribed audits is meta-audited (probability 1-(1-mu)^W). Bribes from all W providers are
 * unprofitable iff W*(S + F - lam*S) <= (1-(1-mu)^W) * A, so
 * A >= W*((1-lam)*S + F) / (1-(1-mu)^W): it grows with the number of workers audited.
 */
export function auditorBond(params: AuditorBondParams): { A: number; muW: number } {
  const lam = probability("lam", params.lam);
  const S = nonNegative("S", params.S);
  const F = nonNegative("F", params.F);
  const mu = positiveProbability("mu", params.mu);
  const W = integerAtLeast("W", params.W, 1);
  const muW = 1 - Math.pow(1 - mu, W);
  return { A: finiteResult("A", (W * ((1 - lam) * S + F)) / muW), muW };
}
