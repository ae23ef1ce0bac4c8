/**
 * The market page, three views over one injected EIP-1193 wallet and one deployment:
 *   #buyer     validate a manifest with the CLI's zod schema, quote it with the CLI's policy code, approve and
 *              escrow through the CLI's postJob, publish the manifest (and small datasets) to the server the page
 *              came from (PUT /ipfs/<cid>, `pouw serve --upload`), follow a job with its money and audit coverage
 *              (market/job-report.ts, as `pouw buyer status`), cancel an Open one, claim refunds and slash shares
 *              (as `pouw buyer claim`), and fetch the result with the provenance verification `pouw buyer fetch`
 *              runs (market/fetch-result.ts), or verify a weights file and record the buyer holds (provenance/verify.ts);
 *   #provider  the account's stake, jobs and credits (market/standing.ts, as `pouw provider status`), and claim;
 *   #auditor   its bond, status, panel pool and credits (as `pouw auditor status`), and claim (as `pouw auditor claim`).
 * Everything chain-side goes through verifier/src/chain actions; the wallet signs (send.ts's json-rpc account path).
 * The shared page state and wallet checks are in page.ts, the provider and auditor views in standing.ts.
 *
 * URL parameters: `deployment` (URL of a pouw-deployment-1 JSON; default ./deployment.json), `detection` (URL of
 * a detection matrix; default ./detection.json), `job` (a job id to follow), `poll` (ms between job reads),
 * `source` (the content server results are fetched from, `/ipfs/<cid>` and `/board/...`; default this page's origin).
 */
import { formatEther, getAddress, type Address, type Hex } from "viem";
import { WalletRejectedError } from "../../verifier/src/chain/errors.ts";
import { Deployment } from "../../verifier/src/chain/deployment.ts";
import { providerClients } from "../../verifier/src/chain/clients.ts";
import { cancelJob } from "../../verifier/src/chain/cancelJob.ts";
import { getHoldings } from "../../verifier/src/chain/getHoldings.ts";
import { getJob, type GetJobReturnType } from "../../verifier/src/chain/getJob.ts";
import { getJobDisputes, type JobDisputeOpened } from "../../verifier/src/chain/getJobDisputes.ts";
import { getReceiptsRecorded, type RecordedReceipt } from "../../verifier/src/chain/getReceiptsRecorded.ts";
import { getSegmentCommits, type SegmentCommit } from "../../verifier/src/chain/getSegmentCommits.ts";
import { getTokenSymbol } from "../../verifier/src/chain/getTokenSymbol.ts";
import { coverageLine, jobReport, moneySentences, type JobReport } from "../../verifier/src/market/job-report.ts";
import { BUYER_CREDITS, claimCredits } from "../../verifier/src/market/standing.ts";
import { TokenFundsError } from "../../verifier/src/market/funding.ts";
import type { DerivedPolicy } from "../../verifier/src/market/job-policy.ts";
import { jobFunding, planJob } from "../../verifier/src/market/plan-job.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { canonicalManifest, manifestHash, parseManifestJson } from "../../verifier/src/ml/manifest.ts";
import { parseDetectionMatrix } from "../../verifier/src/policy/detection.ts";
import { fetchResult } from "../../verifier/src/market/fetch-result.ts";
import { provenanceVerdict, verifyProvenance, type ProvenanceReport } from "../../verifier/src/provenance/verify.ts";
import { viemProvenanceChain } from "../../verifier/src/chain/provenanceChain.ts";
import { browserPublicClients, memoryStore, resultSources } from "./browser.ts";
import { $, clearError, esc, needWallet, params, POLL_MS, showError, SOURCE, state, wrongChain, type Ethereum } from "./page.ts";
import { claimAs, showAuditor, showProvider } from "./standing.ts";
import { prepareDataset, publishBytes, schemaLine, withDataset } from "./dataset.ts";
import { evaluationQuoteHtml, isEvaluateText, kindResultHtml, kindResultOf, postEvaluation, quoteEvaluation, type EvaluationQuote } from "./kinds.ts";
import type { KindResult } from "../../verifier/src/chain/getKindResult.ts";

// ------------------------------------------------------------------ one thing at a time

/**
 * Every click and wallet event runs here, one at a time in the order they came: a Connect clicked, or an account
 * switched in the wallet, while a view is still reading runs after that read, it is never dropped. (It used to be
 * dropped while the page was busy: a Connect clicked just after a view switch under load left the auditor view on
 * the previous account, the clean-clone CI failure at be82f8d; test/dapp/dapp-races.test.ts.) `once` names an
 * action that must not run twice from one burst of clicks (a double click on Approve and escrow posts one job): it
 * is dropped while the same action waits or runs. The error box is cleared when the page goes from idle to busy.
 */
let queue: Promise<void> = Promise.resolve();
let queued = 0;
const onceQueued = new Set<string>();

function guarded(fn: () => Promise<void>, once?: string): void {
  if (once !== undefined) {
    if (onceQueued.has(once)) return;
    onceQueued.add(once);
  }
  if (queued++ === 0) clearError();
  state.busy = true;
  render();
  queue = queue.then(async () => {
    try {
      await fn();
    } catch (err) {
      showError(err);
    } finally {
      if (once !== undefined) onceQueued.delete(once);
      state.busy = --queued > 0;
      render();
    }
  });
}

/**
 * Reads that render outside the queue (the job poll) race the queued ones: `latestRead(what)` numbers a read of
 * `what`, and the function it returns says whether that read is still the newest; an older answer that lands late
 * is dropped, never rendered over the newer one.
 */
const reads = new Map<string, number>();
function latestRead(what: string): () => boolean {
  const n = (reads.get(what) ?? 0) + 1;
  reads.set(what, n);
  return () => reads.get(what) === n;
}

// ------------------------------------------------------------------ deployment

async function fetchJson(url: string, what: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { cache: "no-store" });
  } catch (err) {
    throw new Error(`cannot fetch the ${what} from ${url}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new Error(`cannot fetch the ${what} from ${url}: HTTP ${res.status}`);
  try {
    return await res.json();
  } catch {
    throw new Error(`the ${what} at ${url} is not JSON`);
  }
}

async function loadDeployment(): Promise<void> {
  const url = params.get("deployment") ?? "./deployment.json";
  const r = Deployment.safeParse(await fetchJson(url, "deployment file"));
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new Error(`the deployment file at ${url} is not a pouw deployment: field ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  state.deployment = r.data as Deployment;
  const d = state.deployment;
  $("deployment").innerHTML = `<table>
    <tr><th>chain</th><td id="deployment-chain">${d.chainId}</td></tr>
    <tr><th>JobMarket</th><td class="mono" id="deployment-market">${d.jobMarket}</td></tr>
    <tr><th>token</th><td class="mono">${d.token}${d.devToken ? " (dev token)" : ""}</td></tr>
    <tr><th>StakeVault</th><td class="mono">${d.stakeVault}</td></tr>
    <tr><th>DisputeGame</th><td class="mono">${d.disputeGame ?? "none"}</td></tr>
    <tr><th>from</th><td class="mono">${esc(url)}</td></tr></table>`;
  const matrixUrl = params.get("detection") ?? "./detection.json";
  state.detection = { path: matrixUrl, matrix: parseDetectionMatrix(await fetchJson(matrixUrl, "detection matrix"), `detection matrix ${matrixUrl}`) };
  const jobParam = params.get("job");
  if (jobParam !== null && /^[0-9]+$/.test(jobParam)) {
    $<HTMLInputElement>("job-id").value = jobParam;
    state.jobId = BigInt(jobParam);
  }
}

// ------------------------------------------------------------------ wallet

async function connect(): Promise<void> {
  const ethereum = (window as unknown as { ethereum?: Ethereum }).ethereum;
  if (!ethereum) throw new Error("No browser wallet found (window.ethereum): install or enable an EIP-1193 wallet.");
  if (!state.deployment) throw new Error("No deployment loaded: open the page with ?deployment=<url of deployment.json>.");
  state.ethereum = ethereum;
  const accounts = (await ethereum.request({ method: "eth_requestAccounts" }).catch(rejected)) as string[];
  if (!accounts[0]) throw new Error("The wallet returned no account.");
  await setAccount(getAddress(accounts[0]));
  if (state.listening) return; // once: every Reconnect used to add another pair of listeners
  state.listening = true;
  ethereum.on?.("accountsChanged", (a) => guarded(async () => {
    const list = a as string[];
    if (list[0]) await setAccount(getAddress(list[0]));
  }));
  ethereum.on?.("chainChanged", () => guarded(() => setAccount(state.account!)));
}

/** A wallet refusal (code 4001) as the typed error the rest of the page reports. */
function rejected(err: unknown): never {
  if ((err as { code?: unknown }).code === 4001) throw new WalletRejectedError("the wallet rejected the request: nothing was signed or sent", { cause: err });
  throw err;
}

async function setAccount(account: Address): Promise<void> {
  const ethereum = state.ethereum!;
  const d = state.deployment!;
  state.account = account;
  state.walletChainId = Number(await ethereum.request({ method: "eth_chainId" }));
  state.clients = providerClients(ethereum, d.chainId, { account: { address: account, type: "json-rpc" }, pollingIntervalMs: 250 });
  const wrong = wrongChain();
  if (wrong) throw new Error(wrong);
  state.symbol = (await getTokenSymbol(state.clients.public, { token: d.token }).catch(() => undefined)) ?? "tokens";
  jobButtons(); // Cancel is offered to the job's buyer only
  await showAccount();
  await showView();
}

async function showAccount(): Promise<void> {
  const c = state.clients;
  if (!c || !state.account || wrongChain()) return;
  const h = await getHoldings(c.public, { deployment: state.deployment!, account: state.account });
  // a buyer is owed refunds (JobMarket) and its share of a provider's slash (StakeVault); Claim collects both
  $("account").innerHTML =
    `<span class="mono" id="account-address">${state.account}</span> on chain ${state.walletChainId}: balance <span id="balance">${formatEther(h.tokenBalance)}</span> ${esc(state.symbol)}, ` +
    `JobMarket credit (refunds) <span id="credit">${formatEther(h.jobMarketCredit)}</span> ${esc(state.symbol)}, slash shares <span id="slash-credit">${formatEther(h.stakeCredit)}</span> ${esc(state.symbol)}`;
  $("claim").classList.toggle("hidden", h.jobMarketCredit + h.stakeCredit === 0n);
}

async function switchChain(): Promise<void> {
  const d = state.deployment!;
  await state.ethereum!.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${d.chainId.toString(16)}` }] }).catch(rejected);
  await setAccount(state.account!);
}

// ------------------------------------------------------------------ manifest and quote

/** The text the shown quote is for: an edit of the manifest withdraws the quote (Approve and escrow posts what was quoted). */
let quotedText: string | undefined;
/** The quoted evaluate manifest (kinds.ts), when the manifest on the page is one; else the training quote is in state. */
let evaluation: EvaluationQuote | undefined;

function dropQuote(): void {
  state.manifest = undefined;
  state.derived = undefined;
  evaluation = undefined;
  quotedText = undefined;
  $("quote-section").classList.add("hidden");
}

async function quote(): Promise<void> {
  dropQuote();
  const text = $<HTMLTextAreaElement>("manifest-text").value;
  // an evaluate manifest is an inference job, quoted per example (kinds.ts)
  if (isEvaluateText(text)) return quoteKind(text);
  // the CLI's schema: ManifestError names the first bad field
  const manifest = parseManifestJson(text);
  const d = state.deployment;
  if (!d || !state.detection) throw new Error("No deployment loaded.");
  $("manifest-status").innerHTML = `<span class="ok">valid manifest</span>: ${esc(manifest.model.arch)}, ${manifest.training.steps} steps in segments of ${manifest.training.stepsPerSegment}, hash <code id="manifest-hash">${manifestHash(manifest)}</code>`;
  // reads go through the wallet when connected, else straight to the chain the deployment names is not known: need a wallet
  const client = state.clients?.public ?? browserPublicClients(state.ethereum, d.chainId);
  if (!client) throw new Error("Connect the wallet to quote against the deployment (the quote reads the dispute panel and the data registry).");
  // the plan `pouw buyer create` posts (market/plan-job.ts): data terms when every corpus is registered, the deployed
  // panel, the committed matrix
  const plan = await planJob(client, d, manifest, { detection: state.detection });
  const derived: DerivedPolicy = plan;
  const terms = plan.terms;
  if ($<HTMLTextAreaElement>("manifest-text").value !== text) {
    // edited while the chain was read: this quote is for text no longer on the page
    $("manifest-status").textContent = "The manifest changed while it was being quoted: check and quote it again.";
    return;
  }
  quotedText = text;
  state.manifest = manifest;
  state.derived = derived;
  state.terms = terms;
  const q = derived.quote!;
  const p = derived.policy;
  const tok = (wei: bigint) => `${formatEther(wei)} ${esc(state.symbol)}`;
  $("quote").innerHTML = `
    <tr><th>price (escrow)</th><td id="quote-payment">${tok(derived.payment)}</td></tr>
    <tr><th>provider stake</th><td id="quote-stake">${tok(p.requiredStake)}</td></tr>
    <tr><th>audit rate</th><td id="quote-audit-rate">${q.cheapestAuditRate.toPrecision(3)} (cheapest contract), manifest samples at ${q.manifestAuditRate}; stake sized for ${q.sizedForAuditRate.toPrecision(3)}</td></tr>
    <tr><th>why this stake</th><td>${esc(q.reason)}</td></tr>
    <tr><th>checks priced</th><td>${esc(q.checks.join(" + "))}</td></tr>
    <tr><th>expected audit cost</th><td>${(100 * q.costShareOfPayment).toPrecision(3)}% of the payment</td></tr>
    <tr><th>shape</th><td>${p.segments} segments x ${p.stepsPerSegment} steps, segment timeout ${p.segmentTimeout} s, challenge window ${p.challengeWindow} s</td></tr>
    <tr><th>slash split</th><td>challenger ${p.challengerBps / 100}%, buyer ${p.buyerBps / 100}%, burn ${p.burnBps / 100}%; timeout slash ${p.timeoutSlashBps / 100}%</td></tr>
    <tr><th>data terms</th><td id="quote-terms">${terms.attached ? `${terms.terms.dataShareBps / 100}% of the payment to ${esc(terms.corpora.map((c) => `${c.name} (corpus ${c.corpusId})`).join(", "))}` : `none: ${esc(terms.reason)}`}</td></tr>
    <tr><th>detection matrix</th><td class="mono">${esc(q.detection)}</td></tr>`;
  $("quote-section").classList.remove("hidden");
  $("post-status").textContent = "";
  $("manifest-download").textContent = "";
}

/** The quote of an evaluate manifest: the same rows a training quote has where they apply. */
async function quoteKind(text: string): Promise<void> {
  const d = state.deployment;
  if (!d) throw new Error("No deployment loaded.");
  const client = state.clients?.public ?? browserPublicClients(state.ethereum, d.chainId);
  if (!client) throw new Error("Connect the wallet to quote against the deployment (the quote reads the dispute panel).");
  const q = await quoteEvaluation(client, d, text);
  if ($<HTMLTextAreaElement>("manifest-text").value !== text) {
    $("manifest-status").textContent = "The manifest changed while it was being quoted: check and quote it again.";
    return;
  }
  $("manifest-status").innerHTML = `<span class="ok">valid evaluate manifest</span>: ${esc(q.manifest.model.arch)}, ${q.quote.examples} examples in segments of ${q.policy.stepsPerSegment}`;
  quotedText = text;
  evaluation = q;
  $("quote").innerHTML = evaluationQuoteHtml(q, (wei) => `${formatEther(wei)} ${esc(state.symbol)}`);
  $("quote-section").classList.remove("hidden");
  $("post-status").textContent = "";
  $("manifest-download").textContent = "";
}

async function post(): Promise<void> {
  if (evaluation) return postKind(evaluation);
  const clients = needWallet();
  const { manifest, derived, terms } = state;
  if (!manifest || !derived || !terms) throw new Error("Quote a manifest first.");
  const d = state.deployment!;
  const funding = await jobFunding(clients.public, d, state.account!, derived.payment);
  if (funding.shortfall > 0n) throw new TokenFundsError(funding.balance, funding.payment, false);
  const store = memoryStore();
  $("post-status").textContent = "waiting for the wallet…";
  const r = await postJob(clients, d, store, manifest, derived.policy, derived.payment, {
    ...(terms.attached ? { terms: terms.terms } : {}),
    onStep: (step, hash) => ($("post-status").textContent = step === "approved" ? `approved (${hash}); now the escrow…` : `escrowed (${hash})`),
  });
  $("post-status").innerHTML = `<span class="ok" id="posted">job ${r.jobId} created</span> in block ${r.blockNumber} (tx <code>${r.txHash}</code>), manifest ${esc(r.manifestUri)}`;
  // the provider reads the manifest by its CID from a content store: publish it to the server this page came from
  const bytes = new TextEncoder().encode(canonicalManifest(manifest));
  $("manifest-download").innerHTML = (await publishBytes(bytes, r.manifestUri.slice(4), "manifest")).html;
  state.jobId = r.jobId;
  $<HTMLInputElement>("job-id").value = String(r.jobId);
  history.replaceState(null, "", `?${new URLSearchParams({ ...Object.fromEntries(params), job: String(r.jobId) })}`);
  await refreshJob();
  await showAccount();
}

async function postKind(q: EvaluationQuote): Promise<void> {
  const clients = needWallet();
  const d = state.deployment!;
  const funding = await jobFunding(clients.public, d, state.account!, q.payment);
  if (funding.shortfall > 0n) throw new TokenFundsError(funding.balance, funding.payment, false);
  $("post-status").textContent = "waiting for the wallet…";
  const r = await postEvaluation(clients, d, q, (step, hash) => ($("post-status").textContent = step === "approved" ? `approved (${hash}); now the escrow…` : `escrowed (${hash})`));
  $("post-status").innerHTML = `<span class="ok" id="posted">job ${r.jobId} created</span> (evaluate) in block ${r.blockNumber} (tx <code>${r.txHash}</code>), manifest ${esc(r.manifestUri)}`;
  $("manifest-download").innerHTML = (await publishBytes(q.bytes, q.cid, "manifest")).html;
  state.jobId = r.jobId;
  $<HTMLInputElement>("job-id").value = String(r.jobId);
  history.replaceState(null, "", `?${new URLSearchParams({ ...Object.fromEntries(params), job: String(r.jobId) })}`);
  await refreshJob();
  await showAccount();
}

/** Publishes the picked dataset (dataset.ts) and writes its CID into the manifest on the page (which withdraws any quote). */
async function publishDataset(): Promise<void> {
  const file = $<HTMLInputElement>("publish-file").files?.[0];
  if (!file) throw new Error("Pick the dataset file first.");
  const ds = await prepareDataset(file);
  const out = await publishBytes(ds.bytes, ds.cid, "dataset");
  const into = withDataset($<HTMLTextAreaElement>("manifest-text").value, ds);
  if (into.changed) {
    $<HTMLTextAreaElement>("manifest-text").value = into.text;
    dropQuote();
  }
  $("publish-status").innerHTML =
    `${out.html} From ${esc(ds.source)}${ds.schema ? `: ${esc(schemaLine(ds.schema))}` : ""}. ` +
    (into.changed ? `<span id="dataset-in-manifest">The manifest above now names it</span>: check and quote it again.` : `Not written into the manifest: ${esc(into.why)}.`);
}

// ------------------------------------------------------------------ job

let lastJobHtml = "";

async function refreshJob(): Promise<void> {
  const d = state.deployment;
  const id = state.jobId;
  if (!d || id === undefined) return;
  const client = state.clients?.public ?? browserPublicClients(state.ethereum, d.chainId);
  if (!client || wrongChain()) return;
  // the poll's read of the job followed before may land after a newer read (another job followed, a post)
  const newest = latestRead("job");
  const current = () => newest() && state.jobId === id;
  const fromBlock = BigInt(d.startBlock);
  const job = await getJob(client, { jobMarket: d.jobMarket, jobId: id });
  if (!current()) return;
  state.job = job;
  if (job.status === "None") {
    setJobHtml(`<span id="job-status" class="status">job ${id} does not exist</span>`);
    return;
  }
  const [commits, receipts, disputes, report, kindResult] = await Promise.all([
    getSegmentCommits(client, { jobMarket: d.jobMarket, jobId: id, fromBlock }),
    getReceiptsRecorded(client, { jobRecords: d.jobRecords, jobId: id, fromBlock }),
    d.disputeGame ? getJobDisputes(client, { disputeGame: d.disputeGame, jobId: id, fromBlock }) : Promise.resolve([] as JobDisputeOpened[]),
    // market/job-report.ts, as `pouw buyer status`: the money's outcome and the audit coverage (the manifest's rate from the page's source)
    jobReport(client, d, resultSources(SOURCE).store, id),
    // an evaluate or generate job's result as KindRecords holds it (recorded once the job is Finalized)
    job.status === "Finalized" ? kindResultOf(client, d, id) : Promise.resolve(undefined),
  ]);
  if (!current()) return;
  setJobHtml(jobHtml(job, commits, receipts, disputes, report, kindResult));
}

function setJobHtml(html: string): void {
  if (html !== lastJobHtml) $("job").innerHTML = lastJobHtml = html;
  jobButtons();
}

function jobButtons(): void {
  const j = state.job;
  $("cancel").classList.toggle("hidden", !(j && j.status === "Open" && state.account !== undefined && getAddress(j.buyer) === state.account));
  $<HTMLButtonElement>("fetch-result").disabled = j?.status !== "Finalized";
}

const ZERO = /^0x0{40}$/i;

/** What each status means for the buyer, in a sentence (the terminal ones say where the money went). */
const STATUS_MEANS: Record<string, string> = {
  Open: "waiting for a provider to accept; you can cancel it and get the escrow back as credit",
  Active: "a provider accepted and is training; each segment must be committed before the deadline",
  Committed: "every segment is committed; anyone may challenge a step until the challenge window ends, then the job can be finalized",
  Finalized: "ended: the challenge window passed with no successful challenge and the provider was paid",
  Cancelled: "ended: nobody trained it; the escrow was credited back to you",
  Refunded: "ended: a dispute found the provider at fault; the escrow was credited back to you and the provider's stake was slashed",
  TimedOut: "the provider missed a segment deadline and was slashed for it; its committed segments stay challengeable until the window ends, then the job re-opens",
};

function jobHtml(job: GetJobReturnType, commits: SegmentCommit[], receipts: RecordedReceipt[], disputes: JobDisputeOpened[], report: JobReport, kindResult?: KindResult): string {
  const tok = (wei: bigint) => `${formatEther(wei)} ${esc(state.symbol)}`;
  const when = new Date(Number(job.deadline) * 1000).toISOString();
  // the deadline field is the segment deadline while Active and the challenge window's end once Committed or TimedOut
  const deadline =
    job.deadline === 0n ? "-" : job.status === "Committed" || job.status === "TimedOut" ? `challenge window ends <span id="job-window-end">${when}</span>; finalize after that` : job.status === "Active" ? `next segment due by ${when}` : when;
  const c = report.coverage;
  const money = moneySentences(report.money, tok);
  const rows = [
    `<tr><th>status</th><td><span id="job-status" class="status">${job.status}</span> <span id="job-status-means" class="muted">${esc(STATUS_MEANS[job.status] ?? "")}</span></td></tr>`,
    ...(kindResult ? [`<tr><th>${kindResult.kind === "evaluate" ? "score" : "dataset"} (KindRecords)</th><td>${kindResultHtml(kindResult)}</td></tr>`] : []),
    `<tr><th>audit coverage</th><td><span id="job-coverage">${esc(coverageLine(c).replace(/^audit coverage: /, ""))}</span>${c.warning ? `<div id="job-coverage-warning" class="verdict-bad">${esc(c.warning)}</div>` : ""}</td></tr>`,
    ...(money.length ? [`<tr><th>outcome</th><td id="job-outcome">${money.map((x) => `<div>${x}</div>`).join("")}</td></tr>`] : []),
    ...(report.money.buyerSlashShare > 0n ? [`<tr><th>your slash share</th><td id="job-buyer-slash-share">${tok(report.money.buyerSlashShare)} (a StakeVault credit; Claim collects it)</td></tr>`] : []),
    `<tr><th>buyer</th><td class="mono">${job.buyer}</td></tr>`,
    `<tr><th>provider</th><td class="mono" id="job-provider">${ZERO.test(job.provider) ? "none yet" : job.provider}</td></tr>`,
    `<tr><th>payment</th><td>${tok(job.payment)}</td></tr>`,
    `<tr><th>stake required</th><td>${tok(job.policy.requiredStake)}</td></tr>`,
    `<tr><th>segments committed</th><td id="job-segments">${commits.length}/${job.policy.segments}</td></tr>`,
    `<tr><th>deadline</th><td id="job-deadline">${deadline}</td></tr>`,
    `<tr><th>open disputes</th><td id="job-open-disputes">${job.openDisputes}</td></tr>`,
    `<tr><th>manifest hash</th><td class="mono">${job.manifestHash as Hex}</td></tr>`,
  ];
  const list = (items: string[], none: string) => (items.length ? `<ul>${items.join("")}</ul>` : `<span class="muted">${none}</span>`);
  return `<table>${rows.join("")}</table>
    <h2>Segments</h2>${list(commits.map((c) => `<li>segment ${c.segment}: root <code>${c.traceRoot}</code>, loss ${(Number(c.lossE6) / 1e6).toFixed(4)}, checkpoint <code>${esc(c.checkpointCid)}</code></li>`), "none committed yet")}
    <h2>Audit receipts</h2><div id="job-receipts">${list(receipts.map((r) => `<li>segment ${r.segment}: ${r.verdict === 0 ? '<span class="ok">clean</span>' : "<b>fault</b>"} by <code>${r.auditor}</code>, ${r.sampledSteps} steps sampled</li>`), "none yet")}</div>
    <h2>Disputes</h2><div id="job-disputes">${list(disputes.map((x) => `<li>dispute ${x.disputeId}: segment ${x.segment} step ${x.step} challenged by <code>${x.challenger}</code>, bond ${tok(x.bond)}</li>`), "none")}</div>`;
}

async function cancel(): Promise<void> {
  const clients = needWallet();
  if (state.jobId === undefined) throw new Error("Follow a job first.");
  await cancelJob(clients, { jobMarket: state.deployment!.jobMarket, jobId: state.jobId });
  await refreshJob();
  await showAccount();
}

async function claim(): Promise<void> {
  const clients = needWallet();
  // as `pouw buyer claim`: every credit the buyer is owed, refunds and slash shares
  await claimCredits(clients, state.deployment!, BUYER_CREDITS);
  await showAccount();
}

function follow(): void {
  const v = $<HTMLInputElement>("job-id").value.trim();
  if (!/^[0-9]+$/.test(v)) throw new Error(`job id must be a whole number, got ${JSON.stringify(v)}`);
  state.jobId = BigInt(v);
  state.job = undefined;
  lastJobHtml = "";
}

// ------------------------------------------------------------------ result

function readClient() {
  const d = state.deployment;
  if (!d) throw new Error("No deployment loaded.");
  const client = state.clients?.public ?? browserPublicClients(state.ethereum, d.chainId);
  if (!client) throw new Error("Connect the wallet: the checks read the chain through it.");
  const wrong = wrongChain();
  if (wrong) throw new Error(wrong);
  return { d, client };
}

function reportHtml(report: ProvenanceReport, prefix: string): string {
  const rows = report.checks.map(
    (c) => `<tr class="check" data-item="${esc(c.item)}" data-status="${c.status}"><td class="check-${c.status}">${c.status === "ok" ? "ok" : c.status === "fail" ? "FAIL" : "skipped"}</td><th>${esc(c.item)}</th><td class="mono">${esc(c.detail)}</td></tr>`,
  );
  return `<div id="${prefix}-verdict" class="${report.ok ? "verdict-ok" : "verdict-bad"}">${esc(provenanceVerdict(report))}</div><table id="${prefix}-checks">${rows.join("")}</table>`;
}

function downloadLink(id: string, name: string, bytes: Uint8Array, type: string): string {
  const href = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type }));
  return `<a id="${id}" download="${esc(name)}" href="${href}">${esc(name)}</a> (${bytes.byteLength.toLocaleString("en")} bytes)`;
}

/** `pouw buyer fetch` in the page: the record from the board, the weights by CID, every check against the chain. */
async function fetchAndVerify(): Promise<void> {
  const { d, client } = readClient();
  if (state.jobId === undefined) throw new Error("Follow a job first.");
  $("result").textContent = `fetching job ${state.jobId}'s result from ${SOURCE}…`;
  const sources = resultSources(SOURCE);
  const [r, { coverage }] = await Promise.all([fetchResult({ clients: { public: client }, deployment: d, ...sources }, state.jobId), jobReport(client, d, sources.store, state.jobId)]);
  // the record matching the chain says nothing of how much was checked: the coverage and its warning stand beside it
  const checked = `<p id="result-coverage">${esc(coverageLine(coverage))}</p>${coverage.warning ? `<div id="result-coverage-warning" class="verdict-bad">${esc(coverage.warning)}</div>` : ""}`;
  const files = r.report.ok
    ? `<p>${downloadLink("download-weights", "final.safetensors", r.weightsBytes, "application/octet-stream")}, ${downloadLink("download-record", "provenance.json", r.recordBytes, "application/json")}</p>`
    : `<p>Not offered for download: the result failed verification.</p>`;
  $("result").innerHTML = reportHtml(r.report, "result") + checked + files;
}

async function fileBytes(id: string, what: string): Promise<Uint8Array> {
  const file = $<HTMLInputElement>(id).files?.[0];
  if (!file) throw new Error(`Pick the ${what} file first.`);
  return new Uint8Array(await file.arrayBuffer());
}

/** `pouw provenance verify` in the page, on files the buyer picks. */
async function verifyFiles(): Promise<void> {
  const { d, client } = readClient();
  const weightsBytes = await fileBytes("verify-weights", "weights");
  const recordBytes = await fileBytes("verify-record", "record");
  const report = await verifyProvenance({ recordBytes, weightsBytes, chain: viemProvenanceChain(client, { jobMarket: d.jobMarket, jobRecords: d.jobRecords }), deployment: { chainId: d.chainId, jobMarket: d.jobMarket, jobRecords: d.jobRecords } });
  $("verified-files").innerHTML = reportHtml(report, "files");
}

// ------------------------------------------------------------------ views

type View = "buyer" | "provider" | "auditor";
const BLURBS: Record<View, string> = {
  buyer: "Post a training job: escrow the payment in JobMarket, follow the provider's commitments and the auditors' receipts, fetch the result with its provenance verified.",
  provider: "A provider's standing: stake (free, locked, unbonding), the jobs it accepted, its credits; claim them through the wallet. Training runs from the CLI (pouw provider run).",
  auditor: "An auditor's standing: bond, status, whether the panel pool can decide a dispute, credits; claim them through the wallet. Auditing runs from the CLI (pouw auditor run).",
};

function currentView(): View {
  const h = location.hash.slice(1);
  return h === "provider" || h === "auditor" ? h : "buyer";
}

async function showView(): Promise<void> {
  const v = currentView();
  for (const name of ["buyer", "provider", "auditor"] as const) {
    $(`view-${name}`).classList.toggle("hidden", name !== v);
    $(`nav-${name}`).classList.toggle("current", name === v);
  }
  $("view-blurb").textContent = BLURBS[v];
  document.title = `PoUW ${v}`;
  if (state.account && !wrongChain()) {
    if (v === "provider") await showProvider();
    if (v === "auditor") await showAuditor();
  }
}

// ------------------------------------------------------------------ wiring

function render(): void {
  const connected = state.account !== undefined && !wrongChain();
  $<HTMLButtonElement>("connect").textContent = state.account ? "Reconnect" : "Connect wallet";
  $("switch-chain").classList.toggle("hidden", !(state.account && wrongChain()));
  $<HTMLButtonElement>("post").disabled = !(connected && (state.derived || evaluation)) || state.busy;
  document.body.dataset.busy = String(state.busy);
}

async function pollLoop(): Promise<void> {
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    if (state.busy || state.jobId === undefined) continue;
    try {
      await refreshJob();
    } catch (err) {
      console.warn("job refresh failed", err);
    }
  }
}

$("connect").addEventListener("click", () => guarded(connect));
$("switch-chain").addEventListener("click", () => guarded(switchChain, "switch-chain"));
$("quote-button").addEventListener("click", () => guarded(quote));
$("post").addEventListener("click", () => guarded(post, "post"));
$("cancel").addEventListener("click", () => guarded(cancel, "cancel"));
$("claim").addEventListener("click", () => guarded(claim, "claim"));
$("publish").addEventListener("click", () => guarded(publishDataset, "publish"));
$("fetch-result").addEventListener("click", () => guarded(fetchAndVerify, "fetch-result"));
$("verify-files").addEventListener("click", () => guarded(verifyFiles));
$("provider-refresh").addEventListener("click", () => guarded(showProvider));
$("auditor-refresh").addEventListener("click", () => guarded(showAuditor));
$("provider-claim").addEventListener("click", () => guarded(() => claimAs("provider"), "provider-claim"));
$("auditor-claim").addEventListener("click", () => guarded(() => claimAs("auditor"), "auditor-claim"));
window.addEventListener("hashchange", () => guarded(showView));
$("follow").addEventListener("click", () => guarded(async () => {
  follow();
  await refreshJob();
}));
$<HTMLTextAreaElement>("manifest-text").addEventListener("input", () => {
  if (quotedText === undefined || $<HTMLTextAreaElement>("manifest-text").value === quotedText) return;
  dropQuote();
  $("manifest-status").textContent = "The manifest changed since its quote: check and quote it again.";
  render();
});
$<HTMLInputElement>("manifest-file").addEventListener("change", (e) => guarded(async () => {
  const file = (e.target as HTMLInputElement).files?.[0];
  if (!file) return;
  $<HTMLTextAreaElement>("manifest-text").value = await file.text();
  await quote();
}));

guarded(async () => {
  $("result-source").textContent = SOURCE;
  await showView();
  await loadDeployment();
  document.body.dataset.ready = "true";
  if (state.jobId !== undefined) await refreshJob().catch(() => undefined);
});
void pollLoop();
