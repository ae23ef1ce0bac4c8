/**
 * The contract model (policy/contract.ts optimises over it; policy/contract-lp.ts checks it with an LP). The cheapest
 * contract: the audit rate p, the set of checks run on an audited segment, the provider
 * stake S, the challenger bond B, the panel size and the auditor bond A, such that no action in the
 * measured action set pays, at least expected cost to the buyer.
 *
 * Model (docs/economics.md has the derivation and the proofs):
 * - A job has N segments; training one costs c = C/N (C: honest compute cost of the job, tokens).
 * - Each segment is audited independently with probability p; an audited segment is checked with
 *   every sampled check of the chosen set X. Checks marked `everySegment` (the state screen) run on
 *   EVERY committed segment whatever p, and a failure makes the auditor recompute the segment that
 *   produced the state. A strategy a applied to a segment is caught with probability
 *   q_a = max(p*D_a, E_a), D_a = max over sampled j in X of detection[a][j], E_a = max over
 *   every-segment j in X of detection[a][j] times the confirming recompute's detection (conservative:
 *   the misses of different checks are assumed perfectly correlated).
 * - What a caught provider loses is what its side loses: (1 - lam)*S + F (F: payment forfeited), not
 *   S + F, because the provider can dispute its own cheat from a second address and take back the
 *   challenger's share lam*S (DisputeGame shares the reward among the disputes open at the fault).
 * - Strategies differ in the segments they must touch. A per-segment cheat (skip, quarter-batch,
 *   stale, fp16, copy) saves compute on each segment it is applied to; the provider may apply any
 *   strategies to any segments, its profit over honesty is convex in the number of segments per
 *   strategy, so the best deviation is a vertex: cheat on all N segments with one strategy,
 *   Q_a = 1 - (1 - q_a)^N. A one-shot cheat (state-poison, nan-plant, a plant: `segmentsTouched` T)
 *   injects once and saves the rest of the job, so it is caught with 1 - (1 - q_a)^T, not with the
 *   N-segment probability; an injection in the job's last T segments escapes the every-segment screen
 *   (no later segment starts from it) but saves at most T/N of the job. No action pays iff for every
 *   strategy a and each of its vertices: gain <= ((1 - lam)*S + F) * Q.
 * - The last segment rule (`lastSegmentAudited`, the bot's): the last segment is checked with the set at rate 1, so
 *   its cheat is caught with D; a per-segment cheat then also has the vertices "all but the last" and "the last alone",
 *   and a one-shot injection in the last T segments is caught with 1 - (1 - D)(1 - p*D)^(T-1) (strategyVertices).
 * - A strict margin m and the integrity value V: every vertex's gain is max(compute saved, V) (a planted or
 *   unfinished model costs the buyer V, and is worth at least that to its planter), and the stake makes
 *   ((1 - lam)*S + F) * Q >= (1 + m) * gain, never equality for m > 0.
 * - Challenges are decided by a panel of n jurors, each wrong with probability e; the panel errs with
 *   eps = P(Bin(n, e) > n/2). A frivolous challenge must not pay: eps*lam*S + grief <= (1-eps)*B. An
 *   honest one must: (1-eps)*lam*S - eps*B >= kc.
 * - A caught provider can bribe the auditor with up to S + F; an auditor auditing W providers with a
 *   meta-audit rate mu must not take the bribes: W*((1-lam)*S + F) <= (1-(1-mu)^W)*A.
 * - Cost to the buyer per job: audit compute p'*C*(sum of the set's costRatio + P(false alarm)*confirm
 *   ratio), times (1 + mu) for the meta-audits that redo a share mu of the audits, + capital cost
 *   kappa*S + kappa*A/W (the auditor's bond is shared by its W jobs); p' = p, or p + (1 - p)/N with the last-segment
 *   rule (the last segment is always audited). Challenge bonds are posted only
 *   against cheats, which the contract deters, so they carry no cost here.
 *
 * For fixed (p, X, n) the constraints have a componentwise least feasible point (closed form below),
 * so the LP min S + B + A (HiGHS) finds it exactly whatever the prices; the cost is convex in p (1/Q_a
 * is convex for concave Q_a), so a grid plus golden-section search per check set (and per meta-audit
 * rate of the menu, when one is given) finds the optimum.
 */
import { falseAlarmRate, type DetectionMatrix } from "./detection.ts";
import { panelError } from "./bonds.ts";
import { integerAtLeast, nonNegative, positive, positiveProbability, probability, NoDeterringContractError, PolicyParamError } from "./params.ts";

export type ContractParams = {
  /** C: honest compute cost of the whole job (tokens, > 0). */
  computeCost: number;
  /** N: segments in the job (integer >= 1). */
  segments: number;
  /** F: payment the provider forfeits when caught (tokens, >= 0). */
  forfeit: number;
  /** kappa: capital cost per unit of stake per job (tokens per token locked for one job, >= 0). */
  capitalRate: number;
  /** lam: share of the slashed stake paid to the successful challenger, (0, 1]. */
  lam: number;
  /** kc: cost to an honest challenger of bringing a challenge: gas, proofs (tokens, >= 0). */
  challengeCost: number;
  /**
   * f: DisputeGame's panel fee per member (tokens, >= 0; default 0). A challenger whose dispute the panel decides
   * pays up to n*f, so the honest-challenge constraint adds n*f to kc.
   */
  panelFee?: number;
  /** grief: value a malicious challenger gets from a frivolous challenge whatever its outcome (tokens, >= 0). */
  grief: number;
  /** e: probability that one juror votes wrongly, [0, 0.5). */
  jurorError: number;
  /** Largest acceptable panel error eps; the panel is the smallest odd size reaching it, (0, 0.5). */
  maxPanelError: number;
  /** Largest panel that can be drawn (odd integer >= 1). */
  maxPanel: number;
  /** mu: probability that one audit is meta-audited, (0, 1]. */
  metaAuditRate: number;
  /**
   * Optional menu of meta-audit rates to choose from (each in (0, 1]); when given, the optimiser picks
   * the cheapest mu from it and metaAuditRate is ignored. Meta-audits cost mu * audit compute and
   * shrink the auditor bond, so the best mu depends on the job.
   */
  metaAuditMenu?: number[];
  /** W: providers one auditor audits at once (integer >= 1). */
  workersPerAuditor: number;
  /** Points of the audit-rate grid p = i/G, i = 1..G (integer >= 2). */
  grid: number;
  /**
   * Optional fixed check set (names of the action set's checks): the checks the auditors actually run (the
   * challenger bot: recompute on sampled segments, the screen on every one); only that set is priced.
   */
  fixedChecks?: string[];
  /**
   * Optional fixed audit rate p in (0, 1]: when the rate is set elsewhere (a manifest's policy.auditRate,
   * which the auditors sample at), the optimiser chooses only the check set and the meta-audit rate at it.
   */
  fixedAuditRate?: number;
  /**
   * m: strict deterrence margin (>= 0, default 0): every vertex of every strategy must satisfy
   * ((1 - lam)*S + F)*Q >= (1 + m)*gain, so a cheater expects to lose at least m times its gain on top of it.
   */
  margin?: number;
  /**
   * V: the buyer's integrity value (tokens, >= 0, default 0): what a planted or unfinished model would cost it. Every
   * vertex's gain is max(compute saved, V): a backdoor is worth at least what it costs the buyer to its planter.
   */
  integrityValue?: number;
  /**
   * The last segment is audited with the sampled checks whatever p (default false): the challenger bot recomputes it
   * before the challenge window closes (bot.ts sample), so a cheat in it is caught with the set's detection D, not p*D.
   */
  lastSegmentAudited?: boolean;
};

export type StrategyInput = {
  name: string;
  /** Fraction of the job's honest compute saved. */
  computeSaving: number;
  /** Detection per check per audited affected segment. */
  detection: Record<string, number>;
  /**
   * Segments the cheat must touch: "all" (default) for a per-segment cheat whose saving scales with the segments it
   * is applied to, or T for a one-shot cheat that injects in T segments and saves `computeSaving` of the whole job.
   */
  segmentsTouched?: number | "all";
};

export type CheckInput = {
  name: string;
  costRatio: number;
  falseAlarmRate: number;
  /** Runs on every committed segment whatever the audit rate (the state screen); default false (sampled at p). */
  everySegment?: boolean;
};

/** The action set and the checks: the detection matrix, in the form the optimiser uses. */
export type ActionSet = { checks: CheckInput[]; strategies: StrategyInput[] };

export function actionSetFromMatrix(m: DetectionMatrix): ActionSet {
  return {
    checks: m.checks.map((c) => ({ name: c.name, costRatio: c.costRatio, falseAlarmRate: falseAlarmRate(m, c.name), ...(c.everySegment ? { everySegment: true } : {}) })),
    strategies: m.strategies.map((s) => ({ name: s.name, computeSaving: s.computeSaving, detection: s.detection, ...(s.segmentsTouched !== undefined ? { segmentsTouched: s.segmentsTouched } : {}) })),
  };
}

export type StrategyOutcome = {
  name: string;
  /** D: per-segment detection of the chosen check set (q / p for sampled checks; the every-segment screen in `screen`). */
  D: number;
  /** E: per-segment detection by the every-segment checks (confirmed by a recompute); 0 without one in the set. */
  screen: number;
  /** Segments the cheat touches at its binding vertex (N for a per-segment cheat). */
  segmentsTouched: number;
  /** Q: probability that the binding vertex of this cheat is caught at least once. */
  Q: number;
  /** gain: the compute the binding vertex saves, computeSaving * C or less (tokens). */
  gain: number;
  /** loss: what the provider side expects to lose at the binding vertex, ((1 - lam)*S + F)*Q (tokens). */
  loss: number;
  /** margin: loss - gain, the largest extra private value of this cheat still deterred (tokens). */
  margin: number;
  /** marginRatio: loss / gain - 1 (>= the contract's m for every saving vertex); null when the vertex gains nothing. */
  marginRatio: number | null;
};

/** How the vertices of a strategy are priced beyond (p, D, E, N, C): the last-segment rule and the integrity value. */
export type VertexRules = { lastSegmentAudited?: boolean; integrityValue?: number };

/**
 * The vertices of a strategy's best deviation: (catch probability, gain) pairs it can choose between (contract.ts
 * header). Without the last-segment rule, a per-segment cheat has one vertex, all N segments, and a one-shot cheat
 * touching T segments two: injected before the last T segments (the every-segment screen sees its effect at a later
 * segment start) and injected in them (sampled checks only).
 * With `lastSegmentAudited` the last segment is checked with the set's D at rate 1 (the bot recomputes it), so a
 * per-segment cheat also has the vertices "every segment but the last" (T = N - 1, saves (N-1)/N) and "the last
 * segment alone" (T = 1, saves 1/N): its profit is convex in the number of other segments cheated, with and without
 * the last one. Every gain is at least the integrity value V (a planted or unfinished model costs the buyer V).
 * With V > 0 a per-segment cheat's gain max(g k / N, V) is flat in k up to k* = ceil(V N / g), so its profit is no
 * longer convex in k: on the flat part the catch probability grows with k while the gain does not, so the cheapest
 * deviation there is the fewest segments. The vertices then also hold k = 1 and k = k* (every segment but the last
 * chosen, and with the last one: k* - 1 others plus the last).
 */
export function strategyVertices(s: StrategyInput, sampled: number, every: number, p: number, N: number, C: number, rules: VertexRules = {}): { T: number; Q: number; gain: number }[] {
  const V = rules.integrityValue ?? 0;
  const g = s.computeSaving * C;
  const q = Math.max(p * sampled, every);
  const vertex = (T: number, Q: number, gain: number) => ({ T, Q, gain: Math.max(gain, V) });
  // k = 1 and the kink k* of max(g k / N, V), clamped to 1..kMax (only when V > 0: below it the gain is linear in k)
  const fewest = (kMax: number): number[] => {
    if (V <= 0 || kMax < 1) return [];
    const kink = g > 0 ? Math.min(kMax, Math.max(1, Math.ceil((V * N) / g))) : kMax;
    return [...new Set([1, kink])];
  };
  if (!rules.lastSegmentAudited) {
    if (s.segmentsTouched === undefined || s.segmentsTouched === "all") return [vertex(N, catchProbability(q, N), g), ...fewest(N - 1).map((k) => vertex(k, catchProbability(q, k), (g * k) / N))];
    const T = Math.min(s.segmentsTouched, N);
    const last = vertex(T, catchProbability(p * sampled, T), Math.min(g, (C * T) / N));
    return T < N ? [vertex(T, catchProbability(q, T), g), last] : [last];
  }
  // the last segment: the sampled checks at rate 1 (its end state is the final one, which no later segment starts from)
  const qLast = Math.max(sampled, every);
  const withLast = (qOthers: number, others: number, lastQ: number) => 1 - (1 - catchProbability(qOthers, others)) * (1 - lastQ);
  if (s.segmentsTouched === undefined || s.segmentsTouched === "all") {
    if (N === 1) return [vertex(1, qLast, g)];
    return [
      vertex(N, withLast(q, N - 1, qLast), g),
      vertex(N - 1, catchProbability(q, N - 1), (g * (N - 1)) / N),
      vertex(1, qLast, g / N),
      // V > 0: k other segments without the last, and k - 1 others with it
      ...fewest(N - 1).flatMap((k) => [vertex(k, catchProbability(q, k), (g * k) / N), ...(k > 1 ? [vertex(k, withLast(q, k - 1, qLast), (g * k) / N)] : [])]),
    ];
  }
  const T = Math.min(s.segmentsTouched, N);
  // injected in the last T segments: the last one is recomputed (D), the T - 1 before it sampled (p*D)
  const last = vertex(T, withLast(p * sampled, T - 1, sampled), Math.min(g, (C * T) / N));
  return T < N ? [vertex(T, catchProbability(q, T), g), last] : [last];
}

export type Contract = {
  /** p: audit probability per segment. */
  auditRate: number;
  /** Checks run on each audited segment. */
  checks: string[];
  /** S: provider stake (tokens). */
  stake: number;
  /** B: challenger bond (tokens). */
  challengerBond: number;
  /** n: referee panel size (odd). */
  panelSize: number;
  /** eps: probability the panel decides wrongly. */
  panelError: number;
  /** A: auditor bond (tokens). */
  auditorBond: number;
  /** mu: meta-audit rate the auditor bond is sized for. */
  metaAuditRate: number;
  /** Which constraint sets the stake: a strategy's name, "challenger" or "none" (S = 0). */
  bindingStake: string;
  cost: {
    /** Expected audit compute per job, including confirming recomputes after false alarms (tokens). */
    auditCompute: number;
    /** Expected meta-audit compute per job: mu * auditCompute (tokens). */
    metaAuditCompute: number;
    /** kappa*S (tokens). */
    stakeCapital: number;
    /** kappa*A/W (tokens). */
    auditorBondCapital: number;
    /** stakeCapital + auditorBondCapital (tokens). */
    capitalCost: number;
    /** auditCompute + metaAuditCompute + capitalCost (tokens). */
    total: number;
  };
  strategies: StrategyOutcome[];
};


/** Validates ContractParams; throws PolicyParamError naming the bad field. */
export function validateContractParams(p: ContractParams): ContractParams {
  positive("computeCost", p.computeCost);
  integerAtLeast("segments", p.segments, 1);
  nonNegative("forfeit", p.forfeit);
  nonNegative("capitalRate", p.capitalRate);
  positiveProbability("lam", p.lam);
  nonNegative("challengeCost", p.challengeCost);
  if (p.panelFee !== undefined) nonNegative("panelFee", p.panelFee);
  nonNegative("grief", p.grief);
  probability("jurorError", p.jurorError);
  if (p.jurorError >= 0.5) throw new PolicyParamError(`jurorError must be < 0.5 (a majority of jurors must tend to be right), got ${p.jurorError}`);
  positiveProbability("maxPanelError", p.maxPanelError);
  if (p.maxPanelError >= 0.5) throw new PolicyParamError(`maxPanelError must be < 0.5, got ${p.maxPanelError}`);
  integerAtLeast("maxPanel", p.maxPanel, 1);
  if (p.maxPanel % 2 === 0) throw new PolicyParamError(`maxPanel must be odd, got ${p.maxPanel}`);
  positiveProbability("metaAuditRate", p.metaAuditRate);
  if (p.metaAuditMenu !== undefined) {
    if (p.metaAuditMenu.length === 0) throw new PolicyParamError("metaAuditMenu must not be empty");
    p.metaAuditMenu.forEach((mu, i) => positiveProbability(`metaAuditMenu[${i}]`, mu));
  }
  integerAtLeast("workersPerAuditor", p.workersPerAuditor, 1);
  integerAtLeast("grid", p.grid, 2);
  if (p.fixedAuditRate !== undefined) positiveProbability("fixedAuditRate", p.fixedAuditRate);
  if (p.margin !== undefined) nonNegative("margin", p.margin);
  if (p.integrityValue !== undefined) nonNegative("integrityValue", p.integrityValue);
  return p;
}

export function validateActionSet(a: ActionSet): ActionSet {
  if (a.checks.length === 0) throw new PolicyParamError("the action set has no checks");
  if (a.checks.length > 12) throw new PolicyParamError(`at most 12 checks are supported (2^checks sets are searched), got ${a.checks.length}`);
  for (const c of a.checks) {
    nonNegative(`costRatio of ${c.name}`, c.costRatio);
    probability(`falseAlarmRate of ${c.name}`, c.falseAlarmRate);
  }
  for (const s of a.strategies) {
    probability(`computeSaving of ${s.name}`, s.computeSaving);
    for (const c of a.checks) probability(`detection of ${s.name} by ${c.name}`, s.detection[c.name] ?? Number.NaN);
  }
  return a;
}

/** Smallest odd panel n <= maxPanel with panelError(n, e) <= maxPanelError. */
export function choosePanel(jurorError: number, maxPanelError: number, maxPanel: number): { n: number; eps: number } {
  for (let n = 1; n <= maxPanel; n += 2) {
    const eps = panelError(n, jurorError);
    if (eps <= maxPanelError) return { n, eps };
  }
  throw new NoDeterringContractError(
    `no panel of at most ${maxPanel} jurors with juror error ${jurorError} reaches panel error <= ${maxPanelError}`,
  );
}

/** Q = 1 - (1 - q)^N computed without cancellation for small q. */
export function catchProbability(q: number, N: number): number {
  if (q >= 1) return 1;
  return -Math.expm1(N * Math.log1p(-q));
}

/** The chosen sampled checks' per-segment detection of a strategy: the max over the set (conservative). */
export function setDetection(s: StrategyInput, set: CheckInput[]): number {
  let d = 0;
  for (const c of set) if (!c.everySegment) d = Math.max(d, s.detection[c.name] ?? 0);
  return d;
}

/**
 * The chosen every-segment checks' detection of a strategy, each confirmed by the recompute of the segment that
 * produced the flagged state (the bot's rule): detection[check] * detection[recompute] (1 without a recompute row).
 */
export function everySegmentDetection(s: StrategyInput, set: CheckInput[], actions: ActionSet): number {
  const confirm = actions.checks.some((c) => c.name === "recompute") ? (s.detection["recompute"] ?? 0) : 1;
  let d = 0;
  for (const c of set) if (c.everySegment) d = Math.max(d, (s.detection[c.name] ?? 0) * confirm);
  return d;
}
