/**
 * Evaluation jobs in the page: post an evaluate manifest (kind `pouw/evaluate-job`, docs/kinds.md) with the stake the
 * kind quote gives (kinds/policy.ts, market/quote-kind.ts: the code `pouw buyer create` and `pouw quote` run), and
 * show a finalized evaluation's score as KindRecords holds it for the model's CID (chain/getKindResult.ts).
 *
 * NOTE: `pouw buyer create` first runs example 1 with the engine (the model and corpus from a store); the page has
 * neither, so it posts without that dry run, and the provider's accept runs it before any stake is locked.
 */
import canonicalizeModule from "canonicalize";
import type { Address, Hex } from "viem";
import type { ChainClients } from "../../verifier/src/chain/clients.ts";
import { approveToken } from "../../verifier/src/chain/approveToken.ts";
import { createJob, type JobPolicy } from "../../verifier/src/chain/createJob.ts";
import { getDisputeParams } from "../../verifier/src/chain/getDisputeParams.ts";
import { getKindResult, type KindResult } from "../../verifier/src/chain/getKindResult.ts";
import { getTokenAllowance } from "../../verifier/src/chain/getTokenBalance.ts";
import { EVALUATE_KIND, evaluateManifestHash, parseEvaluateManifest, type EvaluateManifest } from "../../verifier/src/evaluate/manifest.ts";
import { kindPolicy } from "../../verifier/src/kinds/policy.ts";
import { KIND_CODES, subjectOf } from "../../verifier/src/kinds/state.ts";
import type { KindQuote } from "../../verifier/src/market/quote-kind.ts";
import { cidOf } from "../../verifier/src/store/index.ts";
import { esc } from "./page.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

type Client = Parameters<typeof getKindResult>[0];

export type EvaluationQuote = { manifest: EvaluateManifest; hash: Hex; bytes: Uint8Array; cid: string; policy: JobPolicy; payment: bigint; quote: KindQuote };

/** Whether the manifest text is an evaluate manifest (the page then quotes it as one; anything else as training). */
export function isEvaluateText(text: string): boolean {
  try {
    const v = JSON.parse(text) as { kind?: unknown };
    return typeof v === "object" && v !== null && v.kind === EVALUATE_KIND;
  } catch {
    return false;
  }
}

/** The evaluate manifest parsed (a bad field named), its payment (policy.paymentWei) and the quoted policy against the deployed panel. */
export async function quoteEvaluation(client: Client, d: { disputeGame?: Address | undefined }, text: string): Promise<EvaluationQuote> {
  const manifest = parseEvaluateManifest(JSON.parse(text));
  if (manifest.policy?.paymentWei === undefined) throw new Error("The evaluate manifest states no payment: add policy.paymentWei (wei), the amount the page escrows.");
  const payment = BigInt(manifest.policy.paymentWei);
  const game = d.disputeGame ? await getDisputeParams(client, { disputeGame: d.disputeGame }) : undefined;
  const { policy, quote } = kindPolicy({ kind: "evaluate", manifest }, { payment, ...(game ? { panel: { size: game.panelSize, feeWei: game.panelFee } } : {}) });
  const bytes = new TextEncoder().encode(canonicalize(manifest)!);
  return { manifest, hash: evaluateManifestHash(manifest), bytes, cid: cidOf(bytes), policy, payment, quote: quote! };
}

/** The quote's rows (ids for the tests). */
export function evaluationQuoteHtml(q: EvaluationQuote, tok: (wei: bigint) => string): string {
  const k = q.quote;
  const p = q.policy;
  return `
    <tr><th>job kind</th><td id="quote-kind">evaluate: ${k.examples} examples of evalSet ${esc(q.manifest.evalSet.contentId)}, model ${esc(q.manifest.weightsCid)}</td></tr>
    <tr><th>price (escrow)</th><td id="quote-payment">${tok(q.payment)}</td></tr>
    <tr><th>provider stake</th><td id="quote-stake">${tok(p.requiredStake)}</td></tr>
    <tr><th>audit rate</th><td id="quote-audit-rate">${k.auditRate} per example: one auditor catches a single changed or skipped example with this probability</td></tr>
    <tr><th>compute</th><td>${k.forwardPassesPerExample} forward pass per example, ${tok(k.computeWeiPerExample)} an example, ${tok(k.jobComputeWei)} the job</td></tr>
    <tr><th>shape</th><td>${p.segments} segments x ${p.stepsPerSegment} examples, challenge window ${p.challengeWindow} s</td></tr>
    <tr><th>manifest hash</th><td class="mono" id="manifest-hash">${q.hash}</td></tr>`;
}

/** Approves the payment when the allowance is short, then createKindJob with the manifest's hash, `cid:` URI, kind and model CID hash. */
export async function postEvaluation(clients: ChainClients, d: { token: Address; jobMarket: Address }, q: EvaluationQuote, onStep: (step: "approved" | "created", hash: Hex) => void) {
  const allowance = await getTokenAllowance(clients.public, { token: d.token, owner: clients.account.address, spender: d.jobMarket });
  if (allowance < q.payment) onStep("approved", (await approveToken(clients, { token: d.token, spender: d.jobMarket, amount: q.payment })).hash);
  const r = await createJob(clients, { jobMarket: d.jobMarket, manifestHash: q.hash, manifestUri: `cid:${q.cid}`, token: d.token, payment: q.payment, policy: q.policy, kind: { kind: KIND_CODES.evaluate, modelCidHash: subjectOf(q.manifest.weightsCid) } });
  onStep("created", r.hash);
  return { jobId: r.jobId, txHash: r.hash, blockNumber: r.receipt.blockNumber, manifestUri: `cid:${q.cid}` };
}

/** The job's KindRecords result, or undefined (no KindRecords in the deployment, or nothing recorded for the job). */
export async function kindResultOf(client: Client, d: { kindRecords?: Address | undefined }, jobId: bigint): Promise<KindResult | undefined> {
  return d.kindRecords ? getKindResult(client, { kindRecords: d.kindRecords, jobId }) : undefined;
}

/** A recorded result in words: an evaluation's mean loss and correct predictions, a generation's samples and tokens. */
export function kindResultHtml(r: KindResult): string {
  const n = Number(r.examples);
  if (r.kind === "evaluate") {
    // score_i = round(1e6 x loss_i), so total / N / 1e6 is the mean loss (docs/kinds.md "Leaves")
    const meanLoss = Number(r.total) / n / 1e6;
    return `<span id="job-score">mean loss ${meanLoss.toFixed(4)}, ${r.hits} correct predictions over ${n} examples</span> <span class="muted">(recorded on KindRecords in block time ${new Date(Number(r.recordedAt) * 1000).toISOString()}: the committed leaves give this score; model CID hash <code>${r.modelCidHash}</code>)</span>`;
  }
  return `<span id="job-score">${n} samples, ${r.total} tokens generated</span> <span class="muted">(samples chain <code>${r.chain}</code>: a dataset is this job's when its samples chain to it)</span>`;
}
