/**
 * The bot's auditor: sample, screen, audit, through checks/ only (the bot imports nothing from ml/).
 *
 *   sample  each new committed segment with private randomness at the job's audit rate (manifest); the job's last
 *           segment is always audited (rate 1).
 *   screen  the start checkpoint of EVERY committed segment (checks/ screenStart); a failure queues the recompute of the
 *           segment that produced the state.
 *   steps   with step sampling on (BotOptions.stepSampling): one privately drawn step of each step-sampled committed
 *           segment, recomputed from the state the provider opens on chain (steps.ts); a finding is concluded here.
 *   audit   sampled segments with the configured checks (checks/ auditChainSegment); a crash mid-audit leaves the row
 *           'running' and the audit is re-run after a restart. Content and leaves come from the store, local or remote
 *           (`--source`); an unreachable source postpones the audit to the next tick, for the provider's grace period
 *           (`unavailableGraceS`); content still unavailable after it is withheld, and the segment's first step is
 *           challenged (the panel votes Fault on content it cannot fetch either).
 *   conclude  a clean verdict -> a signed EIP-712 AuditReceipt (stored, and a recordReceipt intent when JobMarket has
 *           its registries and the auditor is bonded); a failed one -> a finding and its challenge intents (dispute/).
 *   kinds   an inference job (evaluate, generate: its manifest is a kind manifest) is audited through kinds/audit.ts, the
 *           one dispatch being jobFor: every committed segment is audited (its states file against the leaves, every
 *           running total by hashing), and the examples drawn at the job's rate (sampler.ts sampledExamples) are
 *           recomputed; the verdict is concluded as a training one (receipt or challenge). No screen or step
 *           sampling: an example's state is its leaf's preimage, served whole in the segment's states file.
 * Between two segments of any pass the auditor yields to the bot's duty (yieldToDuty): panel votes and dispute
 * deadlines are served there, so a pass of hundreds of segments never outlasts a voting window.
 * The auditor records intents; the outbox (outbox.ts) sends them.
 */
import { chainDate, getJob, encodeCall, recordReceiptCall, withRetry } from "../chain/index.ts";
import {
  auditChainSegment,
  BaseCheckpointError,
  isLastSegment,
  jobRun,
  screenStart,
  startCheckpointUnavailable,
  withheldVerdict,
  type AuditCheckName,
  type Run,
  type SegmentToAudit,
  type SegmentVerdict,
  type TrainState,
} from "../checks/index.ts";
import { KindJobs } from "../kinds/bot.ts";
import { DEFAULT_KIND_AUDIT_RATE, exampleRange, kindAuditRate, kindSegmentVerdict, kindWithheldVerdict } from "../kinds/audit.ts";
import type { ExampleJob } from "../kinds/job.ts";
import { CircuitTermsMismatchError } from "../dispute/terms.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { SourceUnavailableError } from "../net/index.ts";
import { CHECK_BITS, checksMask, jobMarketDomain, signAuditReceipt, VERDICT, type CheckName } from "../receipts/index.ts";
import type { BotContext } from "./context.ts";
import type { CommittedSegment } from "./db.ts";
import type { Finding, IntentSpec } from "./dispute/index.ts";
import { commitTag, formatIntentKey } from "./intent-key.ts";
import { isSampled, sampledExamples } from "./sampler.ts";
import { SendTerms } from "./send-terms.ts";
import { StepAuditor, type FinalStateOutcome, type StepAudit } from "./steps.ts";

export { readOpening } from "./opening.ts";
export type { StepAudit } from "./steps.ts";

/** Job statuses after which nothing is paid on a receipt: the job ended. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(["Finalized", "Refunded", "Cancelled"]);

/** Whether an AuditReceipt can state the check (the state screen has no receipt bit). */
const hasReceiptBit = (c: AuditCheckName): c is AuditCheckName & CheckName => Object.hasOwn(CHECK_BITS, c);

/**
 * How one job is audited: a training job by its run (checks/), an inference job by its examples (kinds/audit.ts), at
 * `rate` per example (kindAuditRate of the job's payment and lock, at least BotOptions.kindAuditRate).
 */
export type AuditJob = { readonly run: Run; readonly kind?: undefined } | { readonly run?: undefined; readonly kind: { readonly job: ExampleJob; readonly rate: number } };

/** Rethrows anything but a SourceUnavailableError, which gives undefined. */
const unlessUnavailable = (err: unknown): undefined => {
  if (err instanceof SourceUnavailableError) return undefined;
  throw err;
};

export class Auditor {
  private readonly ctx: BotContext;
  /** The private sampling secret (kept in the database: a restart makes the same decisions). */
  private readonly secret: string;
  private readonly runs = new Map<string, Run>();
  /** Inference jobs (kinds/), by job id: their example job and per-example audit rate. */
  private readonly kindAudits = new Map<string, NonNullable<AuditJob["kind"]>>();
  private readonly kindJobs: KindJobs;
  /** Recomputed losses per job, for reports. */
  readonly recomputedLosses = new Map<string, { step: number; loss: number }[]>();
  /** Circuit-class jobs whose terms are not their manifest's (runFor): never audited or challenged. */
  private readonly refusedJobs = new Set<string>();



  /** The step-sampling phase (steps.ts), which borrows the run, target and conclusion from here. */
  private readonly stepAuditor: StepAuditor;
  /** Whether a finding or receipt can be acted on chain (circuit terms, challenge economics, anchoring). */
  private readonly terms: SendTerms;
  /**
   * Called before each segment of a pass (screen, steps, audit): the bot serves panel duty and dispute deadlines there
   * (bot.ts dutyBetween), so a commit or reveal never waits behind a whole audit pass.
   */
  private readonly yieldToDuty: () => Promise<void>;

  /** The last verified start state screened per job (the next segment's continuity baseline). */
  private readonly screened = new Map<string, { segment: number; state: TrainState }>();

  constructor(ctx: BotContext, secret: string, yieldToDuty: () => Promise<void> = async () => {}) {
    this.ctx = ctx;
    this.secret = secret;
    this.yieldToDuty = yieldToDuty;
    this.kindJobs = new KindJobs(ctx.store);
    this.terms = new SendTerms(ctx);
    this.stepAuditor = new StepAuditor(ctx, secret, {
      runFor: (jobId) => this.runFor(jobId),
      discoverFor: (jobId) => this.discoverFor(jobId),
      targetOf: (s) => this.targetOf(s),
      concludeFinding: (run, s, target, verdict) => this.concludeFinding(run, s, target, verdict),
      cannotAudit: (s, err, what) => this.cannotAudit(s, err, what),
      yieldToDuty,
    });
  }

  /** The step audits concluded in this process, by `jobId:segment` (reports, tests, bench). */
  get stepAudits(): ReadonlyMap<string, StepAudit> {
    return this.stepAuditor.stepAudits;
  }

  /** The final-state screen's outcome by job (step sampling; steps.ts): reports, tests. */
  get finalStates(): ReadonlyMap<string, FinalStateOutcome> {
    return this.stepAuditor.finalStates;
  }

  /** Step sampling (BotOptions.stepSampling; steps.ts): the drawn step of each step-sampled segment, through its opening. */
  steps(): Promise<void> {
    return this.stepAuditor.steps();
  }

  /** The job's buyer's and provider's content nodes, dialled when the bot discovers peers (BotOptions.discover). */
  private async discoverFor(jobId: string): Promise<void> {
    const job = this.ctx.options.discover ? this.ctx.db.job(jobId) : undefined;
    if (!job) return;
    await this.ctx.options.discover!([job.buyer, job.provider]).catch((err: unknown) => this.ctx.log.warn({ jobId, err: (err as Error).message }, "peer discovery failed; fetching from the peers connected"));
  }

  /** The job's training run, or undefined for an inference job, while it cannot be loaded, or when it is refused. */
  async runFor(jobId: string): Promise<Run | undefined> {
    return (await this.jobFor(jobId))?.run;
  }

  /**
   * The one dispatch between the training pipeline and an inference job's: the job's manifest, fetched and checked
   * once, is a kind manifest (kinds/bot.ts KindJobs: its model fetched by CID) or a training one (its run). Undefined
   * while it cannot be loaded (logged, retried next tick) or when the job is refused.
   */
  async jobFor(jobId: string): Promise<AuditJob | undefined> {
    const cached = this.runs.get(jobId);
    if (cached) return { run: cached };
    const kindCached = this.kindAudits.get(jobId);
    if (kindCached) return { kind: kindCached };
    const job = this.ctx.db.job(jobId);
    if (!job) return undefined;
    if (this.refusedJobs.has(jobId)) return undefined;
    await this.discoverFor(jobId);
    try {
      const kindJob = await this.kindJobs.jobFor(job);
      if (kindJob) {
        const { clients, deployment } = this.ctx;
        const onChain = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(jobId) });
        const rate = Math.max(kindAuditRate({ payment: onChain.payment, stake: onChain.policy.requiredStake, examples: kindJob.examples }), this.ctx.options.kindAuditRate ?? DEFAULT_KIND_AUDIT_RATE);
        const audit = { job: kindJob, rate };
        this.ctx.db.setAuditRate(jobId, rate);
        this.kindAudits.set(jobId, audit);
        this.ctx.log.info({ jobId, kind: kindJob.ctx.kind, examples: kindJob.examples, rate }, `${kindJob.ctx.kind} job: auditing its examples at rate ${rate} (about ${Math.ceil(rate * kindJob.examples)} of ${kindJob.examples} recomputed)`);
        return { kind: audit };
      }
      const manifest = await fetchManifest(this.ctx.store, job.manifestUri, job.manifestHash, { circuitHash: circuitJobCheck(this.ctx.clients.public, this.ctx.deployment, BigInt(jobId)) });
      // the job's data order: salt(chainId, jobMarket, jobId) from the deployment the bot follows, never the provider's word
      const run = await jobRun(manifest, this.ctx.deployment, BigInt(jobId), this.ctx.store);
      if (job.auditRate === null) this.ctx.db.setAuditRate(jobId, manifest.policy.auditRate);
      this.runs.set(jobId, run);
      return { run };
    } catch (err) {
      if (err instanceof CircuitTermsMismatchError) {
        // INVARIANT: no audit, hence no challenge, of a circuit-class job whose terms are not its manifest's: a proof
        // against the registered terms would win the dispute against an audit of the document
        this.refusedJobs.add(jobId);
        this.ctx.log.error({ jobId, err: err.shortMessage, details: err.details }, `JOB REFUSED: will not audit or challenge job ${jobId}: ${err.shortMessage}`);
        return undefined;
      }
      this.ctx.log.warn({ jobId, err: (err as Error).message }, "cannot load the job's manifest; will retry");
      return undefined;
    }
  }



  async sample(): Promise<void> {
    for (const s of this.ctx.db.undecidedSegments()) {
      const job = await this.jobFor(String(s.jobId));
      if (!job) continue;
      if (job.kind) {
        // every segment of an inference job is audited: its running totals are checked by hashing alone; which of
        // its examples are recomputed is drawn at the audit (sampledExamples)
        this.ctx.db.setSampled(s.jobId, s.segment, true);
        continue;
      }
      const run = job.run;
      const rate = this.ctx.db.job(s.jobId)!.auditRate!;
      // INVARIANT: the last segment is recomputed whatever the job's rate, as soon as it is committed (before the
      // challenge window closes): its end state is the delivered model, and no later segment's screen starts from it,
      // so a plant or skip there is otherwise caught only at p (the quote prices this rule: policy/contract.ts).
      // With step sampling the final state is opened and screened first (steps.ts): only a passed screen waives the
      // recompute; until its outcome is known the last segment stays undecided.
      const last = isLastSegment(run, s.segment);
      let forced = last;
      if (last && this.ctx.options.stepSampling) {
        const final = this.stepAuditor.finalStates.get(String(s.jobId));
        if (!final) continue;
        forced = final.outcome !== "screened";
      }
      const sampled = forced || isSampled(this.secret, this.ctx.deployment.jobMarket, s.jobId, s.segment, rate);
      this.ctx.db.setSampled(s.jobId, s.segment, sampled);
      this.ctx.log.debug({ jobId: String(s.jobId), segment: s.segment, sampled, last, forced }, "sampling decision");
    }
  }

  /** Whether the database still holds commit `s` as listed (the indexer may have rolled it back since). */
  private sameCommit(s: CommittedSegment): boolean {
    const now = this.ctx.db.segment(s.jobId, s.segment);
    return now !== undefined && now.traceRoot === s.traceRoot && now.blockHash === s.blockHash;
  }

  private targetOf(s: CommittedSegment): SegmentToAudit {
    // the pipeline opens segment i from its own leaves and the previous segment's end (boundary), so it gets the
    // commitments 0..i (all on chain: JobMarket takes segments in order, the bot records each)
    const commitments = this.ctx.db.commitments(s.jobId, s.segment);
    if (!commitments) throw new Error(`job ${s.jobId}: a segment before ${s.segment} is not in the bot's database`);
    return { market: this.ctx.deployment.jobMarket, jobId: s.jobId, segment: s.segment, traceRoot: s.traceRoot, endStateHash: s.endStateHash, commitments };
  }

  async screen(): Promise<void> {
    if (this.ctx.options.screen === false) return;
    for (const s of this.ctx.db.unscreenedSegments()) {
      if (this.ctx.stopped()) return;
      await this.yieldToDuty();
      if (!this.sameCommit(s)) continue;
      const run = await this.runFor(String(s.jobId));
      if (!run) continue;
      const log = this.ctx.log.child({ jobId: String(s.jobId), segment: s.segment });
      await this.discoverFor(String(s.jobId));
      const ctx = { run, store: this.ctx.store };
      // the previous segment's verified start is the continuity baseline (kept in memory; re-read after a restart)
      let previous: TrainState | null = null;
      const kept = this.screened.get(String(s.jobId));
      if (kept && kept.segment === s.segment - 1) previous = kept.state;
      try {
        if (!previous && s.segment > 0) {
          const p = this.ctx.db.segment(s.jobId, s.segment - 1);
          // the baseline is the previous segment's content: unavailable now, this segment is screened without it (an
          // outage of the previous segment's start is that segment's own finding, not this one's)
          const r = p && p.screen === "ok" ? await screenStart(ctx, this.targetOf(p), null).catch(unlessUnavailable) : undefined;
          previous = r?.ok ? r.state : null;
        }
        const r = await screenStart(ctx, this.targetOf(s), previous);
        this.ctx.db.clearUnavailable(s.jobId, s.segment);
        if (r.ok) {
          this.screened.set(String(s.jobId), { segment: s.segment, state: r.state });
          this.ctx.db.setScreen(s.jobId, s.segment, "ok");
          log.debug({ costMs: Math.round(r.costMs) }, "state screen ok");
          continue;
        }
        this.screened.delete(String(s.jobId));
        const queued = this.ctx.db.tx(() => {
          this.ctx.db.setScreen(s.jobId, s.segment, `bad: ${r.kind}: ${r.message}`);
          return this.ctx.db.forceAudit(s.jobId, r.at);
        });
        log.warn({ kind: r.kind, recompute: r.at, queued }, `state screen FAILED at the start of segment ${s.segment}: ${r.message}; ${queued ? `recomputing segment ${r.at} (not sampled) to name the step` : `segment ${r.at} is already audited or queued`}`);
      } catch (err) {
        if (err instanceof SourceUnavailableError) {
          const withheld = await this.withheld({ run }, s, err, "state screen");
          if (withheld) this.ctx.db.setScreen(s.jobId, s.segment, `bad: ${withheld.kind}: ${withheld.message}`);
          continue;
        }
        if (err instanceof BaseCheckpointError) {
          this.cannotAudit(s, err, "state screen");
          this.ctx.db.setScreen(s.jobId, s.segment, `error: cannot audit: ${err.shortMessage}`);
          continue;
        }
        // like an audit error (audit() below): a segment the screen cannot process must not stop the bot for every job
        const message = err instanceof Error ? err.message : String(err);
        log.error({ err: message }, "state screen error: segment not screenable, skipped");
        this.ctx.db.setScreen(s.jobId, s.segment, `error: ${message}`);
      }
    }
  }

  async audit(): Promise<void> {
    for (const s of this.ctx.db.auditsToRun()) {
      if (this.ctx.stopped()) return;
      // INVARIANT: panel duty (commit, reveal) never waits behind an audit pass: a pass has no deadline, a vote has
      await this.yieldToDuty();
      // the duty rescans the chain: a reorg meanwhile may have removed or replaced this commit (its own row is re-listed)
      if (!this.sameCommit(s)) continue;
      const job = await this.jobFor(String(s.jobId));
      if (!job) continue;
      try {
        await this.auditOne(job, s);
      } catch (err) {
        // the content or board sources could not be asked: not a verdict yet; the row stays 'running' and is re-run next
        // tick, until the provider's grace period is over (withheld)
        if (err instanceof SourceUnavailableError) {
          await this.withheld(job, s, err, "audit");
          continue;
        }
        if (err instanceof BaseCheckpointError) {
          this.cannotAudit(s, err, "audit");
          this.ctx.db.setAudit(s.jobId, s.segment, { audit: "error", detail: `cannot audit: ${err.shortMessage}` });
          continue;
        }
        // IMPORTANT: a segment the check cannot process (say, a job whose on-chain policy does not match its manifest,
        // posted by a provider's own buyer address) must not stop the bot: rethrown, it failed every tick before any
        // intent was sent, for every job (bench/attacks.ts row 13). The row is recorded as 'error' with the reason.
        const message = err instanceof Error ? err.message : String(err);
        this.ctx.log.error({ jobId: String(s.jobId), segment: s.segment, err: message }, "audit error: segment not auditable, skipped");
        this.ctx.db.setAudit(s.jobId, s.segment, { audit: "error", detail: `error: ${message}` });
      }
    }
  }

  /**
   * A fine-tuning job whose base checkpoint (the buyer's input) gives no usable h(0): its failures are not the
   * provider's, so nothing is challenged and no receipt is signed; an error a person sees, once per segment and check.
   */
  private cannotAudit(s: CommittedSegment, err: BaseCheckpointError, what: string): void {
    this.ctx.log.error(
      { event: "cannot-audit", jobId: String(s.jobId), segment: s.segment, problem: err.problem, base: err.cid },
      `CANNOT AUDIT segment ${s.segment} of job ${s.jobId} (${what}): ${err.shortMessage}; the buyer's input, not the provider's fault: nothing challenged, no receipt`,
    );
  }

  private async auditOne(job: AuditJob, s: CommittedSegment): Promise<void> {
    const jobId = s.jobId;
    const log = this.ctx.log.child({ jobId: String(s.jobId), segment: s.segment });
    this.ctx.db.setAudit(s.jobId, s.segment, { audit: "running" });
    this.ctx.options.onAuditStart?.({ jobId, segment: s.segment });
    await this.discoverFor(String(s.jobId));
    const target = this.targetOf(s);
    let verdict: SegmentVerdict;
    if (job.kind) {
      const { job: kj, rate } = job.kind;
      const sample = sampledExamples(this.secret, this.ctx.deployment.jobMarket, jobId, s.segment, kj.examplesPerSegment, rate);
      log.info({ examples: exampleRange(kj, s.segment), recompute: sample }, "audit started");
      verdict = await kindSegmentVerdict(kj, this.ctx.store, s, sample);
    } else {
      log.info("audit started");
      verdict = await auditChainSegment({ run: job.run, store: this.ctx.store }, target, this.ctx.options.checks);
    }
    this.ctx.db.clearUnavailable(s.jobId, s.segment);
    await this.conclude(job.run, s, target, verdict);
  }

  /**
   * A segment whose content no source serves now. Within the provider's grace period (from the first failure, chain
   * time) it is retried each tick; past it the content is withheld: the segment gets a failed verdict with the claim at
   * its first step (checks/ withheldVerdict), challenged like any finding. The grace is `unavailableGraceS` (default a
   * quarter of the job's challenge window), and never runs past halfway from the first failure to the job's challenge
   * deadline once the job is Committed or TimedOut, so the challenge goes out while the window is open.
   * Returns the failure when the segment was concluded withheld.
   */
  private async withheld(audit: AuditJob, s: CommittedSegment, err: SourceUnavailableError, what: string): Promise<{ kind: string; message: string } | undefined> {
    const { clients, deployment } = this.ctx;
    const log = this.ctx.log.child({ jobId: String(s.jobId), segment: s.segment });
    const [job, block] = await Promise.all([
      getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: s.jobId }),
      withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    ]);
    const now = Number(block.timestamp);
    const first = s.unavailableSince === null;
    const since = this.ctx.db.markUnavailable(s.jobId, s.segment, now);
    let due = since + (this.ctx.options.unavailableGraceS ?? Math.floor(Number(job.policy.challengeWindow) / 4));
    if (job.status === "Committed" || job.status === "TimedOut") due = Math.min(due, since + Math.floor((Number(job.deadline) - since) / 2));
    if (now < due) {
      const line = `${what} postponed: the segment's content is unavailable from every source (${err.shortMessage}); retried each tick, challenged at its first step at ${chainDate(due)} if still unavailable`;
      if (first) log.warn({ err: err.shortMessage, unavailableSince: since, challengeAt: due }, line);
      else log.debug({ err: err.shortMessage, unavailableSince: since, challengeAt: due }, line);
      return undefined;
    }
    const target = this.targetOf(s);
    // an inference job's model and data were fetched when it was loaded (jobFor): what is missing is its states file
    if (audit.run && !(await startCheckpointUnavailable(this.ctx.store, audit.run, target.commitments[s.segment]!))) {
      // the provider's checkpoint is served: what is missing is someone else's to publish (a base checkpoint, data)
      log.error({ unavailableSince: since, err: err.shortMessage }, `CANNOT AUDIT segment ${s.segment} of job ${s.jobId}: content that is not the provider's is unavailable from every source (${err.shortMessage}); its checkpoint is served, so no fault is claimed; retried each tick`);
      return undefined;
    }
    const reason = `unavailable from every source since ${chainDate(since)} (${now - since} s): ${err.shortMessage}`;
    const verdict = audit.kind ? kindWithheldVerdict(audit.kind.job, s, reason) : withheldVerdict({ run: audit.run, store: this.ctx.store }, target, reason);
    log.error({ unavailableSince: since, err: err.shortMessage }, `content WITHHELD: segment ${s.segment} of job ${s.jobId} unavailable from every source for ${now - since} s; challenging its first step`);
    await this.conclude(audit.run, s, target, verdict);
    return verdict.failure ?? undefined;
  }

  /** Records a segment's verdict: a receipt for a clean one, a finding (and its challenge intents) for a bad one. */
  private async conclude(run: Run | undefined, s: CommittedSegment, target: SegmentToAudit, verdict: SegmentVerdict): Promise<void> {
    const jobId = s.jobId;
    const log = this.ctx.log.child({ jobId: String(s.jobId), segment: s.segment });
    const finding: Finding | undefined = verdict.ok
      ? undefined
      : { market: target.market, jobId, segment: s.segment, ...(commitTag(s.blockHash) === undefined ? {} : { commit: commitTag(s.blockHash) }), traceRoot: target.traceRoot, endStateHash: target.endStateHash, claim: verdict.proof, kind: verdict.failure?.kind ?? "unknown", ...(verdict.noClaim ? { noClaim: verdict.noClaim } : {}) };
    // read before the transaction below (requiredBond): the audit result and its challenge intents are stored together
    const challengeable = finding && this.ctx.dispute.available && (await this.terms.circuitTermsHold(run, jobId)) && (!finding.claim || (await this.terms.challengePays(jobId)));
    const challenge = challengeable ? await this.ctx.dispute.challengeIntents(finding) : [];
    const losses = this.recomputedLosses.get(String(s.jobId)) ?? [];
    losses.push(...verdict.losses);
    this.recomputedLosses.set(String(s.jobId), losses);
    const startScreen = this.ctx.db.segment(s.jobId, s.segment)?.screen ?? null;
    // A clean segment whose start state failed the screen (a poisoned state carried over) gets no receipt: the K steps
    // are right from the committed start; the finding is on the segment that produced the state.
    const receiptFor = verdict.ok && !(startScreen && startScreen !== "ok");
    const signed = receiptFor ? await this.signReceipt(s, target, verdict) : undefined;
    // INVARIANT: verdict, finding and receipt are stored in ONE transaction after all signing and chain reads: a bot
    // killed between two writes would keep an "ok" audit (never redone) whose receipt is lost for good.
    this.ctx.db.tx(() => {
      this.ctx.db.setAudit(s.jobId, s.segment, {
        audit: verdict.ok ? "ok" : "bad",
        firstBadStep: verdict.firstBadStep,
        costMs: verdict.costMs,
        flops: verdict.flops,
        detail: verdict.failure ? `${verdict.failure.kind}: ${verdict.failure.message}` : undefined,
      });
      if (finding) this.onFinding(finding, challenge);
      if (signed) {
        const { receipt, signature, anchored } = signed;
        this.ctx.db.saveReceipt({ jobId: String(s.jobId), segment: s.segment, verdict: receipt.verdict, checks: receipt.checks, sampledSteps: receipt.sampledSteps, traceRoot: receipt.traceRoot, signature });
        if (anchored) {
          const call = encodeCall(recordReceiptCall({ jobRecords: this.ctx.deployment.jobRecords, receipt, endStateHash: target.endStateHash, signature }));
          const commit = commitTag(s.blockHash);
          this.ctx.db.addIntent({ key: formatIntentKey({ kind: "receipt", jobId, segment: s.segment, ...(commit === undefined ? {} : { commit }) }), kind: "recordReceipt", jobId: String(s.jobId), segment: s.segment, payload: call });
        }
      }
    });
    if (signed) {
      log.info(
        { event: "audit", ok: true, receipt: true, costMs: Math.round(verdict.costMs), anchored: signed.anchored },
        signed.anchored ? "audit ok; receipt signed, recordReceipt queued" : signed.ended ? "audit ok; receipt signed (the job already ended: not anchored)" : "audit ok; receipt signed (not anchored: JobMarket has no registries or this auditor is not bonded)",
      );
    } else if (verdict.ok) {
      log.warn({ event: "audit", ok: true, receipt: false, screen: startScreen }, "audit ok, but the segment's start state did not pass the state screen: no receipt");
    } else {
      log.warn({ event: "audit", ok: false, firstBadStep: verdict.firstBadStep, kind: verdict.failure?.kind }, "audit FAILED");
    }
    this.ctx.options.onAudit?.({ jobId, segment: s.segment, verdict });
  }

  /** A clean segment's signed receipt, and whether recordReceipt can anchor it (read before the verdict is stored). */
  private async signReceipt(s: CommittedSegment, target: SegmentToAudit, verdict: SegmentVerdict) {
    const receipt = { jobId: s.jobId, segment: s.segment, traceRoot: target.traceRoot, checks: checksMask(verdict.checks.filter(hasReceiptBit)), sampledSteps: verdict.stepsChecked, verdict: VERDICT.ok };
    const domain = jobMarketDomain(BigInt(this.ctx.clients.wallet.chain.id), this.ctx.deployment.jobRecords);
    const signature = await signAuditReceipt(this.ctx.clients.account as never, domain, receipt);
    // a receipt of a job that already ended changes nothing the market pays out: signed and kept, never anchored
    const ended = FINAL_STATUSES.has(this.ctx.db.job(s.jobId)?.status ?? "");
    const anchored = !ended && (await this.terms.canAnchor());
    return { receipt, signature, ended, anchored };
  }

  /**
   * A failed step audit's finding and its challenge intents (as conclude does for a segment's failed verdict); the
   * segment's own audit row is left to the segment audit.
   */
  private async concludeFinding(run: Run, s: CommittedSegment, target: SegmentToAudit, verdict: SegmentVerdict): Promise<void> {
    const commit = commitTag(s.blockHash);
    const finding: Finding = { market: target.market, jobId: s.jobId, segment: s.segment, ...(commit === undefined ? {} : { commit }), traceRoot: target.traceRoot, endStateHash: target.endStateHash, claim: verdict.proof, kind: verdict.failure?.kind ?? "unknown", ...(verdict.noClaim ? { noClaim: verdict.noClaim } : {}) };
    const challengeable = this.ctx.dispute.available && (await this.terms.circuitTermsHold(run, s.jobId)) && (!finding.claim || (await this.terms.challengePays(s.jobId)));
    const challenge = challengeable ? await this.ctx.dispute.challengeIntents(finding) : [];
    this.ctx.db.tx(() => this.onFinding(finding, challenge));
  }



  private onFinding(f: Finding, intents: IntentSpec[]): void {
    const fields = { jobId: f.jobId.toString(), segment: f.segment, step: f.claim?.step };
    if (!this.ctx.dispute.available) {
      this.ctx.log.warn(fields, "finding recorded (no DisputeGame deployed: nothing to challenge with)");
      return;
    }
    if (intents.length === 0) {
      if (f.claim) this.ctx.log.warn(fields, "finding recorded, no challenge sent (the line above says why)");
      // a finding the bot cannot act on is an error a person sees, with the pipeline's reason
      else this.ctx.log.error({ event: "finding-not-challengeable", ...fields, kind: f.kind }, `FINDING NOT CHALLENGEABLE: ${f.kind}: ${f.noClaim ?? "no step claim"}`);
      return;
    }
    // a challenge about a commit a reorg removed (cancel) does not stand for this one
    const mine = this.ctx.db.allIntents().filter((i) => i.kind === "challenge" && i.job_id === f.jobId.toString() && i.status !== "failed" && i.status !== "superseded" && i.cancel === 0);
    if (mine.length > 0) {
      this.ctx.log.warn({ ...fields, challenge: mine[0]!.key }, "finding recorded (this bot already challenges the job)");
      return;
    }
    for (const i of intents) this.ctx.db.addIntent(i);
  }
}
