/**
 * `pouw provider status` and `pouw auditor status`: one account's standing, read-only (no key; `--address` or the key's
 * address). The provider view: stake (free, locked, unbonding and when withdrawable), credits, token balance and the
 * jobs it accepted, each ended one with its outcome in words (slashed how much, why, to whom; refunded; paid). The auditor view: bond and status (by name), when it counts for panels, credits, token balance and
 * whether the market's panel pool could decide a dispute.
 */
import { getAddress, type Address } from "viem";
import { chainDate, getAuditorFunds, getJobOutcome, getOpenJobIds, type GetJobReturnType, type JobStatusName } from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import { auditorStanding, providerStanding } from "../market/standing.ts";
import { fmt, readContext, type ReadContext, type ReadFlags } from "./context.ts";
import { panelPoolJson } from "../market/panel-pool.ts";

// NOTE: the reads are market/standing.ts, which the dApp's provider and auditor pages call too
async function subject(flags: ReadFlags): Promise<{ ctx: ReadContext; me: Address }> {
  const ctx = await readContext(flags);
  if (ctx.address === undefined) throw new InputError("give the account: --address 0x.. (or a key with --keystore / --hardhat-keystore / --private-key)");
  return { ctx, me: getAddress(ctx.address) };
}

/** Jobs whose money has moved for good: their outcome is printed in words. */
const ENDED: ReadonlySet<JobStatusName> = new Set(["Finalized", "Refunded", "Cancelled", "TimedOut", "Unresolved"]);

const jobJson = (j: GetJobReturnType) => ({ jobId: j.jobId.toString(), status: j.status, nextSegment: j.nextSegment, segments: j.policy.segments, openDisputes: j.openDisputes, payment: j.payment.toString(), deadline: j.deadline === 0n ? null : chainDate(j.deadline) });

export async function providerStatus(flags: ReadFlags & { json?: boolean }): Promise<void> {
  const { ctx, me } = await subject(flags);
  const s = await providerStanding(ctx.clients.public, ctx.deployment, me);
  const mine = s.jobs;
  const h = s.holdings;
  // how each ended job's money went (slashed how much, why, to whom; refunded; paid), from market/job-report.ts
  const { jobMoney, moneySentences } = await import("../market/job-report.ts");
  const ended = mine.filter((j) => ENDED.has(j.status));
  const outcomes = await Promise.all(ended.map(async (j) => ({ jobId: j.jobId, money: jobMoney(await getJobOutcome(ctx.clients.public, { deployment: ctx.deployment, jobId: j.jobId })) })));
  if (flags.json) {
    process.stdout.write(
      JSON.stringify({
        account: me,
        token: { address: getAddress(ctx.deployment.token), symbol: ctx.symbol },
        tokenBalance: h.tokenBalance.toString(),
        stake: { free: s.stake.free.toString(), locked: s.stake.locked.toString(), pendingWithdrawal: s.stake.pendingWithdrawal.toString(), withdrawableAt: s.stake.withdrawableAt === 0n ? null : chainDate(s.stake.withdrawableAt) },
        credits: { jobMarket: h.jobMarketCredit.toString(), stakeVault: h.stakeCredit.toString() },
        jobs: mine.map((j) => {
          const m = outcomes.find((o) => o.jobId === j.jobId)?.money;
          return { ...jobJson(j), ...(m ? { slashed: m.slashes.reduce((t, x) => t + x.amount, 0n).toString(), slashes: m.slashes.map((x) => ({ reason: x.reason, amount: x.amount.toString(), toChallengers: x.toChallengers.toString(), toBuyer: x.toBuyer.toString(), burned: x.burned.toString() })), buyerRefund: m.buyerRefund.toString(), providerPay: m.providerPay.toString() } : {}) };
        }),
      }) + "\n",
    );
    return;
  }
  const t = (x: bigint) => `${fmt(x)} ${ctx.symbol}`;
  process.stdout.write(
    [
      `provider ${me}: stake ${t(s.stake.free)} free, ${t(s.stake.locked)} locked` +
        (s.stake.pendingWithdrawal > 0n ? `, ${t(s.stake.pendingWithdrawal)} unbonding (withdrawable at ${chainDate(s.stake.withdrawableAt)})` : ""),
      `credits: ${t(h.jobMarketCredit)} payment (pouw provider claim), ${t(h.stakeCredit)} slash shares; token balance ${t(h.tokenBalance)}`,
      mine.length === 0 ? "jobs: none accepted" : `jobs: ${mine.map((j) => `${j.jobId} ${j.status} ${j.nextSegment}/${j.policy.segments}`).join(", ")}`,
      ...outcomes.map((o) => `job ${o.jobId} ${o.money.status}: ${moneySentences(o.money, t).join("; ") || "no money moved"}`),
    ].join("\n") + "\n",
  );
}

/**
 * Whether the account's challenger bot could act now, from the chain alone (the same rules as the bot's /healthz,
 * bot.ts health(): bonded, tokens for at least one challenge deposit of the largest open job, ETH for its gas; the
 * reads answering is the RPC check). The indexer's lag and stuck intents are the running bot's: its GET /healthz.
 */
async function canAct(ctx: ReadContext, me: Address): Promise<{ reasons: { kind: string; message: string }[]; depositsFunded: number | null }> {
  const { clients, deployment } = ctx;
  const jobIds = await getOpenJobIds(clients.public, { jobMarket: deployment.jobMarket });
  const f = await getAuditorFunds(clients.public, { deployment, account: me, jobIds });
  const reasons: { kind: string; message: string }[] = [];
  if (!f.active) reasons.push({ kind: "unbonded", message: `bond ${fmt(f.bond)}, minimum ${fmt(f.minBond)}: pouw auditor bond` });
  let depositsFunded: number | null = null;
  if (deployment.disputeGame && f.deposit) {
    depositsFunded = f.deposit.amount === 0n ? 0 : Number(f.tokenBalance / f.deposit.amount);
    if (depositsFunded === 0) reasons.push({ kind: "unfunded", message: `token balance ${fmt(f.tokenBalance)} < one challenge deposit ${fmt(f.deposit.amount)}: pouw auditor fund --disputes 1` });
  }
  if (f.ethBalance < f.challengeGasCost) reasons.push({ kind: "no-gas", message: `ETH ${fmt(f.ethBalance)} < ~${fmt(f.challengeGasCost)} for one challenge's gas` });
  return { reasons, depositsFunded };
}

export async function auditorStatus(flags: ReadFlags & { json?: boolean }): Promise<void> {
  const { ctx, me } = await subject(flags);
  const s = await auditorStanding(ctx.clients.public, ctx.deployment, me);
  const panel = s.panel;
  if (panel?.warning) process.stderr.write(`pouw: ${panel.warning}\n`);
  const h = s.holdings;
  const a = s.auditor;
  const can = await canAct(ctx, me);
  if (flags.json) {
    process.stdout.write(
      JSON.stringify({
        account: me,
        token: { address: getAddress(ctx.deployment.token), symbol: ctx.symbol },
        tokenBalance: h.tokenBalance.toString(),
        bond: a.bond.toString(),
        status: a.status,
        eligibleFrom: a.eligibleFrom === 0n ? null : chainDate(a.eligibleFrom),
        exitableAt: a.exitableAt === 0n ? null : chainDate(a.exitableAt),
        credits: { disputeGame: h.disputeCredit.toString(), stakeVault: h.stakeCredit.toString(), auditorRegistry: h.auditorCredit.toString() },
        panelPool: panelPoolJson(panel),
        canAct: can.reasons.length === 0,
        reasons: can.reasons,
        depositsFunded: can.depositsFunded,
      }) + "\n",
    );
    return;
  }
  const t = (x: bigint) => `${fmt(x)} ${ctx.symbol}`;
  process.stdout.write(
    [
      `auditor ${me}: bond ${t(a.bond)}, ${a.status}${a.status === "Active" && a.eligibleFrom > 0n ? ` (counts for panels from ${chainDate(a.eligibleFrom)})` : ""}${a.status === "Exiting" ? ` (may leave at ${chainDate(a.exitableAt)})` : ""}`,
      `credits: ${t(h.disputeCredit)} disputes, ${t(h.stakeCredit)} slash shares, ${t(h.auditorCredit)} forfeited bonds (pouw auditor claim); token balance ${t(h.tokenBalance)}`,
      ...(panel ? [`panel pool: ${panel.eligible} eligible auditors, ${panel.needed} needed to decide a dispute${panel.enough ? "" : " (too few)"}`] : []),
      can.reasons.length === 0
        ? `can act: yes (${can.depositsFunded ?? 0} challenge deposit${can.depositsFunded === 1 ? "" : "s"} funded)`
        : `can act: NO: ${can.reasons.map((r) => `${r.kind}: ${r.message}`).join("; ")}`,
    ].join("\n") + "\n",
  );
}
