/**
 * The bot's gate: before a bond approval or a challenge goes out, what must hold, as a decision. It reads the chain and
 * the database and never sends or records: the outbox (outbox.ts) applies the decision.
 *
 *   send          everything holds.
 *   defer         not yet, with the reason and the retry time: the bond-token balance is short of
 *                 DisputeGame.requiredDeposit(job) or the ETH of the gas (`shortfall`: logged with the fix), the
 *                 approval did not raise the allowance yet, the job's timeout report is not mined yet, a dispute
 *                 still open on a job past its deadline must resolve first, or another dispute holds the job at a
 *                 fault this bot also found (the first finder wins; the others wait for its outcome).
 *   prerequisite  an intent to send first: the job's timeout report (JobMarket.freeze refuses an Active job past its
 *                 segment deadline; its segments are disputable again once TimedOut), or a new bond approval when the
 *                 allowance fell short. The outbox sends it, then asks again; a prerequisite already sent in this
 *                 pass gives a defer instead, so the exchange ends.
 *   close         the job can no longer be frozen: the round ends (`superseded` when the job was refunded through
 *                 another dispute, `failed` otherwise: a lost finding).
 */
import { getAddress, type Address } from "viem";
import { approveTokenCall, CHALLENGE_GAS_UNITS, chainDate, encodeCall, getAuditorFunds, getDispute, getDisputeParams, getJob, getJobDisputes, reopenJobCall, reportTimeoutCall, withRetry, type DisputeParams } from "../chain/index.ts";
import { backoffMs, ethDown, ethUp, fundingFix, tokens, type BotContext } from "./context.ts";
import type { BotDb, IntentRow } from "./db.ts";
import { DEFAULT_MAX_CHALLENGE_ROUNDS, type IntentSpec } from "./dispute/index.ts";
import { formatIntentKey, parseIntentKey } from "./intent-key.ts";

/**
 * This bot's challenges that are on chain and whose dispute the follower (dispute/index.ts) has not seen resolved: each holds
 * one deposit until resolution.
 */
export function ownOpenDisputes(db: BotDb): { id: string; jobId: string; step: number }[] {
  const open = (JSON.parse(db.getMeta("disputes") ?? "[]") as { id: string; jobId: string; step: number; done: boolean }[]).filter((f) => !f.done);
  const mine = db
    .allIntents()
    .filter((i) => i.kind === "challenge" && i.status === "confirmed")
    .map((i) => (JSON.parse(i.payload) as { finding?: { jobId: string; step: number } }).finding)
    .filter((f): f is { jobId: string; step: number } => f !== undefined);
  return open.filter((o) => mine.some((m) => o.jobId === m.jobId && o.step === m.step)).map((o) => ({ id: o.id, jobId: o.jobId, step: o.step }));
}

/**
 * When the deposits held in this bot's open disputes free up: the latest reveal deadline among them (resolution can
 * come any time after it), as an ISO date, or undefined when none is held or it cannot be read now.
 */
export async function heldUntil(ctx: BotContext, held: readonly { id: string }[]): Promise<string | undefined> {
  const game = ctx.deployment.disputeGame;
  if (!game || held.length === 0) return undefined;
  try {
    const ds = await Promise.all(held.map((h) => getDispute(ctx.clients.public, { disputeGame: game, disputeId: BigInt(h.id) })));
    return chainDate(ds.reduce((m, d) => (d.revealDeadline > m ? d.revealDeadline : m), 0n));
  } catch {
    return undefined;
  }
}

/** Intent kinds the gate decides on (with a DisputeGame deployed); every other intent is sent as it is. */
export const GATED_KINDS: ReadonlySet<string> = new Set(["approveBond", "challenge"]);

export type GateDecision =
  | { kind: "send" }
  /** `shortfall.heldUntil`: the tokens are short because this bot's own deposits are out in its open disputes (info, not error). */
  /** `standDown`: another dispute holds the job at a fault this bot found (logged once per round, event `stand-down`). */
  | { kind: "defer"; reason: string; retryAt: number; shortfall?: { why: string; fix: string; held?: number; heldUntil?: string }; standDown?: { disputeId: string; segment: number; step: number } }
  | { kind: "prerequisite"; intent: IntentSpec; why: { level: "info" | "warn"; fields: Record<string, unknown>; message: string } }
  | { kind: "close"; status: "failed" | "superseded"; reason: string };

/** The intent (recorded once, by key) that ends the current provider's tenure: report its missed deadline, or re-open the job after its TimedOut window. */
export function tenureIntent(ctx: BotContext, kind: "reportTimeout" | "reopenJob", job: { jobId: bigint; provider: Address; nextSegment: number }): IntentSpec {
  return {
    key: formatIntentKey({ kind, jobId: job.jobId, provider: getAddress(job.provider), nextSegment: job.nextSegment }),
    kind,
    jobId: job.jobId.toString(),
    payload: { ...encodeCall((kind === "reportTimeout" ? reportTimeoutCall : reopenJobCall)({ jobMarket: ctx.deployment.jobMarket, jobId: job.jobId })), provider: job.provider, nextSegment: job.nextSegment },
  };
}

export class Gate {
  private readonly ctx: BotContext;
  /** DisputeGame's commit and reveal windows (fixed at deployment), read once for heldForNextRound. */
  private windows: DisputeParams | undefined;

  constructor(ctx: BotContext) {
    this.ctx = ctx;
  }

  /** The decision on open intent `i`; `sent`: the prerequisites the outbox already sent for it in this pass. */
  async decide(i: IntentRow, sent: ReadonlySet<string>): Promise<GateDecision> {
    const { clients, deployment, me } = this.ctx;
    if (!deployment.disputeGame) return { kind: "send" };
    if (i.kind === "commitChallenge") {
      // no commitment (a transaction, and a TTL that would run out) while another dispute holds the job at this bot's fault
      return (await this.faultDisputed(BigInt(i.job_id!), i, this.ctx.now() + backoffMs(this.ctx.options, i.attempts + 1))) ?? { kind: "send" };
    }
    if (!GATED_KINDS.has(i.kind)) return { kind: "send" };
    const jobId = BigInt(i.job_id!);
    const retryAt = this.ctx.now() + backoffMs(this.ctx.options, i.attempts + 1);
    if (i.kind === "challenge") {
      const timeout = await this.timeoutFirst(jobId, sent, retryAt);
      if (timeout) return timeout;
    }
    const disputed = await this.faultDisputed(jobId, i, retryAt);
    if (disputed) return disputed;
    const funds = await getAuditorFunds(clients.public, { deployment, account: me, jobIds: [jobId] });
    const deposit = funds.deposit!.amount;
    const gas = (i.kind === "approveBond" ? CHALLENGE_GAS_UNITS.approve + CHALLENGE_GAS_UNITS.challenge : CHALLENGE_GAS_UNITS.challenge) * funds.maxFeePerGas;
    const short: string[] = [];
    if (funds.tokenBalance < deposit) short.push(`token balance ${tokens(funds.tokenBalance)} < deposit ${tokens(deposit)} (short ${tokens(deposit - funds.tokenBalance)})`);
    if (funds.ethBalance < gas) short.push(`ETH ${ethDown(funds.ethBalance)} < ~${ethUp(gas)} for gas (short ${ethUp(gas - funds.ethBalance)})`);
    if (short.length > 0) {
      const why = short.join("; ");
      const closed = await this.whyNotDisputable(jobId);
      if (closed) return { kind: "close", status: closed.refunded ? "superseded" : "failed", reason: closed.refunded ? closed.why : `${closed.why} while waiting for funds (${why})` };
      const held = funds.tokenBalance < deposit ? ownOpenDisputes(this.ctx.db) : [];
      const until = await heldUntil(this.ctx, held);
      return { kind: "defer", reason: `waiting for funds: ${why}`, retryAt, shortfall: { why, fix: fundingFix(this.ctx, deposit, funds), ...(held.length > 0 ? { held: held.length, ...(until ? { heldUntil: until } : {}) } : {}) } };
    }
    if (i.kind === "challenge" && funds.allowance < deposit) {
      // The round's approval is still open (sent first), or was used up or replaced since (a new approval is recorded).
      const k = parseIntentKey(i.key);
      if (k.kind !== "challenge") throw new Error(`intent ${i.key} of kind challenge has a ${k.kind} key`);
      const pair = formatIntentKey({ ...k, kind: "approveBond" });
      const ofPair = (key: string) => key === pair || key.startsWith(`${pair}:top`);
      if ([...sent].some(ofPair)) return { kind: "defer", reason: `waiting for the approval: allowance ${tokens(funds.allowance)} < deposit ${tokens(deposit)}`, retryAt };
      const open = this.ctx.db.openIntents().find((x) => x.kind === "approveBond" && ofPair(x.key));
      if (open) return { kind: "prerequisite", intent: { key: open.key, kind: open.kind, payload: JSON.parse(open.payload) }, why: { level: "info", fields: { approve: open.key }, message: "sending the round's bond approval first" } };
      const top = this.ctx.db.allIntents().filter((x) => x.key.startsWith(`${pair}:top`)).length + 1;
      const intent: IntentSpec = {
        key: formatIntentKey({ ...k, kind: "approveBond", top }),
        kind: "approveBond",
        jobId: i.job_id!,
        segment: i.segment!,
        payload: { ...encodeCall(approveTokenCall({ token: deployment.token, spender: deployment.disputeGame, amount: deposit })), finding: JSON.parse(i.payload).finding },
      };
      return { kind: "prerequisite", intent, why: { level: "warn", fields: { allowance: tokens(funds.allowance), deposit: tokens(deposit), approve: intent.key }, message: "allowance to DisputeGame is below the deposit: approving again" } };
    }
    return { kind: "send" };
  }

  /**
   * JobMarket.freeze refuses an Active job past its segment deadline; its segments become disputable again, for one
   * challenge window, once the timeout is reported (status TimedOut). Before a challenge of such a job the timeout is
   * reported first (anyone may); with a dispute still open on it, the challenge waits for that dispute to resolve.
   * Undefined when the challenge need not wait for a timeout.
   */
  private async timeoutFirst(jobId: bigint, sent: ReadonlySet<string>, retryAt: number): Promise<GateDecision | undefined> {
    const { clients, deployment } = this.ctx;
    const [job, block] = await Promise.all([
      getJob(clients.public, { jobMarket: deployment.jobMarket, jobId }),
      withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    ]);
    if (job.status !== "Active" || block.timestamp <= BigInt(job.deadline)) return undefined;
    if (job.openDisputes !== 0) return { kind: "defer", reason: `job ${jobId} is past its segment deadline with ${job.openDisputes} dispute(s) open: waiting to report its timeout`, retryAt };
    const report = tenureIntent(this.ctx, "reportTimeout", job);
    if (sent.has(report.key)) return { kind: "defer", reason: `waiting for the timeout report of job ${jobId}`, retryAt };
    return { kind: "prerequisite", intent: report, why: { level: "info", fields: { deadline: chainDate(job.deadline), report: report.key }, message: "the job is past its segment deadline: reporting the timeout so that its segments can be disputed" } };
  }

  /**
   * Whether another dispute already holds this job at a fault: one still open on a (segment, step, disputed leaf) that
   * this bot's own audits found bad (a challenge intent of its own names it, whatever became of that intent), opened by
   * anyone, this bot included. Then this round waits (defer) for it to resolve: a fault outcome refunds the job and the
   * round closes (superseded); NoDecision or Valid lets it go out, so the cheater is still challenged. A dispute on a
   * step this bot did not find bad never holds it back: it may be the provider's own address holding a valid step open
   * to block challenges. Undefined when nothing holds the round.
   * A dispute of another challenger that ended NoDecision only because its seats were silent (no vote revealed, or no
   * panel) still holds the fault for that challenger's next round (dispute/resolve.ts nextRound), for one dispute's
   * length after its reveal deadline (heldForNextRound): two bots re-challenging one cheater at once is one dispute too
   * many, and the first challenger re-challenges on its own.
   */
  private async faultDisputed(jobId: bigint, i: IntentRow, retryAt: number): Promise<GateDecision | undefined> {
    const { clients, deployment } = this.ctx;
    const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
    if (job.status === "Refunded") return { kind: "close", status: "superseded", reason: `job ${jobId} was already refunded (its provider was slashed through another dispute)` };
    const found = this.ctx.db
      .allIntents()
      .filter((x) => x.kind === "challenge" && x.job_id === i.job_id)
      .map((x) => (JSON.parse(x.payload) as { finding?: { segment: number; step: number; hStep?: string } }).finding)
      .filter((f): f is { segment: number; step: number; hStep?: string } => f !== undefined);
    if (found.length === 0) return undefined;
    const atFound = (d: { segment: number; step: number; hStep: string }) => found.some((f) => f.segment === d.segment && f.step === d.step && (f.hStep === undefined || f.hStep === d.hStep));
    // newest first
    const disputes = (await getJobDisputes(clients.public, { disputeGame: deployment.disputeGame!, jobId, fromBlock: BigInt(deployment.startBlock) })).filter(atFound).reverse();
    if (disputes.length === 0) return undefined;
    const views = new Map<bigint, Awaited<ReturnType<typeof getDispute>>>();
    if (job.openDisputes !== 0) {
      for (const d of disputes) {
        const v = await getDispute(clients.public, { disputeGame: deployment.disputeGame!, disputeId: d.disputeId });
        views.set(d.disputeId, v);
        if (v.phase === "resolved") continue;
        return {
          kind: "defer",
          reason: `dispute ${d.disputeId} (segment ${d.segment}, step ${d.step}, by ${d.challenger}) holds job ${jobId} at a fault this bot also found: waiting for it to resolve before opening another`,
          retryAt,
          standDown: { disputeId: d.disputeId.toString(), segment: d.segment, step: d.step },
        };
      }
    }
    const last = disputes[0]!;
    const v = views.get(last.disputeId) ?? (await getDispute(clients.public, { disputeGame: deployment.disputeGame!, disputeId: last.disputeId }));
    return this.heldForNextRound(job, last, v, disputes, retryAt);
  }

  /**
   * The newest dispute `d` at a fault this bot found, resolved: whether its challenger still holds the fault for its
   * next round. Only when `d` is another challenger's, ended NoDecision with no vote revealed (silent seats or no panel:
   * nothing was judged), and that challenger has rounds left (DEFAULT_MAX_CHALLENGE_ROUNDS disputes on the fault). The
   * hold lasts one dispute's length (commit plus reveal window) after `d`'s reveal deadline, and for a Committed or
   * TimedOut job never past halfway from there to the job's deadline, so a challenger that never comes back leaves
   * this bot time to challenge inside the window.
   */
  private async heldForNextRound(
    job: { status: string; deadline: bigint | number },
    d: { disputeId: bigint; segment: number; step: number; hStep: string; challenger: string },
    v: { outcome: string; validVotes: number; faultVotes: number; revealDeadline: bigint | number },
    disputes: readonly { segment: number; step: number; hStep: string; challenger: string }[],
    retryAt: number,
  ): Promise<GateDecision | undefined> {
    const { clients, deployment, me } = this.ctx;
    if (v.outcome !== "NoDecision" || Number(v.validVotes) !== 0 || Number(v.faultVotes) !== 0) return undefined;
    if (getAddress(d.challenger) === me) return undefined;
    const rounds = disputes.filter((x) => getAddress(x.challenger) === getAddress(d.challenger) && x.segment === d.segment && x.step === d.step && x.hStep === d.hStep).length;
    if (rounds >= DEFAULT_MAX_CHALLENGE_ROUNDS) return undefined;
    this.windows ??= await getDisputeParams(clients.public, { disputeGame: deployment.disputeGame! });
    const revealDeadline = BigInt(v.revealDeadline);
    let until = revealDeadline + BigInt(this.windows.commitWindowSeconds + this.windows.revealWindowSeconds);
    if (job.status === "Committed" || job.status === "TimedOut") {
      const half = revealDeadline + (BigInt(job.deadline) - revealDeadline) / 2n;
      if (half < until) until = half;
    }
    const now = (await withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" })).timestamp;
    if (now > until) return undefined;
    return {
      kind: "defer",
      reason: `dispute ${d.disputeId} (segment ${d.segment}, step ${d.step}, by ${d.challenger}) ended NoDecision with no vote revealed (silent seats): its challenger holds the fault for its next round until ${chainDate(until)}; this bot challenges only if none comes by then`,
      retryAt,
      standDown: { disputeId: d.disputeId.toString(), segment: d.segment, step: d.step },
    };
  }

  /** Why a challenge of the job can no longer open (JobMarket.freeze), or undefined while it can. */
  async whyNotDisputable(jobId: bigint): Promise<{ why: string; refunded: boolean } | undefined> {
    const { clients, deployment } = this.ctx;
    const [job, block] = await Promise.all([
      getJob(clients.public, { jobMarket: deployment.jobMarket, jobId }),
      withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    ]);
    // An Active job past its deadline is disputable again once its timeout is reported (timeoutFirst).
    if (job.status === "Active") return undefined;
    if ((job.status === "Committed" || job.status === "TimedOut") && block.timestamp <= BigInt(job.deadline)) return undefined;
    if (job.status === "Refunded") return { why: `job ${jobId} was already refunded (its provider was slashed through another dispute)`, refunded: true };
    if (job.status === "Committed") return { why: `job ${jobId}'s challenge window closed at ${chainDate(job.deadline)}`, refunded: false };
    if (job.status === "TimedOut") return { why: `job ${jobId}'s window after its provider's timeout closed at ${chainDate(job.deadline)}`, refunded: false };
    return { why: `job ${jobId} is ${job.status}: it can no longer be disputed`, refunded: false };
  }
}
