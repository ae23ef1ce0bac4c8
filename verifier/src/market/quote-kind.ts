/**
 * The quote of an inference job (evaluate, generate; docs/kinds.md "Quote"): a step is one example, so the training
 * quote's terms are re-read per example.
 *
 *   c      = the compute one example costs: forward passes per example (evaluate 1, generate sampling.tokens) x the
 *            nominal FLOPs of one forward pass of one example (a third of flopsPerStepOf(model, 1), as a distillation
 *            teacher's) at the compute price; a provider that skips or invents k examples saves k x c
 *   p      = the audit rate per example: an auditor recomputes each example with probability p, so one changed or
 *            skipped example is caught by one auditor with probability p and k of them with Q(k) = 1 - (1 - p)^k.
 *            p is the target detection d of a single wrong example (the least a cheat can touch). A wrong aggregate
 *            (a total or chain that is not the sum of the leaves) is caught by hashing alone at any audit (auditKindSegment).
 *   S      = the stake: at least (1 + m) x N x c (what skipping every example saves, with the margin), and more where a
 *            cheat of k examples is caught too rarely for the provider side's expected loss ((1 - lam) S + F) Q(k) to
 *            reach (1 + m) x max(k c, V): S >= max_k ((1 + m) max(k c, V) / Q(k) - F) / (1 - lam), F = forfeitShare x
 *            the payment (the training quote's terms, docs/economics.md); and at least (1 + m) x n f / lam with the
 *            deployment's panel (n members at fee f): the challenger's share of a slash must pay the panel that proves
 *            the fault, else JobMarket refuses the lock (policy/challenge.ts lockPaysPanel); and with a deployed
 *            KindRecords at least the stake whose best-tier lock reaches its minStake (recordableStakeWei), else the
 *            job's result could never be recorded.
 *   audit  = p x N examples recomputed per auditor, p x N x c.
 *
 * @example
 *   const q = quoteKindJob(kindManifestOf(json)!, { paymentWei: 10n ** 18n, detection: 0.5 });
 *   q.stakeWei; q.auditRate; q.forwardPassesPerExample;
 */
import { InputError } from "../errors/index.ts";
import type { KindManifest } from "../kinds/kind-manifest.ts";
import { computeCostOf, DEFAULT_COMPUTE_PRICE, flopsPerStepOf } from "../policy/compute.ts";
import { DEFAULT_MARGIN, DEFAULT_QUOTE_OPTIONS } from "../policy/quote.ts";
import type { KindRecordsFloor } from "../chain/getKindRecordsFloor.ts";

/** The detection of one wrong example a kind quote targets by default (per auditor). */
export const DEFAULT_EXAMPLE_DETECTION = 0.5;

export type KindQuoteOptions = {
  paymentWei: bigint;
  /** Target probability that one auditor catches a single changed or skipped example, (0, 1]. */
  detection?: number;
  computePrice?: number;
  margin?: number;
  lam?: number;
  forfeitShare?: number;
  /** V, tokens: every cheat is priced as gaining at least this. */
  integrityValue?: number;
  /** The deployment's dispute panel (DisputeGame panelSize, panelFee in wei per member). */
  panel?: { size: number; feeWei: bigint };
  /** The deployment's KindRecords: its minStake (wei) and JobMarket's best-tier lock share (stakeMultiplierBps(1)). */
  kindRecords?: KindRecordsFloor;
};

/** What KindRecords needs of a job's stake for its result to be recorded: a least lock (the best tier's) >= minStake. */
export type { KindRecordsFloor };

/**
 * The stake floor KindRecords sets: minStake x 10,000 / bps rounded up, whose best-tier lock ceil(S x bps / 10,000) is
 * at least minStake (a whole-token minStake gives a whole-token floor: 1 token at 50% is 2 tokens).
 */
export function recordableStakeWei(f: KindRecordsFloor): bigint {
  if (!(Number.isInteger(f.leastLockBps) && f.leastLockBps > 0)) throw new InputError(`the best tier's lock share must be a positive number of bps, got ${f.leastLockBps}`);
  const bps = BigInt(f.leastLockBps);
  return (f.minStakeWei * 10_000n + bps - 1n) / bps;
}

export type KindQuote = {
  kind: KindManifest["kind"];
  examples: number;
  forwardPassesPerExample: number;
  /** Tokens per example: evaluate on a char-transformer the T positions scored, generate the tokens sampled; null for an image model. */
  tokensPerExample: number | null;
  flopsPerForwardPass: number;
  computeWeiPerExample: bigint;
  jobComputeWei: bigint;
  detection: number;
  auditRate: number;
  expectedAuditedExamples: number;
  auditComputeWei: bigint;
  stakeWei: bigint;
  /** The number of wrong examples whose deterrence sets the stake (N: the compute floor binds; 0: the panel's fees do). */
  bindingExamples: number;
  /** With a deployed KindRecords: its minStake, the least stake that reaches it, and whether that floor set the stake. */
  kindRecords: { minStakeWei: bigint; floorWei: bigint; binds: boolean } | null;
  options: { computePrice: number; margin: number; lam: number; forfeitShare: number; integrityValue: number };
};

const wei = (tokens: number) => BigInt(Math.ceil(tokens * 1e18));

export function quoteKindJob(km: KindManifest, o: KindQuoteOptions): KindQuote {
  const detection = o.detection ?? DEFAULT_EXAMPLE_DETECTION;
  if (!(detection > 0 && detection <= 1)) throw new InputError(`--example-detection must be a probability in (0, 1], got ${detection}`);
  if (o.paymentWei <= 0n) throw new InputError(`the payment must be positive, got ${o.paymentWei} wei`);
  const computePrice = o.computePrice ?? DEFAULT_COMPUTE_PRICE;
  const margin = o.margin ?? DEFAULT_MARGIN;
  const lam = o.lam ?? DEFAULT_QUOTE_OPTIONS.lam;
  const forfeitShare = o.forfeitShare ?? DEFAULT_QUOTE_OPTIONS.forfeitShare;
  const integrityValue = o.integrityValue ?? DEFAULT_QUOTE_OPTIONS.integrityValue;
  if (!(margin > 0)) throw new InputError(`--margin must be > 0, got ${margin}`);
  if (!(lam > 0 && lam < 1)) throw new InputError(`--lam must be in (0, 1) for a kind quote, got ${lam}`);
  const m = km.manifest;
  const N = km.kind === "evaluate" ? km.manifest.evalSet.examples : km.manifest.prompts.examples;
  const passes = km.kind === "evaluate" ? 1 : km.manifest.sampling.tokens;
  const tokens = m.model.arch === "char-transformer" ? (km.kind === "evaluate" ? m.model.context : km.manifest.sampling.tokens) : null;
  // NOTE: a forward pass is a third of a training step's forward + backward FLOPs (policy/compute.ts)
  const flopsPerForwardPass = flopsPerStepOf(m.model, 1) / 3;
  const c = computeCostOf(passes * flopsPerForwardPass, computePrice); // tokens
  const F = forfeitShare * (Number(o.paymentWei) / 1e18);
  const Q = (k: number) => -Math.expm1(k * Math.log1p(-detection)); // 1 - (1 - p)^k, exact for p = 1
  // INVARIANT: the stake never falls below what skipping every example saves, with the margin
  let stake = (1 + margin) * Math.max(N * c, integrityValue);
  let binding = N;
  for (let k = 1; k <= N; k++) {
    const need = ((1 + margin) * Math.max(k * c, integrityValue)) / Q(k);
    const s = (need - F) / (1 - lam);
    if (s > stake) {
      stake = s;
      binding = k;
    }
  }
  // INVARIANT: the challenger's share of the stake pays the panel's fees, with the margin (JobMarketLockCannotPayPanel)
  const panelFees = o.panel ? (o.panel.size * Number(o.panel.feeWei)) / 1e18 : 0;
  if ((1 + margin) * (panelFees / lam) > stake) {
    stake = (1 + margin) * (panelFees / lam);
    binding = 0;
  }
  // INVARIANT: with KindRecords deployed, the quoted stake always lets the job's result be recorded (KindRecordsStakeTooLow)
  let stakeWei = wei(stake);
  let kindRecords: KindQuote["kindRecords"] = null;
  if (o.kindRecords) {
    const floorWei = recordableStakeWei(o.kindRecords);
    const binds = stakeWei < floorWei;
    if (binds) stakeWei = floorWei;
    kindRecords = { minStakeWei: o.kindRecords.minStakeWei, floorWei, binds };
  }
  return {
    kind: km.kind,
    examples: N,
    forwardPassesPerExample: passes,
    tokensPerExample: tokens,
    flopsPerForwardPass,
    computeWeiPerExample: wei(c),
    jobComputeWei: wei(N * c),
    detection,
    auditRate: detection,
    expectedAuditedExamples: detection * N,
    auditComputeWei: wei(detection * N * c),
    stakeWei,
    bindingExamples: binding,
    kindRecords,
    options: { computePrice, margin, lam, forfeitShare, integrityValue },
  };
}

/** The quote in lines: one number a line with what it buys (pouw quote's text form). */
export function kindQuoteLines(q: KindQuote, t: (wei: bigint) => string): string[] {
  const n = (x: number) => String(Number(x.toPrecision(4)));
  return [
    `kind                ${q.kind}: ${q.examples} examples, one example a step`,
    `forward passes      ${q.forwardPassesPerExample} per example${q.tokensPerExample === null ? "" : `, ${q.tokensPerExample} tokens per example`}, ${n(q.flopsPerForwardPass)} FLOPs each`,
    `compute per example ${t(q.computeWeiPerExample)}: what a provider saves by skipping or inventing one example (${q.options.computePrice} tokens per TFLOP)`,
    `compute of the job  ${t(q.jobComputeWei)}: all ${q.examples} examples`,
    `audit rate p        ${n(q.auditRate)} per example: one auditor recomputes each example with this probability, so a single changed or skipped example is caught with ${n(q.detection)} (about ${n(q.expectedAuditedExamples)} examples recomputed per auditor, ${t(q.auditComputeWei)}); a wrong score aggregate is caught by hashing at any audit`,
    `stake S             ${t(q.stakeWei)}: ${q.kindRecords?.binds ? `the least stake whose best-tier lock reaches KindRecords' minStake ${t(q.kindRecords.minStakeWei)}, so the result can be recorded (the deterrence terms ask less)` : q.bindingExamples === 0 ? "what lets the challenger's share pay the dispute panel's fees, with the margin" : q.bindingExamples === q.examples ? `(1 + ${q.options.margin}) x what skipping all ${q.examples} examples saves` : `what deters a cheat of ${q.bindingExamples} example${q.bindingExamples === 1 ? "" : "s"}, caught with ${n(-Math.expm1(q.bindingExamples * Math.log1p(-q.detection)))}`} (margin ${q.options.margin}, challenger share lam ${q.options.lam}, forfeit ${q.options.forfeitShare} x the payment)`,
    q.kindRecords
      ? `KindRecords         minStake ${t(q.kindRecords.minStakeWei)}: a stake of at least ${t(q.kindRecords.floorWei)} (its best-tier lock reaches it) lets the result be recorded; buyer create refuses less`
      : `KindRecords         not read: the stake is not floored by its minStake (--kind-min-stake; buyer create reads it from the deployment)`,
  ];
}
