/**
 * `pouw quote --manifest M [--detection FILE] [--checks LIST|any] [--margin M] [--integrity-value V] [--compute-price P]
 * [--json]`: the compute cost the job is priced on (its FLOPs at P tokens per TFLOP, at least the payment), the
 * recommended audit rate, stake, challenger bond, panel size and auditor bond for a job, with the cost breakdown and,
 * per cheat class, its detection, what it gains against what the provider side expects to lose and the margin, and
 * one plain sentence per class of what the buyer gets; names the worst class. Amounts print to 4 significant digits
 * with one sentence per number on what it buys (policy/words.ts); `--json` has them exact, in wei. Priced by default
 * on the checks the challenger bot runs (recompute on sampled segments, the state screen on every segment).
 * An evaluate or generate manifest is priced per example instead (market/quote-kind.ts; `--example-detection D`, the
 * probability one auditor catches a single changed or skipped example; `--pay` when the manifest states no payment).
 */
import type { Command } from "commander";
import {
  DEFAULT_DETECTION_PATH,
  DEFAULT_QUOTE_OPTIONS,
  loadDetectionMatrix,
  detectionPathFor,
  quotePolicy,
  readQuoteJob,
  PIPELINE_CHECKS,
  PolicyParamError,
  type QuoteOptions,
} from "../../policy/index.ts";
import { approxTokens, cheatInWords, stakeReasonInWords } from "../../policy/words.ts";
import { computeWorthWei } from "../../policy/compute.ts";
import { quoteStepSampling } from "../../policy/step-sampling.ts";
import type { Quote } from "../../policy/quote.ts";
import { readFileSync, statSync } from "node:fs";
import { DEFAULT_EXAMPLE_DETECTION, kindQuoteLines, quoteKindJob } from "../../market/quote-kind.ts";
import { parseAmount } from "../context.ts";

type NumericKey = { [K in keyof QuoteOptions]: QuoteOptions[K] extends number | null ? K : never }[keyof QuoteOptions];

const NUMERIC_OPTIONS: { key: NumericKey; flag: string; help: string }[] = [
  { key: "computePrice", flag: "compute-price", help: "tokens per TFLOP (10^12 nominal FLOPs) the job's compute is worth: C = max(FLOPs x price, compute-cost-share x payment)" },
  { key: "computeCostShare", flag: "compute-cost-share", help: "the floor of the compute cost C as a share of the payment" },
  { key: "forfeitShare", flag: "forfeit-share", help: "payment forfeited when caught, F, as a share of the payment" },
  { key: "capitalRate", flag: "capital-rate", help: "kappa: capital cost per unit of stake per job" },
  { key: "lam", flag: "lam", help: "challenger's share of the slashed stake, (0, 1]" },
  { key: "challengeCostShare", flag: "challenge-cost-share", help: "kc: an honest challenger's cost, share of the payment" },
  { key: "griefShare", flag: "grief-share", help: "value of a frivolous challenge to a griefer, share of the payment" },
  { key: "jurorError", flag: "juror-error", help: "e: probability one juror votes wrongly, [0, 0.5)" },
  { key: "maxPanelError", flag: "max-panel-error", help: "largest acceptable panel error" },
  { key: "maxPanel", flag: "max-panel", help: "largest panel size (odd)" },
  { key: "metaAuditRate", flag: "meta-audit-rate", help: "mu: probability an audit is meta-audited (default: chosen from 0.02..1)" },
  { key: "workersPerAuditor", flag: "workers-per-auditor", help: "W: providers one auditor audits at once" },
  { key: "grid", flag: "grid", help: "audit-rate grid points before golden-section refinement" },
  { key: "panelFee", flag: "panel-fee", help: "tokens a challenger pays each panel member when a panel decides (the DisputeGame's panelFee)" },
  { key: "auditRate", flag: "audit-rate", help: "p: fix the audit rate per segment, (0, 1] (default: chosen by the optimiser)" },
  { key: "margin", flag: "margin", help: "m: strict margin, > 0: every class's expected loss >= (1 + m) x its gain" },
  { key: "integrityValue", flag: "integrity-value", help: "V: tokens a planted or unfinished model would cost the buyer; every class's gain is max(compute saved, V)" },
];

/**
 * Why the stake does or does not follow the model's size, in one sentence, and a warning when the payment is below
 * what the compute is worth (`pouw buyer create` refuses that payment unless --allow-underpriced).
 */
function followsLines(q: Quote, paymentWei: bigint, worth: bigint | undefined): string[] {
  const c = q.compute;
  if (worth === undefined || c.flops === null) return [`stake follows       the payment: the job states no FLOPs, so C is ${q.options.computeCostShare} x the payment`];
  const t = (wei: bigint | string) => `${approxTokens(wei)} tokens`;
  const flops = `${Number(c.flops.toPrecision(4))} FLOPs at ${c.pricePerTflop} tokens per TFLOP`;
  // C is the compute's worth when the payment is at most that worth (with --pay compute they are equal to the wei)
  if (paymentWei <= worth) {
    const lines = [`stake follows       the compute: C is ${flops} (${t(worth)}), so a larger model (more FLOPs per step) or more steps needs a larger stake`];
    if (paymentWei < worth)
      lines.push(
        `WARNING             the payment ${t(paymentWei)} is below what the compute is worth (${t(worth)}): an honest provider would train at a loss; pouw buyer create refuses it unless --allow-underpriced`,
      );
    return lines;
  }
  const ratio = Number((Number(paymentWei) / Number(worth)).toPrecision(4));
  return [
    `stake follows       the payment: it is ${ratio} x what the compute is worth (${flops}, ${t(worth)}), so C is the payment and the model's size does not change the stake until its compute is worth more than the payment; --pay compute quotes the job at its compute's worth`,
  ];
}

/** `quote` of an evaluate or generate manifest; false when the manifest is not one (the training quote reads it). */
async function quoteKind(opts: Record<string, string | boolean | undefined>, overrides: Partial<QuoteOptions>): Promise<boolean> {
  const path = opts.manifest as string;
  let value: unknown;
  try {
    // NOTE: only a regular file of at most 1 MiB is read here (a device such as /dev/zero never ends); readQuoteJob
    // names what is wrong with anything else
    const st = statSync(path);
    if (!st.isFile() || st.size > 1 << 20) return false;
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
  const { kindManifestOf } = await import("../../kinds/market.ts");
  const km = kindManifestOf(value);
  if (km === undefined) return false;
  const a = `${km.kind === "evaluate" ? "an" : "a"} ${km.kind} manifest`;
  for (const [flag, given] of [["--detection", opts.detection], ["--checks", opts.checks], ["--step-detection", opts.stepDetection]] as const) {
    if (given !== undefined) throw new PolicyParamError(`${flag} does not apply to ${a}: it is quoted per example (--example-detection)`);
  }
  const pay = opts.pay as string | undefined;
  const manifestPay = km.kind === "evaluate" ? km.manifest.policy?.paymentWei : undefined;
  if (pay === "compute") throw new PolicyParamError(`--pay compute is not supported for ${a}: pass --pay <amount>`);
  if (pay === undefined && manifestPay === undefined) throw new PolicyParamError(`${a} states no payment: pass --pay <amount>`);
  const paymentWei = pay !== undefined ? parseAmount("--pay", pay) : BigInt(manifestPay!);
  const d = opts.exampleDetection as string | undefined;
  const detection = d === undefined ? undefined : Number(d);
  if (d !== undefined && !(/^(0?\.[0-9]+|1(\.0*)?)$/.test(d) && detection! > 0)) throw new PolicyParamError(`--example-detection must be a probability in (0, 1], got ${JSON.stringify(d)}`);
  const q = quoteKindJob(km, {
    paymentWei,
    ...(detection !== undefined ? { detection } : {}),
    ...(overrides.computePrice !== undefined ? { computePrice: overrides.computePrice } : {}),
    ...(overrides.margin !== undefined ? { margin: overrides.margin } : {}),
    ...(overrides.lam !== undefined ? { lam: overrides.lam } : {}),
    ...(overrides.forfeitShare !== undefined ? { forfeitShare: overrides.forfeitShare } : {}),
    ...(overrides.integrityValue !== undefined ? { integrityValue: overrides.integrityValue } : {}),
    // KindRecords' floor: its minStake at the best tier's lock share (JobMarket.stakeMultiplierBps(1) = 50%)
    ...(opts.kindMinStake !== undefined ? { kindRecords: { minStakeWei: parseAmount("--kind-min-stake", opts.kindMinStake as string), leastLockBps: 5_000 } } : {}),
  });
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(q, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}\n`);
    return true;
  }
  process.stdout.write(`${kindQuoteLines(q, (wei) => `${approxTokens(wei)} tokens`).join("\n")}\n`);
  return true;
}

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function registerQuote(program: Command): void {
  const cmd = program
    .command("quote")
    .description("recommend audit rate, stake, challenger bond, panel size and auditor bond for a job (docs/economics.md)")
    .showHelpAfterError(false)
    .requiredOption("--manifest <file>", "job manifest (reads policy.paymentWei, training.steps, training.stepsPerSegment)")
    .option("--detection <file>", `detection matrix (default: the package's ${DEFAULT_DETECTION_PATH}, written by the detection bench; for an adapter or distillation manifest bench/results/detection-adapter.json or detection-distill.json, written by bench/detection-kinds.ts)`)
    .option("--checks <list>", `the checks to price: comma-separated names of the matrix's checks, or "any" to let the optimiser choose (default: the bot's pipeline, ${PIPELINE_CHECKS.join(" + ")})`)
    .option("--pay <amount>", "quote at this payment in tokens instead of the manifest's, or \"compute\": at what the job's FLOPs are worth at the compute price")
    .option("--example-detection <d>", `an evaluate or generate manifest: the probability one auditor catches a single changed or skipped example, (0, 1] (default ${DEFAULT_EXAMPLE_DETECTION}; market/quote-kind.ts)`)
    .option("--kind-min-stake <amount>", "an evaluate or generate manifest: the deployed KindRecords' minStake (tokens; `pouw deploy` prints it, default 1): the stake is floored so the job's result can be recorded, as `buyer create` does against the deployment")
    .option("--step-detection <d>", "also price step sampling (state openings): the per-segment step rate that catches a cheat of every step with probability d, in (0, 1) (policy/step-sampling.ts)")
    .option("--json", "print the quote as JSON");
  for (const o of NUMERIC_OPTIONS) {
    const d = DEFAULT_QUOTE_OPTIONS[o.key];
    cmd.option(`--${o.flag} <number>`, d === null ? o.help : `${o.help} (default ${d})`);
  }
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const overrides: Partial<QuoteOptions> = {};
    for (const o of NUMERIC_OPTIONS) {
      const raw = opts[camel(o.flag)];
      if (raw === undefined) continue;
      const x = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
      if (!Number.isFinite(x)) throw new PolicyParamError(`--${o.flag} must be a finite number, got ${JSON.stringify(raw)}`);
      overrides[o.key] = x;
    }
    // an evaluate or generate manifest is priced per example (market/quote-kind.ts, docs/kinds.md "Quote")
    if (await quoteKind(opts, overrides)) return;
    if (opts.exampleDetection !== undefined) throw new PolicyParamError("--example-detection applies to evaluate and generate manifests");
    if (opts.kindMinStake !== undefined) throw new PolicyParamError("--kind-min-stake applies to evaluate and generate manifests");
    if (typeof opts.checks === "string") overrides.checks = opts.checks === "any" ? [] : opts.checks.split(",").map((c) => c.trim());
    const manifestJob = readQuoteJob(opts.manifest as string);
    const price = overrides.computePrice ?? DEFAULT_QUOTE_OPTIONS.computePrice;
    const worth = manifestJob.flops === undefined ? undefined : computeWorthWei(manifestJob.flops, price);
    const pay = opts.pay as string | undefined;
    if (pay === "compute" && worth === undefined) throw new PolicyParamError("--pay compute needs the job's FLOPs, and this manifest's model has none");
    const job = pay === undefined ? manifestJob : { ...manifestJob, paymentWei: pay === "compute" ? worth! : parseAmount("--pay", pay) };
    // an adapter or distillation job is priced from its own kind's measured matrix (the adapted cheats' rows)
    const detectionPath = (opts.detection as string | undefined) ?? detectionPathFor(manifestJob.kind);
    const matrix = loadDetectionMatrix(detectionPath, { isDefault: opts.detection === undefined });
    const stepDetectionText = opts.stepDetection as string | undefined;
    const stepDetection = stepDetectionText === undefined ? undefined : Number(stepDetectionText);
    if (stepDetectionText !== undefined && !(/^(0?\.[0-9]+)$/.test(stepDetectionText) && stepDetection! > 0 && stepDetection! < 1)) {
      throw new PolicyParamError(`--step-detection must be a probability in (0, 1), got ${JSON.stringify(stepDetectionText)}`);
    }
    // NOTE: step sampling runs on StateOpenings, which also opens the final state: the bot screens it instead of
    // recomputing the last segment (bot/steps.ts), so the quote prices the last segment at p there
    const q = await quotePolicy(job, matrix, stepDetection === undefined ? overrides : { ...overrides, lastSegmentAudited: false });
    const steps = stepDetection === undefined ? undefined : quoteStepSampling({ segments: q.segments, stepsPerSegment: job.stepsPerSegment }, stepDetection);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(steps ? { ...q, stepSampling: { detection: stepDetection, ...steps } } : q)}\n`);
      return;
    }
    // every amount to 4 significant digits (the exact wei are in --json); one sentence per number on what it buys
    const t = (wei: string) => `${approxTokens(wei)} tokens`;
    const pct = (x: number) => `${Number((100 * x).toPrecision(4))}%`;
    const expected = Number((q.auditRate * q.segments).toPrecision(4));
    const c = q.compute;
    const computeLine =
      c.flops === null
        ? `compute C           ${t(c.costWei)}: what the honest training is worth, ${q.options.computeCostShare} x the payment (the job states no FLOPs); a cheater gains the part it skips`
        : `compute C           ${t(c.costWei)}: what the honest training is worth, the larger of its ${Number(c.flops.toPrecision(4))} FLOPs at ${c.pricePerTflop} tokens per TFLOP (${t(c.atPriceWei)}) and ${q.options.computeCostShare} x the payment (${t(c.paymentFloorWei)}); a cheater gains the part it skips`;
    const lines = [
      computeLine,
      ...followsLines(q, job.paymentWei, worth),
      `segments            ${q.segments}: the job is committed in ${q.segments} parts, each checkable on its own`,
      `audit rate p        ${Number(q.auditRate.toPrecision(4))}: each auditor recomputes a segment with this probability (about ${expected} of ${q.segments} segments per auditor${q.lastSegmentAudited ? ", and always the last one" : ""})`,
      `checks              ${q.checks.join(" + ")}: what an audit runs on a sampled segment (docs/checks.md)`,
      ...(steps
        ? [
            `step rate r         ${Number(steps.stepRate.toPrecision(4))}: with state openings each auditor also recomputes one private-random step of a segment with this probability (about ${Number(steps.openingsPerJob.toPrecision(3))} openings a job with the final state's), catching a cheat of every step with ${Number(steps.detectAllSegments.toPrecision(4))} (${Number(steps.detectOneSegment.toPrecision(4))} if it touches one segment)`,
          ]
        : []),
      `stake S             ${t(q.stakeWei)}: what the provider locks and loses if a dispute proves one wrong step; ${stakeReasonInWords(q.bindingStake)}`,
      `challenger bond B   ${t(q.challengerBondWei)}: what a challenger deposits, lost if its challenge is wrong, so challenging an honest provider does not pay`,
      `panel size n        ${q.panelSize}: auditors who recompute a disputed step and vote; they decide wrongly with probability ${Number(q.panelError.toPrecision(4))}`,
      `auditor bond A      ${t(q.auditorBondWei)}: what each auditor locks, lost if a meta-audit (${pct(q.metaAuditRate)} of audits) finds its audit false, so a bribe does not pay`,
      `cost per job:`,
      `  audit compute     ${t(q.cost.auditComputeWei)}: the auditors' recomputation of the sampled segments`,
      `  meta-audits       ${t(q.cost.metaAuditComputeWei)}: re-checking a share of those audits`,
      `  capital cost      ${t(q.cost.capitalCostWei)}: what locking the stake (${t(q.cost.stakeCapitalWei)}) and the auditor bond (${t(q.cost.auditorBondCapitalWei)}) for the job costs their owners`,
      `  total             ${t(q.cost.totalWei)}: ${pct(q.cost.shareOfPayment)} of the payment, what the checking costs on top of the training`,
      `worst class         ${q.worstStrategy ? `${q.worstStrategy} (${cheatInWords(q.worstStrategy)}): the cheat closest to paying` : "none: no measured cheat saves compute"}`,
      `margin m            ${q.margin}: every cheat expects to lose at least ${1 + q.margin} x what it gains`,
      `integrity value V   ${t(q.integrityValueWei)}: what a planted or unfinished model would cost you; every cheat is priced as gaining at least this`,
      `last segment        ${q.lastSegmentAudited ? "recomputed whatever p (the challenger bot's rule)" : steps ? "audited at p (step sampling: its final state is opened and screened instead of a forced recompute)" : "audited at p"}`,
      `per class at its worst choice of segments (D: detection per audited segment, screen: per segment, every segment; T: segments touched;`,
      `  Q: catch probability; loss: the provider side's expected loss ((1 - lam)*S + F)*Q; gain: max(compute saved, V); margin: loss / gain - 1):`,
      ...q.strategies.map(
        (s) =>
          `  ${s.name.padEnd(14)} D=${s.D.toPrecision(3)} screen=${s.screen.toPrecision(3)} T=${String(s.segmentsTouched).padStart(2)}  Q=${s.Q.toPrecision(4)}  loss=${t(s.lossWei)}  gain=${t(s.gainWei)}  margin=${s.marginRatio === null ? "none needed (no gain)" : s.marginRatio.toFixed(4)}`,
      ),
      `what the buyer gets:`,
      ...q.strategies.map((s) =>
        s.marginRatio === null
          ? `  a provider ${cheatInWords(s.name)} (${s.name}) saves nothing, and expects to lose ${t(s.lossWei)} if it tries`
          : `  a provider ${cheatInWords(s.name)} (${s.name}) is caught with probability ${Number(s.Q.toPrecision(4))} and expects to lose ${t(s.lossWei)} for a gain of ${t(s.gainWei)} (${(100 * s.marginRatio).toFixed(1)}% more than it gains)`,
      ),
      `detection matrix measured on: ${q.detectionManifest}`,
      `verified: HiGHS LP at this audit rate gives S=${t(q.lp.stakeWei)}, B=${t(q.lp.challengerBondWei)}, A=${t(q.lp.auditorBondWei)}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  });
}
