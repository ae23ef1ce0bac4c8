/**
 * The closed forms by name, with each parameter's meaning and unit: what `pouw policy <name>` lists in
 * its help and evaluates. Values arrive as strings from the command line and are parsed here.
 */
import {
  bribeFloor,
  brierRent,
  budgetStake,
  collusionStake,
  deterrence,
  inspection,
  minStake,
  multiAuditor,
  replicationStake,
  spotCheck,
} from "./formulas.ts";
import { PolicyParamError } from "./params.ts";

export type FormulaParam = { name: string; unit: string; meaning: string };

export type FormulaSpec = {
  name: string;
  summary: string;
  /** The formula as printed in help. */
  formula: string;
  params: FormulaParam[];
  /** Output names, as in the formula, with their meaning. */
  outputs: { name: string; meaning: string }[];
  evaluate: (values: Record<string, number>) => Record<string, number | boolean | string>;
};

const tok = "tokens";
const prob = "probability";
const P = (name: string, unit: string, meaning: string): FormulaParam => ({ name, unit, meaning });
const O = (name: string, meaning: string) => ({ name, meaning });

const inspectionParams = [
  P("s", tok, "what the worker saves by cheating"),
  P("S", tok, "stake lost when caught"),
  P("k", tok, "auditor's cost of one check"),
  P("lam", "share [0,1]", "auditor's share of the slashed stake"),
  P("h", tok, "harm to the auditor from an unchecked cheat"),
];

export const FORMULAS: readonly FormulaSpec[] = [
  {
    name: "inspection",
    summary: "inspection game: equilibrium cheat and check rates",
    formula: "y* = s/(s+S), x* = k/(lam*S + h); if k >= lam*S + h then (x, y) = (1, 0)",
    params: inspectionParams,
    outputs: [O("x", "cheat rate x*"), O("y", "check rate y*"), O("regime", "mixed | no-check")],
    evaluate: (v) => inspection({ s: v.s!, S: v.S!, k: v.k!, lam: v.lam!, h: v.h! }),
  },
  {
    name: "multi-auditor",
    summary: "m independent auditors sharing the catch reward",
    formula: "D = s/(s+S); y = 1-(1-D)^(1/m); x = k*m*y/(lam*S*D + h*m*y); total check cost k*m*y",
    params: [...inspectionParams, P("m", "count", "independent auditors (integer >= 1)")],
    outputs: [O("D", "detection probability"), O("y", "each auditor's check rate"), O("x", "cheat rate"), O("totalCheckCost", "k*m*y (tokens)"), O("regime", "mixed | no-check | always-cheat")],
    evaluate: (v) => multiAuditor({ s: v.s!, S: v.S!, k: v.k!, lam: v.lam!, h: v.h!, m: v.m! }),
  },
  {
    name: "deterrence",
    summary: "does cheating pay at audit probability p",
    formula: "cheating pays iff (1-p)*g > p*S; threshold p >= g/(g+S)",
    params: [P("g", tok, "gain from an unaudited cheat"), P("S", tok, "stake lost when audited"), P("p", prob, "audit probability")],
    outputs: [O("cheatPays", "(1-p)*g > p*S"), O("advantage", "(1-p)*g - p*S (tokens)"), O("pThreshold", "g/(g+S)")],
    evaluate: (v) => deterrence({ g: v.g!, S: v.S!, p: v.p! }),
  },
  {
    name: "min-stake",
    summary: "minimum deterring stake at audit probability p",
    formula: "S >= g*(1-p)/p",
    params: [P("g", tok, "gain from an unaudited cheat"), P("p", "probability (0,1]", "audit probability")],
    outputs: [O("S", "minimum stake (tokens)")],
    evaluate: (v) => minStake({ g: v.g!, p: v.p! }),
  },
  {
    name: "budget-stake",
    summary: "stake for n identical jobs with an audit budget of B jobs",
    formula: "p = B/n; S* = g*(n/B - 1)",
    params: [P("g", tok, "gain from an unaudited cheat per job"), P("n", "count", "identical jobs (integer >= 1)"), P("B", "jobs", "audit budget, 0 < B <= n")],
    outputs: [O("p", "audit probability per job"), O("S", "minimum stake (tokens)")],
    evaluate: (v) => budgetStake({ g: v.g!, n: v.n!, B: v.B! }),
  },
  {
    name: "spot-check",
    summary: "spot checks with flat and per-hit slashing",
    formula: "deterred iff min(F, f*k) >= T*g",
    params: [
      P("T", "steps", "steps in the job (integer >= 1)"),
      P("g", tok, "gain per corrupted step"),
      P("F", tok, "flat slash (cap on the penalty)"),
      P("f", tok, "slash per audited step found corrupted"),
      P("k", "count", "audited steps (integer >= 0)"),
    ],
    outputs: [O("penalty", "min(F, f*k) (tokens)"), O("gain", "T*g (tokens)"), O("deterred", "penalty >= gain")],
    evaluate: (v) => spotCheck({ T: v.T!, g: v.g!, F: v.F!, f: v.f!, k: v.k! }),
  },
  {
    name: "replication-stake",
    summary: "replicated execution, secret assignment, colluding fraction beta",
    formula: "p = beta^(k-1); honesty is the unique equilibrium iff S >= G*p/(1-p)",
    params: [P("G", tok, "gain from a cheat that goes through"), P("beta", "share [0,1)", "fraction of workers that collude"), P("k", "count", "replicas per job (integer >= 2)")],
    outputs: [O("p", "beta^(k-1)"), O("S", "minimum stake (tokens)")],
    evaluate: (v) => replicationStake({ G: v.G!, beta: v.beta!, k: v.k! }),
  },
  {
    name: "bribe-floor",
    summary: "smallest bribe that silences an auditor kept honest by planted faults",
    formula: "b*(x) = lam*S + h + (phi*J - k)/((1-phi)*x)",
    params: [
      P("lam", "share [0,1]", "auditor's share of the slashed stake"),
      P("S", tok, "provider stake"),
      P("h", tok, "harm to the auditor from an unchecked cheat"),
      P("phi", "probability [0,1)", "planted-fault rate"),
      P("J", tok, "jackpot for catching a planted fault"),
      P("k", tok, "cost of one check"),
      P("x", "probability (0,1]", "cheat rate among real jobs"),
    ],
    outputs: [O("b", "bribe floor b*(x) (tokens)"), O("checksUnbribed", "b > 0")],
    evaluate: (v) => bribeFloor({ lam: v.lam!, S: v.S!, h: v.h!, phi: v.phi!, J: v.J!, k: v.k!, x: v.x! }),
  },
  {
    name: "collusion-stake",
    summary: "stake at which bribing all m auditors does not pay",
    formula: "bonus = max(0, m*(phi*J - k)/(1-phi)); S_c = max(0, ((s - bonus)/m - h)/lam)",
    params: [
      P("s", tok, "what the provider saves by cheating"),
      P("m", "count", "auditors to bribe (integer >= 1)"),
      P("phi", "probability [0,1)", "planted-fault rate"),
      P("J", tok, "planted-fault jackpot"),
      P("k", tok, "cost of one check"),
      P("h", tok, "harm to an auditor from an unchecked cheat"),
      P("lam", "share (0,1]", "auditor's share of the slashed stake"),
    ],
    outputs: [O("bonus", "planted-fault surplus of the m auditors (tokens)"), O("Sc", "collusion-proof stake S_c (tokens)")],
    evaluate: (v) => collusionStake({ s: v.s!, m: v.m!, phi: v.phi!, J: v.J!, k: v.k!, h: v.h!, lam: v.lam! }),
  },
  {
    name: "brier-rent",
    summary: "Brier-score payment: rent per unit of effort cost",
    formula: "rent = (n-1)/(a+b) for a Beta(a,b) prior and n held-out examples",
    params: [P("a", "> 0", "Beta prior parameter a"), P("b", "> 0", "Beta prior parameter b"), P("n", "count", "held-out examples (integer >= 1)")],
    outputs: [O("rent", "rent per unit of effort cost")],
    evaluate: (v) => brierRent({ a: v.a!, b: v.b!, n: v.n! }),
  },
];

export function formulaByName(name: string): FormulaSpec {
  const f = FORMULAS.find((x) => x.name === name);
  if (!f) throw new PolicyParamError(`unknown formula "${name}"; one of: ${FORMULAS.map((x) => x.name).join(", ")}`);
  return f;
}

/**
 * Parses `--name value` strings for a formula: every parameter required, each a finite decimal number.
 * Throws PolicyParamError naming the first missing or malformed one; the formula validates domains.
 */
export function parseFormulaArgs(spec: FormulaSpec, raw: Record<string, string | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of spec.params) {
    const s = raw[p.name];
    if (s === undefined) throw new PolicyParamError(`${spec.name}: missing --${p.name} (${p.meaning}, ${p.unit})`);
    const t = s.trim();
    const x = t === "" ? Number.NaN : Number(t);
    if (!Number.isFinite(x)) throw new PolicyParamError(`${spec.name}: --${p.name} must be a finite number, got ${JSON.stringify(s)}`);
    out[p.name] = x;
  }
  return out;
}
