/**
 * The on-chain policy of a buyer's job. Shape (segments, steps per segment) comes from the manifest;
 * the provider stake from quotePolicy (verifier/src/policy) over a measured detection matrix when one
 * is given (`pouw buyer create` gives the committed bench/results/detection.json by default), else the
 * manifest's policy.providerStakeWei; windows and shares from the manifest and the defaults below; any
 * field can be overridden by a flag.
 *
 * The stake is sized for the audit rate the auditors actually use, the manifest's policy.auditRate
 * (it is anchored with the manifest; the contract has no audit rate): the cheapest contract audits at
 * p*, and its stake deters every measured cheat at any rate >= p* (the catch probability only grows
 * with p). A manifest that audits below p* gets the least stake that deters at its own rate instead.
 */
import { InputError } from "../errors/index.ts";
import type { JobPolicy } from "../chain/createJob.ts";
import type { Manifest } from "../ml/index.ts";
import { DEFAULT_QUOTE_OPTIONS, panelError, quoteJobOf, quotePolicy, type DetectionMatrix, type Quote, type QuoteOptions } from "../policy/index.ts";

export const DEFAULT_SEGMENT_TIMEOUT_SECONDS = 3_600;
/** Fault-slash split: challenger, buyer, burn (basis points). The quote's lam is the challenger share. */
export const DEFAULT_SHARES = { challengerBps: 5_000, buyerBps: 3_000, burnBps: 2_000, timeoutSlashBps: 1_000 } as const;

export type PolicyOverrides = Partial<Omit<JobPolicy, "segments" | "stepsPerSegment">>;

export class JobPolicyError extends InputError {
  override name = "JobPolicyError";
  override readonly code: string = "JOB_POLICY";
}

/** A detection matrix and where it was read from (for the printout). */
export type DetectionSource = { path: string; matrix: DetectionMatrix };

/** What the quote chose for a job, in the terms a buyer reads. */
export type StakeQuote = {
  /** Detection matrix file the quote used. */
  detection: string;
  /** p*: the audit rate of the cheapest contract. */
  cheapestAuditRate: number;
  /** The manifest's policy.auditRate: the rate the auditors sample at. */
  manifestAuditRate: number;
  /** The audit rate the stake is sized for: p*, or the manifest's rate when it is below p*. */
  sizedForAuditRate: number;
  /** Checks the quote assumes on an audited segment (the bots' bit-exact recompute detects at least as much). */
  checks: string[];
  stakeWei: string;
  /** What sets the stake: a strategy name, "challenger" or "none" (Quote.bindingStake). */
  bindingStake: string;
  /** F / payment used: the provider forfeits its own pay, the payment less the data share. */
  forfeitShare: number;
  /** Expected audit, meta-audit and capital cost of the contract, as a share of the payment. */
  costShareOfPayment: number;
  /** One line: why this stake. */
  reason: string;
  /** The full quote the stake came from. */
  quote: Quote;
};

export type DerivedPolicy = { policy: JobPolicy; payment: bigint; stakeFrom: "quote" | "manifest" | "flag"; quote?: StakeQuote };

export type JobPolicyOptions = {
  /** Payment (wei); default the manifest's policy.paymentWei. */
  payment?: bigint;
  /** Size the stake with quotePolicy over this matrix (unless overrides.requiredStake is given). */
  detection?: DetectionSource;
  /** Share of the payment the job's data terms credit to contributors (bps, default 0); the rest is what a caught provider forfeits. */
  dataShareBps?: number;
  /**
   * The deployment's dispute panel (DisputeGame params: panelSize, panelFee in wei per member). The quote then
   * models that panel (its error under the quote's juror-error assumption) and the fees an honest challenger
   * bears, instead of the quote's own panel choice (default: the quote's choice and panel fee).
   */
  panel?: { size: number; feeWei: bigint };
  /**
   * What the buyer asks of the quote: m, the strict margin (every class's expected loss >= (1 + m) x its gain; default
   * the quote's 0.25), and V, its integrity value in tokens (what a planted or unfinished model would cost it; every
   * class's gain is max(compute saved, V); default 0), and the compute price in tokens per TFLOP (policy/compute.ts,
   * default 0.01). docs/economics.md.
   */
  terms?: { margin?: number; integrityValue?: number; computePrice?: number };
  overrides?: PolicyOverrides;
};

const BPS = 10_000;

function bindingReason(binding: string): string {
  if (binding === "challenger") return "the honest challenger's reward (no measured cheat needs more)";
  if (binding === "none") return "no cheat of the matrix needs a stake";
  return `deterring ${binding}, the measured cheat that needs the largest stake`;
}

async function quoteStake(manifest: Manifest, payment: bigint, detection: DetectionSource, options: Partial<QuoteOptions>): Promise<StakeQuote> {
  const job = quoteJobOf(manifest, payment);
  const cheapest = await quotePolicy(job, detection.matrix, options);
  const pm = manifest.policy.auditRate;
  const below = pm < cheapest.auditRate;
  // INVARIANT: the stake deters at the rate the auditors sample at (the manifest's), never only at a higher one.
  const q = below ? await quotePolicy(job, detection.matrix, { ...options, auditRate: pm }) : cheapest;
  const p = (x: number) => x.toPrecision(3);
  const reason = below
    ? `the manifest audits at ${pm}, below the cheapest contract's rate ${p(cheapest.auditRate)}: stake sized for ${pm}, set by ${bindingReason(q.bindingStake)}`
    : `cheapest contract audits at ${p(cheapest.auditRate)} (the manifest's ${pm} only catches more); stake set by ${bindingReason(q.bindingStake)}`;
  return {
    detection: detection.path,
    cheapestAuditRate: cheapest.auditRate,
    manifestAuditRate: pm,
    sizedForAuditRate: q.auditRate,
    checks: q.checks,
    stakeWei: q.stakeWei,
    bindingStake: q.bindingStake,
    forfeitShare: q.options.forfeitShare,
    costShareOfPayment: q.cost.shareOfPayment,
    reason,
    quote: q,
  };
}

/** Quote options that make the optimiser's panel the deployed one: size n, its error under the juror model, its fee. */
function deployedPanel(panel: { size: number; feeWei: bigint }): Partial<QuoteOptions> {
  if (!Number.isInteger(panel.size) || panel.size < 1 || panel.size % 2 === 0) throw new JobPolicyError(`the deployment's panel size must be odd and positive, got ${panel.size}`);
  return { maxPanel: panel.size, maxPanelError: panelError(panel.size, DEFAULT_QUOTE_OPTIONS.jurorError), panelFee: Number(panel.feeWei) / 1e18 };
}

export async function jobPolicyFor(manifest: Manifest, opts: JobPolicyOptions): Promise<DerivedPolicy> {
  const { steps, stepsPerSegment } = manifest.training;
  const segments = steps / stepsPerSegment;
  if (!Number.isInteger(segments) || segments < 1 || segments > 65_535) throw new JobPolicyError(`manifest has ${steps} steps of ${stepsPerSegment}: need 1..65535 whole segments`);
  const payment = opts.payment ?? BigInt(manifest.policy.paymentWei);
  if (payment <= 0n) throw new JobPolicyError("--pay must be positive");
  const dataShareBps = opts.dataShareBps ?? 0;
  if (!Number.isInteger(dataShareBps) || dataShareBps < 0 || dataShareBps > BPS) throw new JobPolicyError(`data share must be 0..10000 bps, got ${dataShareBps}`);
  const o = opts.overrides ?? {};
  const shares = {
    challengerBps: o.challengerBps ?? DEFAULT_SHARES.challengerBps,
    buyerBps: o.buyerBps ?? DEFAULT_SHARES.buyerBps,
    burnBps: o.burnBps ?? DEFAULT_SHARES.burnBps,
    timeoutSlashBps: o.timeoutSlashBps ?? DEFAULT_SHARES.timeoutSlashBps,
  };
  if (shares.challengerBps + shares.buyerBps + shares.burnBps !== BPS) {
    throw new JobPolicyError(`slash shares must sum to 10000 bps, got ${shares.challengerBps} + ${shares.buyerBps} + ${shares.burnBps}`);
  }

  let requiredStake = BigInt(manifest.policy.providerStakeWei);
  let stakeFrom: DerivedPolicy["stakeFrom"] = "manifest";
  let quote: StakeQuote | undefined;
  if (opts.terms !== undefined && (o.requiredStake !== undefined || opts.detection === undefined)) {
    throw new JobPolicyError("--margin and --integrity-value size the quoted stake: they contradict --stake and --no-quote");
  }
  if (o.requiredStake !== undefined) {
    requiredStake = o.requiredStake;
    stakeFrom = "flag";
  } else if (opts.detection !== undefined) {
    if (shares.challengerBps === 0) throw new JobPolicyError("--challenger-bps 0 pays challengers nothing, so no stake can be quoted: pass --stake or --no-quote");
    // the quote's lam is the contract's challenger share; a caught provider forfeits only its own pay
    quote = await quoteStake(manifest, payment, opts.detection, {
      lam: shares.challengerBps / BPS,
      forfeitShare: (BPS - dataShareBps) / BPS,
      ...(opts.panel ? deployedPanel(opts.panel) : {}),
      ...(opts.terms?.margin !== undefined ? { margin: opts.terms.margin } : {}),
      ...(opts.terms?.integrityValue !== undefined ? { integrityValue: opts.terms.integrityValue } : {}),
      ...(opts.terms?.computePrice !== undefined ? { computePrice: opts.terms.computePrice } : {}),
    });
    requiredStake = BigInt(quote.stakeWei);
    stakeFrom = "quote";
  }
  const policy: JobPolicy = {
    segments,
    stepsPerSegment,
    // NOTE: JobMarket refuses a zero stake; a quoted or manifest stake of 0 becomes 1 wei (a flag is taken as given)
    requiredStake: stakeFrom === "flag" || requiredStake > 0n ? requiredStake : 1n,
    segmentTimeout: o.segmentTimeout ?? DEFAULT_SEGMENT_TIMEOUT_SECONDS,
    challengeWindow: o.challengeWindow ?? manifest.policy.challengeWindowSeconds,
    ...shares,
  };
  return { policy, payment, stakeFrom, ...(quote ? { quote } : {}) };
}
