/**
 * `pouw quote --manifest M [--detection FILE] [--checks LIST|any] [--margin M] [--integrity-value V] [--json]`: the
 * recommended audit rate, stake, challenger bond, panel size and auditor bond for a job, with the cost breakdown and,
 * per cheat class, its detection, what it gains against what the provider side expects to lose and the margin, and
 * one plain sentence per class of what the buyer gets; names the worst class. Priced by default on the checks the
 * challenger bot runs (recompute on sampled segments, the state screen on every segment).
 */
import type { Command } from "commander";
import {
  DEFAULT_DETECTION_PATH,
  DEFAULT_QUOTE_OPTIONS,
  loadDetectionMatrix,
  packageDetectionPath,
  quotePolicy,
  readQuoteJob,
  PIPELINE_CHECKS,
  PolicyParamError,
  type QuoteOptions,
} from "../../policy/index.ts";

type NumericKey = { [K in keyof QuoteOptions]: QuoteOptions[K] extends number | null ? K : never }[keyof QuoteOptions];

const NUMERIC_OPTIONS: { key: NumericKey; flag: string; help: string }[] = [
  { key: "computeCostShare", flag: "compute-cost-share", help: "honest compute cost C as a share of the payment" },
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

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function registerQuote(program: Command): void {
  const cmd = program
    .command("quote")
    .description("recommend audit rate, stake, challenger bond, panel size and auditor bond for a job (docs/economics.md)")
    .showHelpAfterError(false)
    .requiredOption("--manifest <file>", "job manifest (reads policy.paymentWei, training.steps, training.stepsPerSegment)")
    .option("--detection <file>", `detection matrix (default: the package's ${DEFAULT_DETECTION_PATH}, written by the detection bench)`)
    .option("--checks <list>", `the checks to price: comma-separated names of the matrix's checks, or "any" to let the optimiser choose (default: the bot's pipeline, ${PIPELINE_CHECKS.join(" + ")})`)
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
    if (typeof opts.checks === "string") overrides.checks = opts.checks === "any" ? [] : opts.checks.split(",").map((c) => c.trim());
    const job = readQuoteJob(opts.manifest as string);
    const detectionPath = (opts.detection as string | undefined) ?? packageDetectionPath();
    const matrix = loadDetectionMatrix(detectionPath, { isDefault: opts.detection === undefined });
    const q = await quotePolicy(job, matrix, overrides);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(q)}\n`);
      return;
    }
    const pct = (x: number) => `${(100 * x).toPrecision(4)}%`;
    const lines = [
      `segments            ${q.segments}`,
      `audit rate p        ${q.auditRate.toPrecision(6)} per segment (expected ${(q.auditRate * q.segments).toPrecision(4)} segments audited)`,
      `checks              ${q.checks.join(" + ")}`,
      `stake S             ${q.stakeWei} wei  (set by: ${q.bindingStake})`,
      `challenger bond B   ${q.challengerBondWei} wei`,
      `panel size n        ${q.panelSize}  (panel error ${q.panelError.toExponential(3)})`,
      `auditor bond A      ${q.auditorBondWei} wei  (meta-audit rate mu ${q.metaAuditRate})`,
      `cost per job:`,
      `  audit compute     ${q.cost.auditComputeWei} wei`,
      `  meta-audits       ${q.cost.metaAuditComputeWei} wei`,
      `  capital cost      ${q.cost.capitalCostWei} wei  (stake ${q.cost.stakeCapitalWei}, auditor bond ${q.cost.auditorBondCapitalWei})`,
      `  total             ${q.cost.totalWei} wei  (${pct(q.cost.shareOfPayment)} of the payment)`,
      `worst class         ${q.worstStrategy ?? "none (no strategy saves compute)"}`,
      `margin m            ${q.margin}  (every class's expected loss >= ${1 + q.margin} x its gain)`,
      `integrity value V   ${q.integrityValueWei} wei  (every class gains at least V)`,
      `last segment        ${q.lastSegmentAudited ? "recomputed whatever p (the challenger bot's rule)" : "audited at p"}`,
      `per class at its worst choice of segments (D: detection per audited segment, screen: per segment, every segment; T: segments touched;`,
      `  Q: catch probability; loss: the provider side's expected loss ((1 - lam)*S + F)*Q; gain: max(compute saved, V); margin: loss / gain - 1):`,
      ...q.strategies.map((s) => `  ${s.name.padEnd(14)} D=${s.D.toPrecision(3)} screen=${s.screen.toPrecision(3)} T=${String(s.segmentsTouched).padStart(2)}  Q=${s.Q.toPrecision(4)}  loss=${s.lossWei}  gain=${s.gainWei}  margin=${s.marginRatio === null ? "none needed (no gain)" : s.marginRatio.toFixed(4)}`),
      `what the buyer gets:`,
      ...q.strategies.map((s) => `  ${s.statement}`),
      `detection matrix measured on: ${q.detectionManifest}`,
      `verified: HiGHS LP at this audit rate gives S=${q.lp.stakeWei}, B=${q.lp.challengerBondWei}, A=${q.lp.auditorBondWei}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  });
}
