/**
 * The challenger bot's start-up summary (bot.ts startup): bond, balances against the deposit and gas a challenge needs,
 * jobs followed, audit rates, whether a panel can be drawn; an error line with the fix for each thing that stops the
 * bot from acting. It reads the chain and logs; it records nothing but the followed jobs' audit rates.
 */
import { getAddress, type Address } from "viem";
import { getAuditorFunds, getPanelPool, type AuditorFunds } from "../chain/index.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { ethDown, ethUp, fundingFix, tokens, type BotContext } from "./context.ts";
import { heldUntil, ownOpenDisputes } from "./gate.ts";

/** What `startup` found; `problems` are also logged at error (or warn) with the command that fixes each. */
export type StartupReport = {
  auditor: Address;
  funds: AuditorFunds;
  /** Jobs the bot follows (Open, Active or Committed). */
  jobsFollowed: number;
  /** Distinct audit rates of the followed jobs' manifests (sampling is per job). */
  auditRates: number[];
  /** `held`: deposits of this bot's own open disputes (a "tokens" shortfall they explain). */
  problems: { kind: "unbonded" | "tokens" | "eth" | "no-dispute-game" | "panel"; message: string; fix: string; held?: number }[];
};

/** Jobs whose deposit and manifest the start-up summary reads, most recent first. */
export const STARTUP_JOB_LIMIT = 100;

/** The start-up summary of the bot with context `ctx`, over its `jobLimit` most recent followed jobs, logged. */
export async function startupSummary(ctx: BotContext, jobLimit: number): Promise<StartupReport> {
  const { clients, deployment } = ctx;
  const followed = ctx.db.jobsWithStatus("Open", "Active", "Committed", "TimedOut").sort((a, b) => (b.jobId > a.jobId ? 1 : b.jobId < a.jobId ? -1 : 0)).slice(0, jobLimit);
  for (const j of followed.filter((x) => x.auditRate === null)) {
    try {
      const circuitHash = circuitJobCheck(clients.public, deployment, j.jobId);
      ctx.db.setAuditRate(j.jobId, (await fetchManifest(ctx.store, j.manifestUri, j.manifestHash, { circuitHash })).policy.auditRate);
    } catch {
      // the manifest is fetched again (and the failure logged) when the job's first segment is sampled
    }
  }
  const funds = await getAuditorFunds(clients.public, { deployment, account: ctx.me, jobIds: followed.map((j) => j.jobId) });
  const auditRates = [...new Set(followed.map((j) => ctx.db.job(j.jobId)!.auditRate).filter((r): r is number => r !== null))].sort((a, b) => a - b);
  const report: StartupReport = { auditor: ctx.me, funds, jobsFollowed: followed.length, auditRates, problems: [] };
  const dev = deployment.devToken;
  if (!funds.active) {
    const need = funds.minBond > funds.bond ? funds.minBond - funds.bond : funds.minBond;
    report.problems.push({
      kind: "unbonded",
      message: `auditor ${ctx.me} is not bonded (bond ${tokens(funds.bond)}, minimum ${tokens(funds.minBond)}): its receipts cannot be anchored and no panel can draw it`,
      fix: `pouw auditor bond ${tokens(need)}${dev ? " --mint" : ""}`,
    });
  }
  if (!deployment.disputeGame) {
    report.problems.push({ kind: "no-dispute-game", message: "the deployment has no DisputeGame: findings are recorded, never challenged", fix: "pouw deploy (a deployment with DisputeGame)" });
  } else if (funds.deposit && funds.tokenBalance < funds.deposit.amount) {
    const d = funds.deposit;
    const held = ownOpenDisputes(ctx.db);
    // a deposit out in this bot's own open dispute is not lost: it comes back (or is forfeited) at resolution
    const until = await heldUntil(ctx, held);
    const heldNote = held.length > 0 ? `; ${held.length === 1 ? "a deposit is" : `${held.length} deposits are`} held in this bot's open dispute${held.length === 1 ? "" : "s"} (${held.map((x) => `job ${x.jobId} step ${x.step}`).join(", ")}), returned at resolution${until ? ` (after ${until})` : ""}` : "";
    report.problems.push({
      kind: "tokens",
      message: `token balance ${tokens(funds.tokenBalance)} < the deposit of one challenge ${tokens(d.amount)} (${d.jobId === undefined ? "the floor: bond minimum plus panel fees" : `job ${d.jobId}, the largest among the jobs followed`}; short ${tokens(d.amount - funds.tokenBalance)}): ${held.length > 0 ? "a further bad step found now would wait for the tokens" : "a bad step found now would not be challenged"}${heldNote}`,
      fix: fundingFix(ctx, d.amount, funds),
      ...(held.length > 0 ? { held: held.length } : {}),
    });
  }
  if (deployment.disputeGame) {
    const p = await panelShortfall(ctx);
    if (p) report.problems.push({ kind: "panel", ...p });
  }
  if (funds.ethBalance < funds.challengeGasCost) {
    report.problems.push({
      kind: "eth",
      message: `ETH ${ethDown(funds.ethBalance)} < ~${ethUp(funds.challengeGasCost)} for the gas of one approve + challenge at ${funds.maxFeePerGas} wei/gas (short ${ethUp(funds.challengeGasCost - funds.ethBalance)})`,
      fix: `send at least ${ethUp(funds.challengeGasCost - funds.ethBalance)} ETH to ${ctx.me}`,
    });
  }
  const summary = {
    bond: tokens(funds.bond),
    bonded: funds.active,
    tokens: tokens(funds.tokenBalance),
    deposit: funds.deposit ? tokens(funds.deposit.amount) : null,
    eth: ethDown(funds.ethBalance),
    challengeGas: ethUp(funds.challengeGasCost),
    jobsFollowed: followed.length,
    auditRates: auditRates.length > 0 ? auditRates.join(",") : "per job manifest",
    disputeGame: deployment.disputeGame ?? null,
  };
  // warnings, not blockers: the bot still audits and signs receipts (and can serve on panels)
  const warnOnly = new Set(["no-dispute-game", "panel"]);
  const blocking = report.problems.filter((p) => !warnOnly.has(p.kind));
  const ready = blocking.length === 0;
  // short of tokens only because its own deposit is out in an open dispute: it is acting, not stuck
  const onlyHeld = blocking.length === 1 && blocking[0]!.kind === "tokens" && (blocking[0]!.held ?? 0) > 0;
  ctx.log.info(
    { event: "startup", ...summary },
    `auditor ${ctx.me}: bond ${summary.bond} (${funds.active ? "active" : "NOT ACTIVE"}), tokens ${summary.tokens}` +
      `${summary.deposit === null ? "" : ` for a deposit of ${summary.deposit}`}, ETH ${summary.eth} (a challenge's gas ~${summary.challengeGas}), ` +
      `following ${followed.length} job${followed.length === 1 ? "" : "s"}, audit rate ${summary.auditRates}: ${ready ? "ready" : onlyHeld ? "ready; its deposit is out in its open dispute, so a further challenge waits for tokens (see the next line)" : "CANNOT ACT, see the errors"}`,
  );
  for (const p of report.problems) {
    const line = `${p.message}; fix: ${p.fix}`;
    if (warnOnly.has(p.kind)) ctx.log.warn({ event: "problem", problem: p.kind, fix: p.fix }, line);
    // a deposit out in its own open dispute is the bot acting, not a fault: info, with when it frees up
    else if (p.kind === "tokens" && (p.held ?? 0) > 0) ctx.log.info({ event: "deposit-held", problem: p.kind, held: p.held, fix: p.fix }, line);
    else ctx.log.error({ event: "problem", problem: p.kind, fix: p.fix }, line);
  }
  return report;
}

/**
 * Whether a dispute this bot opens could get a panel now: DisputeGame draws panelSize members from the auditors
 * eligible at the challenge (bonded and past the activation delay), never the challenger, the provider or the buyer,
 * so a market with panelSize or fewer eligible auditors besides this one ends every dispute NoDecision.
 */
export async function panelShortfall(ctx: BotContext): Promise<{ message: string; fix: string } | undefined> {
  const { clients, deployment } = ctx;
  const { panelSize: k, activationDelaySeconds: delay, minBond, eligible } = await getPanelPool(clients.public, { deployment: { ...deployment, disputeGame: deployment.disputeGame! } });
  const others = eligible.filter((a) => getAddress(a) !== ctx.me).length;
  // NOTE: a job's provider and buyer are never drawn either; when they are bonded auditors a job can still fall short
  if (others >= k) return undefined;
  return {
    message: `only ${others} auditor${others === 1 ? "" : "s"} besides ${ctx.me} can be drawn for a panel now (bonded and past the ${delay} s activation delay); a dispute needs ${k} (the panel size; the challenger is never drawn), so a challenge would end NoDecision`,
    fix: `${k - others} more account${k - others === 1 ? "" : "s"}: pouw auditor bond ${tokens(minBond)}${deployment.devToken ? " --mint" : ""}, then wait ${delay} s`,
  };
}
