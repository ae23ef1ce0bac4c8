/**
 * The challenger bot (`pouw auditor run`). One loop, woken by a contract-event subscription and by a
 * polling timer (the fallback when the subscription fails or misses):
 *
 *   1. scan   JobMarket events from the stored cursor to head - (confirmations - 1), in block chunks;
 *             events and the new cursor are stored in one SQLite transaction.
 *   2. sample each new committed segment with private randomness at the job's audit rate (manifest).
 *   3. audit  sampled segments with the check functions (checks.ts); a crash mid-audit leaves the row
 *             'running' and the audit is re-run after a restart. Content and leaves come from the store and
 *             board, local or remote (`--source`); an unreachable source postpones the audit to the next tick.
 *   4. act    clean segment -> signed EIP-712 AuditReceipt (stored, and a recordReceipt intent when JobMarket
 *             has its registries and the auditor is bonded); bad segment -> challenge intents (dispute.ts); an Active job past its
 *             deadline -> reportTimeout intent; credits -> claim intents.
 *   4b. disputes (dispute.ts) follow every DisputeGame challenge: panel draw, commit, reveal, resolve, claims.
 *   5. send   open intents in order: each is recorded before signing, its signed bytes are stored before
 *             broadcast, and after a restart it is either rebroadcast byte for byte or reconciled with
 *             chain state (already done by anyone -> superseded). No deadline is missed for a crash, and
 *             no transaction is sent twice.
 * RPC errors are retried with backoff (chain/retry.ts); a failing tick is logged and retried next tick.
 */
import type { Address, Hex } from "viem";
import { encodeFunctionData, getAddress, zeroAddress, zeroHash } from "viem";
import type { Logger } from "pino";
import {
  auditorRegistryAbi,
  broadcastAndWait,
  ContractRevertError,
  getJob,
  jobMarketAbi,
  signTx,
  stakeVaultAbi,
  toChainError,
  withRetry,
  type ChainClients,
  type Deployment,
} from "../chain/index.ts";
import { logger } from "../log/index.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import { createRun, type Run } from "../ml/index.ts";
import { checksMask, jobMarketDomain, signAuditReceipt, VERDICT } from "../receipts/index.ts";
import type { ContentStore } from "../store/index.ts";
import { recomputeCheck, type AuditVerdict, type SegmentCheck } from "./checks.ts";
import { BotDb, type IntentRow, type SegmentRow } from "./db.ts";
import { noDisputeGame, type DisputeHooks, type Finding, type IntentSpec } from "./dispute.ts";
import { isSampled, newSamplingSecret } from "./sampler.ts";

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
  /** Called after each audit (demo progress, tests). */
  onAudit?: (e: { jobId: bigint; segment: number; verdict: AuditVerdict }) => void;
  /** Called at audit start (tests kill the process here). */
  onAuditStart?: (e: { jobId: bigint; segment: number }) => void;
};

export type BotSummary = {
  auditor: Address;
  audits: { jobId: string; segment: number; ok: boolean; firstBadStep: number | null; costMs: number; flops: number; kind: string | null }[];
  sampledOut: number;
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
    this.log = logger("bot").child({ auditor: this.me });
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
    try {
      this.unwatch = clients.public.watchContractEvent({
        address: deployment.jobMarket,
        abi: jobMarketAbi,
        poll: true,
        pollingInterval: clients.pollingIntervalMs,
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
    await this.audit();
    await this.deadlines();
    await this.claims();
    await this.dispute.drive({ db: this.db, me: this.me, log: this.log, store: this.o.store, runFor: (jobId) => this.runFor(jobId) });
    await this.sendIntents();
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
      const logs = await withRetry(
        () => clients.public.getContractEvents({ address: deployment.jobMarket, abi: jobMarketAbi, fromBlock: from, toBlock: to, strict: true }),
        { what: "getLogs" },
      );
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

  private async runFor(jobId: string): Promise<Run | undefined> {
    const cached = this.runs.get(jobId);
    if (cached) return cached;
    const job = this.db.job(jobId);
    if (!job) return undefined;
    try {
      const manifest = await fetchManifest(this.o.store, job.manifest_uri, job.manifest_hash as Hex);
      const run = await createRun(manifest, { jobId: BigInt(jobId) });
      if (job.audit_rate === null) this.db.setAuditRate(jobId, manifest.policy.auditRate);
      this.runs.set(jobId, run);
      return run;
    } catch (err) {
      this.log.warn({ jobId, err: (err as Error).message }, "cannot load the job's manifest; will retry");
      return undefined;
    }
  }

  private async sample(): Promise<void> {
    for (const s of this.db.undecidedSegments()) {
      if (!(await this.runFor(s.job_id))) continue;
      const rate = this.db.job(s.job_id)!.audit_rate!;
      const sampled = isSampled(this.secret, this.o.deployment.jobMarket, BigInt(s.job_id), s.segment, rate);
      this.db.setSampled(s.job_id, s.segment, sampled);
      this.log.debug({ jobId: s.job_id, segment: s.segment, sampled }, "sampling decision");
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
        // the content or board sources could not be asked: not a verdict; the row stays 'running' and is re-run next tick
        if (!(err instanceof SourceUnavailableError)) throw err;
        this.log.warn({ jobId: s.job_id, segment: s.segment, err: err.shortMessage }, "audit postponed: a source is unavailable");
      }
    }
  }

  private async auditOne(run: Run, s: SegmentRow): Promise<void> {
    const jobId = BigInt(s.job_id);
    const log = this.log.child({ jobId: s.job_id, segment: s.segment });
    this.db.setAudit(s.job_id, s.segment, { audit: "running" });
    this.o.onAuditStart?.({ jobId, segment: s.segment });
    log.info("audit started");
    const prev = s.segment > 0 ? this.db.segment(s.job_id, s.segment - 1) : undefined;
    const target = {
      market: this.o.deployment.jobMarket,
      jobId,
      segment: s.segment,
      traceRoot: s.trace_root as Hex,
      endStateHash: s.end_state_hash as Hex,
      stateHashes: JSON.parse(s.state_hashes) as Hex[],
      checkpointCid: s.checkpoint_cid,
      prevEndStateHash: prev?.end_state_hash as Hex | undefined,
    };
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
    const finding: Finding | undefined = verdict.ok
      ? undefined
      : { market: target.market, jobId, segment: s.segment, traceRoot: target.traceRoot, endStateHash: target.endStateHash, claim: verdict.claim, kind: verdict.failure?.kind ?? "unknown" };
    // read before the transaction below (requiredBond): the audit result and its challenge intents are stored together
    const challenge = finding && this.dispute.available ? await this.dispute.challengeIntents(finding) : [];
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
    if (verdict.ok) {
      const receipt = { jobId, segment: s.segment, traceRoot: target.traceRoot, checks: checksMask(verdict.checks), sampledSteps: verdict.stepsChecked, verdict: VERDICT.ok };
      const domain = jobMarketDomain(BigInt(this.o.clients.wallet.chain.id), this.o.deployment.jobMarket);
      const signature = await signAuditReceipt(this.o.clients.account as never, domain, receipt);
      const anchored = await this.canAnchor();
      this.db.tx(() => {
        this.db.saveReceipt({ jobId: s.job_id, segment: s.segment, verdict: receipt.verdict, checks: receipt.checks, sampledSteps: receipt.sampledSteps, traceRoot: receipt.traceRoot, signature });
        if (anchored) {
          const data = encodeFunctionData({ abi: jobMarketAbi, functionName: "recordReceipt", args: [receipt, target.endStateHash, signature] });
          this.db.addIntent({ key: `receipt:${s.job_id}:${s.segment}`, kind: "recordReceipt", jobId: s.job_id, segment: s.segment, payload: { to: this.o.deployment.jobMarket, data } });
        }
      });
      log.info({ costMs: Math.round(costMs), anchored }, anchored ? "audit ok; receipt signed, recordReceipt queued" : "audit ok; receipt signed (JobMarket has no registries: not anchored)");
    } else {
      log.warn({ firstBadStep: verdict.firstBadStep, kind: verdict.failure?.kind }, "audit FAILED");
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
      const [auditors] = await withRetry(() => clients.public.readContract({ address: deployment.jobMarket, abi: jobMarketAbi, functionName: "registries" }), { what: "registries" });
      if (auditors === zeroAddress) return false;
      this.db.setMeta("registriesSet", "1");
    }
    return withRetry(() => clients.public.readContract({ address: deployment.auditorRegistry, abi: auditorRegistryAbi, functionName: "isActive", args: [this.me] }), { what: "isActive" });
  }

  private onFinding(f: Finding, intents: IntentSpec[]): void {
    const fields = { jobId: f.jobId.toString(), segment: f.segment, step: f.claim?.step };
    if (!this.dispute.available) {
      this.log.warn(fields, "finding recorded (no DisputeGame deployed: nothing to challenge with)");
      return;
    }
    if (intents.length === 0) {
      this.log.warn(fields, f.claim ? "finding recorded (the job already has an open dispute)" : "finding recorded (no step claim: nothing a challenge can prove)");
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
    const active = this.db.jobsWithStatus("Active", "Committed");
    if (active.length === 0) return;
    const block = await withRetry(() => clients.public.getBlock({ blockTag: "latest" }), { what: "getBlock" });
    for (const j of active) {
      const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(j.job_id) });
      if (job.status !== j.status) this.db.setJobStatus(j.job_id, job.status);
      if (job.status === "Active" && job.openDisputes === 0 && block.timestamp > BigInt(job.deadline)) {
        const data = encodeFunctionData({ abi: jobMarketAbi, functionName: "reportTimeout", args: [job.jobId] });
        this.db.addIntent({
          key: `reportTimeout:${j.job_id}:${job.provider}:${job.nextSegment}`,
          kind: "reportTimeout",
          jobId: j.job_id,
          payload: { to: deployment.jobMarket, data, provider: job.provider, nextSegment: job.nextSegment },
        });
      }
    }
  }

  private async claims(): Promise<void> {
    const { clients, deployment } = this.o;
    if (this.db.openIntents().some((i) => i.kind === "claimStake")) return;
    const credit = await withRetry(() => clients.public.readContract({ address: deployment.stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [this.me] }), { what: "creditOf" });
    if (credit === 0n) return;
    const n = this.db.allIntents().filter((i) => i.kind === "claimStake").length;
    this.db.addIntent({ key: `claimStake:${n}`, kind: "claimStake", payload: { to: deployment.stakeVault, data: encodeFunctionData({ abi: stakeVaultAbi, functionName: "claim" }) } });
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
      case "recordReceipt":
        return (
          (await clients.public.readContract({ address: deployment.jobMarket, abi: jobMarketAbi, functionName: "receiptOf", args: [BigInt(i.job_id!), BigInt(i.segment!), this.me] })) !== zeroHash
        );
      case "claimStake":
        return (await clients.public.readContract({ address: deployment.stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [this.me] })) === 0n;
      default:
        return false;
    }
  }

  private async sendIntents(): Promise<void> {
    const { clients } = this.o;
    for (const i of this.db.openIntents()) {
      if (this.stopped) return;
      const log = this.log.child({ intent: i.key, jobId: i.job_id, segment: i.segment });
      try {
        if (i.status === "signed") {
          // Signed before a crash: rebroadcast the same bytes (a no-op if it was already mined).
          log.info({ txHash: i.tx_hash }, "rebroadcasting a transaction signed before a restart");
          await broadcastAndWait(clients, { raw: i.raw_tx as Hex, hash: i.tx_hash as Hex, nonce: i.nonce!, from: this.me }, i.kind);
          this.db.intentDone(i.id, "confirmed");
          continue;
        }
        if (await this.alreadyDone(i)) {
          this.db.intentDone(i.id, "superseded");
          log.info("already done on chain; not sending");
          continue;
        }
        const p = JSON.parse(i.payload) as { to: Address; data: Hex };
        const signed = await signTx(clients, p.to, p.data);
        this.db.intentSigned(i.id, signed.hash, signed.raw, signed.nonce);
        log.info({ txHash: signed.hash, nonce: signed.nonce }, "intent signed; broadcasting");
        await broadcastAndWait(clients, signed, i.kind);
        this.db.intentDone(i.id, "confirmed");
        log.info({ txHash: signed.hash }, "intent confirmed");
      } catch (err) {
        const e = toChainError(err);
        if (e instanceof ContractRevertError) {
          const done = await this.alreadyDone(i).catch(() => false);
          this.db.intentDone(i.id, done ? "superseded" : "failed", e.shortMessage);
          log.warn({ err: e.shortMessage }, done ? "superseded" : "intent failed");
        } else {
          log.warn({ err: e.shortMessage }, "intent not sent; retrying next tick");
          throw e;
        }
      }
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
      receipts: this.db.receipts().length,
      intents: this.db.allIntents().map((i) => ({ kind: i.kind, key: i.key, status: i.status, txHash: i.tx_hash, error: i.error })),
    };
  }
}
