/**
 * The optimiser over the contract model (policy/contract-model.ts has the model and its derivation): for fixed
 * (p, X, n) the constraints have a componentwise least feasible point (closed form, `contractAt`); the cost is convex
 * in p, so a grid plus golden-section search per check set (and per meta-audit rate of the menu) finds the optimum
 * (`optimiseContract`). policy/contract-lp.ts checks a result against the HiGHS LP at the same point.
 */
import { auditorBond, challengeBond, challengerStake, panelError } from "./bonds.ts";
import { NoDeterringContractError, PolicyParamError } from "./params.ts";
import {
  choosePanel,
  everySegmentDetection,
  setDetection,
  strategyVertices,
  validateActionSet,
  validateContractParams,
  type ActionSet,
  type CheckInput,
  type Contract,
  type ContractParams,
  type StrategyInput,
  type VertexRules,
} from "./contract-model.ts";

export * from "./contract-model.ts";

const EPS_REL = 1e-9;

/**
 * Audit compute per unit of C: costRatios plus expected confirming recomputes after false alarms, for the sampled
 * checks (times p) and the every-segment ones (on every segment).
 */
function auditRatio(set: CheckInput[], confirmRatio: number, p: number): number {
  const part = (checks: CheckInput[]) => {
    let r = 0;
    let noAlarm = 1;
    for (const c of checks) {
      r += c.costRatio;
      noAlarm *= 1 - c.falseAlarmRate;
    }
    return checks.length === 0 ? 0 : r + (1 - noAlarm) * confirmRatio;
  };
  return p * part(set.filter((c) => !c.everySegment)) + part(set.filter((c) => c.everySegment));
}

function confirmRatioOf(actions: ActionSet): number {
  // A flagged segment is confirmed by bit-exact recompute before a challenge; without a recompute
  // check in the matrix, confirming costs retraining the segment (ratio 1).
  return actions.checks.find((c) => c.name === "recompute")?.costRatio ?? 1;
}

/**
 * The least feasible (S, B, A) and the cost at a fixed audit rate p, check set and panel: the closed
 * form. Returns null when a strategy that saves compute is invisible to the set (D = 0): no stake
 * deters it.
 */
export function contractAt(
  params: ContractParams,
  actions: ActionSet,
  set: CheckInput[],
  p: number,
  panel: { n: number; eps: number },
): Contract | null {
  const { computeCost: C, segments: N, forfeit: F, capitalRate: kappa, lam } = params;
  // the provider side's loss per unit of stake: the challenger's share can be its own (a second address)
  const keep = 1 - lam;
  const m = params.margin ?? 0;
  const rules: VertexRules = { lastSegmentAudited: params.lastSegmentAudited ?? false, integrityValue: params.integrityValue ?? 0 };
  let sDet = 0;
  let binding = "none";
  const outcomes: { s: StrategyInput; D: number; E: number; T: number; Q: number; gain: number }[] = [];
  for (const s of actions.strategies) {
    const D = setDetection(s, set);
    const E = everySegmentDetection(s, set, actions);
    // the binding vertex: the one that needs the largest stake (with no gain, the one caught least)
    let worst: { T: number; Q: number; gain: number; need: number } | undefined;
    for (const v of strategyVertices(s, D, E, p, N, C, rules)) {
      if (v.gain > 0 && (v.Q === 0 || keep === 0)) return null;
      const need = v.gain === 0 ? -Infinity : (((1 + m) * v.gain) / v.Q - F) / keep;
      if (!worst || need > worst.need || (need === worst.need && v.Q < worst.Q)) worst = { ...v, need };
    }
    outcomes.push({ s, D, E, T: worst!.T, Q: worst!.Q, gain: worst!.gain });
    // with a margin, a relative 2^-40 on top of the closed form keeps loss >= (1 + m)*gain through float64 rounding
    const need = m > 0 ? worst!.need * (1 + 2 ** -40) : worst!.need;
    if (need > sDet) {
      sDet = need;
      binding = s.name;
    }
  }
  const sChal = challengerStake({ lam, eps: panel.eps, grief: params.grief, kc: params.challengeCost, fees: panel.n * (params.panelFee ?? 0) }).S;
  let S = sDet;
  if (sChal > S) {
    S = sChal;
    binding = "challenger";
  }
  const B = challengeBond({ lam, S, eps: panel.eps, grief: params.grief }).B;
  const A = auditorBond({ lam, S, F, mu: params.metaAuditRate, W: params.workersPerAuditor }).A;
  // the share of segments the sampled checks run on: p of them, and the last one always under the last-segment rule
  const sampledShare = rules.lastSegmentAudited ? p + (1 - p) / N : p;
  const auditCompute = C * auditRatio(set, confirmRatioOf(actions), sampledShare);
  const metaAuditCompute = params.metaAuditRate * auditCompute;
  const stakeCapital = kappa * S;
  const auditorBondCapital = (kappa * A) / params.workersPerAuditor;
  return {
    auditRate: p,
    checks: set.map((c) => c.name),
    stake: S,
    challengerBond: B,
    panelSize: panel.n,
    panelError: panel.eps,
    auditorBond: A,
    metaAuditRate: params.metaAuditRate,
    bindingStake: binding,
    cost: {
      auditCompute,
      metaAuditCompute,
      stakeCapital,
      auditorBondCapital,
      capitalCost: stakeCapital + auditorBondCapital,
      total: auditCompute + metaAuditCompute + stakeCapital + auditorBondCapital,
    },
    strategies: outcomes.map(({ s, D, E, T, Q, gain }) => {
      const loss = (keep * S + F) * Q;
      return { name: s.name, D, screen: E, segmentsTouched: T, Q, gain, loss, margin: loss - gain, marginRatio: gain > 0 ? loss / gain - 1 : null };
    }),
  };
}

/** All non-empty subsets of the checks. */
export function checkSets(checks: CheckInput[]): CheckInput[][] {
  const sets: CheckInput[][] = [];
  for (let mask = 1; mask < 1 << checks.length; mask++) sets.push(checks.filter((_, i) => (mask >> i) & 1));
  return sets;
}

export type OptimiseResult = {
  best: Contract;
  /** Check sets that could deter every strategy, with their best cost. */
  candidates: { checks: string[]; auditRate: number; metaAuditRate: number; total: number }[];
};

/**
 * Cheapest contract over audit rates in (0, 1] and all check sets: exact least (S, B, A) per point,
 * a grid of `params.grid` rates, then golden-section search inside the best grid bracket (the cost is
 * convex in p per check set). With `params.fixedAuditRate`, only that rate is evaluated. Throws NoDeterringContractError when no set sees every saving strategy.
 */
export function optimiseContract(params: ContractParams, actions: ActionSet): OptimiseResult {
  validateContractParams(params);
  validateActionSet(actions);
  const panel = choosePanel(params.jurorError, params.maxPanelError, params.maxPanel);
  const G = params.grid;
  let best: Contract | null = null;
  const candidates: OptimiseResult["candidates"] = [];
  const menu = params.metaAuditMenu ?? [params.metaAuditRate];
  let sets = checkSets(actions.checks);
  if (params.fixedChecks) {
    const unknown = params.fixedChecks.filter((n) => !actions.checks.some((c) => c.name === n));
    if (unknown.length > 0 || params.fixedChecks.length === 0) throw new PolicyParamError(`fixedChecks: ${unknown.length > 0 ? `no check ${unknown.join(", ")} in the detection matrix` : "empty"}`);
    sets = [actions.checks.filter((c) => params.fixedChecks!.includes(c.name))];
  }
  for (const mu of menu) for (const set of sets) {
    const atMu = { ...params, metaAuditRate: mu };
    const at = (p: number) => contractAt(atMu, actions, set, p, panel);
    if (at(1) === null) continue;
    if (params.fixedAuditRate !== undefined) {
      const fixed = at(params.fixedAuditRate)!;
      candidates.push({ checks: fixed.checks, auditRate: fixed.auditRate, metaAuditRate: mu, total: fixed.cost.total });
      if (best === null || fixed.cost.total < best.cost.total * (1 - EPS_REL)) best = fixed;
      continue;
    }
    let bi = G;
    let bc = at(1)!;
    for (let i = 1; i <= G; i++) {
      const c = at(i / G)!;
      if (c.cost.total < bc.cost.total) {
        bc = c;
        bi = i;
      }
    }
    // Golden-section search on [p_{i-1}, p_{i+1}] (convex cost: the minimum lies in this bracket).
    let lo = (bi - 1) / G, hi = Math.min(1, (bi + 1) / G);
    lo = Math.max(lo, 1e-12);
    const phi = (Math.sqrt(5) - 1) / 2;
    let x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    let f1 = at(x1)!.cost.total, f2 = at(x2)!.cost.total;
    for (let it = 0; it < 100 && hi - lo > 1e-12; it++) {
      if (f1 <= f2) {
        hi = x2; x2 = x1; f2 = f1; x1 = hi - phi * (hi - lo); f1 = at(x1)!.cost.total;
      } else {
        lo = x1; x1 = x2; f1 = f2; x2 = lo + phi * (hi - lo); f2 = at(x2)!.cost.total;
      }
    }
    const refined = at((lo + hi) / 2)!;
    const chosen = refined.cost.total < bc.cost.total ? refined : bc;
    candidates.push({ checks: chosen.checks, auditRate: chosen.auditRate, metaAuditRate: mu, total: chosen.cost.total });
    if (best === null || chosen.cost.total < best.cost.total * (1 - EPS_REL)) best = chosen;
  }
  if (best === null) {
    const unseen = actions.strategies.filter((s) => (s.computeSaving > 0 || (params.integrityValue ?? 0) > 0) && actions.checks.every((c) => (s.detection[c.name] ?? 0) === 0));
    throw new NoDeterringContractError(
      `no check detects ${unseen.map((s) => s.name).join(", ") || "some strategy"}, which saves compute: no stake deters it`,
    );
  }
  candidates.sort((a, b) => a.total - b.total);
  return { best, candidates };
}
