/**
 * The exact LP check of a closed-form contract: HiGHS solves "min S + B + A subject to every constraint of the
 * model" (policy/contract-model.ts) at the contract's audit rate, check set and panel; the quote refuses a contract
 * the LP disagrees with (policy/quote.ts).
 */
import highsModule, { type Highs } from "highs";
import { PolicySolverError } from "./params.ts";
import { everySegmentDetection, setDetection, strategyVertices, type ActionSet, type CheckInput, type Contract, type ContractParams, type VertexRules } from "./contract-model.ts";


// highs ships CJS typings with `export default`; under nodenext the default import's type is the
// module object, while at run time the ESM build's default export is the loader itself.
const loadHighs = highsModule as unknown as () => Promise<Highs>;
let highsPromise: Promise<Highs> | null = null;
function highs(): Promise<Highs> {
  highsPromise ??= loadHighs();
  return highsPromise;
}

function num(x: number): string {
  if (!Number.isFinite(x)) throw new PolicySolverError(`non-finite LP coefficient ${x}`);
  return x.toPrecision(17);
}

function term(coef: number, v: string): string {
  return `${coef < 0 ? "-" : "+"} ${num(Math.abs(coef))} ${v}`;
}

export type LpSolution = { stake: number; challengerBond: number; auditorBond: number; status: string };

/**
 * Solves, with HiGHS, the LP "min S + B + A subject to every constraint of the model" at a fixed audit
 * rate, check set and panel. Money is scaled by C inside the LP so coefficients are O(1). Returns null
 * when the LP is infeasible (a saving strategy with D = 0).
 */
export async function solveContractLp(
  params: ContractParams,
  actions: ActionSet,
  set: CheckInput[],
  p: number,
  panel: { n: number; eps: number },
): Promise<LpSolution | null> {
  const C = params.computeCost;
  const F = params.forfeit / C;
  const { lam } = params;
  const eps = panel.eps;
  const W = params.workersPerAuditor;
  const muW = 1 - Math.pow(1 - params.metaAuditRate, W);
  const rows: string[] = [];
  for (const [i, s] of actions.strategies.entries()) {
    // money is scaled by C: a vertex's gain / C
    const rules: VertexRules = { lastSegmentAudited: params.lastSegmentAudited ?? false, integrityValue: (params.integrityValue ?? 0) / C };
    for (const [j, v] of strategyVertices(s, setDetection(s, set), everySegmentDetection(s, set, actions), p, params.segments, 1, rules).entries()) {
      if (v.gain === 0) continue;
      // (1 + m)*gain <= ((1 - lam)*S + F) * Q   <=>   (1 - lam)*Q*S >= (1 + m)*gain - F*Q
      rows.push(` deter${i}v${j}: ${term((1 - lam) * v.Q, "S")} >= ${num((1 + (params.margin ?? 0)) * v.gain - F * v.Q)}`);
    }
  }
  rows.push(` frivolous: ${term(1 - eps, "B")} ${term(-eps * lam, "S")} >= ${num(params.grief / C)}`);
  rows.push(` honest: ${term((1 - eps) * lam, "S")} ${term(-eps, "B")} >= ${num((params.challengeCost + panel.n * (params.panelFee ?? 0)) / C)}`);
  rows.push(` bribe: ${term(muW, "A")} ${term(-W * (1 - lam), "S")} >= ${num(W * F)}`);
  const lp = ["Minimize", " obj: S + B + A", "Subject To", ...rows, "Bounds", " S >= 0", " B >= 0", " A >= 0", "End"].join("\n");
  const h = await highs();
  const r = h.solve(lp, { output_flag: false });
  if (r.Status === "Infeasible") return null;
  if (r.Status !== "Optimal") throw new PolicySolverError(`HiGHS did not solve the contract LP: ${r.Status}`);
  const col = (v: string) => (r.Columns as Record<string, { Primal: number }>)[v]?.Primal ?? 0;
  return { stake: col("S") * C, challengerBond: col("B") * C, auditorBond: col("A") * C, status: r.Status };
}

/** Relative agreement used when the closed form is checked against the LP. */
export const LP_TOLERANCE = 1e-6;

/** Checks a closed-form contract against the HiGHS LP at the same point; throws PolicySolverError if they differ. */
export async function verifyWithLp(params: ContractParams, actions: ActionSet, c: Contract): Promise<LpSolution> {
  const set = actions.checks.filter((k) => c.checks.includes(k.name));
  const lp = await solveContractLp({ ...params, metaAuditRate: c.metaAuditRate }, actions, set, c.auditRate, { n: c.panelSize, eps: c.panelError });
  if (lp === null) throw new PolicySolverError("HiGHS found the contract LP infeasible where the closed form found a contract");
  const scale = params.computeCost;
  const close = (a: number, b: number) => Math.abs(a - b) <= LP_TOLERANCE * Math.max(scale, Math.abs(a), Math.abs(b));
  if (!close(lp.stake, c.stake) || !close(lp.challengerBond, c.challengerBond) || !close(lp.auditorBond, c.auditorBond)) {
    throw new PolicySolverError(
      `closed form (S=${c.stake}, B=${c.challengerBond}, A=${c.auditorBond}) and HiGHS LP (S=${lp.stake}, B=${lp.challengerBond}, A=${lp.auditorBond}) disagree`,
    );
  }
  return lp;
}
