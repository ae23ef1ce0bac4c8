/**
 * The challenger bot (`pouw auditor run`), in the parts of a challenger service: this loop only orders the work; each
 * part is handed the same context (context.ts).
 *
 *   indexer.ts  JobMarket events -> the database (cursor and events in one SQLite transaction).
 *   auditor.ts  sample, screen, audit through checks/, conclude: a receipt for a clean segment, a finding and its
 *               challenge intents for a failed one; between two segments it yields to panel duty (dutyBetween).
 *   steps.ts    step sampling: one drawn step per segment, recomputed from the state the provider opens on chain.
 *   startup.ts  the start-up summary (bond, balances, panel pool) with the fix for each thing that stops the bot.
 *   dispute/    every DisputeGame challenge followed: panel draw, commit, reveal, resolve, claims.
 *   gate.ts     before a bond approval or a challenge: a decision (send, defer with reason and retry time, a
 *               prerequisite intent, or close the round); it never sends.
 *   outbox.ts   the only sender: record, sign, broadcast, classify, back off, reconcile after a restart.
 *   intent-key.ts  the typed key of every intent (one format, one parse).
 *   db.ts       the SQLite state everything above must not forget across a crash.
 *
 * One loop, woken by a contract-event subscription and by a polling timer (the fallback when the subscription fails or
 * misses); each tick: scan (one head read; a reorg rolled back), sample, screen, audit, deadlines (an Active job past
 * its deadline -> reportTimeout; a TimedOut job past its window -> reopenJob; job records read only for new events or
 * a passed deadline), credits (claim intents; only when the head moved), disputes, send, heartbeat. A start-up summary
 * (`startup`: bond, balances against the deposit and gas a challenge needs, jobs followed, audit rates; an error line
 * with the fix for each thing that stops the bot from acting) comes before the first tick, and a heartbeat every
 * `heartbeatMs`. RPC errors are retried with backoff (chain/retry.ts); a failing tick is logged and retried next tick.
 */
import type { Logger } from "pino";
import { getAddress, type Address, type Hex } from "viem";
import { getAuditorFunds, getJob, getMissingContracts, getStakeCredit, claimStakeCreditCall, encodeCall, recordKindResultCall, toChainError, watchMarketLogs, type BlockRef } from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import { planKindRecord } from "../kinds/record.ts";
import { Auditor } from "./auditor.ts";
import { botContext, ethDown, tokens, type BotContext, type BotOptions } from "./context.ts";
import type { BotDb } from "./db.ts";
import { ownOpenDisputes, tenureIntent, Gate } from "./gate.ts";
import { botHealth, type BotHealth } from "./health.ts";
import { Indexer } from "./indexer.ts";
import { formatIntentKey } from "./intent-key.ts";
import { Outbox } from "./outbox.ts";
import { STARTUP_JOB_LIMIT, startupSummary, type StartupReport } from "./startup.ts";
import { newSamplingSecret } from "./sampler.ts";

export type { BotOptions } from "./context.ts";
export type { StartupReport } from "./startup.ts";
export type { BotHealth, HealthReasonKind } from "./health.ts";

/** The deployment does not match the chain (no code at its addresses): the bot refuses to start. */
export class BotConfigError extends InputError {
  override name = "BotConfigError";
  override readonly code: string = "BOT_CONFIG";
}

export type BotSummary = {
  auditor: Address;
  audits: { jobId: string; segment: number; ok: boolean; firstBadStep: number | null; costMs: number; flops: number; kind: string | null }[];
  sampledOut: number;
  /** The state screen of every committed segment's start ("ok", "bad: <kind>: <message>", or null: not yet). */
  screens: { jobId: string; segment: number; screen: string | null }[];
  receipts: number;
  intents: { kind: string; key: string; status: string; txHash: string | null; error: string | null }[];
};

/** What this run did (since the bot object was made), not what the database holds from earlier runs. */
export type RunCounts = { audited: number; failedAudits: number; receipts: number; transactionsConfirmed: number; lostFindings: number; reorgs: number };

/**
 * Intents sent with panel duty between segments or receipts: a dispute's resolve (a challenge round found in a pass
 * still goes out at the end of the tick, where the gate weighs it against the disputes opened meanwhile).
 */
const DUTY_KINDS: ReadonlySet<string> = new Set(["resolveDispute"]);

export class ChallengerBot {
  readonly db: BotDb;
  readonly log: Logger;
  private readonly ctx: BotContext;
  private readonly indexer: Indexer;
  private readonly auditor: Auditor;
  private readonly outbox: Outbox;
  private stopped = false;
  private started = false;
  private lastHeartbeat: number | undefined;
  private wake: (() => void) | undefined;
  private unwatch: (() => void) | undefined;
  /** Each followed job's deadline (chain seconds) as last read: deadlines() reads the job again once the head passes it. */
  private readonly deadlineOf = new Map<string, bigint>();
  /** Jobs the indexer stored an event for (or rolled back) since deadlines() last completed. */
  private readonly touched = new Set<bigint>();
  /** recordKindResult keys decided this run (kindResults). */
  private readonly kindDecided = new Set<string>();
  /** ctx.now() when the disputes were last driven (tick or between segments): dutyBetween waits a poll interval. */
  private lastDriven: number | undefined;
  /** dutyBetween is running (its resolves go through the outbox, which must not yield back into it). */
  private inDuty = false;
  /** Hash of the head deadlines(), claims() and the dispute scan last completed on. */
  private actedOn: Hex | undefined;
  /** ctx.now() of the last scan that succeeded, and the head it read. */
  private lastScanAt: number | undefined;
  /** Where this run started: intents recorded after `intentsBefore` (id) or finished after `runStartedAt` are this run's. */
  private readonly runStartedAt = Date.now();
  private readonly intentsBefore: number;
  /** Segments (job:segment:traceRoot) with a verdict before this run, and receipts held before it. */
  private readonly auditedBefore: ReadonlySet<string>;
  private readonly receiptsBefore: ReadonlySet<string>;

  constructor(o: BotOptions) {
    const sampling = o.stepSampling?.stateOpenings;
    // INVARIANT: a bot challenges a withheld opening only on the StateOpenings the panel members read (the deployment's)
    if (sampling !== undefined && (o.deployment.stateOpenings === undefined || getAddress(sampling) !== getAddress(o.deployment.stateOpenings))) {
      throw new BotConfigError(
        `step sampling through StateOpenings ${sampling} needs that contract in the deployment file (stateOpenings: ${o.deployment.stateOpenings ?? "absent"}): panel members decide a challenge of a withheld opening from the deployment's StateOpenings, so a challenge through another one would lose its deposit`,
      );
    }
    this.ctx = botContext(o, () => this.stopped);
    this.db = this.ctx.db;
    this.log = this.ctx.log;
    let secret = this.db.getMeta("samplingSecret");
    if (!secret) {
      secret = newSamplingSecret();
      this.db.setMeta("samplingSecret", secret);
    }
    this.intentsBefore = this.db.allIntents().at(-1)?.id ?? 0;
    this.auditedBefore = new Set(this.db.allSegments().filter((x) => x.audit === "ok" || x.audit === "bad").map((x) => `${x.jobId}:${x.segment}:${x.traceRoot}`));
    this.receiptsBefore = new Set(this.db.receipts().map((r) => `${r.job_id}:${r.segment}:${r.signature}`));
    this.indexer = new Indexer(this.ctx);
    this.auditor = new Auditor(this.ctx, secret, () => this.dutyBetween());
    this.outbox = new Outbox(this.ctx, new Gate(this.ctx), () => this.dutyBetween());
    // A crash mid-audit left rows 'running': they are re-run (auditsToRun includes them).
  }

  /** Recomputed losses per job, for reports. */
  get recomputedLosses(): ReadonlyMap<string, { step: number; loss: number }[]> {
    return this.auditor.recomputedLosses;
  }

  /** Runs ticks until stop(); each tick is woken by new events or by the poll interval. */
  async run(): Promise<void> {
    const { clients, deployment } = this.ctx;
    if (!this.started) await this.startup();
    try {
      this.unwatch = watchMarketLogs(clients.public, {
        jobMarket: deployment.jobMarket,
        pollingIntervalMs: clients.pollingIntervalMs,
        onLogs: () => this.wake?.(),
        onError: (err) => this.log.debug({ err: err.message }, "event subscription error; polling continues"),
      });
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "no event subscription; polling only");
    }
    while (!this.stopped) {
      await this.tick().catch((err: unknown) => {
        const e = toChainError(err);
        this.log.error({ err: e.shortMessage, code: e.code }, "tick failed; retrying next tick");
      });
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, clients.pollingIntervalMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  stop(): void {
    this.stopped = true;
    this.unwatch?.();
    this.wake?.();
  }

  close(): void {
    this.stop();
    this.db.close();
  }

  /** One pass: scan, sample, audit, act, send. Safe to call repeatedly; idempotent. */
  async tick(): Promise<void> {
    const scan = await this.scan();
    // the head this tick acts on differs from the last one deadlines and claims completed on (a new block or a reorg)
    const moved = scan.head.hash !== this.actedOn;
    // NOTE: disputes are driven before the audit pass while one is followed, and between its segments
    // (dutyBetween): a panel's commit and reveal have deadlines (a minute on a test chain), an audit pass has none
    const drive = () => this.driveDisputes();
    const drivenFirst = this.followsOpenDispute();
    if (drivenFirst) await drive();
    await this.auditor.sample();
    await this.auditor.screen();
    await this.auditor.steps();
    await this.auditor.audit();
    if (moved) {
      await this.deadlines(scan.head);
      // a credit only arrives in a new block
      await this.claims();
      await this.kindResults();
    }
    // on an unmoved head the chain time stands still: disputes are driven again only while one is being followed
    if (!drivenFirst && (moved || this.followsOpenDispute())) await drive();
    // deadlines, claims and the dispute scan all completed on this head (a failure above repeats them next tick)
    this.actedOn = scan.head.hash;
    await this.outbox.sendIntents();
    await this.heartbeat();
  }

  /** Scans the chain into the database (indexer.ts), noting the jobs touched for deadlines(). */
  private async scan(): Promise<Awaited<ReturnType<Indexer["scan"]>>> {
    const scan = await this.indexer.scan();
    this.lastScanAt = this.ctx.now();
    for (const jobId of scan.touched) this.touched.add(jobId);
    return scan;
  }

  /** One pass of the dispute step (dispute/index.ts): new Challenged events, panel duty, resolve and claim intents. */
  private async driveDisputes(): Promise<void> {
    this.lastDriven = this.ctx.now();
    await this.ctx.dispute.drive({ db: this.db, me: this.ctx.me, log: this.log, store: this.ctx.store, runFor: (jobId) => this.auditor.runFor(jobId) });
  }

  /**
   * Panel duty between two segments of an audit pass (Auditor's yieldToDuty) and between two intents of the outbox's
   * pass (each waits for its receipt), at most once per polling interval: the
   * chain is scanned (a disputed segment must be in the database before a member can decide it), then every followed
   * dispute is driven, new ones included: a member drawn while the pass runs commits and reveals within its windows
   * whatever the pass's length (servePanel sends them). Resolves (DUTY_KINDS) are sent here too; the rest waits for
   * the outbox's pass. A failure is logged and the pass goes on (the tick drives the disputes again).
   * INVARIANT: a panel seat never waits longer than one segment's audit plus one polling interval.
   */
  private async dutyBetween(): Promise<void> {
    if (!this.ctx.dispute.available || this.stopped || this.inDuty) return;
    const now = this.ctx.now();
    if (this.lastDriven !== undefined && now - this.lastDriven < this.ctx.clients.pollingIntervalMs) return;
    this.inDuty = true;
    try {
      await this.scan();
      await this.driveDisputes();
      // a challenge found in this pass and a resolve go out now; receipts and claims wait for the end of the tick
      await this.outbox.sendIntents(DUTY_KINDS);
    } catch (err) {
      this.lastDriven = now;
      const e = toChainError(err);
      this.log.warn({ err: e.shortMessage, code: e.code }, "panel duty between audits or receipts failed; the pass goes on, the tick drives the disputes again");
    } finally {
      this.inDuty = false;
    }
  }

  // ------------------------------------------------------------------ deadlines + claims

  /**
   * Records the intents that end a tenure past its deadline: reportTimeout (Active), reopenJob (TimedOut, window over).
   * Reads are by new blocks, not by open jobs: nothing when the head did not move; otherwise a job's record is read only
   * when the scan stored an event for it (or rolled one back), when it was never read, or when the deadline it was
   * waiting on has passed at the head.
   */
  private async deadlines(head: BlockRef): Promise<void> {
    if (this.ctx.options.reportTimeouts === false) return;
    const { clients, deployment } = this.ctx;
    const active = this.db.jobsWithStatus("Active", "Committed", "TimedOut");
    for (const j of active) {
      const key = j.jobId.toString();
      const waitingUntil = this.deadlineOf.get(key);
      if (waitingUntil !== undefined && !this.touched.has(j.jobId) && head.timestamp <= waitingUntil) continue;
      const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: j.jobId });
      this.deadlineOf.set(key, BigInt(job.deadline));
      if (job.status !== j.status) this.db.setJobStatus(j.jobId, job.status);
      if (job.openDisputes !== 0 || head.timestamp <= BigInt(job.deadline)) continue;
      if (job.status === "Active") this.db.addIntent(tenureIntent(this.ctx, "reportTimeout", job));
      // the timed-out tenure's window is over: release its lock and offer the job again
      if (job.status === "TimedOut") this.db.addIntent(tenureIntent(this.ctx, "reopenJob", job));
    }
    this.touched.clear();
  }

  /** Whether the dispute follower (dispute/index.ts) has a dispute it has not seen resolved. */
  private followsOpenDispute(): boolean {
    return (JSON.parse(this.db.getMeta("disputes") ?? "[]") as { done: boolean }[]).some((f) => !f.done);
  }

  /** Records a claim of this auditor's StakeVault credit, one open at a time. */
  private async claims(): Promise<void> {
    const { clients, deployment } = this.ctx;
    if (this.db.openIntents().some((i) => i.kind === "claimStake")) return;
    const credit = await getStakeCredit(clients.public, { stakeVault: deployment.stakeVault, account: this.ctx.me });
    if (credit === 0n) return;
    const n = this.db.allIntents().filter((i) => i.kind === "claimStake").length;
    this.db.addIntent({ key: formatIntentKey({ kind: "claimStake", n }), kind: "claimStake", payload: encodeCall(claimStakeCreditCall({ stakeVault: deployment.stakeVault })) });
  }

  /**
   * Records the result of every followed evaluate or generate job seen Finalized and not yet recorded on KindRecords
   * (the score only: kinds/record.ts; its provider names a generate job's dataset CID), so a finalized score needs no
   * person to reach the chain. Each job is decided once per run (recorded, a training job, already recorded, a stake
   * below minStake); a read that fails (a states file not served yet) is tried again on the next block.
   */
  private async kindResults(): Promise<void> {
    const { clients, deployment, store } = this.ctx;
    if (!deployment.kindRecords) return;
    for (const j of this.db.jobsWithStatus("Finalized")) {
      const key = formatIntentKey({ kind: "recordKindResult", jobId: j.jobId });
      if (this.kindDecided.has(key) || this.db.hasIntent(key)) continue;
      try {
        const plan = await planKindRecord({ clients, deployment, store }, j.jobId);
        this.kindDecided.add(key);
        if (plan.call) this.db.addIntent({ key, kind: "recordKindResult", jobId: String(j.jobId), payload: encodeCall(recordKindResultCall(plan.call)) });
      } catch (err) {
        this.log.warn({ jobId: j.jobId.toString(), err: (err as Error).message }, "kind job's result not recorded yet; tried again on the next block");
      }
    }
  }

  // ------------------------------------------------------------------ start-up summary + heartbeat

  /**
   * Checks the bot can act, once before its first tick (run() calls it): refuses to start (BotConfigError) when the
   * deployment has no code at the RPC; otherwise scans for jobs, logs a summary at info and, for each thing that stops
   * it from acting (unbonded; tokens short of the deposit a challenge of a followed job needs; ETH short of its gas),
   * an error line naming the shortfall and the fix. An unfunded bot still starts: it audits, signs receipts and sits
   * on panels, and a challenge it finds waits for the funds.
   */
  async startup(): Promise<StartupReport> {
    const { clients, deployment } = this.ctx;
    const missing = await getMissingContracts(clients.public, deployment);
    if (missing.length > 0) {
      throw new BotConfigError(`no contract code at ${missing.join(", ")} on chain ${clients.public.chain.id}: the deployment file is stale (redeploy) or --rpc points at another chain`);
    }
    this.started = true;
    await this.indexer.scan().catch((err: unknown) => this.log.warn({ err: toChainError(err).shortMessage }, "start-up scan failed; jobs are read on the first tick"));
    const report = await startupSummary(this.ctx, STARTUP_JOB_LIMIT);
    this.lastHeartbeat = this.ctx.now();
    return report;
  }

  /** This bot's challenges that are on chain and whose dispute it follows as not yet resolved (gate.ts). */
  private ownOpenDisputes(): { id: string; jobId: string; step: number }[] {
    return ownOpenDisputes(this.db);
  }

  /**
   * Every heartbeatMs: one info line (jobs followed; this run's audits, receipts, transactions, lost findings and reorgs;
   * the intents open now; balances); an error line while challenges wait for funds.
   */
  private async heartbeat(): Promise<void> {
    const every = this.ctx.options.heartbeatMs ?? 60_000;
    const now = this.ctx.now();
    if (every <= 0) return;
    if (this.lastHeartbeat === undefined) this.lastHeartbeat = now;
    if (now - this.lastHeartbeat < every) return;
    this.lastHeartbeat = now;
    const { clients, deployment } = this.ctx;
    const open = this.db.openIntents();
    const waiting = open.filter((i) => i.error?.startsWith("waiting for funds"));
    const run = this.runCounts();
    // audits, receipts, transactions and lost findings of this run; pending and waiting intents as they stand now
    const fields: Record<string, unknown> = {
      jobsFollowed: this.db.jobsWithStatus("Open", "Active", "Committed", "TimedOut").length,
      audited: run.audited,
      failedAudits: run.failedAudits,
      receipts: run.receipts,
      transactionsConfirmed: run.transactionsConfirmed,
      pendingIntents: open.length,
      waitingForFunds: waiting.length,
      lostFindings: run.lostFindings,
      reorgs: run.reorgs,
    };
    try {
      const f = await getAuditorFunds(clients.public, { deployment, account: this.ctx.me });
      fields.tokens = tokens(f.tokenBalance);
      fields.eth = ethDown(f.ethBalance);
      fields.bonded = f.active;
    } catch (err) {
      fields.balances = `unavailable: ${toChainError(err).shortMessage}`;
    }
    this.log.info({ event: "heartbeat", ...fields }, "heartbeat");
    if (waiting.length > 0) {
      this.log.error({ intents: waiting.map((i) => i.key) }, `${waiting.length} challenge intent${waiting.length === 1 ? "" : "s"} waiting for funds: ${waiting[0]!.error!.replace(/^waiting for funds: /, "")}`);
    }
  }

  // ------------------------------------------------------------------ reporting

  /** Intents recorded or finished since the bot object was made. */
  private intentsThisRun() {
    return this.db.allIntents().filter((i) => i.id > this.intentsBefore || i.updated_at >= this.runStartedAt);
  }

  /** What this run did: verdicts, receipts and finished intents since the bot object was made (not earlier runs'). */
  runCounts(): RunCounts {
    const verdicts = this.db.allSegments().filter((x) => (x.audit === "ok" || x.audit === "bad") && !this.auditedBefore.has(`${x.jobId}:${x.segment}:${x.traceRoot}`));
    const thisRun = this.intentsThisRun();
    return {
      audited: verdicts.length,
      failedAudits: verdicts.filter((x) => x.audit === "bad").length,
      receipts: this.db.receipts().filter((r) => !this.receiptsBefore.has(`${r.job_id}:${r.segment}:${r.signature}`)).length,
      transactionsConfirmed: thisRun.filter((i) => i.status === "confirmed").length,
      lostFindings: thisRun.filter((i) => i.kind === "challenge" && i.status === "failed").length,
      reorgs: this.indexer.reorgs,
    };
  }

  /**
   * summary() restricted to this run: the verdicts, receipts and intents recorded or finished since the bot object was
   * made; `waitingForFunds` counts the intents waiting for funds now.
   */
  runSummary(): BotSummary & { waitingForFunds: number } {
    const all = this.summary();
    const fresh = new Set(this.db.allSegments().filter((x) => !this.auditedBefore.has(`${x.jobId}:${x.segment}:${x.traceRoot}`)).map((x) => `${x.jobId}:${x.segment}`));
    const ids = new Set(this.intentsThisRun().map((i) => i.key));
    return {
      ...all,
      audits: all.audits.filter((a) => fresh.has(`${a.jobId}:${a.segment}`)),
      sampledOut: this.db.allSegments().filter((x) => x.audit === "unsampled" && fresh.has(`${x.jobId}:${x.segment}`)).length,
      receipts: this.runCounts().receipts,
      intents: all.intents.filter((i) => ids.has(i.key)),
      waitingForFunds: this.db.openIntents().filter((i) => i.error?.startsWith("waiting for funds")).length,
    };
  }

  /** Chain-side counters of this run for /metrics: reorgs, blocks rolled back, JSON-RPC requests by method. */
  chainCounters(): { reorgs: number; rolledBackBlocks: number; rpcRequests: ReadonlyMap<string, number> } {
    return { reorgs: this.indexer.reorgs, rolledBackBlocks: this.indexer.rolledBackBlocks, rpcRequests: this.ctx.rpcRequests };
  }

  /** Whether the bot can act now (health.ts botHealth: GET /healthz answers 503 with the reasons). */
  async health(): Promise<BotHealth> {
    return botHealth(this.ctx, { held: this.ownOpenDisputes().length, lastScanAt: this.lastScanAt, jobLimit: STARTUP_JOB_LIMIT });
  }

  summary(): BotSummary {
    const segs = this.db.allSegments();
    return {
      auditor: this.ctx.me,
      audits: segs
        .filter((s) => s.audit === "ok" || s.audit === "bad")
        .map((s) => ({ jobId: s.jobId.toString(), segment: s.segment, ok: s.audit === "ok", firstBadStep: s.firstBadStep, costMs: s.costMs ?? 0, flops: s.flops ?? 0, kind: s.detail?.split(":")[0] ?? null })),
      sampledOut: segs.filter((s) => s.audit === "unsampled").length,
      screens: segs.map((s) => ({ jobId: s.jobId.toString(), segment: s.segment, screen: s.screen })),
      receipts: this.db.receipts().length,
      intents: this.db.allIntents().map((i) => ({ kind: i.kind, key: i.key, status: i.status, txHash: i.tx_hash, error: i.error })),
    };
  }
}
