/**
 * The provider and auditor views: the connected account's standing (market/standing.ts, as `pouw provider status` and
 * `pouw auditor status`) and the claim of its credits through the wallet.
 */
import { formatEther } from "viem";
import { chainDate } from "../../verifier/src/chain/revertText.ts";
import { AUDITOR_CREDITS, auditorStanding, claimCredits, PROVIDER_CREDITS, providerStanding } from "../../verifier/src/market/standing.ts";
import { $, esc, needWallet, state } from "./page.ts";

const tokAmount = (wei: bigint) => `${formatEther(wei)} ${esc(state.symbol)}`;
const when = (t: bigint) => (t === 0n ? "-" : chainDate(t));

export async function showProvider(): Promise<void> {
  const c = needWallet();
  const account = state.account!;
  const s = await providerStanding(c.public, state.deployment!, account);
  if (state.account !== account) return; // an answer for an account no longer connected is not shown (the queue runs reads in order; this holds even for one outside it)
  const h = s.holdings;
  const jobs = s.jobs.map((j) => `<li>job ${j.jobId}: <span class="status">${j.status}</span>, ${j.nextSegment}/${j.policy.segments} segments, payment ${tokAmount(j.payment)}${j.openDisputes ? `, ${j.openDisputes} open dispute(s)` : ""}</li>`);
  $("provider").innerHTML = `<table>
    <tr><th>account</th><td class="mono">${state.account}</td></tr>
    <tr><th>stake</th><td id="provider-stake">${tokAmount(s.stake.free)} free, ${tokAmount(s.stake.locked)} locked${s.stake.pendingWithdrawal > 0n ? `, ${tokAmount(s.stake.pendingWithdrawal)} unbonding (withdrawable at ${when(s.stake.withdrawableAt)})` : ""}</td></tr>
    <tr><th>payment credit</th><td id="provider-payment-credit">${tokAmount(h.jobMarketCredit)}</td></tr>
    <tr><th>slash shares</th><td id="provider-stake-credit">${tokAmount(h.stakeCredit)}</td></tr>
    <tr><th>token balance</th><td id="provider-balance">${tokAmount(h.tokenBalance)}</td></tr></table>
    <h2>Jobs accepted</h2><div id="provider-jobs">${jobs.length ? `<ul>${jobs.join("")}</ul>` : '<span class="muted">none accepted</span>'}</div>`;
  $("provider-claim").classList.toggle("hidden", h.jobMarketCredit + h.stakeCredit === 0n);
}

export async function showAuditor(): Promise<void> {
  const c = needWallet();
  const account = state.account!;
  const s = await auditorStanding(c.public, state.deployment!, account);
  if (state.account !== account) return; // an answer for an account no longer connected is not shown (the queue runs reads in order; this holds even for one outside it)
  const h = s.holdings;
  const a = s.auditor;
  const credits = h.disputeCredit + h.stakeCredit + h.auditorCredit;
  $("auditor").innerHTML = `<table>
    <tr><th>account</th><td class="mono">${state.account}</td></tr>
    <tr><th>bond</th><td id="auditor-bond">${tokAmount(a.bond)}</td></tr>
    <tr><th>status</th><td id="auditor-status">${a.status}${a.status === "Active" && a.eligibleFrom > 0n ? ` (counts for panels from ${when(a.eligibleFrom)})` : ""}${a.status === "Exiting" ? ` (may leave at ${when(a.exitableAt)})` : ""}</td></tr>
    <tr><th>credits</th><td id="auditor-credits">${tokAmount(h.disputeCredit)} disputes (deposits, rewards, panel fees), ${tokAmount(h.stakeCredit)} slash shares, ${tokAmount(h.auditorCredit)} forfeited bonds</td></tr>
    <tr><th>token balance</th><td id="auditor-balance">${tokAmount(h.tokenBalance)}</td></tr>
    <tr><th>panel pool</th><td id="auditor-panel">${s.panel ? `${s.panel.eligible} eligible auditors, ${s.panel.needed} needed to decide a dispute${s.panel.enough ? "" : " (too few)"}` : "no DisputeGame deployed"}</td></tr></table>
    ${s.panel?.warning ? `<p class="muted">${esc(s.panel.warning)}</p>` : ""}`;
  $("auditor-claim").classList.toggle("hidden", credits === 0n);
}

export async function claimAs(role: "provider" | "auditor"): Promise<void> {
  const c = needWallet();
  const r = await claimCredits(c, state.deployment!, role === "provider" ? PROVIDER_CREDITS : AUDITOR_CREDITS);
  $(`${role}-claimed`).innerHTML = r.total === 0n ? "nothing to claim" : `<span class="ok" id="${role}-claimed-amount">claimed ${tokAmount(r.total)}</span> (${r.txs.map((t) => `${esc(t.what)} <code>${t.hash}</code>`).join(", ")})`;
  await (role === "provider" ? showProvider() : showAuditor());
}
