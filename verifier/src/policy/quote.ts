/**
 * `quotePolicy`: the recommended contract for one job, from the manifest's payment and segment count
 * and the measured detection matrix. `pouw quote` prints it; `buyer create` uses it for the job's
 * policy unless the buyer overrides it.
 */
import { parseManifestJson, readManifestText, type Manifest } from "../ml/manifest.ts";
import { logger } from "../log/index.ts";
import { detectionKindOf, type DetectionMatrix, type JobKindDetection } from "./detection.ts";
import { actionSetFromMatrix, optimiseContract, type Contract, type ContractParams } from "./contract.ts";
import { verifyWithLp } from "./contract-lp.ts";
import { finite, nonNegative, positive, positiveProbability, PolicyParamError } from "./params.ts";
import { InputError } from "../errors/index.ts";
import { computeCostOf, DEFAULT_COMPUTE_PRICE, jobFlopsOf } from "./compute.ts";

const log = logger("policy");

/**
 * One class of cheat at its binding vertex: sampled detection D, every-segment screen detection, segments touched, catch
 * probability Q, gain max(compute saved, V), the provider side's expected loss ((1 - lam)*S + F)*Q and the margin
 * loss - gain (wei), the margin as a share of the gain (loss / gain - 1; null when the class gains nothing), and what
 * that means for the buyer in one sentence.
 */
export type QuoteStrategy = {
  name: string;
  D: number;
  screen: number;
  segmentsTouched: number;
  Q: number;
  gainWei: string;
  lossWei: string;
  marginWei: string;
  marginRatio: number | null;
  statement: string;
};

/** The manifest fields a quote needs. */
export type QuoteJob = {
  /** Payment escrowed for the job (wei of the payment token). */
  paymentWei: bigint;
  /** Training steps. */
  steps: number;
  /** Steps per committed segment. */
  stepsPerSegment: number;
  /**
   * Nominal FLOPs of the honest job (policy/compute.ts jobFlopsOf); absent: unknown, and the compute cost is the
   * payment share alone.
   */
  flops?: number;
  /** The job kind whose measured matrix prices it (policy/detection.ts detectionPathFor); absent: full training. */
  kind?: JobKindDetection;
};

/**
 * Economic assumptions of a quote. Money ones are shares of the payment, so they need no token unit.
 * Defaults are documented in docs/economics.md.
 */
export type QuoteOptions = {
  /**
   * The floor of C as a share of the payment (default 1: zero margin, conservative): C = max(computeCostShare x
   * payment, the job's FLOPs x computePrice).
   */
  computeCostShare: number;
  /**
   * Tokens per TFLOP (10^12 nominal FLOPs, >= 0) the job's compute is worth (default DEFAULT_COMPUTE_PRICE, 0.01):
   * a cheater's gain is the compute it skips, so C grows with the model's FLOPs per step x steps.
   */
  computePrice: number;
  /** F / payment: payment forfeited by a caught provider (default 1: escrow is refunded on a successful challenge). */
  forfeitShare: number;
  /** kappa: capital cost per unit of stake per job (default 0.01). */
  capitalRate: number;
  /** lam: challenger's share of the slashed stake (default 0.5). */
  lam: number;
  /** kc / payment: an honest challenger's cost of challenging (default 0.01). */
  challengeCostShare: number;
  /** grief / payment: value of a frivolous challenge to a malicious challenger (default 0.05). */
  griefShare: number;
  /** e: probability one juror votes wrongly (default 0.1). */
  jurorError: number;
  /** Largest acceptable panel error (default 1e-6). */
  maxPanelError: number;
  /** Largest panel (odd, default 51). */
  maxPanel: number;
  /** mu: meta-audit rate; null (default) lets the optimiser choose from META_AUDIT_MENU. */
  metaAuditRate: number | null;
  /** W: providers one auditor audits at once (default 1). */
  workersPerAuditor: number;
  /** Audit-rate grid points (default 200). */
  grid: number;
  /**
   * Tokens (18 decimals) the challenger pays each panel member when a panel decides (the DisputeGame's
   * panelFee). Adds n * panelFee to an honest challenger's cost (docs/disputes.md). Default 0: the quote's
   * own panel (n chosen for maxPanelError, 23 at the defaults) is a recommendation, not a deployed game;
   * `buyer create` prices the deployed panel's size and fee (market/job-policy.ts).
   */
  panelFee: number;
  /**
   * The checks priced: null (default) prices the checks the challenger bot runs (PIPELINE_CHECKS: recompute on the
   * sampled segments, the state screen on every segment), which is what a job is really audited with; a list prices
   * that set; [] lets the optimiser choose any subset of the matrix (a recommendation for auditors running other checks).
   */
  checks: string[] | null;
  /**
   * p: audit rate fixed by the job (the manifest's policy.auditRate, which auditors sample at); null
   * (default) lets the optimiser choose it.
   */
  auditRate: number | null;
  /**
   * m: strict margin (> 0, default DEFAULT_MARGIN): the stake makes every class's expected loss at least (1 + m) times
   * its gain, never equal to it.
   */
  margin: number;
  /**
   * V: the buyer's integrity value in tokens (18 decimals, >= 0, default 0): what a planted or unfinished model would
   * cost it. Every class's gain is max(compute saved, V), so plants (which save nothing) are priced against V.
   */
  integrityValue: number;
  /** The last segment is recomputed whatever p (default true: the challenger bot does, bot.ts); false prices it at p. */
  lastSegmentAudited: boolean;
};

/** The quote's default strict margin m: every cheater expects to lose at least 1.25 times what it gains. */
export const DEFAULT_MARGIN = 0.25;

export const DEFAULT_QUOTE_OPTIONS: Readonly<QuoteOptions> = Object.freeze({
  computeCostShare: 1,
  computePrice: DEFAULT_COMPUTE_PRICE,
  forfeitShare: 1,
  capitalRate: 0.01,
  lam: 0.5,
  challengeCostShare: 0.01,
  griefShare: 0.05,
  jurorError: 0.1,
  maxPanelError: 1e-6,
  maxPanel: 51,
  metaAuditRate: null,
  workersPerAuditor: 1,
  grid: 200,
  panelFee: 0,
  checks: null,
  auditRate: null,
  margin: DEFAULT_MARGIN,
  integrityValue: 0,
  lastSegmentAudited: true,
});

/** The checks the challenger bot runs on a job (checks/target.ts): recompute on sampled segments, the screen on every one. */
export const PIPELINE_CHECKS: readonly string[] = Object.freeze(["recompute", "screen"]);

/** Meta-audit rates the quote chooses from when the buyer does not fix one. */
export const META_AUDIT_MENU: readonly number[] = Object.freeze([0.02, 0.05, 0.1, 0.2, 0.5, 1]);

/**
 * C, the honest compute cost of the job the gains and audit costs are priced on: the larger of the job's FLOPs at the
 * compute price and the payment floor (computeCostShare x payment).
 */
export type QuoteCompute = {
  /** Nominal FLOPs of the honest job; null when the job did not say (C is then the payment floor). */
  flops: number | null;
  /** Tokens per TFLOP. */
  pricePerTflop: number;
  /** flops x price (wei, rounded up); "0" without flops. */
  atPriceWei: string;
  /** computeCostShare x payment (wei). */
  paymentFloorWei: string;
  /** C (wei): the larger of the two. */
  costWei: string;
  /** Which of the two sets C. */
  from: "flops" | "payment";
};

export type Quote = {
  /** Segments N = steps / stepsPerSegment. */
  segments: number;
  /** C: the compute cost the quote is priced on. */
  compute: QuoteCompute;
  /** p: probability each segment is audited. */
  auditRate: number;
  /** Checks run on each audited segment. */
  checks: string[];
  /** Wei amounts, rounded up to whole wei (decimal strings, ready for the chain). */
  stakeWei: string;
  challengerBondWei: string;
  auditorBondWei: string;
  panelSize: number;
  panelError: number;
  /** mu: meta-audit rate the auditor bond is sized for. */
  metaAuditRate: number;
  /** What sets the stake: a strategy name, "challenger" or "none". */
  bindingStake: string;
  cost: {
    /** Expected audit compute per job (wei). */
    auditComputeWei: string;
    /** Expected meta-audit compute per job (wei). */
    metaAuditComputeWei: string;
    /** Capital cost of provider stake and auditor bond per job (wei). */
    capitalCostWei: string;
    stakeCapitalWei: string;
    auditorBondCapitalWei: string;
    totalWei: string;
    /** total / payment. */
    shareOfPayment: number;
  };
  /**
   * The worst class: the saving strategy with the smallest deterrence margin relative to its gain (the one that sets
   * the stake when the stake is set by a cheat), or null when no strategy saves compute.
   */
  worstStrategy: string | null;
  /**
   * Per strategy at its binding vertex: sampled detection D, every-segment screen detection, segments touched, catch
   * probability Q, gain, the provider side's expected loss ((1 - lam)*S + F)*Q and the margin loss - gain (wei).
   */
  strategies: QuoteStrategy[];
  /** m: the strict margin the stake was sized for. */
  margin: number;
  /** V in wei: the integrity value plants and unfinished models are priced against. */
  integrityValueWei: string;
  /** Whether the last segment was priced as always recomputed (the bot's rule). */
  lastSegmentAudited: boolean;
  /** The float solution in wei units, as optimised. */
  contract: Contract;
  /** HiGHS LP solution at the chosen point; it matched the closed form. */
  lp: { stakeWei: string; challengerBondWei: string; auditorBondWei: string };
  options: QuoteOptions;
  detectionManifest: string;
};

function wei(x: number): string {
  if (!Number.isFinite(x)) throw new PolicyParamError(`amount overflows: ${x}`);
  const r = Math.ceil(Math.max(0, x));
  return BigInt(r).toString();
}

function weiDown(x: number): string {
  if (!Number.isFinite(x)) throw new PolicyParamError(`amount overflows: ${x}`);
  return BigInt(Math.floor(Math.max(0, x))).toString();
}

/** What the buyer gets against one class, in plain words. */
function statementOf(s: { name: string; Q: number; gain: number; loss: number; margin: number; marginRatio: number | null }): string {
  if (s.marginRatio === null) return `a cheater of class ${s.name} gains nothing, and loses ${weiDown(s.loss)} wei in expectation if it tries`;
  return `a cheater of class ${s.name} loses at least ${weiDown(s.margin)} wei in expectation: caught with probability ${s.Q.toPrecision(4)}, it expects to lose ${weiDown(s.loss)} wei for a gain of ${wei(s.gain)} wei (${(100 * s.marginRatio).toFixed(1)}% more than it gains)`;
}

function signedWei(x: number): string {
  return x < 0 ? `-${wei(-x)}` : wei(x);
}

/** Validates QuoteOptions (merged over the defaults). */
export function quoteOptions(partial: Partial<QuoteOptions> = {}): QuoteOptions {
  const o = { ...DEFAULT_QUOTE_OPTIONS, ...partial };
  positive("computeCostShare", o.computeCostShare);
  nonNegative("forfeitShare", o.forfeitShare);
  nonNegative("challengeCostShare", o.challengeCostShare);
  nonNegative("griefShare", o.griefShare);
  nonNegative("panelFee", o.panelFee);
  nonNegative("computePrice", o.computePrice);
  if (o.auditRate !== null) positiveProbability("auditRate", o.auditRate);
  // INVARIANT: a quote never stops at break-even: m > 0
  if (finite("margin", o.margin) <= 0) throw new PolicyParamError(`margin must be > 0 (a quote never stops at break-even), got ${o.margin}`);
  nonNegative("integrityValue", o.integrityValue);
  return o;
}

/**
 * Recommended policy for a job: the cheapest contract that deters every strategy of the matrix,
 * checked against the exact LP (HiGHS) at the chosen point.
 *
 * @example
 *   const q = await quotePolicy({ paymentWei: 10n ** 18n, steps: 200, stepsPerSegment: 10 }, matrix);
 *   q.auditRate; q.stakeWei; q.cost.totalWei;
 */
export async function quotePolicy(job: QuoteJob, matrix: DetectionMatrix, partial: Partial<QuoteOptions> = {}): Promise<Quote> {
  const o = quoteOptions(partial);
  const payment = Number(job.paymentWei);
  positive("paymentWei", payment);
  if (!Number.isInteger(job.steps) || job.steps < 1) throw new PolicyParamError(`steps must be a positive integer, got ${job.steps}`);
  if (!Number.isInteger(job.stepsPerSegment) || job.stepsPerSegment < 1 || job.steps % job.stepsPerSegment !== 0) {
    throw new PolicyParamError(`stepsPerSegment must be a positive divisor of steps (${job.steps}), got ${job.stepsPerSegment}`);
  }
  const segments = job.steps / job.stepsPerSegment;
  if (job.flops !== undefined && !(Number.isFinite(job.flops) && job.flops > 0)) throw new PolicyParamError(`flops must be a positive finite number, got ${job.flops}`);
  // C: a cheater's gain is the compute it skips, worth the job's FLOPs at the price; never below the payment floor
  const floor = o.computeCostShare * payment;
  const atPrice = job.flops === undefined ? 0 : computeCostOf(job.flops, o.computePrice) * 1e18;
  const computeCost = Math.max(floor, atPrice);
  const params: ContractParams = {
    computeCost,
    segments,
    forfeit: o.forfeitShare * payment,
    capitalRate: o.capitalRate,
    lam: o.lam,
    challengeCost: o.challengeCostShare * payment,
    grief: o.griefShare * payment,
    jurorError: o.jurorError,
    maxPanelError: o.maxPanelError,
    maxPanel: o.maxPanel,
    metaAuditRate: o.metaAuditRate ?? META_AUDIT_MENU[0]!,
    ...(o.metaAuditRate === null ? { metaAuditMenu: [...META_AUDIT_MENU] } : {}),
    workersPerAuditor: o.workersPerAuditor,
    grid: o.grid,
    panelFee: o.panelFee * 1e18,
    ...(o.auditRate !== null ? { fixedAuditRate: o.auditRate } : {}),
    margin: o.margin,
    integrityValue: o.integrityValue * 1e18,
    lastSegmentAudited: o.lastSegmentAudited,
  };
  const actions = actionSetFromMatrix(matrix);
  const wanted = o.checks ?? PIPELINE_CHECKS;
  // the pipeline's checks that the matrix measured (an older matrix may lack the screen)
  const fixed = wanted.filter((n) => actions.checks.some((c) => c.name === n));
  if (wanted.length > 0 && fixed.length === 0) throw new PolicyParamError(`the detection matrix measures none of the checks ${wanted.join(", ")}`);
  if (fixed.length > 0) params.fixedChecks = fixed;
  const { best } = optimiseContract(params, actions);
  const lp = await verifyWithLp(params, actions, best);
  log.info({ segments, auditRate: best.auditRate, checks: best.checks, stake: best.stake }, "quoted policy");
  return {
    segments,
    compute: { flops: job.flops ?? null, pricePerTflop: o.computePrice, atPriceWei: wei(atPrice), paymentFloorWei: wei(floor), costWei: wei(computeCost), from: atPrice > floor ? "flops" : "payment" },
    auditRate: best.auditRate,
    checks: best.checks,
    stakeWei: wei(best.stake),
    challengerBondWei: wei(best.challengerBond),
    auditorBondWei: wei(best.auditorBond),
    panelSize: best.panelSize,
    panelError: best.panelError,
    metaAuditRate: best.metaAuditRate,
    bindingStake: best.bindingStake,
    cost: {
      auditComputeWei: wei(best.cost.auditCompute),
      metaAuditComputeWei: wei(best.cost.metaAuditCompute),
      capitalCostWei: wei(best.cost.capitalCost),
      stakeCapitalWei: wei(best.cost.stakeCapital),
      auditorBondCapitalWei: wei(best.cost.auditorBondCapital),
      totalWei: wei(best.cost.total),
      shareOfPayment: best.cost.total / payment,
    },
    worstStrategy: worstOf(best.strategies),
    strategies: best.strategies.map((s) => ({
      name: s.name,
      D: s.D,
      screen: s.screen,
      segmentsTouched: s.segmentsTouched,
      Q: s.Q,
      gainWei: wei(s.gain),
      // the loss rounds down and the gain up, so the printed pair never overstates the margin
      lossWei: weiDown(s.loss),
      marginWei: signedWei(s.margin),
      marginRatio: s.marginRatio,
      statement: statementOf(s),
    })),
    margin: o.margin,
    integrityValueWei: wei(o.integrityValue * 1e18),
    lastSegmentAudited: o.lastSegmentAudited,
    contract: best,
    lp: { stakeWei: wei(lp.stake), challengerBondWei: wei(lp.challengerBond), auditorBondWei: wei(lp.auditorBond) },
    options: o,
    detectionManifest: matrix.manifest,
  };
}

/** The saving strategy closest to paying: the least loss / gain. */
function worstOf(strategies: readonly { name: string; gain: number; loss: number }[]): string | null {
  let worst: { name: string; r: number } | null = null;
  for (const s of strategies) {
    if (s.gain <= 0) continue;
    const r = s.loss / s.gain;
    if (!worst || r < worst.r) worst = { name: s.name, r };
  }
  return worst?.name ?? null;
}

/** The manifest file cannot be read. (An invalid manifest is a ManifestError from ml/manifest.ts.) */
export class QuoteManifestError extends InputError {
  override name = "QuoteManifestError";
  override readonly code: string = "QUOTE_MANIFEST_ERROR";
}

/**
 * What a quote needs from a parsed manifest: its payment (or `paymentWei`, the buyer's override), steps, steps per
 * segment and the job's nominal FLOPs. The one function `pouw quote`, `buyer create` and the dApp size a job with.
 */
export function quoteJobOf(manifest: Pick<Manifest, "model" | "training" | "policy"> & Partial<Pick<Manifest, "adapter" | "distill">>, paymentWei?: bigint): QuoteJob {
  const { steps, stepsPerSegment } = manifest.training;
  const kind = detectionKindOf(manifest);
  return { paymentWei: paymentWei ?? BigInt(manifest.policy.paymentWei), steps, stepsPerSegment, flops: jobFlopsOf(manifest), ...(kind ? { kind } : {}) };
}

/** Reads the quote's fields (quoteJobOf) from a manifest file (shared schema). */
export function readQuoteJob(path: string): QuoteJob {
  let text: string;
  try {
    text = readManifestText(path);
  } catch (err) {
    throw new QuoteManifestError(err instanceof Error ? err.message : `cannot read manifest ${path}`, { cause: err });
  }
  let kind: unknown;
  try {
    kind = (JSON.parse(text) as { kind?: unknown } | null)?.kind;
  } catch {
    kind = undefined; // parseManifestJson names the JSON error
  }
  if (typeof kind === "string" && kind !== "pouw/training-job") throw new QuoteManifestError(`pouw quote prices training jobs (kind pouw/training-job); ${path} is a ${kind}`);
  return quoteJobOf(parseManifestJson(text));
}
