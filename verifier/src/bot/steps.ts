/**
 * The step auditor (BotOptions.stepSampling): one privately drawn step of each step-sampled committed segment. The
 * state before it is asked of the provider on chain (StateOpenings, a requestOpening intent); once opened the step is
 * recomputed through checks/ auditSampledStep; a mismatch, an opened CID that does not serve the committed state, or an
 * opening left unanswered past its deadline is a finding at that step, concluded by the auditor (auditor.ts) like a
 * failed segment audit. The auditor owns the job's run, the audit target and the conclusion; this part owns the draw,
 * the opening and what is settled. When the bot cannot get an opening (the provider's queue is full up to the challenge
 * window, the request reverted, or the segment's states can no longer be asked) the segment is recomputed instead
 * (fallBackToRecompute): a provider that floods its own queue buys itself a full recompute, not an escape.
 */
import type { Address } from "viem";
import { encodeCall, getJob, getOpeningTerms, requestOpeningCall, withRetry } from "../chain/index.ts";
import { auditSampledStep, auditTargetOf, BaseCheckpointError, screenFinalState, type Run, type SegmentToAudit, type SegmentVerdict } from "../checks/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { BotContext } from "./context.ts";
import type { CommittedSegment } from "./db.ts";
import { formatIntentKey } from "./intent-key.ts";
import { openingFits, readOpening } from "./opening.ts";
import { sampledStep } from "./sampler.ts";

/** Job statuses in which a committed segment's states can be asked for (StateOpenings._checkOpenable). */
const OPENABLE_STATUSES: ReadonlySet<string> = new Set(["Active", "Committed", "TimedOut"]);

/** One step-sampled segment's outcome: the step drawn, and the verdict once the opening was answered or withheld. */
export type StepAudit = { jobId: bigint; segment: number; step: number; verdict: SegmentVerdict };

/**
 * The final state's screen (BotOptions.stepSampling), per job: "screened" once the opened final state passed the state
 * screen (the last segment is then sampled at the job's rate), "recompute" when it cannot waive the last segment's
 * recompute (the screen failed, the opening was withheld or can no longer be asked, or the opened state is unusable).
 */
export type FinalStateOutcome = { outcome: "screened" | "recompute"; reason: string };

/** What the step auditor borrows from the auditor (auditor.ts): the job's run, the audit target, the conclusion. */
export type StepAuditorParts = {
  runFor(jobId: string): Promise<Run | undefined>;
  discoverFor(jobId: string): Promise<void>;
  targetOf(s: CommittedSegment): SegmentToAudit;
  concludeFinding(run: Run, s: CommittedSegment, target: SegmentToAudit, verdict: SegmentVerdict): Promise<void>;
  cannotAudit(s: CommittedSegment, err: BaseCheckpointError, what: string): void;
  /** Called before each segment: panel duty and dispute deadlines are served between segments (bot.ts). */
  yieldToDuty(): Promise<void>;
};

export class StepAuditor {
  private readonly ctx: BotContext;
  private readonly secret: string;
  private readonly parts: StepAuditorParts;
  /** StateOpenings' answer window (fixed at deployment), read once for openingAskable. */
  private answerWindowS: number | undefined;
  /**
   * Step-sampled segments (`jobId:segment`) that are settled: drawn out, audited, or not askable any more. In memory: after
   * a restart the same draws are made again (the secret is kept) and each opening is read back from the chain, so
   * nothing is asked twice (the intent key is the opening) and a finding is recorded once (onFinding).
   */
  private readonly stepsSettled = new Set<string>();
  /** The step audits concluded in this process, by `jobId:segment` (reports, tests, bench). */
  readonly stepAudits = new Map<string, StepAudit>();
  /**
   * The final-state screen's outcome by job. In memory: after a restart the opening is read back from the chain (the
   * intent key is the opening, so it is not asked twice) and screened again before the last segment is decided.
   */
  readonly finalStates = new Map<string, FinalStateOutcome>();

  constructor(ctx: BotContext, secret: string, parts: StepAuditorParts) {
    this.ctx = ctx;
    this.secret = secret;
    this.parts = parts;
  }

  /**
   * Step sampling (BotOptions.stepSampling): for each committed segment of a job whose states can still be asked for, the
   * private draw (sampler.ts sampledStep) picks at most one step s; the bot asks the provider to open state s-1
   * (a requestOpening intent, sent by the outbox), and once the opening is answered recomputes step s from the opened
   * CID (checks/ auditSampledStep), or, once it is withheld (unanswered past its deadline), claims step s. A finding is
   * challenged like any failed audit; a clean step is logged (no receipt: a receipt states a segment's checks).
   */
  async steps(): Promise<void> {
    const cfg = this.ctx.options.stepSampling;
    if (!cfg) return;
    const { clients, deployment } = this.ctx;
    await this.screenFinalStates(cfg.stateOpenings);
    for (const s of this.ctx.db.allSegments()) {
      if (this.ctx.stopped()) return;
      await this.parts.yieldToDuty();
      const key = `${s.jobId}:${s.segment}`;
      if (this.stepsSettled.has(key)) continue;
      const job = this.ctx.db.job(s.jobId);
      if (!job || !OPENABLE_STATUSES.has(job.status)) continue;
      const run = await this.parts.runFor(String(s.jobId));
      if (!run) continue;
      const step = sampledStep(this.secret, deployment.jobMarket, s.jobId, s.segment, run.manifest.training.stepsPerSegment, cfg.rate);
      if (step === null) {
        this.stepsSettled.add(key);
        continue;
      }
      const log = this.ctx.log.child({ jobId: String(s.jobId), segment: s.segment, step });
      const opened = await readOpening(clients.public, { stateOpenings: cfg.stateOpenings, fromBlock: BigInt(deployment.startBlock), jobId: s.jobId, state: step - 1 });
      if (opened === undefined) {
        const intent = { key: formatIntentKey({ kind: "requestOpening", jobId: s.jobId, step: step - 1 }), kind: "requestOpening", jobId: String(s.jobId), segment: s.segment };
        const sent = this.ctx.db.intentByKey(intent.key);
        if (sent?.status === "failed") {
          this.stepsSettled.add(key);
          this.fallBackToRecompute(s, `its opening request failed (${sent.error ?? "reverted"})`, log);
          continue;
        }
        if (!sent && !(await this.openingAskable(s, cfg.stateOpenings))) {
          this.stepsSettled.add(key);
          this.fallBackToRecompute(s, "its state can no longer be asked for (earlier tenure, the provider's opening queue full, or too little of the challenge window left)", log);
          continue;
        }
        if (!sent) {
          this.ctx.db.addIntent({ ...intent, payload: encodeCall(requestOpeningCall({ stateOpenings: cfg.stateOpenings, jobId: s.jobId, segment: s.segment, step: step - 1 })) });
          log.info("step sampled: asking the provider to open the state before it");
        }
        continue;
      }
      // the provider's answer window is still open (or its answer's log not indexed yet)
      if (opened === "pending") continue;
      try {
        await this.parts.discoverFor(String(s.jobId));
        const target = this.parts.targetOf(s);
        const verdict = await auditSampledStep({ run, store: this.ctx.store }, target, step, opened);
        this.stepsSettled.add(key);
        this.stepAudits.set(key, { jobId: s.jobId, segment: s.segment, step, verdict });
        cfg.onVerdict?.({ jobId: s.jobId, segment: s.segment, step, verdict });
        if (verdict.ok) {
          log.info({ event: "step-audit", ok: true, costMs: Math.round(verdict.costMs) }, `sampled step ${step} recomputed from the opened state: matches its leaf`);
          continue;
        }
        log.warn({ event: "step-audit", ok: false, kind: verdict.failure?.kind }, `sampled step ${step} FAILED: ${verdict.failure?.message}`);
        await this.parts.concludeFinding(run, s, target, verdict);
      } catch (err) {
        // the opened CID's sources cannot be asked now: retried next tick (an answer that never serves is the panel's to judge)
        if (err instanceof SourceUnavailableError) {
          log.debug({ err: err.shortMessage }, "opened state unavailable now; retried next tick");
          continue;
        }
        this.stepsSettled.add(key);
        if (err instanceof BaseCheckpointError) {
          this.parts.cannotAudit(s, err, "step audit");
          continue;
        }
        log.error({ err: err instanceof Error ? err.message : String(err) }, "step audit error: step not auditable, skipped");
      }
    }
  }

  /**
   * The final state through an opening: once a job's last segment is committed the bot asks its provider to open the
   * last segment's end state S*K (StateOpenings opens it; provider/openings.ts answers it from the kept end checkpoint)
   * and screens it (checks/ screenFinalState). A pass waives the last segment's mandatory recompute (auditor.ts sample()
   * then samples it at the job's rate); a failed screen, a withheld opening, an opening that can no longer be asked, or
   * an opened state that cannot be screened keeps it: the last segment is recomputed as without step sampling, and a
   * finding there is challenged at the step the recompute names.
   * NOTE: a withheld final opening is not challenged by itself: a panel decides a step claim from the opening of the
   * step's pre-state (checks/decide.ts), not of its end state, so such a claim against an honest step would lose; the
   * recompute it falls back to costs the bot what it cost before the opening, and the provider gains nothing by it.
   */
  private async screenFinalStates(stateOpenings: Address): Promise<void> {
    const { clients, deployment } = this.ctx;
    for (const s of this.ctx.db.allSegments()) {
      if (this.ctx.stopped()) return;
      const jobKey = String(s.jobId);
      if (this.finalStates.has(jobKey)) continue;
      const run = await this.parts.runFor(jobKey);
      if (!run) continue;
      const K = run.manifest.training.stepsPerSegment;
      const S = run.manifest.training.steps / K;
      if (s.segment !== S - 1) continue;
      await this.parts.yieldToDuty();
      const state = S * K;
      const log = this.ctx.log.child({ jobId: jobKey, segment: s.segment, state });
      const settle = (outcome: FinalStateOutcome["outcome"], reason: string) => {
        this.finalStates.set(jobKey, { outcome, reason });
        if (outcome === "screened") log.info({ event: "final-state-screen", ok: true }, `final state ${state} opened and screened: ${reason}; the last segment is sampled at the job's rate`);
        else log.warn({ event: "final-state-screen", ok: false }, `final state ${state}: ${reason}; recomputing the last segment`);
      };
      const opened = await readOpening(clients.public, { stateOpenings, fromBlock: BigInt(deployment.startBlock), jobId: s.jobId, state });
      if (opened === undefined) {
        const key = formatIntentKey({ kind: "requestOpening", jobId: s.jobId, step: state });
        const sent = this.ctx.db.intentByKey(key);
        if (sent?.status === "failed") {
          settle("recompute", `its opening request failed (${sent.error ?? "reverted"})`);
          continue;
        }
        const job = this.ctx.db.job(s.jobId);
        if (!sent && (!job || !OPENABLE_STATUSES.has(job.status) || !(await this.openingAskable(s, stateOpenings)))) {
          settle("recompute", "its opening can no longer be asked (earlier tenure, the provider's opening queue full, or too little of the challenge window left)");
          continue;
        }
        if (!sent) {
          this.ctx.db.addIntent({ key, kind: "requestOpening", jobId: jobKey, segment: s.segment, payload: encodeCall(requestOpeningCall({ stateOpenings, jobId: s.jobId, segment: s.segment, step: state })) });
          log.info("last segment committed: asking the provider to open the final state");
        }
        continue;
      }
      if (opened === "pending") continue;
      if ("withheld" in opened) {
        settle("recompute", `its opening was ${opened.withheld}`);
        continue;
      }
      try {
        await this.parts.discoverFor(jobKey);
        const r = await screenFinalState(auditTargetOf({ run, store: this.ctx.store }, this.parts.targetOf(s)), opened.checkpointCid);
        if (r.ok) settle("screened", `opened as ${opened.checkpointCid}`);
        else settle("recompute", `the screen FAILED: ${r.failure?.kind}: ${r.failure?.message}`);
      } catch (err) {
        // the opened CID's sources cannot be asked now: retried next tick, the last segment stays undecided meanwhile
        if (err instanceof SourceUnavailableError) {
          log.debug({ err: err.shortMessage }, "opened final state unavailable now; retried next tick");
          continue;
        }
        settle("recompute", `the opened state cannot be screened: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /**
   * Step sampling without an opening: the sampled segment is recomputed (audited as if the sampler had drawn it), so a
   * state the bot cannot get never leaves the segment unaudited.
   */
  private fallBackToRecompute(s: CommittedSegment, why: string, log: BotContext["log"]): void {
    const row = this.ctx.db.segment(s.jobId, s.segment);
    if (row?.sampled === null) this.ctx.db.setSampled(s.jobId, s.segment, true);
    else this.ctx.db.forceAudit(s.jobId, s.segment);
    log.warn({ event: "step-sample-fallback" }, `step sampled, but ${why}: recomputing the segment instead`);
  }

  /**
   * Whether state openings of segment `s` can still be asked (StateOpenings requestOpening's guards the bot can foresee):
   * the segment is in the current provider's tenure, and the deadline the provider's queue would give (nextAnswerBy)
   * leaves one more answer window (to dispute a withholding) before the challenge window ends: a Committed or TimedOut
   * job's deadline, an Active job's `now + challengeWindow`.
   */
  private async openingAskable(s: CommittedSegment, stateOpenings: Address): Promise<boolean> {
    const { clients, deployment } = this.ctx;
    const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: s.jobId });
    if (!OPENABLE_STATUSES.has(job.status) || s.segment < Number(job.startSegment)) return false;
    this.answerWindowS ??= (await getOpeningTerms(clients.public, { stateOpenings })).answerWindowSeconds;
    const now = Number((await withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" })).timestamp);
    const windowEnd = job.status === "Active" ? now + Number(job.policy.challengeWindow) : Number(job.deadline);
    // one block of margin: the request is mined after `now`
    return openingFits(clients.public, { stateOpenings, jobId: s.jobId, answerWindowS: this.answerWindowS, windowEnd, marginS: 60 });
  }
}
