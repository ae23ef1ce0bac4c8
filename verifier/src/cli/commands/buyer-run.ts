/**
 * The handlers of `pouw buyer` (buyer.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import type { JobCoverage, JobMoney } from "../../market/job-report.ts";
import { approxTokens, stakeReasonInWords } from "../../policy/words.ts";
import { InputError } from "../../errors/index.ts";
import type { DataTermsMode } from "../../market/data-terms.ts";
import { DEFAULT_DATA_SHARE_BPS } from "../../market/data-share.ts";
import type { CreateJobFromManifestResult } from "../../market/create-job.ts";
import type { DetectionSource, PolicyOverrides, StakeQuote } from "../../market/job-policy.ts";
import type { PlanJobOptions } from "../../market/plan-job.ts";
import type { panelPoolJson } from "../../market/panel-pool.ts";
import { announceStateNode, fmt, marketContext, peerDiscovery, parseAmount, parseBps as bps, parseJobId, parseSeconds, readContext, txJson, txLines } from "../context.ts";

/** The matrix the quote reads: --detection FILE, else the package's committed one; none with --no-quote. */
async function detectionSource(opts: Record<string, string | boolean | undefined>, manifest?: { adapter?: unknown; distill?: unknown }): Promise<DetectionSource | undefined> {
  if (opts.quote === false) {
    if (opts.detection !== undefined) throw new InputError("--detection and --no-quote contradict each other: the quote reads the detection matrix");
    return undefined;
  }
  if (opts.stake !== undefined) return undefined; // the flag sets the stake; nothing left for the quote to size
  const [{ DetectionMatrixError, loadDetectionMatrix }, { detectionKindOf, detectionPathFor }] = await Promise.all([import("../../policy/index.ts"), import("../../policy/detection.ts")]);
  const given = opts.detection as string | undefined;
  // an adapter or distillation job is quoted from the rows measured for its kind (bench/detection-kinds.ts)
  const path = given ?? detectionPathFor(manifest ? detectionKindOf(manifest) : undefined);
  try {
    return { path, matrix: loadDetectionMatrix(path, { isDefault: given === undefined }) };
  } catch (err) {
    if (err instanceof DetectionMatrixError && given === undefined) throw new DetectionMatrixError(`${err.shortMessage}, or --no-quote for the manifest's stake`, { cause: err });
    throw err;
  }
}

const quoteJson = (q: StakeQuote) => ({
  detection: q.detection,
  auditRate: q.cheapestAuditRate,
  manifestAuditRate: q.manifestAuditRate,
  sizedForAuditRate: q.sizedForAuditRate,
  checks: q.checks,
  stakeWei: q.stakeWei,
  bindingStake: q.bindingStake,
  forfeitShare: q.forfeitShare,
  costShareOfPayment: q.costShareOfPayment,
  challengerBondWei: q.quote.challengerBondWei,
  auditorBondWei: q.quote.auditorBondWei,
  panelSize: q.quote.panelSize,
  panelFee: q.quote.options.panelFee,
  reason: q.reason,
});

/** `buyer create`'s flags as a plan: payment, quote source and terms, data terms, policy overrides. Exit 2 on a bad or contradictory flag. */
async function createFlags(opts: Record<string, string | boolean | undefined>, manifest?: { adapter?: unknown; distill?: unknown }): Promise<PlanJobOptions> {
  const detection = await detectionSource(opts, manifest);
  const termsMode: DataTermsMode = opts.dataTerms === true ? "require" : opts.dataTerms === false ? "off" : "auto";
  if (termsMode === "off" && opts.dataShareBps !== undefined) throw new InputError("--data-share-bps and --no-data-terms contradict each other: the share is paid through the data terms");
  const dataShareBps = bps("--data-share-bps", opts.dataShareBps as string | undefined) ?? DEFAULT_DATA_SHARE_BPS;
  const s = (k: string) => opts[k] as string | undefined;
  const overrides: PolicyOverrides = {
    ...(s("stake") !== undefined ? { requiredStake: parseAmount("--stake", s("stake")!) } : {}),
    ...(s("segmentTimeout") !== undefined ? { segmentTimeout: parseSeconds("--segment-timeout", s("segmentTimeout")!) } : {}),
    ...(s("challengeWindow") !== undefined ? { challengeWindow: parseSeconds("--challenge-window", s("challengeWindow")!) } : {}),
    ...(s("challengerBps") !== undefined ? { challengerBps: bps("--challenger-bps", s("challengerBps"))! } : {}),
    ...(s("buyerBps") !== undefined ? { buyerBps: bps("--buyer-bps", s("buyerBps"))! } : {}),
    ...(s("burnBps") !== undefined ? { burnBps: bps("--burn-bps", s("burnBps"))! } : {}),
    ...(s("timeoutSlashBps") !== undefined ? { timeoutSlashBps: bps("--timeout-slash-bps", s("timeoutSlashBps"))! } : {}),
  };
  const payment = s("pay") === undefined ? undefined : s("pay") === "compute" ? ("compute" as const) : parseAmount("--pay", s("pay")!);
  const quoteNumber = (flag: string, raw: string | undefined, ok: (x: number) => boolean, want: string) => {
    if (raw === undefined) return undefined;
    const x = raw.trim() === "" ? Number.NaN : Number(raw);
    if (!Number.isFinite(x) || !ok(x)) throw new InputError(`${flag} must be ${want}, got ${JSON.stringify(raw)}`);
    return x;
  };
  const margin = quoteNumber("--margin", s("margin"), (x) => x > 0, "a number > 0 (a quote never stops at break-even)");
  const integrityValue = quoteNumber("--integrity-value", s("integrityValue"), (x) => x >= 0, "a token amount >= 0");
  const quoteTerms = margin !== undefined || integrityValue !== undefined ? { ...(margin !== undefined ? { margin } : {}), ...(integrityValue !== undefined ? { integrityValue } : {}) } : undefined;
  if (quoteTerms && detection === undefined) throw new InputError("--margin and --integrity-value size the quoted stake: they contradict --stake and --no-quote");
  return {
    ...(payment !== undefined ? { payment } : {}),
    ...(opts.allowUnderpriced === true ? { allowUnderpriced: true } : {}),
    ...(detection ? { detection } : {}),
    ...(quoteTerms ? { quoteTerms } : {}),
    dataTerms: { dataShareBps, mode: termsMode },
    overrides,
  };
}

function createdJson(r: CreateJobFromManifestResult, panelPool: ReturnType<typeof panelPoolJson>) {
  const { plan, posted } = r;
  const p = plan.policy;
  const terms = plan.terms;
  return {
    jobId: posted.jobId.toString(),
    manifestUri: posted.manifestUri,
    manifestHash: posted.manifestHash,
    payment: plan.payment.toString(),
    compute: { flops: plan.compute.flops, pricePerTflop: plan.compute.pricePerTflop, worthWei: plan.compute.worthWei.toString(), underpriced: plan.compute.underpriced },
    stakeFrom: plan.stakeFrom,
    policy: { ...p, requiredStake: p.requiredStake.toString() },
    quote: plan.quote ? quoteJson(plan.quote) : null,
    dataTerms: terms.attached
      ? {
          attached: true,
          dataRegistry: terms.dataRegistry,
          minTier: terms.terms.minTier,
          dataShareBps: terms.terms.dataShareBps,
          corpora: terms.corpora.map((c) => ({ ...c, corpusId: c.corpusId.toString(), tokens: c.tokens.toString() })),
        }
      : { attached: false, reason: terms.reason },
    tx: posted.txHash,
    blockNumber: posted.blockNumber.toString(),
    // every transaction the command sent: the mint and approve the funding needed, then createJob
    txs: r.txs.map(txJson),
    panelPool,
  };
}

function createdText(r: CreateJobFromManifestResult, symbol: string): string {
  const { plan, posted } = r;
  const p = plan.policy;
  const q = plan.quote;
  const terms = plan.terms;
  return (
    `job ${posted.jobId}: ${p.segments} segments x ${p.stepsPerSegment} steps, payment ${fmt(plan.payment)} ${symbol}, stake ${fmt(p.requiredStake)} ${symbol} (from ${plan.stakeFrom}), ` +
    `segment timeout ${p.segmentTimeout} s, challenge window ${p.challengeWindow} s, manifest ${posted.manifestUri}\n` +
    `tx ${posted.txHash} in block ${posted.blockNumber}\n` +
    txLines(r.txs.slice(0, -1)) +
    (q
      ? `quote: auditors recompute each segment with probability ${Number(q.sizedForAuditRate.toPrecision(4))}` +
        (q.sizedForAuditRate === q.cheapestAuditRate
          ? ` (the cheapest rate; the manifest's ${q.manifestAuditRate} only catches more)`
          : ` (the manifest's rate; the cheapest would be ${Number(q.cheapestAuditRate.toPrecision(4))})`) +
        `, checks ${q.checks.join(" + ")}; the stake of about ${approxTokens(q.stakeWei)} ${symbol} is ${stakeReasonInWords(q.bindingStake)}; ` +
        `checking costs about ${Number((100 * q.costShareOfPayment).toPrecision(4))}% of the payment on top of the training (detection matrix ${q.detection})\n`
      : "") +
    (terms.attached
      ? `data terms: ${terms.terms.dataShareBps / 100}% of the payment to ${terms.corpora.map((c) => `corpus ${c.name} (DataRegistry ${c.corpusId}, ${c.tokens} tokens, payout ${c.payout})`).join(", ")} at finalize; min tier ${terms.terms.minTier}\n`
      : `data terms: none (${terms.reason}): created without data terms, no contributor share\n`)
  );
}

const moneyJson = (m: JobMoney) => ({
  buyerSlashShare: m.buyerSlashShare.toString(),
  buyerRefund: m.buyerRefund.toString(),
  providerPay: m.providerPay.toString(),
  slashes: m.slashes.map((s) => ({
    reason: s.reason,
    amount: s.amount.toString(),
    toChallengers: s.toChallengers.toString(),
    toBuyer: s.toBuyer.toString(),
    burned: s.burned.toString(),
    tx: s.transactionHash,
  })),
});

const coverageJson = (c: JobCoverage) => ({
  ...c,
  disputes: c.disputes.map((x) => ({ ...x, disputeId: x.disputeId.toString() })),
  warning: c.warning ?? null,
  auditRate: c.auditRate ?? null,
  promisedSegments: c.promisedSegments ?? null,
});

/** `create` of an evaluate or generate manifest; false when the manifest is a training manifest. */
async function createKind(opts: Record<string, string | boolean | undefined>): Promise<boolean> {
  const path = opts.manifest as string;
  const { readFile } = await import("node:fs/promises");
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch {
    return false; // readManifestFile names what is wrong with it
  }
  const { kindManifestOf, kindPolicy, createKindJob } = await import("../../kinds/market.ts");
  const km = kindManifestOf(value);
  if (km === undefined) return false;
  const s = (k: string) => opts[k] as string | undefined;
  const aJob = `${km.kind === "evaluate" ? "an" : "a"} ${km.kind} job`;
  for (const [flag, given] of [["--data-terms", opts.dataTerms === true], ["--data-share-bps", s("dataShareBps") !== undefined], ["--margin", s("margin") !== undefined], ["--integrity-value", s("integrityValue") !== undefined], ["--detection", s("detection") !== undefined], ["--allow-underpriced", opts.allowUnderpriced === true]] as const) {
    if (given) throw new InputError(`${flag} is not supported for ${aJob} (manifest ${path}): no data terms, and the training quote's terms do not apply: its stake is quoted per example (docs/kinds.md "Quote"), or give --stake`);
  }
  if (s("pay") === "compute") throw new InputError(`--pay compute is not supported for ${aJob} (manifest ${path}): pass --pay <amount>`);
  const K = s("examplesPerSegment");
  if (K !== undefined && !/^[1-9][0-9]*$/.test(K)) throw new InputError(`--examples-per-segment must be a positive integer, got ${JSON.stringify(K)}`);
  const plan = await createFlags({ ...opts, quote: false });
  const terms = {
    ...(plan.payment !== undefined ? { payment: plan.payment as bigint } : {}),
    ...(K !== undefined ? { examplesPerSegment: Number(K) } : {}),
    ...(plan.overrides ? { overrides: plan.overrides } : {}),
  };
  kindPolicy(km, terms); // what the flags lack is said before the chain is read
  const ctx = await marketContext(opts as never);
  const r = await createKindJob(ctx, km, { ...terms, mint: opts.mint === true, subject: `manifest ${path}` });
  if (ctx.ipfs) await announceStateNode(ctx);
  const p = r.policy;
  const json = { ...(r.quote ? { quote: { stakeWei: r.quote.stakeWei.toString(), auditRate: r.quote.auditRate, forwardPassesPerExample: r.quote.forwardPassesPerExample } } : {}), jobId: r.jobId.toString(), kind: r.kind, manifestUri: r.manifestUri, manifestHash: r.manifestHash, payment: r.payment.toString(), policy: { ...p, requiredStake: p.requiredStake.toString() }, txs: r.txs.map(txJson) };
  process.stdout.write(
    opts.json
      ? JSON.stringify(json) + "\n"
      : `job ${r.jobId} created (${r.kind}): ${p.segments} segments of ${p.stepsPerSegment} examples, payment ${approxTokens(r.payment)} ${ctx.symbol}, stake ${approxTokens(p.requiredStake)} ${ctx.symbol} (${r.quote ? `quoted: audit rate ${r.quote.auditRate} per example, ${r.quote.forwardPassesPerExample} forward pass${r.quote.forwardPassesPerExample === 1 ? "" : "es"} per example; pouw quote --manifest shows why` : "--stake"}), challenge window ${p.challengeWindow} s, manifest ${r.manifestUri}\n`,
  );
  return true;
}

/** `create`'s handler (the definitions and flags are in buyer.ts). */
export const create = async (opts: Record<string, string | boolean | undefined>) => {
  // NOTE: the quote (HiGHS) and the market code load only for the command that uses them (commands/index.ts)
  const [{ readManifestFile }, { createJobFromManifest }, { panelPoolCheck, panelPoolJson }] = await Promise.all([
    import("../../ml/manifest.ts"),
    import("../../market/create-job.ts"),
    import("../../market/panel-pool.ts"),
  ]);
  // an evaluate or generate manifest is an inference job: one example a step (kinds/market.ts, docs/kinds.md)
  const kindJob = await createKind(opts);
  if (kindJob) return;
  const manifest = await readManifestFile(opts.manifest as string);
  const plan = await createFlags(opts, manifest);
  // an underpriced payment is refused before the chain is read (planJob checks it again for every caller)
  (await import("../../market/plan-job.ts")).jobCompute(manifest, plan);
  const ctx = await marketContext(opts as never);
  const r = await createJobFromManifest(ctx, manifest, { ...plan, mint: opts.mint === true, subject: `manifest ${opts.manifest as string}` });
  const c = r.plan.compute;
  if (c.underpriced)
    process.stderr.write(
      `pouw: WARNING: posted below what the job's compute is worth (${approxTokens(c.worthWei)} tokens at ${c.pricePerTflop} tokens per TFLOP): an honest provider would train at a loss (--allow-underpriced)\n`,
    );
  // with --ipfs the provider fetches the manifest from this party's node, found from the chain (docs/content.md)
  if (ctx.ipfs) await announceStateNode(ctx);
  const panel = await panelPoolCheck(ctx.clients.public, ctx.deployment);
  if (panel?.warning) process.stderr.write(`pouw: ${panel.warning}\n`);
  process.stdout.write(opts.json ? JSON.stringify(createdJson(r, panelPoolJson(panel))) + "\n" : createdText(r, ctx.symbol));
};

/** `status`'s handler (the definitions and flags are in buyer.ts). */
export const status = async (jobArg: string, opts: Record<string, string | boolean | undefined>) => {
  const jobId = parseJobId(jobArg);
  const ctx = await readContext(opts as never);
  const { getCredits, getReceiptsRecorded, requireJob, getSegmentCommits } = await import("../../chain/index.ts");
  const job = await requireJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
  const fromBlock = BigInt(ctx.deployment.startBlock);
  const { jobReport } = await import("../../market/job-report.ts");
  const me = ctx.address;
  const [commits, report, credits] = await Promise.all([
    getSegmentCommits(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId, fromBlock }),
    jobReport(ctx.clients.public, ctx.deployment, ctx.store, jobId),
    me === undefined ? Promise.resolve(undefined) : getCredits(ctx.clients.public, { deployment: ctx.deployment, account: me }),
  ]);
  // the anchored AuditReceipts (their signatures are checked by provenance verify and buyer fetch, not here)
  const receipts = await getReceiptsRecorded(ctx.clients.public, { jobRecords: ctx.deployment.jobRecords, jobId, fromBlock });
  const { money, coverage } = report;
  const receiptLine = `${receipts.length} receipt${receipts.length === 1 ? "" : "s"} / ${new Set(receipts.map((r) => r.segment)).size} of ${job.policy.segments} segments with a receipt`;
  if (opts.json) {
    process.stdout.write(
      JSON.stringify({
        jobId: jobId.toString(),
        status: job.status,
        provider: job.provider,
        nextSegment: job.nextSegment,
        segments: job.policy.segments,
        deadline: job.deadline.toString(),
        openDisputes: job.openDisputes,
        payment: job.payment.toString(),
        committed: commits.map((c) => ({ segment: c.segment, traceRoot: c.traceRoot, lossE6: c.lossE6.toString() })),
        slashed: report.outcome.slashes.map((x) => ({ provider: x.provider, amount: x.amount.toString(), burned: x.burned.toString(), blockNumber: x.blockNumber.toString(), tx: x.transactionHash })),
        money: moneyJson(money),
        coverage: coverageJson(coverage),
        receiptCount: receipts.length,
        auditedSegments: coverage.auditedSegments,
        receipts: receipts.map((r) => ({
          segment: r.segment,
          auditor: r.auditor,
          verdict: r.verdict === 0 ? "ok" : "fault",
          checks: r.checks,
          sampledSteps: r.sampledSteps,
          digest: r.digest,
          blockNumber: r.blockNumber.toString(),
          tx: r.transactionHash,
        })),
        ...(me === undefined ? {} : { account: me, myCredit: credits!.jobMarket.toString(), myCredits: { jobMarket: credits!.jobMarket.toString(), stakeVault: credits!.stakeVault.toString() } }),
      }) + "\n",
    );
    return;
  }
  const t = (x: bigint) => `${fmt(x)} ${ctx.symbol}`;
  const { coverageLine, moneySentences } = await import("../../market/job-report.ts");
  const lines = [
    `job ${jobId}: ${job.status}, ${job.nextSegment}/${job.policy.segments} segments committed, payment ${t(job.payment)}`,
    `provider ${job.provider}, deadline ${job.deadline === 0n ? "-" : new Date(Number(job.deadline) * 1000).toISOString()}, open disputes ${job.openDisputes}`,
    ...commits.map((c) => `  segment ${c.segment}: root ${c.traceRoot} loss ${(Number(c.lossE6) / 1e6).toFixed(4)}`),
    `receipts: ${receiptLine}`,
    ...receipts.map((r) => `  segment ${r.segment}: ${r.verdict === 0 ? "ok" : "fault"} receipt by ${r.auditor} in block ${r.blockNumber} (tx ${r.transactionHash})`),
    coverageLine(coverage),
    ...(coverage.warning ? [coverage.warning] : []),
    ...moneySentences(money, t).map((x) => `outcome: ${x}`),
    ...(money.buyerSlashShare > 0n ? [`buyer's slash share: ${t(money.buyerSlashShare)} (a StakeVault credit; pouw buyer claim collects it)`] : []),
    ...(me === undefined
      ? []
      : [`claimable credit of ${me}: ${t(credits!.jobMarket + credits!.stakeVault)} (${t(credits!.jobMarket)} refunds and pay, ${t(credits!.stakeVault)} slash shares; pouw buyer claim)`]),
  ];
  if (coverage.warning) process.stderr.write(`pouw: ${coverage.warning}\n`);
  process.stdout.write(lines.join("\n") + "\n");
};

/** `fetch`'s handler (the definitions and flags are in buyer.ts). */
export const fetch = async (jobArg: string, opts: Record<string, string | boolean | undefined>) => {
  const jobId = parseJobId(jobArg);
  const ctx = await readContext(opts as never);
  const { requireJob } = await import("../../chain/index.ts");
  const job = await requireJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
  // the final weights, provenance record and its board pointer come from the job provider's announced node
  await (await peerDiscovery(ctx))?.dial([job.provider]);
  const { fetchVerified } = await import("../../market/buyer.ts");
  const r = await fetchVerified(ctx, jobId, opts.out as string);
  const skipped = r.report.checks.filter((c) => c.status === "skipped").map((c) => c.item);
  const { jobReport, coverageLine } = await import("../../market/job-report.ts");
  const { coverage } = await jobReport(ctx.clients.public, ctx.deployment, ctx.store, jobId);
  if (opts.json) {
    process.stdout.write(
      JSON.stringify({
        jobId: jobId.toString(),
        status: r.status,
        recordHash: r.recordHash,
        weightsPath: r.weightsPath,
        recordPath: r.recordPath,
        checks: r.report.checks,
        coverage: coverageJson(coverage),
        generatedData: r.generated.map((g) => ({ ...g, generateJobId: g.generateJobId.toString() })),
      }) + "\n",
    );
    return;
  }
  // the provenance checks say the record is the one anchored; the coverage says how much independent checking stands behind it
  if (coverage.warning) process.stderr.write(`pouw: ${coverage.warning}\n`);
  process.stdout.write(
    `job ${jobId} (${r.status}): provenance verified (record ${r.recordHash}, ${r.report.checks.length - skipped.length} checks ok${skipped.length ? `, skipped: ${skipped.join(", ")}` : ""}); wrote ${r.weightsPath} and ${r.recordPath}\n` +
      (await import("../../kinds/dataset-provenance.ts")).provenanceLines(jobId, r.generated).map((l) => `${l}\n`).join("") +
      `${coverageLine(coverage)}\n` +
      (coverage.warning ? `${coverage.warning}\n` : ""),
  );
};

/** `cancel`'s handler (the definitions and flags are in buyer.ts). */
export const cancel = async (jobArg: string, opts: Record<string, string | boolean | undefined>) => {
  const jobId = parseJobId(jobArg);
  const ctx = await marketContext(opts as never);
  const { cancelJob, txRef } = await import("../../chain/index.ts");
  const tx = txRef("cancelJob", await cancelJob(ctx.clients, { jobMarket: ctx.deployment.jobMarket, jobId }));
  process.stdout.write(opts.json ? JSON.stringify({ jobId: jobId.toString(), txs: [txJson(tx)] }) + "\n" : `job ${jobId} cancelled; claim the refund with \`pouw buyer claim\`\n${txLines([tx])}`);
};

/** `claim`'s handler (the definitions and flags are in buyer.ts). */
export const claim = async (opts: Record<string, string | boolean | undefined>) => {
  const ctx = await marketContext(opts as never);
  const { BUYER_CREDITS, claimCredits } = await import("../../market/standing.ts");
  const c = await claimCredits(ctx.clients, ctx.deployment, BUYER_CREDITS);
  if (opts.json) {
    process.stdout.write(
      JSON.stringify({
        account: ctx.clients.account.address,
        claimed: c.total.toString(),
        jobMarket: c.jobMarket.toString(),
        stakeVault: c.stakeVault.toString(),
        symbol: ctx.symbol,
        txs: c.txs.map(txJson),
      }) + "\n",
    );
    return;
  }
  const t = (x: bigint) => `${fmt(x)} ${ctx.symbol}`;
  process.stdout.write(c.total === 0n ? "nothing to claim\n" : `claimed ${t(c.total)}: ${t(c.jobMarket)} refunds (JobMarket) + ${t(c.stakeVault)} slash shares (StakeVault)\n${txLines(c.txs)}`);
};
