/**
 * The challenger bot (`pouw auditor run`). One loop, woken by a contract-event subscription and by a
 * polling timer (the fallback when the subscription fails or misses):
 *
 *   1. scan   JobMarket events from the stored cursor to head - (confirmations - 1), in block chunks;
 *             events and the new cursor are stored in one SQLite transaction.
 *   2. sample each new committed segment with private randomness at the job's audit rate (manifest); the job's last
 *      segment is always audited (rate 1).
 *   3. audit  sampled segments with the check functions (checks.ts); a crash mid-audit leaves the row
 *             'running' and the audit is re-run after a restart. Content and leaves come from the store and
 *             board, local or remote (`--source`); an unreachable source postpones the audit to the next tick, for
 *             the provider's grace period (`unavailableGraceS`); content still unavailable after it is withheld, and
 *             the segment's first step is challenged (the panel votes Fault on content it cannot fetch either).
 *   4. act    clean segment -> signed EIP-712 AuditReceipt (stored, and a recordReceipt intent when JobMarket
 *             has its registries and the auditor is bonded); bad segment -> challenge intents (dispute.ts); an Active job past its
 *             deadline -> reportTimeout intent (also sent before a challenge of such a job: its segments are disputable
 *             again once TimedOut); a TimedOut job past its window -> reopenJob intent; credits -> claim intents.
 *   4b. disputes (dispute.ts) follow every DisputeGame challenge: panel draw, commit, reveal, resolve, claims.
 *   5. send   open intents in order: each is recorded before signing, its signed bytes are stored before
 *             broadcast, and after a restart it is either rebroadcast byte for byte or reconciled with
 *             chain state (already done by anyone -> superseded). No deadline is missed for a crash, and
 *             no transaction is sent twice.
 *             Before a bond approval or a challenge the bot checks that its bond-token balance covers
 *             DisputeGame.requiredDeposit(job) and its ETH the gas; short, it sends nothing, logs the exact
 *             shortfall at error and keeps the intent pending (re-checked with backoff), so the challenge goes out
 *             once the funds arrive, or, if the job can no longer be frozen by then, is recorded as a lost finding
 *             with the reason, at error. A failed send is classified (chain/errors.ts classifySendFailure): funds,
 *             allowance, nonce, fee and RPC trouble are retried with backoff; a revert the contract will repeat is
 *             recorded with its decoded reason (chain/describeRevert.ts) and logged; nothing fails silently. A
 *             challenge whose commitment expired while it waited (DisputeGame.CHALLENGE_COMMITMENT_TTL_BLOCKS) commits
 *             again first (`commitChallenge:...:renewN`, at most MAX_COMMIT_RENEWALS per round).
 *   6. report a start-up summary (`startup`: bond, balances against the deposit and gas a challenge needs, jobs
 *             followed, audit rates; an error line with the fix for each thing that stops the bot from acting)
 *             and a heartbeat every `heartbeatMs`.
 * RPC errors are retried with backoff (chain/retry.ts); a failing tick is logged and retried next tick.
 */
import type { Address, Hex } from "viem";
import { formatEther, getAddress, zeroHash } from "viem";
import type { Logger } from "pino";
import {
  approveData,
  broadcastAndWait,
  CHALLENGE_GAS_UNITS,
  chainDate,
  classifySendFailure,
  ContractRevertError,
  describeRevert,
  FeeTooLowError,
  claimCreditData,
  getAuditorActive,
  getAuditorFunds,
  getDisputeParams,
  getJob,
  getLockedStake,
  getMarketLogs,
  getRegistries,
  getReceiptOf,
  getStakeCredit,
  getPanelPool,
  getMissingContracts,
  recordReceiptData,
  signTx,
  tenureData,
  toChainError,
  watchMarketLogs,
  withRetry,
  type AuditorFunds,
  type ChainClients,
  type Deployment,
  type DisputeParams,
} from "../chain/index.ts";
import { challengeReward } from "../policy/challenge.ts";
import { InputError, type PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { circuitTermsOfRun } from "../dispute/circuit.ts";
import { checkCircuitTerms, CircuitTermsMismatchError, type CircuitTerms } from "../dispute/terms.ts";
import { LinearTile } from "../ml/models/linear-tile.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import { createRun, deploymentSalt, type Run, type TrainState } from "../ml/index.ts";
import { checksMask, jobMarketDomain, signAuditReceipt, VERDICT } from "../receipts/index.ts";
import type { ContentStore } from "../store/index.ts";
import { BaseCheckpointError } from "../checks/segment.ts";
import { recomputeCheck, screenStart, startCheckpointUnavailable, unavailableVerdict, type AuditVerdict, type SegmentCheck, type SegmentToAudit } from "./checks.ts";
import { BotDb, type IntentRow, type SegmentRow } from "./db.ts";
import { noDisputeGame, type DisputeHooks, type Finding, type IntentSpec } from "./dispute.ts";
import { isLastSegment, isSampled, newSamplingSecret } from "./sampler.ts";

/** Rethrows anything but a SourceUnavailableError, which gives undefined. */
const unlessUnavailable = (err: unknown): undefined => {
  if (err instanceof SourceUnavailableError) return undefined;
  throw err;
};

export type BotOptions = {
  clients: ChainClients;
  deployment: Deployment;
  store: ContentStore;
  board: SegmentBoard;
  dbPath: string;
  checks?: SegmentCheck[];
  dispute?: DisputeHooks;
  /** Blocks per eth_getLogs request. */
  scanChunk?: number;
  /** Report timeouts of providers that miss a deadline (default true). */
  reportTimeouts?: boolean;
  /**
   * Screen the start checkpoint of EVERY committed segment, sampled or not (default true): a failure queues the
   * recompute of the segment that produced the state (screenStart), so a persistent cheat in an unsampled segment is
   * challenged at the next one.
   */
  screen?: boolean;
  /**
   * Dials the content nodes of the given accounts (a job's buyer and provider) before the bot reads that job's
   * content: discovery from the chain with --ipfs (store/ipfs-peers.ts). A failure is logged, never fatal.
   */
  discover?: (accounts: readonly (string | null)[]) => Promise<unknown>;
  /**
   * Chain seconds a segment's content may stay unavailable from every source before the bot treats it as withheld and
   * challenges the segment's first step (default: a quarter of the job's challenge window; never past halfway to the
   * job's challenge deadline).
   */
  unavailableGraceS?: number;
  /** Called after each audit (demo progress, tests). */
  onAudit?: (e: { jobId: bigint; segment: number; verdict: AuditVerdict }) => void;
  /** Called at audit start (tests kill the process here). */
  onAuditStart?: (e: { jobId: bigint; segment: number }) => void;
  /** Logger (default: the "bot" module logger); tests pass one that records. */
  log?: Logger;
  /** Clock in ms since the epoch, for backoff and heartbeat (default Date.now; tests pass a fake one). */
  now?: () => number;
  /** First retry delay of an intent that could not go out (default 1000 ms), doubled per attempt up to retryMaxMs. */
  retryBaseMs?: number;
  /** Longest retry delay (default 30000 ms). */
  retryMaxMs?: number;
  /** A heartbeat line at info this often (default 60000 ms; 0: never). */
  heartbeatMs?: number;
};

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

/** The deployment does not match the chain (no code at its addresses): the bot refuses to start. */
export class BotConfigError extends InputError {
  override name = "BotConfigError";
  override readonly code: string = "BOT_CONFIG";
}

/** Mined-and-reverted transactions of one intent before it is recorded as failed. */
const MAX_MINED_REVERTS = 3;
/** How many times one challenge round re-sends its expired commitment (DisputeGame.CHALLENGE_COMMITMENT_TTL_BLOCKS). */
const MAX_COMMIT_RENEWALS = 3;
/** Jobs whose deposit and manifest the start-up summary reads, most recent first. */
const STARTUP_JOB_LIMIT = 100;
const CHALLENGE_KINDS = new Set(["approveBond", "challenge"]);
const tokens = (wei: bigint) => formatEther(wei);
const MICRO = 10n ** 12n;
/** ETH to 6 decimals: balances rounded down, amounts needed rounded up (token amounts stay exact). */
const ethDown = (wei: bigint) => formatEther((wei / MICRO) * MICRO);
const ethUp = (wei: bigint) => formatEther(((wei + MICRO - 1n) / MICRO) * MICRO);
/** The challenge round an intent key belongs to: `challenge:J:S[:rN]`, `approveBond:J:S[:rN][:topK]` -> `J:S[:rN]`; other keys: themselves. */
const roundOf = (k: string) => (/^(challenge|approveBond):/.test(k) ? k.replace(/^(challenge|approveBond):/, "").replace(/:top[0-9]+$/, "") : k);

export type BotSummary = {
  auditor: Address;
  audits: { jobId: string; segment: number; ok: boolean; firstBadStep: number | null; costMs: number; flops: number; kind: string | null }[];
  sampledOut: number;
  /** The state screen of every committed segment's start ("ok", "bad: <kind>: <message>", or null: not yet). */
  screens: { jobId: string; segment: number; screen: string | null }[];
  receipts: number;
  intents: { kind: string; key: string; status: string; txHash: string | null; error: string | null }[];
};

const key = (s: bigint | string | number) => s.toString();

export class ChallengerBot {
  readonly db: BotDb;
  readonly log: Logger;
  private readonly o: BotOptions;
  private readonly checks: SegmentCheck[];
  private readonly dispute: DisputeHooks;
  private readonly runs = new Map<string, Run>();
  private readonly secret: string;
  private readonly me: Address;
  private stopped = false;
  private started = false;
  private lastHeartbeat: number | undefined;
  private readonly now: () => number;
  /** Per intent key, the last shortfall logged at error (repeated at error only when it changes). */
  private readonly shortfallLogged = new Map<string, string>();
  private wake: (() => void) | undefined;
  private unwatch: (() => void) | undefined;
  /** Recomputed losses per job, for reports. */
  readonly recomputedLosses = new Map<string, { step: number; loss: number }[]>();

  constructor(o: BotOptions) {
    this.o = o;
    this.db = new BotDb(o.dbPath);
    this.checks = o.checks ?? [recomputeCheck];
    this.dispute = o.dispute ?? noDisputeGame;
    this.me = getAddress(o.clients.account.address);
    this.log = (o.log ?? logger("bot")).child({ auditor: this.me });
    this.now = o.now ?? Date.now;
    let secret = this.db.getMeta("samplingSecret");
    if (!secret) {
      secret = newSamplingSecret();
      this.db.setMeta("samplingSecret", secret);
    }
    this.secret = secret;
    // A crash mid-audit left rows 'running': they are re-run (auditsToRun includes them).
  }

  /** Runs ticks until stop(); each tick is woken by new events or by the poll interval. */
  async run(): Promise<void> {
    const { clients, deployment } = this.o;
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
    await this.scan();
    await this.sample();
    await this.screen();
    await this.audit();
    await this.deadlines();
    await this.claims();
    await this.dispute.drive({ db: this.db, me: this.me, log: this.log, store: this.o.store, runFor: (jobId) => this.runFor(jobId) });
    await this.sendIntents();
    await this.heartbeat();
  }

  // ------------------------------------------------------------------ scan

  private async scan(): Promise<void> {
    const { clients, deployment } = this.o;
    const head = await withRetry(() => clients.public.getBlockNumber({ cacheTime: 0 }), { what: "blockNumber" });
    const safe = head - BigInt(clients.confirmations - 1);
    let from = BigInt(this.db.getMeta("cursor") ?? (BigInt(deployment.startBlock) - 1n).toString()) + 1n;
    const chunk = BigInt(this.o.scanChunk ?? 2_000);
    while (from <= safe) {
      const to = from + chunk - 1n < safe ? from + chunk - 1n : safe;
      const logs = await getMarketLogs(clients.public, { jobMarket: deployment.jobMarket, fromBlock: from, toBlock: to });
      this.db.tx(() => {
        for (const l of logs) this.onEvent(l as never);
        this.db.setMeta("cursor", to.toString());
      });
      from = to + 1n;
    }
  }

  private onEvent(l: { eventName: string; args: Record<string, unknown>; blockNumber: bigint }): void {
    const a = l.args;
    switch (l.eventName) {
      case "JobCreated": {
        const policy = a.policy as { segments: number; stepsPerSegment: number };
        this.db.upsertJob({
          job_id: key(a.jobId as bigint),
          buyer: a.buyer as string,
          manifest_uri: a.manifestUri as string,
          manifest_hash: a.manifestHash as string,
          segments: policy.segments,
          steps_per_segment: policy.stepsPerSegment,
          status: "Open",
        });
        break;
      }
      case "JobAccepted":
        this.db.setJobStatus(key(a.jobId as bigint), "Active", a.provider as string);
        break;
      case "SegmentCommitted":
        this.db.insertSegment({
          job_id: key(a.jobId as bigint),
          segment: Number(a.segment),
          trace_root: a.traceRoot as string,
          end_state_hash: a.endStateHash as string,
          state_hashes: JSON.stringify(a.stateHashes as readonly string[]),
          checkpoint_cid: a.checkpointCid as string,
          loss_e6: key(a.lossE6 as bigint),
          block: key(l.blockNumber),
        });
        break;
      case "JobCancelled":
        this.db.setJobStatus(key(a.jobId as bigint), "Cancelled");
        break;
      case "JobTimedOut":
        // A tenure that committed segments stays disputable until `disputableUntil` (TimedOut); one that committed
        // nothing re-opens at once (disputableUntil 0).
        if ((a.disputableUntil as bigint) === 0n) this.db.setJobStatus(key(a.jobId as bigint), "Open", null);
        else this.db.setJobStatus(key(a.jobId as bigint), "TimedOut", a.provider as string);
        break;
      case "JobReopened":
        this.db.setJobStatus(key(a.jobId as bigint), "Open", null);
        break;
      case "JobFinalized":
        this.db.setJobStatus(key(a.jobId as bigint), "Finalized");
        break;
      case "ProviderFaultSettled":
        this.db.setJobStatus(key(a.jobId as bigint), "Refunded");
        break;
      default:
        break;
    }
  }

  // ------------------------------------------------------------------ sample + audit

  /** The job's buyer's and provider's content nodes, dialled when the bot discovers peers (BotOptions.discover). */
  private async discoverFor(jobId: string): Promise<void> {
    const job = this.o.discover ? this.db.job(jobId) : undefined;
    if (!job) return;
    await this.o.discover!([job.buyer, job.provider]).catch((err: unknown) => this.log.warn({ jobId, err: (err as Error).message }, "peer discovery failed; fetching from the peers connected"));
  }

  private async runFor(jobId: string): Promise<Run | undefined> {
    const cached = this.runs.get(jobId);
    if (cached) return cached;
    const job = this.db.job(jobId);
    if (!job) return undefined;
    if (this.refusedJobs.has(jobId)) return undefined;
    await this.discoverFor(jobId);
    try {
      const manifest = await fetchManifest(this.o.store, job.manifest_uri, job.manifest_hash as Hex, { circuitHash: circuitJobCheck(this.o.clients.public, this.o.deployment, BigInt(jobId)) });
      // the job's data order: salt(chainId, jobMarket, jobId) from the deployment the bot follows, never the provider's word
      const run = await createRun(manifest, { jobId: BigInt(jobId), salt: deploymentSalt(this.o.deployment, BigInt(jobId)), store: this.o.store });
      if (job.audit_rate === null) this.db.setAuditRate(jobId, manifest.policy.auditRate);
      this.runs.set(jobId, run);
      return run;
    } catch (err) {
      if (err instanceof CircuitTermsMismatchError) {
        // INVARIANT: no audit, hence no challenge, of a circuit-class job whose terms are not its manifest's: a proof
        // against the registered terms would win the dispute against an audit of the document
        this.refusedJobs.add(jobId);
        this.log.error({ jobId, err: err.shortMessage, details: err.details }, `JOB REFUSED: will not audit or challenge job ${jobId}: ${err.shortMessage}`);
        return undefined;
      }
      this.log.warn({ jobId, err: (err as Error).message }, "cannot load the job's manifest; will retry");
      return undefined;
    }
  }

  /** Circuit-class jobs whose terms are not their manifest's (runFor): never audited or challenged. */
  private readonly refusedJobs = new Set<string>();

  /** The circuit terms of a linear-tile job, derived once from its manifest and salt. */
  private readonly circuitTerms = new Map<string, CircuitTerms>();

  /**
   * Before a challenge of a linear-tile job: its on-chain manifest hash and registered terms must still be the
   * document's (checkCircuitTerms). False (with an error line) when they are not: the finding is recorded, nothing sent.
   */
  private async circuitTermsHold(run: Run, jobId: bigint): Promise<boolean> {
    const game = this.o.deployment.disputeGame;
    if (!(run.model instanceof LinearTile) || !game) return true;
    let expected = this.circuitTerms.get(jobId.toString());
    if (!expected) {
      expected = (await circuitTermsOfRun(run)).terms;
      this.circuitTerms.set(jobId.toString(), expected);
    }
    try {
      await checkCircuitTerms(this.o.clients.public, { disputeGame: game, jobMarket: this.o.deployment.jobMarket, jobId, manifestBody: run.manifestHash, expected });
      return true;
    } catch (err) {
      if (!(err instanceof CircuitTermsMismatchError)) throw err;
      this.log.error({ jobId: jobId.toString(), err: err.shortMessage }, `CANNOT CHALLENGE job ${jobId}: ${err.shortMessage}`);
      return false;
    }
  }

  /** The DisputeGame's parameters (fixed at deployment), read once for challengePays. */
  private disputeParams: DisputeParams | undefined;

  /**
   * Before a challenge of job `jobId`: the fault's challenger share lam L of the provider's lock must pay the panel's
   * fees n f (policy/challenge.ts challengeReward), else catching the cheat costs this bot n f - lam L plus gas.
   * JobMarket.acceptJob refuses a lock below that floor (JobMarketLockCannotPayPanel), but a lock can shrink after it:
   * a timeout slash leaves a TimedOut job's committed segments disputable with what is left of the lock. The job's own buyer challenges anyway: a fault refunds its escrow.
   * False (with an error line): the finding is recorded, nothing sent.
   */
  private async challengePays(jobId: bigint): Promise<boolean> {
    const { clients, deployment } = this.o;
    const game = deployment.disputeGame;
    if (!game) return true;
    const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
    if (getAddress(job.buyer) === this.me) return true;
    this.disputeParams ??= await getDisputeParams(clients.public, { disputeGame: game });
    const lockWei = await getLockedStake(clients.public, { stakeVault: deployment.stakeVault, provider: job.provider as Address, jobId });
    const r = challengeReward({ lockWei, challengerBps: job.policy.challengerBps, panelSize: this.disputeParams.panelSize, panelFeeWei: this.disputeParams.panelFee });
    if (r.netWei >= 0n) return true;
    this.log.error(
      { event: "challenge-at-a-loss", jobId: jobId.toString(), lock: tokens(lockWei), reward: tokens(r.rewardWei), panelFees: tokens(r.panelFeesWei) },
      `NOT CHALLENGING job ${jobId}: the provider's lock ${tokens(lockWei)} pays a challenger share of ${tokens(r.rewardWei)}, below the panel's fees ${tokens(r.panelFeesWei)}, so a challenge would cost this auditor ${tokens(-r.netWei)}; the job's buyer can challenge it`,
    );
    return false;
  }

  private async sample(): Promise<void> {
    for (const s of this.db.undecidedSegments()) {
      const run = await this.runFor(s.job_id);
      if (!run) continue;
      const rate = this.db.job(s.job_id)!.audit_rate!;
      // INVARIANT: the last segment is recomputed whatever the job's rate, as soon as it is committed (before the
      // challenge window closes): its end state is the delivered model, and no later segment's screen starts from it,
      // so a plant or skip there is otherwise caught only at p (the quote prices this rule: policy/contract.ts)
      const last = isLastSegment(run, s.segment);
      const sampled = last || isSampled(this.secret, this.o.deployment.jobMarket, BigInt(s.job_id), s.segment, rate);
      this.db.setSampled(s.job_id, s.segment, sampled);
      this.log.debug({ jobId: s.job_id, segment: s.segment, sampled, last }, "sampling decision");
    }
  }

  /** The last verified start state screened per job (the next segment's continuity baseline). */
  private readonly screened = new Map<string, { segment: number; state: TrainState }>();

  private targetOf(s: SegmentRow): SegmentToAudit {
    // the pipeline opens segment i from its own leaves and the previous segment's end (boundary), so it gets the
    // commitments 0..i (all on chain: JobMarket takes segments in order, the bot records each)
    const commitments = this.db.commitments(s.job_id, s.segment);
    if (!commitments) throw new Error(`job ${s.job_id}: a segment before ${s.segment} is not in the bot's database`);
    return { market: this.o.deployment.jobMarket, jobId: BigInt(s.job_id), segment: s.segment, traceRoot: s.trace_root as Hex, endStateHash: s.end_state_hash as Hex, commitments };
  }

  private async screen(): Promise<void> {
    if (this.o.screen === false) return;
    for (const s of this.db.unscreenedSegments()) {
      if (this.stopped) return;
      const run = await this.runFor(s.job_id);
      if (!run) continue;
      const log = this.log.child({ jobId: s.job_id, segment: s.segment });
      await this.discoverFor(s.job_id);
      const ctx = { run, store: this.o.store, board: this.o.board };
      // the previous segment's verified start is the continuity baseline (kept in memory; re-read after a restart)
      let previous: TrainState | null = null;
      const kept = this.screened.get(s.job_id);
      if (kept && kept.segment === s.segment - 1) previous = kept.state;
      try {
        if (!previous && s.segment > 0) {
          const p = this.db.segment(s.job_id, s.segment - 1);
          // the baseline is the previous segment's content: unavailable now, this segment is screened without it (an
          // outage of the previous segment's start is that segment's own finding, not this one's)
          const r = p && p.screen === "ok" ? await screenStart(ctx, this.targetOf(p), null).catch(unlessUnavailable) : undefined;
          previous = r?.ok ? r.state : null;
        }
        const r = await screenStart(ctx, this.targetOf(s), previous);
        this.db.clearUnavailable(s.job_id, s.segment);
        if (r.ok) {
          this.screened.set(s.job_id, { segment: s.segment, state: r.state });
          this.db.setScreen(s.job_id, s.segment, "ok");
          log.debug({ costMs: Math.round(r.costMs) }, "state screen ok");
          continue;
        }
        this.screened.delete(s.job_id);
        const queued = this.db.tx(() => {
          this.db.setScreen(s.job_id, s.segment, `bad: ${r.kind}: ${r.message}`);
          return this.db.forceAudit(s.job_id, r.at);
        });
        log.warn({ kind: r.kind, recompute: r.at, queued }, `state screen FAILED at the start of segment ${s.segment}: ${r.message}; ${queued ? `recomputing segment ${r.at} (not sampled) to name the step` : `segment ${r.at} is already audited or queued`}`);
      } catch (err) {
        if (err instanceof SourceUnavailableError) {
          const withheld = await this.withheld(run, s, err, "state screen");
          if (withheld) this.db.setScreen(s.job_id, s.segment, `bad: ${withheld.kind}: ${withheld.message}`);
          continue;
        }
        if (err instanceof BaseCheckpointError) {
          this.cannotAudit(s, err, "state screen");
          this.db.setScreen(s.job_id, s.segment, `error: cannot audit: ${err.shortMessage}`);
          continue;
        }
        // like an audit error (audit() below): a segment the screen cannot process must not stop the bot for every job
        const message = err instanceof Error ? err.message : String(err);
        log.error({ err: message }, "state screen error: segment not screenable, skipped");
        this.db.setScreen(s.job_id, s.segment, `error: ${message}`);
      }
    }
  }

  private async audit(): Promise<void> {
    for (const s of this.db.auditsToRun()) {
      if (this.stopped) return;
      const run = await this.runFor(s.job_id);
      if (!run) continue;
      try {
        await this.auditOne(run, s);
      } catch (err) {
        // the content or board sources could not be asked: not a verdict yet; the row stays 'running' and is re-run next
        // tick, until the provider's grace period is over (withheld)
        if (err instanceof SourceUnavailableError) {
          await this.withheld(run, s, err, "audit");
          continue;
        }
        if (err instanceof BaseCheckpointError) {
          this.cannotAudit(s, err, "audit");
          this.db.setAudit(s.job_id, s.segment, { audit: "error", detail: `cannot audit: ${err.shortMessage}` });
          continue;
        }
        // IMPORTANT: a segment the check cannot process (say, a job whose on-chain policy does not match its manifest,
        // posted by a provider's own buyer address) must not stop the bot: rethrown, it failed every tick before any
        // intent was sent, for every job (bench/attacks.ts row 13). The row is recorded as 'error' with the reason.
        const message = err instanceof Error ? err.message : String(err);
        this.log.error({ jobId: s.job_id, segment: s.segment, err: message }, "audit error: segment not auditable, skipped");
        this.db.setAudit(s.job_id, s.segment, { audit: "error", detail: `error: ${message}` });
      }
    }
  }

  /**
   * A fine-tuning job whose base checkpoint (the buyer's input) gives no usable h(0): its failures are not the
   * provider's, so nothing is challenged and no receipt is signed; an error a person sees, once per segment and check.
   */
  private cannotAudit(s: SegmentRow, err: BaseCheckpointError, what: string): void {
    this.log.error(
      { event: "cannot-audit", jobId: s.job_id, segment: s.segment, problem: err.problem, base: err.cid },
      `CANNOT AUDIT segment ${s.segment} of job ${s.job_id} (${what}): ${err.shortMessage}; the buyer's input, not the provider's fault: nothing challenged, no receipt`,
    );
  }

  private async auditOne(run: Run, s: SegmentRow): Promise<void> {
    const jobId = BigInt(s.job_id);
    const log = this.log.child({ jobId: s.job_id, segment: s.segment });
    this.db.setAudit(s.job_id, s.segment, { audit: "running" });
    this.o.onAuditStart?.({ jobId, segment: s.segment });
    log.info("audit started");
    await this.discoverFor(s.job_id);
    const target = this.targetOf(s);
    let verdict: AuditVerdict | undefined;
    let costMs = 0;
    let flops = 0;
    for (const check of this.checks) {
      const v = await check({ run, store: this.o.store, board: this.o.board }, target);
      costMs += v.costMs;
      flops += v.flops;
      verdict = v;
      if (!v.ok) break;
    }
    if (!verdict) return;
    this.db.clearUnavailable(s.job_id, s.segment);
    await this.conclude(run, s, target, verdict, costMs, flops);
  }

  /**
   * A segment whose content no source serves now. Within the provider's grace period (from the first failure, chain
   * time) it is retried each tick; past it the content is withheld: the segment gets a failed verdict with the claim at
   * its first step (unavailableVerdict), challenged like any finding. The grace is `unavailableGraceS` (default a
   * quarter of the job's challenge window), and never runs past halfway from the first failure to the job's challenge
   * deadline once the job is Committed or TimedOut, so the challenge goes out while the window is open.
   * Returns the failure when the segment was concluded withheld.
   */
  private async withheld(run: Run, s: SegmentRow, err: SourceUnavailableError, what: string): Promise<{ kind: string; message: string } | undefined> {
    const { clients, deployment } = this.o;
    const log = this.log.child({ jobId: s.job_id, segment: s.segment });
    const [job, block] = await Promise.all([
      getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(s.job_id) }),
      withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    ]);
    const now = Number(block.timestamp);
    const first = s.unavailable_since === null;
    const since = this.db.markUnavailable(s.job_id, s.segment, now);
    let due = since + (this.o.unavailableGraceS ?? Math.floor(Number(job.policy.challengeWindow) / 4));
    if (job.status === "Committed" || job.status === "TimedOut") due = Math.min(due, since + Math.floor((Number(job.deadline) - since) / 2));
    if (now < due) {
      const line = `${what} postponed: the segment's content is unavailable from every source (${err.shortMessage}); retried each tick, challenged at its first step at ${chainDate(due)} if still unavailable`;
      if (first) log.warn({ err: err.shortMessage, unavailableSince: since, challengeAt: due }, line);
      else log.debug({ err: err.shortMessage, unavailableSince: since, challengeAt: due }, line);
      return undefined;
    }
    const target = this.targetOf(s);
    if (!(await startCheckpointUnavailable(this.o.store, run, target.commitments[s.segment]!))) {
      // the provider's checkpoint is served: what is missing is someone else's to publish (a base checkpoint, data)
      log.error({ unavailableSince: since, err: err.shortMessage }, `CANNOT AUDIT segment ${s.segment} of job ${s.job_id}: content that is not the provider's is unavailable from every source (${err.shortMessage}); its checkpoint is served, so no fault is claimed; retried each tick`);
      return undefined;
    }
    const verdict = unavailableVerdict({ run, store: this.o.store, board: this.o.board }, target, `unavailable from every source since ${chainDate(since)} (${now - since} s): ${err.shortMessage}`);
    log.error({ unavailableSince: since, err: err.shortMessage }, `content WITHHELD: segment ${s.segment} of job ${s.job_id} unavailable from every source for ${now - since} s; challenging its first step`);
    await this.conclude(run, s, target, verdict, 0, 0);
    return verdict.failure;
  }

  /** Records a segment's verdict: a receipt for a clean one, a finding (and its challenge intents) for a bad one. */
  private async conclude(run: Run, s: SegmentRow, target: SegmentToAudit, verdict: AuditVerdict, costMs: number, flops: number): Promise<void> {
    const jobId = BigInt(s.job_id);
    const log = this.log.child({ jobId: s.job_id, segment: s.segment });
    const finding: Finding | undefined = verdict.ok
      ? undefined
      : { market: target.market, jobId, segment: s.segment, traceRoot: target.traceRoot, endStateHash: target.endStateHash, claim: verdict.claim, kind: verdict.failure?.kind ?? "unknown", ...(verdict.noClaim ? { noClaim: verdict.noClaim } : {}) };
    // read before the transaction below (requiredBond): the audit result and its challenge intents are stored together
    const challengeable = finding && this.dispute.available && (await this.circuitTermsHold(run, jobId)) && (!finding.claim || (await this.challengePays(jobId)));
    const challenge = challengeable ? await this.dispute.challengeIntents(finding) : [];
    const losses = this.recomputedLosses.get(s.job_id) ?? [];
    losses.push(...verdict.losses);
    this.recomputedLosses.set(s.job_id, losses);
    this.db.tx(() => {
      this.db.setAudit(s.job_id, s.segment, {
        audit: verdict.ok ? "ok" : "bad",
        firstBadStep: verdict.firstBadStep,
        costMs,
        flops,
        detail: verdict.failure ? `${verdict.failure.kind}: ${verdict.failure.message}` : undefined,
      });
      if (finding) this.onFinding(finding, challenge);
    });
    const startScreen = this.db.segment(s.job_id, s.segment)?.screen ?? null;
    if (verdict.ok && startScreen && startScreen !== "ok") {
      // The K steps are right from the committed start, but that start failed the screen (a poisoned state carried
      // over): no receipt says this segment is fine; the finding is on the segment that produced the state.
      log.warn({ event: "audit", ok: true, receipt: false, screen: startScreen }, "audit ok, but the segment's start state did not pass the state screen: no receipt");
    } else if (verdict.ok) {
      const receipt = { jobId, segment: s.segment, traceRoot: target.traceRoot, checks: checksMask(verdict.checks), sampledSteps: verdict.stepsChecked, verdict: VERDICT.ok };
      const domain = jobMarketDomain(BigInt(this.o.clients.wallet.chain.id), this.o.deployment.jobRecords);
      const signature = await signAuditReceipt(this.o.clients.account as never, domain, receipt);
      const anchored = await this.canAnchor();
      this.db.tx(() => {
        this.db.saveReceipt({ jobId: s.job_id, segment: s.segment, verdict: receipt.verdict, checks: receipt.checks, sampledSteps: receipt.sampledSteps, traceRoot: receipt.traceRoot, signature });
        if (anchored) {
          const data = recordReceiptData([receipt, target.endStateHash, signature]);
          this.db.addIntent({ key: `receipt:${s.job_id}:${s.segment}`, kind: "recordReceipt", jobId: s.job_id, segment: s.segment, payload: { to: this.o.deployment.jobRecords, data } });
        }
      });
      log.info({ event: "audit", ok: true, receipt: true, costMs: Math.round(costMs), anchored }, anchored ? "audit ok; receipt signed, recordReceipt queued" : "audit ok; receipt signed (JobMarket has no registries: not anchored)");
    } else {
      log.warn({ event: "audit", ok: false, firstBadStep: verdict.firstBadStep, kind: verdict.failure?.kind }, "audit FAILED");
    }
    this.o.onAudit?.({ jobId, segment: s.segment, verdict });
  }

  /**
   * Whether recordReceipt can anchor this bot's receipts: JobMarket has its registries (they never change
   * once set) and this auditor is active (bonded) in AuditorRegistry.
   */
  private async canAnchor(): Promise<boolean> {
    const { clients, deployment } = this.o;
    if (this.db.getMeta("registriesSet") !== "1") {
      if ((await getRegistries(clients.public, { jobMarket: deployment.jobMarket })).auditors === undefined) return false;
      this.db.setMeta("registriesSet", "1");
    }
    return getAuditorActive(clients.public, { auditorRegistry: deployment.auditorRegistry, auditor: this.me });
  }

  private onFinding(f: Finding, intents: IntentSpec[]): void {
    const fields = { jobId: f.jobId.toString(), segment: f.segment, step: f.claim?.step };
    if (!this.dispute.available) {
      this.log.warn(fields, "finding recorded (no DisputeGame deployed: nothing to challenge with)");
      return;
    }
    if (intents.length === 0) {
      if (f.claim) this.log.warn(fields, "finding recorded, no challenge sent (the line above says why)");
      // a finding the bot cannot act on is an error a person sees, with the pipeline's reason
      else this.log.error({ event: "finding-not-challengeable", ...fields, kind: f.kind }, `FINDING NOT CHALLENGEABLE: ${f.kind}: ${f.noClaim ?? "no step claim"}`);
      return;
    }
    const mine = this.db.allIntents().filter((i) => i.kind === "challenge" && i.job_id === key(f.jobId) && i.status !== "failed" && i.status !== "superseded");
    if (mine.length > 0) {
      this.log.warn({ ...fields, challenge: mine[0]!.key }, "finding recorded (this bot already challenges the job)");
      return;
    }
    for (const i of intents) this.db.addIntent(i);
  }

  // ------------------------------------------------------------------ deadlines + claims

  private async deadlines(): Promise<void> {
    if (this.o.reportTimeouts === false) return;
    const { clients, deployment } = this.o;
    const active = this.db.jobsWithStatus("Active", "Committed", "TimedOut");
    if (active.length === 0) return;
    const block = await withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" });
    for (const j of active) {
      const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(j.job_id) });
      if (job.status !== j.status) this.db.setJobStatus(j.job_id, job.status);
      if (job.openDisputes !== 0 || block.timestamp <= BigInt(job.deadline)) continue;
      if (job.status === "Active") this.tenureIntent("reportTimeout", job);
      // the timed-out tenure's window is over: release its lock and offer the job again
      if (job.status === "TimedOut") this.tenureIntent("reopenJob", job);
    }
  }

  /**
   * The intent (recorded once) to end the current provider's tenure: report its missed deadline, or re-open the job
   * after its TimedOut window. Keyed by (job, provider, next segment), so a later tenure gets its own.
   */
  private tenureIntent(kind: "reportTimeout" | "reopenJob", job: { jobId: bigint; provider: Address; nextSegment: number }): IntentRow {
    const data = tenureData(kind, job.jobId);
    return this.db.addIntent({
      key: `${kind}:${job.jobId}:${job.provider}:${job.nextSegment}`,
      kind,
      jobId: job.jobId.toString(),
      payload: { to: this.o.deployment.jobMarket, data, provider: job.provider, nextSegment: job.nextSegment },
    });
  }

  private async claims(): Promise<void> {
    const { clients, deployment } = this.o;
    if (this.db.openIntents().some((i) => i.kind === "claimStake")) return;
    const credit = await getStakeCredit(clients.public, { stakeVault: deployment.stakeVault, account: this.me });
    if (credit === 0n) return;
    const n = this.db.allIntents().filter((i) => i.kind === "claimStake").length;
    this.db.addIntent({ key: `claimStake:${n}`, kind: "claimStake", payload: { to: deployment.stakeVault, data: claimCreditData() } });
  }

  // ------------------------------------------------------------------ intents

  /** Whether the intent's effect is already on chain (by anyone): then it must not be sent. */
  private async alreadyDone(i: IntentRow): Promise<boolean> {
    const { clients, deployment } = this.o;
    const p = JSON.parse(i.payload) as { provider?: string; nextSegment?: number };
    const own = await this.dispute.alreadyDone(i, this.me);
    if (own !== undefined) return own;
    switch (i.kind) {
      case "reportTimeout": {
        const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(i.job_id!) });
        return job.status !== "Active" || job.provider !== p.provider || job.nextSegment !== p.nextSegment;
      }
      case "reopenJob": {
        const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(i.job_id!) });
        return job.status !== "TimedOut" || job.provider !== p.provider || job.nextSegment !== p.nextSegment;
      }
      case "recordReceipt":
        return (
          (await getReceiptOf(clients.public, { jobRecords: deployment.jobRecords, jobId: BigInt(i.job_id!), segment: i.segment!, auditor: this.me })) !== zeroHash
        );
      case "claimStake":
        return (await getStakeCredit(clients.public, { stakeVault: deployment.stakeVault, account: this.me })) === 0n;
      default:
        return false;
    }
  }

  private async sendIntents(): Promise<void> {
    for (const listed of this.db.openIntents()) {
      if (this.stopped) return;
      // re-read: an earlier intent of this pass may have ended this one (a lost finding closes its pair)
      const i = this.db.intent(listed.id)!;
      if (i.status !== "pending" && i.status !== "signed") continue;
      if (i.retry_at !== null && i.retry_at > this.now()) continue;
      await this.sendOne(i);
    }
  }

  private intentLog(i: IntentRow): Logger {
    return this.log.child({ intent: i.key, jobId: i.job_id, segment: i.segment });
  }

  /** Delay before attempt `attempts + 1` of an intent: retryBaseMs doubled per attempt, at most retryMaxMs. */
  private backoffMs(attempts: number): number {
    const base = this.o.retryBaseMs ?? 1_000;
    const max = this.o.retryMaxMs ?? 30_000;
    return Math.min(max, base * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  }

  /** Sends one open intent; every outcome (sent, superseded, waiting, failed) is recorded on the row. Throws only when the RPC is down. */
  private async sendOne(i: IntentRow): Promise<void> {
    const { clients } = this.o;
    const log = this.intentLog(i);
    try {
      if (i.status === "signed") {
        // Signed before a crash or a failed broadcast: rebroadcast the same bytes (a no-op if it was already mined).
        log.info({ txHash: i.tx_hash, attempt: i.attempts + 1 }, i.attempts === 0 ? "rebroadcasting a transaction signed before a restart" : "rebroadcasting a signed transaction");
        await broadcastAndWait(clients, { raw: i.raw_tx as Hex, hash: i.tx_hash as Hex, nonce: i.nonce!, from: this.me }, i.kind);
        this.db.intentDone(i.id, "confirmed");
        return;
      }
      if (await this.alreadyDone(i)) {
        this.db.intentDone(i.id, "superseded", "already done on chain");
        log.info("already done on chain; not sending");
        return;
      }
      if (CHALLENGE_KINDS.has(i.kind) && this.o.deployment.disputeGame && !(await this.challengeGate(i, log))) return;
      const p = JSON.parse(i.payload) as { to: Address; data: Hex };
      const signed = await signTx(clients, p.to, p.data);
      this.db.intentSigned(i.id, signed.hash, signed.raw, signed.nonce);
      log.info({ txHash: signed.hash, nonce: signed.nonce }, "intent signed; broadcasting");
      const mined = await broadcastAndWait(clients, signed, i.kind);
      this.db.intentDone(i.id, "confirmed");
      this.shortfallLogged.delete(roundOf(i.key));
      // `hash` and `blockNumber` as every command's --json names a transaction (auditor run --json)
      log.info({ event: "tx", kind: i.kind, hash: signed.hash, blockNumber: mined.receipt.blockNumber.toString() }, i.kind === "challenge" ? "challenge confirmed: dispute opened" : "intent confirmed");
    } catch (err) {
      await this.onSendError(this.db.intent(i.id) ?? i, toChainError(err), log);
    }
  }

  /**
   * Before a bond approval or a challenge: the bond-token balance must cover DisputeGame.requiredDeposit(job) and the ETH
   * the gas; a challenge also needs the allowance (re-approved here when it fell short). Returns whether to send now;
   * otherwise the row says why (pending: waiting for funds; failed: the finding is lost, the job can no longer be frozen).
   */
  private async challengeGate(i: IntentRow, log: Logger): Promise<boolean> {
    const { clients, deployment } = this.o;
    const jobId = BigInt(i.job_id!);
    if (i.kind === "challenge" && !(await this.timeoutReported(i, jobId, log))) return false;
    const funds = await getAuditorFunds(clients.public, { deployment, account: this.me, jobIds: [jobId] });
    const deposit = funds.deposit!.amount;
    const gas = (i.kind === "approveBond" ? CHALLENGE_GAS_UNITS.approve + CHALLENGE_GAS_UNITS.challenge : CHALLENGE_GAS_UNITS.challenge) * funds.maxFeePerGas;
    const short: string[] = [];
    if (funds.tokenBalance < deposit) short.push(`token balance ${tokens(funds.tokenBalance)} < deposit ${tokens(deposit)} (short ${tokens(deposit - funds.tokenBalance)})`);
    if (funds.ethBalance < gas) short.push(`ETH ${ethDown(funds.ethBalance)} < ~${ethUp(gas)} for gas (short ${ethUp(gas - funds.ethBalance)})`);
    if (short.length > 0) {
      const why = short.join("; ");
      const closed = await this.whyNotDisputable(jobId);
      if (closed) {
        this.closeChallenge(i, closed.refunded ? "superseded" : "failed", closed.refunded ? closed.why : `${closed.why} while waiting for funds (${why})`, log);
        return false;
      }
      this.db.intentDeferred(i.id, `waiting for funds: ${why}`, this.now() + this.backoffMs(i.attempts + 1));
      this.logShortfall(i, log, why, { deposit, funds });
      return false;
    }
    if (i.kind === "challenge" && funds.allowance < deposit) {
      // The pair's approval is still open (sent now), or was used up or replaced since (a new approval is recorded and sent).
      const pairKey = i.key.replace(/^challenge:/, "approveBond:");
      let approve = this.db.openIntents().find((x) => x.kind === "approveBond" && (x.key === pairKey || x.key.startsWith(`${pairKey}:top`)));
      if (!approve) {
        const n = this.db.allIntents().filter((x) => x.key.startsWith(`${pairKey}:top`)).length + 1;
        const data = approveData(deployment.disputeGame!, deposit);
        approve = this.db.addIntent({ key: `${pairKey}:top${n}`, kind: "approveBond", jobId: i.job_id!, segment: i.segment!, payload: { to: deployment.token, data, finding: JSON.parse(i.payload).finding } });
        log.warn({ allowance: tokens(funds.allowance), deposit: tokens(deposit), approve: approve.key }, "allowance to DisputeGame is below the deposit: approving again");
      }
      await this.sendOne(approve);
      const after = await getAuditorFunds(clients.public, { deployment, account: this.me, jobIds: [jobId] });
      if (after.allowance < deposit) {
        this.db.intentDeferred(i.id, `waiting for the approval: allowance ${tokens(after.allowance)} < deposit ${tokens(deposit)}`, this.now() + this.backoffMs(i.attempts + 1));
        return false;
      }
    }
    return true;
  }

  /**
   * JobMarket.freeze refuses an Active job past its segment deadline; its segments become disputable again, for one
   * challenge window, once the timeout is reported (status TimedOut). Before a challenge of such a job the bot reports
   * the timeout itself (anyone may); with a dispute still open on it, the challenge waits for that dispute to resolve.
   * Returns whether the challenge can be sent now.
   */
  private async timeoutReported(i: IntentRow, jobId: bigint, log: Logger): Promise<boolean> {
    const { clients, deployment } = this.o;
    const [job, block] = await Promise.all([
      getJob(clients.public, { jobMarket: deployment.jobMarket, jobId }),
      withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    ]);
    if (job.status !== "Active" || block.timestamp <= BigInt(job.deadline)) return true;
    if (job.openDisputes !== 0) {
      this.db.intentDeferred(i.id, `job ${jobId} is past its segment deadline with ${job.openDisputes} dispute(s) open: waiting to report its timeout`, this.now() + this.backoffMs(i.attempts + 1));
      return false;
    }
    const report = this.tenureIntent("reportTimeout", job);
    log.info({ deadline: chainDate(job.deadline), report: report.key }, "the job is past its segment deadline: reporting the timeout so that its segments can be disputed");
    await this.sendOne(report);
    const after = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
    if (after.status === "Active") {
      this.db.intentDeferred(i.id, `waiting for the timeout report of job ${jobId}`, this.now() + this.backoffMs(i.attempts + 1));
      return false;
    }
    return true;
  }

  /** Why a challenge of the job can no longer open (JobMarket.freeze), or undefined while it can. */
  private async whyNotDisputable(jobId: bigint): Promise<{ why: string; refunded: boolean } | undefined> {
    const { clients, deployment } = this.o;
    const [job, block] = await Promise.all([
      getJob(clients.public, { jobMarket: deployment.jobMarket, jobId }),
      withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" }),
    ]);
    // An Active job past its deadline is disputable again once its timeout is reported (challengeGate does that).
    if (job.status === "Active") return undefined;
    if ((job.status === "Committed" || job.status === "TimedOut") && block.timestamp <= BigInt(job.deadline)) return undefined;
    if (job.status === "Refunded") return { why: `job ${jobId} was already refunded (its provider was slashed through another dispute)`, refunded: true };
    if (job.status === "Committed") {
      return { why: `job ${jobId}'s challenge window closed at ${chainDate(job.deadline)}`, refunded: false };
    }
    if (job.status === "TimedOut") {
      return { why: `job ${jobId}'s window after its provider's timeout closed at ${chainDate(job.deadline)}`, refunded: false };
    }
    return { why: `job ${jobId} is ${job.status}: it can no longer be disputed`, refunded: false };
  }

  /**
   * Ends a challenge round (the challenge and its open approvals, pending ones only: a signed one is never dropped):
   * recorded with `reason` ("finding lost: ..." when failed), logged once at error when the finding is lost.
   */
  private closeChallenge(i: IntentRow, status: "failed" | "superseded", reason: string, log: Logger): void {
    const round = roundOf(i.key);
    const recorded = status === "failed" ? `finding lost: ${reason}` : reason;
    this.db.tx(() => {
      this.db.intentDone(i.id, status, recorded);
      for (const x of this.db.openIntents()) {
        if (x.id !== i.id && CHALLENGE_KINDS.has(x.kind) && x.status === "pending" && roundOf(x.key) === round) this.db.intentDone(x.id, status, recorded);
      }
    });
    this.shortfallLogged.delete(round);
    if (status === "failed") log.error({ event: "finding-lost", reason: recorded }, `FINDING LOST: ${reason}`);
    else log.info({ reason }, `challenge not needed: ${reason}`);
  }

  /** Logs a shortfall at error once per challenge round and per distinct shortfall (at debug when it repeats). */
  private logShortfall(i: IntentRow, log: Logger, why: string, ctx: { deposit: bigint; funds: AuditorFunds }): void {
    const fix = this.fundingFix(ctx.deposit, ctx.funds);
    const round = roundOf(i.key);
    if (this.shortfallLogged.get(round) === why) {
      log.debug({ shortfall: why }, "still waiting for funds");
      return;
    }
    this.shortfallLogged.set(round, why);
    log.error({ event: "cannot-challenge", shortfall: why, fix }, `CANNOT CHALLENGE: ${why}; the challenge stays pending and goes out when funded: ${fix}`);
  }

  /** The command (or transfer) that gives this account `deposit` tokens and the gas of a challenge. */
  private fundingFix(deposit: bigint, f: AuditorFunds): string {
    const fixes: string[] = [];
    if (f.tokenBalance < deposit) {
      fixes.push(this.o.deployment.devToken ? `pouw auditor fund ${tokens(deposit)} --mint` : `transfer ${tokens(deposit - f.tokenBalance)} tokens (${this.o.deployment.token}) to ${this.me}`);
    }
    if (f.ethBalance < f.challengeGasCost) fixes.push(`send at least ${ethUp(f.challengeGasCost - f.ethBalance)} ETH to ${this.me}`);
    return fixes.join(" and ");
  }

  /** A failed send: retried (funds, nonce, fee, RPC, unknown) or recorded for good with its decoded reason. */
  private async onSendError(i: IntentRow, e: PouwError, log: Logger): Promise<void> {
    const cls = classifySendFailure(e);
    const reason = describeRevert(e);
    const retryAt = this.now() + this.backoffMs(i.attempts + 1);
    const retryIn = Math.round((retryAt - this.now()) / 1000);
    switch (cls) {
      case "funds": {
        this.db.intentDeferred(i.id, `waiting for funds: ${reason}`, retryAt);
        if (this.shortfallLogged.get(roundOf(i.key)) !== reason) {
          this.shortfallLogged.set(roundOf(i.key), reason);
          log.error({ err: reason }, `CANNOT SEND ${i.kind}: ${reason}; it stays pending and is retried`);
        }
        return;
      }
      case "later":
        this.db.intentDeferred(i.id, `not yet: ${reason}`, retryAt);
        log.info({ reason, retryInS: retryIn }, "the contract says not yet; retrying");
        return;
      case "rpc":
        this.db.intentDeferred(i.id, `RPC unavailable: ${reason}`, retryAt);
        log.warn({ err: reason, retryInS: retryIn }, "intent not sent: RPC unavailable; retrying");
        throw e;
      case "nonce": {
        if (i.status === "signed" && (await this.nonceSpent(i))) {
          this.db.intentUnsigned(i.id, `nonce ${i.nonce} was used by another transaction: ${reason}`, null, false);
          log.warn({ nonce: i.nonce, txHash: i.tx_hash }, "the signed transaction's nonce was used by another transaction of this account; re-signing after reconciling");
        } else {
          this.db.intentDeferred(i.id, reason, retryAt);
          log.warn({ err: reason, retryInS: retryIn }, "nonce conflict; retrying");
        }
        return;
      }
      case "fee": {
        if (e instanceof FeeTooLowError && i.status === "signed") {
          // Same nonce, current fees: at most one of the two transactions can be mined.
          try {
            const p = JSON.parse(i.payload) as { to: Address; data: Hex };
            const signed = await signTx(this.o.clients, p.to, p.data, i.nonce!);
            this.db.intentSigned(i.id, signed.hash, signed.raw, signed.nonce);
            log.warn({ nonce: signed.nonce, txHash: signed.hash, replaced: i.tx_hash }, "fee cap below the base fee: re-signed the same nonce at current fees");
            return;
          } catch (err) {
            log.warn({ err: toChainError(err).shortMessage }, "re-signing at current fees failed; retrying");
          }
        }
        this.db.intentDeferred(i.id, reason, retryAt);
        log.warn({ err: reason, retryInS: retryIn }, "transaction underpriced; retrying");
        return;
      }
      case "mined-revert": {
        if (await this.alreadyDone(i).catch(() => false)) {
          this.db.intentDone(i.id, "superseded", `mined and reverted; already done on chain by another transaction (${reason})`);
          log.info({ txHash: i.tx_hash }, "mined and reverted, but already done on chain: superseded");
          return;
        }
        if (i.reverts + 1 >= MAX_MINED_REVERTS) {
          this.fail(i, `mined and reverted ${i.reverts + 1} times (last ${i.tx_hash})`, log);
          return;
        }
        // The nonce is spent and nothing happened: the next attempt re-estimates (a revert then is decoded) and re-signs.
        this.db.intentUnsigned(i.id, reason, retryAt, true);
        log.warn({ txHash: i.tx_hash, retryInS: retryIn }, "transaction mined and reverted; re-estimating on the next attempt");
        return;
      }
      case "permanent": {
        if (await this.alreadyDone(i).catch(() => false)) {
          this.db.intentDone(i.id, "superseded", reason);
          log.info({ reason }, "superseded: already done on chain");
          return;
        }
        if (i.kind === "challenge" && e instanceof ContractRevertError && e.errorName === "DisputeGameChallengeCommitmentExpired" && this.renewCommitment(i, retryAt, reason, log)) return;
        if (CHALLENGE_KINDS.has(i.kind) && i.job_id !== null) {
          const closed = await this.whyNotDisputable(BigInt(i.job_id)).catch(() => undefined);
          this.closeChallenge(i, closed?.refunded ? "superseded" : "failed", closed?.refunded ? closed.why : `challenge refused: ${reason}`, log);
          return;
        }
        this.fail(i, reason, log);
        return;
      }
      default:
        this.db.intentDeferred(i.id, reason, retryAt);
        log.error({ err: reason, code: e.code, retryInS: retryIn }, "intent not sent (unrecognised failure); retrying");
    }
  }

  /**
   * A challenge whose commitment expired (it waited longer than CHALLENGE_COMMITMENT_TTL_BLOCKS, e.g. for funds):
   * records a new commitChallenge intent with the same commitment (the contract renews an expired one from the current
   * block) and defers the challenge behind it. False once the round renewed MAX_COMMIT_RENEWALS times (it then fails).
   */
  private renewCommitment(i: IntentRow, retryAt: number, reason: string, log: Logger): boolean {
    const p = JSON.parse(i.payload) as { to: Address; commit?: Hex; finding?: unknown };
    if (!p.commit) return false;
    const base = i.key.replace(/^challenge:/, "commitChallenge:");
    const renewals = this.db.allIntents().filter((x) => x.key.startsWith(`${base}:renew`));
    if (renewals.some((x) => x.status === "pending" || x.status === "signed")) {
      // the renewal is not mined yet: the challenge waits for it
      this.db.intentDeferred(i.id, `challenge commitment expired: waiting for the new commitment (${reason})`, retryAt);
      return true;
    }
    const n = renewals.length + 1;
    if (n > MAX_COMMIT_RENEWALS) return false;
    this.db.tx(() => {
      this.db.addIntent({ key: `${base}:renew${n}`, kind: "commitChallenge", jobId: i.job_id ?? undefined, segment: i.segment ?? undefined, payload: { to: p.to, data: p.commit, finding: p.finding } });
      this.db.intentDeferred(i.id, `challenge commitment expired: committing again first (${reason})`, retryAt);
    });
    log.warn({ renewal: n }, "challenge commitment expired while the challenge waited: committing again, then the challenge");
    return true;
  }

  private fail(i: IntentRow, reason: string, log: Logger): void {
    this.db.intentDone(i.id, "failed", reason);
    log.error({ reason }, `${i.kind} failed: ${reason}`);
  }

  /** Whether the signed transaction of `i` can never be mined: its nonce is below the account's and its hash is unknown. */
  private async nonceSpent(i: IntentRow): Promise<boolean> {
    const pub = this.o.clients.public;
    const [count, tx] = await Promise.all([
      withRetry(() => pub.getTransactionCount({ address: this.me, blockTag: "latest" }), { what: "nonce" }),
      pub.getTransaction({ hash: i.tx_hash as Hex }).catch(() => null),
    ]);
    return tx === null && count > i.nonce!;
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
    const { clients, deployment } = this.o;
    const missing = await getMissingContracts(clients.public, deployment);
    if (missing.length > 0) {
      throw new BotConfigError(`no contract code at ${missing.join(", ")} on chain ${clients.public.chain.id}: the deployment file is stale (redeploy) or --rpc points at another chain`);
    }
    this.started = true;
    await this.scan().catch((err: unknown) => this.log.warn({ err: toChainError(err).shortMessage }, "start-up scan failed; jobs are read on the first tick"));
    const followed = this.db.jobsWithStatus("Open", "Active", "Committed", "TimedOut").sort((a, b) => Number(BigInt(b.job_id) - BigInt(a.job_id))).slice(0, STARTUP_JOB_LIMIT);
    for (const j of followed.filter((x) => x.audit_rate === null)) {
      try {
        const circuitHash = circuitJobCheck(clients.public, deployment, BigInt(j.job_id));
        this.db.setAuditRate(j.job_id, (await fetchManifest(this.o.store, j.manifest_uri, j.manifest_hash as Hex, { circuitHash })).policy.auditRate);
      } catch {
        // the manifest is fetched again (and the failure logged) when the job's first segment is sampled
      }
    }
    const funds = await getAuditorFunds(clients.public, { deployment, account: this.me, jobIds: followed.map((j) => BigInt(j.job_id)) });
    const auditRates = [...new Set(followed.map((j) => this.db.job(j.job_id)!.audit_rate).filter((r): r is number => r !== null))].sort((a, b) => a - b);
    const report: StartupReport = { auditor: this.me, funds, jobsFollowed: followed.length, auditRates, problems: [] };
    const dev = deployment.devToken;
    if (!funds.active) {
      const need = funds.minBond > funds.bond ? funds.minBond - funds.bond : funds.minBond;
      report.problems.push({
        kind: "unbonded",
        message: `auditor ${this.me} is not bonded (bond ${tokens(funds.bond)}, minimum ${tokens(funds.minBond)}): its receipts cannot be anchored and no panel can draw it`,
        fix: `pouw auditor bond ${tokens(need)}${dev ? " --mint" : ""}`,
      });
    }
    if (!deployment.disputeGame) {
      report.problems.push({ kind: "no-dispute-game", message: "the deployment has no DisputeGame: findings are recorded, never challenged", fix: "pouw deploy (a deployment with DisputeGame)" });
    } else if (funds.deposit && funds.tokenBalance < funds.deposit.amount) {
      const d = funds.deposit;
      const held = this.ownOpenDisputes();
      // a deposit out in this bot's own open dispute is not lost: it comes back (or is forfeited) at resolution
      const heldNote = held.length > 0 ? `; ${held.length === 1 ? "a deposit is" : `${held.length} deposits are`} held in this bot's open dispute${held.length === 1 ? "" : "s"} (${held.map((x) => `job ${x.jobId} step ${x.step}`).join(", ")}), returned at resolution` : "";
      report.problems.push({
        kind: "tokens",
        message: `token balance ${tokens(funds.tokenBalance)} < the deposit of one challenge ${tokens(d.amount)} (${d.jobId === undefined ? "the floor: bond minimum plus panel fees" : `job ${d.jobId}, the largest among the jobs followed`}; short ${tokens(d.amount - funds.tokenBalance)}): ${held.length > 0 ? "a further bad step found now would wait for the tokens" : "a bad step found now would not be challenged"}${heldNote}`,
        fix: this.fundingFix(d.amount, funds),
        ...(held.length > 0 ? { held: held.length } : {}),
      });
    }
    if (deployment.disputeGame) {
      const p = await this.panelShortfall();
      if (p) report.problems.push({ kind: "panel", ...p });
    }
    if (funds.ethBalance < funds.challengeGasCost) {
      report.problems.push({
        kind: "eth",
        message: `ETH ${ethDown(funds.ethBalance)} < ~${ethUp(funds.challengeGasCost)} for the gas of one approve + challenge at ${funds.maxFeePerGas} wei/gas (short ${ethUp(funds.challengeGasCost - funds.ethBalance)})`,
        fix: `send at least ${ethUp(funds.challengeGasCost - funds.ethBalance)} ETH to ${this.me}`,
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
    this.log.info(
      { event: "startup", ...summary },
      `auditor ${this.me}: bond ${summary.bond} (${funds.active ? "active" : "NOT ACTIVE"}), tokens ${summary.tokens}` +
        `${summary.deposit === null ? "" : ` for a deposit of ${summary.deposit}`}, ETH ${summary.eth} (a challenge's gas ~${summary.challengeGas}), ` +
        `following ${followed.length} job${followed.length === 1 ? "" : "s"}, audit rate ${summary.auditRates}: ${ready ? "ready" : onlyHeld ? "ready; its deposit is out in its open dispute, so a further challenge waits for tokens (see the error)" : "CANNOT ACT, see the errors"}`,
    );
    for (const p of report.problems) {
      const line = `${p.message}; fix: ${p.fix}`;
      if (warnOnly.has(p.kind)) this.log.warn({ event: "problem", problem: p.kind, fix: p.fix }, line);
      else this.log.error({ event: "problem", problem: p.kind, fix: p.fix }, line);
    }
    this.lastHeartbeat = this.now();
    return report;
  }

  /** This bot's challenges that are on chain and whose dispute it follows as not yet resolved. */
  private ownOpenDisputes(): { jobId: string; step: number }[] {
    const open = (JSON.parse(this.db.getMeta("disputes") ?? "[]") as { jobId: string; step: number; done: boolean }[]).filter((f) => !f.done);
    const mine = this.db
      .allIntents()
      .filter((i) => i.kind === "challenge" && i.status === "confirmed")
      .map((i) => (JSON.parse(i.payload) as { finding?: { jobId: string; step: number } }).finding)
      .filter((f): f is { jobId: string; step: number } => f !== undefined);
    return mine.filter((m) => open.some((o) => o.jobId === m.jobId && o.step === m.step));
  }

  /**
   * Whether a dispute this bot opens could get a panel now: DisputeGame draws panelSize members from the auditors
   * eligible at the challenge (bonded and past the activation delay), never the challenger, the provider or the buyer,
   * so a market with panelSize or fewer eligible auditors besides this one ends every dispute NoDecision.
   */
  private async panelShortfall(): Promise<{ message: string; fix: string } | undefined> {
    const { clients, deployment } = this.o;
    const { panelSize: k, activationDelaySeconds: delay, minBond, eligible } = await getPanelPool(clients.public, { deployment: { ...deployment, disputeGame: deployment.disputeGame! } });
    const others = eligible.filter((a) => getAddress(a) !== this.me).length;
    // NOTE: a job's provider and buyer are never drawn either; when they are bonded auditors a job can still fall short
    if (others >= k) return undefined;
    return {
      message: `only ${others} auditor${others === 1 ? "" : "s"} besides ${this.me} can be drawn for a panel now (bonded and past the ${delay} s activation delay); a dispute needs ${k} (the panel size; the challenger is never drawn), so a challenge would end NoDecision`,
      fix: `${k - others} more account${k - others === 1 ? "" : "s"}: pouw auditor bond ${tokens(minBond)}${deployment.devToken ? " --mint" : ""}, then wait ${delay} s`,
    };
  }

  /** Every heartbeatMs: one info line (jobs, audits, intents, balances); an error line while challenges wait for funds. */
  private async heartbeat(): Promise<void> {
    const every = this.o.heartbeatMs ?? 60_000;
    const now = this.now();
    if (every <= 0) return;
    if (this.lastHeartbeat === undefined) this.lastHeartbeat = now;
    if (now - this.lastHeartbeat < every) return;
    this.lastHeartbeat = now;
    const { clients, deployment } = this.o;
    const segs = this.db.allSegments();
    const open = this.db.openIntents();
    const waiting = open.filter((i) => i.error?.startsWith("waiting for funds"));
    const fields: Record<string, unknown> = {
      jobsFollowed: this.db.jobsWithStatus("Open", "Active", "Committed", "TimedOut").length,
      audited: segs.filter((x) => x.audit === "ok" || x.audit === "bad").length,
      failedAudits: segs.filter((x) => x.audit === "bad").length,
      pendingIntents: open.length,
      waitingForFunds: waiting.length,
      lostFindings: this.db.allIntents().filter((i) => i.kind === "challenge" && i.status === "failed").length,
    };
    try {
      const f = await getAuditorFunds(clients.public, { deployment, account: this.me });
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

  summary(): BotSummary {
    const segs = this.db.allSegments();
    return {
      auditor: this.me,
      audits: segs
        .filter((s) => s.audit === "ok" || s.audit === "bad")
        .map((s) => ({ jobId: s.job_id, segment: s.segment, ok: s.audit === "ok", firstBadStep: s.first_bad_step, costMs: s.cost_ms ?? 0, flops: s.flops ?? 0, kind: s.detail?.split(":")[0] ?? null })),
      sampledOut: segs.filter((s) => s.audit === "unsampled").length,
      screens: segs.map((s) => ({ jobId: s.job_id, segment: s.segment, screen: s.screen })),
      receipts: this.db.receipts().length,
      intents: this.db.allIntents().map((i) => ({ kind: i.kind, key: i.key, status: i.status, txHash: i.tx_hash, error: i.error })),
    };
  }
}
