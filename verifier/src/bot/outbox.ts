/**
 * The bot's outbox: the only part that sends. Every transaction the bot means to send is an intent, recorded before
 * it is signed (db.addIntent, unique by key: intent-key.ts); its signed bytes are stored before broadcast, and after a
 * restart it is either rebroadcast byte for byte or reconciled with chain state (already done by anyone ->
 * superseded). No deadline is missed for a crash, and no transaction is sent twice.
 *
 * Before a bond approval or a challenge the gate (gate.ts) decides: send, defer (funds short: the exact shortfall
 * logged at error once per round with its fix, the intent kept pending and re-checked with backoff), a prerequisite
 * sent first (the job's timeout report, a new approval), or close the round (the job can no longer be frozen: a lost
 * finding, at error). A failed send is classified (chain/errors.ts classifySendFailure): funds, allowance, nonce, fee
 * and RPC trouble are retried with backoff; a revert the contract will repeat is recorded with its decoded reason
 * (chain/describeRevert.ts) and logged; nothing fails silently. A challenge whose commitment expired while it waited
 * (DisputeGame.CHALLENGE_COMMITMENT_TTL_BLOCKS) commits again first (`commitChallenge:...:renewN`, at most
 * MAX_COMMIT_RENEWALS per round). A signed intent about a commit a reorg removed is replaced by a no-op at its nonce
 * (cancelStale), never rebroadcast.
 */
import type { Logger } from "pino";
import { zeroHash, type Address, type Hex } from "viem";
import { broadcastAndWait, classifySendFailure, ContractRevertError, describeRevert, FeeTooLowError, getJob, getKindResult, getOpening, getReceiptOf, getStakeCredit, signTx, toChainError, withRetry } from "../chain/index.ts";
import type { PouwError } from "../errors/index.ts";
import { backoffMs, type BotContext } from "./context.ts";
import type { IntentRow } from "./db.ts";
import { FINAL_STATUSES } from "./auditor.ts";
import { Gate, GATED_KINDS } from "./gate.ts";
import { formatIntentKey, parseIntentKey, ROUND_KINDS, roundOf } from "./intent-key.ts";

/** Mined-and-reverted transactions of one intent before it is recorded as failed. */
const MAX_MINED_REVERTS = 3;
/** How many times one challenge round re-sends its expired commitment (DisputeGame.CHALLENGE_COMMITMENT_TTL_BLOCKS). */
const MAX_COMMIT_RENEWALS = 3;

/** What a shortfall is logged once per: the challenge round of a gated intent, else the intent itself. */
const shortfallKey = (i: Pick<IntentRow, "kind" | "key">): string => (GATED_KINDS.has(i.kind) ? (roundOf(i.key) ?? i.key) : i.key);

export class Outbox {
  private readonly ctx: BotContext;
  private readonly gate: Gate;
  /** Per challenge round (or intent key), the last shortfall logged at error (repeated at error only when it changes). */
  private readonly shortfallLogged = new Map<string, string>();
  /** Per challenge round, the dispute it last stood down for (logged once per dispute). */
  private readonly standDownLogged = new Map<string, string>();

  /**
   * Called between two intents of a full pass (sendIntents without `kinds`): each waits for its receipt, so a pass of
   * hundreds of receipts lasts minutes, and panel duty is served in between (bot.ts dutyBetween).
   */
  private readonly yieldToDuty: () => Promise<void>;

  constructor(ctx: BotContext, gate: Gate, yieldToDuty: () => Promise<void> = async () => {}) {
    this.ctx = ctx;
    this.gate = gate;
    this.yieldToDuty = yieldToDuty;
  }

  /** Whether the intent's effect is already on chain (by anyone): then it must not be sent. */
  private async alreadyDone(i: IntentRow): Promise<boolean> {
    const { clients, deployment } = this.ctx;
    const p = JSON.parse(i.payload) as { provider?: string; nextSegment?: number };
    const own = await this.ctx.dispute.alreadyDone(i, this.ctx.me);
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
      case "recordReceipt": {
        // a receipt of a job that ended pays nothing: not sent (superseded)
        const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId: BigInt(i.job_id!) });
        if (FINAL_STATUSES.has(job.status)) return true;
        return (
          (await getReceiptOf(clients.public, { jobRecords: deployment.jobRecords, jobId: BigInt(i.job_id!), segment: i.segment!, auditor: this.ctx.me })) !== zeroHash
        );
      }
      case "requestOpening": {
        // the state's opening is on chain already (one per (job, state), asked by anyone: it serves this bot too)
        const k = parseIntentKey(i.key);
        if (k.kind !== "requestOpening" || !this.ctx.options.stepSampling) return false;
        return (await getOpening(clients.public, { stateOpenings: this.ctx.options.stepSampling.stateOpenings, jobId: k.jobId, step: k.step })).requested;
      }
      case "recordKindResult": {
        // recorded by anyone meanwhile (the provider's claim, another bot): one record per job, not sent again
        const kindRecords = deployment.kindRecords;
        return kindRecords === undefined || (await getKindResult(clients.public, { kindRecords, jobId: BigInt(i.job_id!) })) !== undefined;
      }
      case "claimStake":
        return (await getStakeCredit(clients.public, { stakeVault: deployment.stakeVault, account: this.ctx.me })) === 0n;
      default:
        return false;
    }
  }

  /**
   * Fills a gap below this account's signed transactions with no-ops. A reorg can drop a transaction whose intent is
   * already closed (a reverted send re-estimated since, a no-op that replaced a stale one): its nonce is free again, and
   * every signed transaction above it waits in the node's pool behind the gap for ever. Only nonces no open intent holds
   * are filled, each with a 0-ETH transfer to itself.
   */
  private async fillNonceGap(): Promise<void> {
    const held = this.ctx.db.openIntents().filter((i) => i.status === "signed" && i.nonce !== null).map((i) => i.nonce!);
    if (held.length === 0) return;
    const { clients } = this.ctx;
    const latest = await withRetry(() => clients.public.getTransactionCount({ address: this.ctx.me, blockTag: "latest" }), { what: "nonce" });
    const above = held.filter((n) => n >= latest);
    if (above.length === 0) return;
    const lowest = Math.min(...above);
    for (let n = latest; n < lowest; n++) {
      if (this.ctx.stopped()) return;
      // INVARIANT: a no-op is sent only at a nonce no open intent holds, so it never replaces an intent's transaction.
      if (held.includes(n)) continue;
      const noop = await signTx(clients, this.ctx.me, "0x", n);
      this.ctx.log.warn({ event: "nonce-gap", nonce: n, noop: noop.hash, waiting: above.length }, `nonce ${n} is free below this bot's signed transactions (a reorg dropped its transaction): filling it with a no-op`);
      try {
        await broadcastAndWait(clients, noop, "nonce-gap");
      } catch (err) {
        this.ctx.log.warn({ err: toChainError(err).shortMessage, nonce: n }, "the no-op filling a nonce gap was not mined; retrying on the next pass");
        return;
      }
    }
  }

  /**
   * Sends every open intent that is due, in the order they were recorded, yielding to panel duty between two; with
   * `kinds`, only the intents of those kinds, without yielding (the resolves sent during panel duty, bot.ts dutyBetween).
   */
  async sendIntents(kinds?: ReadonlySet<string>): Promise<void> {
    await this.fillNonceGap();
    for (const listed of this.ctx.db.openIntents()) {
      if (this.ctx.stopped()) return;
      if (kinds !== undefined && !kinds.has(listed.kind)) continue;
      // INVARIANT: a panel seat never waits behind a pass of receipts (each send waits for its own receipt)
      if (kinds === undefined) await this.yieldToDuty();
      // re-read: an earlier intent of this pass may have ended this one (a lost finding closes its pair)
      const i = this.ctx.db.intent(listed.id)!;
      if (i.status !== "pending" && i.status !== "signed") continue;
      if (i.retry_at !== null && i.retry_at > this.ctx.now()) continue;
      await this.sendOne(i);
    }
  }

  private intentLog(i: IntentRow): Logger {
    return this.ctx.log.child({ intent: i.key, jobId: i.job_id, segment: i.segment });
  }


  /** Sends one open intent; every outcome (sent, superseded, waiting, failed) is recorded on the row. Throws only when the RPC is down. */
  async sendOne(i: IntentRow): Promise<void> {
    const { clients } = this.ctx;
    const log = this.intentLog(i);
    try {
      if (i.status === "signed" && i.cancel !== 0) {
        await this.cancelStale(i, log);
        return;
      }
      if (i.status === "signed") {
        // Signed before a crash or a failed broadcast: rebroadcast the same bytes (a no-op if it was already mined).
        log.info({ txHash: i.tx_hash, attempt: i.attempts + 1 }, i.attempts === 0 ? "rebroadcasting a transaction signed before a restart" : "rebroadcasting a signed transaction");
        const again = await broadcastAndWait(clients, { raw: i.raw_tx as Hex, hash: i.tx_hash as Hex, nonce: i.nonce!, from: this.ctx.me }, i.kind);
        this.ctx.db.intentDone(i.id, "confirmed", undefined, { number: again.receipt.blockNumber, hash: again.receipt.blockHash });
        return;
      }
      if (await this.alreadyDone(i)) {
        if ((ROUND_KINDS as readonly string[]).includes(i.kind)) {
          // another challenger's dispute on the same step and leaf: the panel decides the same fault; a second one only costs
          const f = (JSON.parse(i.payload) as { finding?: { jobId: string; step: number } }).finding;
          this.ctx.db.intentDone(i.id, "superseded", `standing down: a challenge of the same fault (job ${f?.jobId} step ${f?.step}) is already on chain`);
          log.info({ event: "stand-down", step: f?.step }, `standing down: a challenge of the same fault (job ${f?.jobId} step ${f?.step}) is already on chain; not sending ${i.kind}`);
          return;
        }
        this.ctx.db.intentDone(i.id, "superseded", "already done on chain");
        log.info("already done on chain; not sending");
        return;
      }
      if (!(await this.passGate(i, log))) return;
      const p = JSON.parse(i.payload) as { to: Address; data: Hex };
      const signed = await signTx(clients, p.to, p.data);
      this.ctx.db.intentSigned(i.id, signed.hash, signed.raw, signed.nonce);
      log.info({ txHash: signed.hash, nonce: signed.nonce }, "intent signed; broadcasting");
      const mined = await broadcastAndWait(clients, signed, i.kind);
      this.ctx.db.intentDone(i.id, "confirmed", undefined, { number: mined.receipt.blockNumber, hash: mined.receipt.blockHash });
      this.shortfallLogged.delete(shortfallKey(i));
      // `hash` and `blockNumber` as every command's --json names a transaction (auditor run --json)
      log.info({ event: "tx", kind: i.kind, hash: signed.hash, blockNumber: mined.receipt.blockNumber.toString() }, i.kind === "challenge" ? "challenge confirmed: dispute opened" : "intent confirmed");
    } catch (err) {
      await this.onSendError(this.ctx.db.intent(i.id) ?? i, toChainError(err), log);
    }
  }


  /**
   * A signed intent about a commit a reorg removed (db.rollback marked it `cancel`): its transaction must never be mined
   * (a challenge of the removed commit reverts; a receipt anchors a root the chain no longer has). Done once its nonce
   * is spent (by it, mined on the new branch, or by anything else); otherwise a no-op (0 ETH to itself) is signed at the
   * same nonce, stored before broadcast, and sent. A node that refuses the replacement (the stale transaction still in
   * its pool at a higher fee) is retried with backoff until the nonce is spent. Nothing about the replacing commit is
   * sent under this intent: its audit records its own intents (keys tagged with its commit).
   */
  private async cancelStale(i: IntentRow, log: Logger): Promise<void> {
    const { clients } = this.ctx;
    const pub = clients.public;
    const count = await withRetry(() => pub.getTransactionCount({ address: this.ctx.me, blockTag: "latest" }), { what: "nonce" });
    if (count > i.nonce!) {
      this.ctx.db.intentDone(i.id, "superseded", `${i.error ?? "stale after a reorg"}; nonce ${i.nonce} is spent`);
      log.info({ nonce: i.nonce, txHash: i.tx_hash }, "stale transaction after a reorg: its nonce is spent, nothing to send");
      return;
    }
    let tx = { hash: i.tx_hash as Hex, raw: i.raw_tx as Hex, nonce: i.nonce!, from: this.ctx.me };
    if (i.cancel === 1) {
      tx = await signTx(clients, this.ctx.me, "0x", i.nonce!);
      this.ctx.db.intentCancelSigned(i.id, tx.hash, tx.raw);
      log.warn({ nonce: i.nonce, stale: i.tx_hash, noop: tx.hash }, "stale transaction after a reorg (its commit was removed): replacing it by a no-op at its nonce");
    }
    try {
      const mined = await broadcastAndWait(clients, tx, "cancel");
      this.ctx.db.intentDone(i.id, "superseded", `${i.error ?? "stale after a reorg"}; replaced by the no-op ${tx.hash}`, { number: mined.receipt.blockNumber, hash: mined.receipt.blockHash });
      log.info({ nonce: i.nonce, noop: tx.hash }, "stale transaction replaced by a no-op");
    } catch (err) {
      const e = toChainError(err);
      const retryAt = this.ctx.now() + backoffMs(this.ctx.options, i.attempts + 1);
      this.ctx.db.intentDeferred(i.id, `${i.error ?? "stale after a reorg"}; the no-op was not mined yet: ${describeRevert(e)}`, retryAt);
      log.warn({ err: e.shortMessage, nonce: i.nonce }, "the no-op replacing a stale transaction was not mined; retrying until its nonce is spent");
    }
  }

  /**
   * Applies the gate's decisions on `i` (gate.ts) until it says send (true) or the row records why not (false). A
   * prerequisite is recorded and sent first, each at most once per pass; the gate then decides again.
   */
  private async passGate(i: IntentRow, log: Logger): Promise<boolean> {
    const sent = new Set<string>();
    for (;;) {
      const d = await this.gate.decide(i, sent);
      switch (d.kind) {
        case "send":
          return true;
        case "defer":
          this.ctx.db.intentDeferred(i.id, d.reason, d.retryAt);
          if (d.shortfall) this.logShortfall(i, log, d.shortfall);
          if (d.standDown && this.standDownLogged.get(shortfallKey(i)) !== d.standDown.disputeId) {
            this.standDownLogged.set(shortfallKey(i), d.standDown.disputeId);
            log.info({ event: "stand-down", ...d.standDown }, `standing down while ${d.reason}`);
          }
          return false;
        case "close":
          this.closeChallenge(i, d.status, d.reason, log);
          return false;
        case "prerequisite": {
          const first = this.ctx.db.addIntent(d.intent);
          log[d.why.level](d.why.fields, d.why.message);
          sent.add(first.key);
          await this.sendOne(first);
        }
      }
    }
  }


  /**
   * Ends a challenge round (the challenge and its open approvals, pending ones only: a signed one is never dropped):
   * recorded with `reason` ("finding lost: ..." when failed), logged once at error when the finding is lost.
   */
  private closeChallenge(i: IntentRow, status: "failed" | "superseded", reason: string, log: Logger): void {
    const round = shortfallKey(i);
    const recorded = status === "failed" ? `finding lost: ${reason}` : reason;
    this.ctx.db.tx(() => {
      this.ctx.db.intentDone(i.id, status, recorded);
      for (const x of this.ctx.db.openIntents()) {
        if (x.id !== i.id && GATED_KINDS.has(x.kind) && x.status === "pending" && shortfallKey(x) === round) this.ctx.db.intentDone(x.id, status, recorded);
      }
    });
    this.shortfallLogged.delete(round);
    if (status === "failed") log.error({ event: "finding-lost", reason: recorded }, `FINDING LOST: ${reason}`);
    else log.info({ reason }, `challenge not needed: ${reason}`);
  }

  /**
   * Logs a shortfall once per challenge round and per distinct shortfall (at debug when it repeats): at error, unless
   * the tokens are short only because this bot's own deposits are out in its open disputes (info, with when they free up).
   */
  private logShortfall(i: IntentRow, log: Logger, s: { why: string; fix: string; held?: number; heldUntil?: string }): void {
    const { why, fix } = s;
    const round = shortfallKey(i);
    if (this.shortfallLogged.get(round) === why) {
      log.debug({ shortfall: why }, "still waiting for funds");
      return;
    }
    this.shortfallLogged.set(round, why);
    if (s.held) {
      log.info(
        { event: "deposit-held", shortfall: why, held: s.held, heldUntil: s.heldUntil ?? null, fix },
        `challenge waits for a deposit: ${s.held === 1 ? "this bot's deposit is" : `${s.held} deposits of this bot are`} held in its open dispute${s.held === 1 ? "" : "s"}, returned at resolution${s.heldUntil ? ` (after ${s.heldUntil})` : ""}; ${why}; to challenge sooner: ${fix}`,
      );
      return;
    }
    log.error({ event: "cannot-challenge", shortfall: why, fix }, `CANNOT CHALLENGE: ${why}; the challenge stays pending and goes out when funded: ${fix}`);
  }

  /** A failed send: retried (funds, nonce, fee, RPC, unknown) or recorded for good with its decoded reason. */
  private async onSendError(i: IntentRow, e: PouwError, log: Logger): Promise<void> {
    const cls = classifySendFailure(e);
    const reason = describeRevert(e);
    const retryAt = this.ctx.now() + backoffMs(this.ctx.options, i.attempts + 1);
    const retryIn = Math.round((retryAt - this.ctx.now()) / 1000);
    switch (cls) {
      case "funds": {
        this.ctx.db.intentDeferred(i.id, `waiting for funds: ${reason}`, retryAt);
        if (this.shortfallLogged.get(shortfallKey(i)) !== reason) {
          this.shortfallLogged.set(shortfallKey(i), reason);
          log.error({ err: reason }, `CANNOT SEND ${i.kind}: ${reason}; it stays pending and is retried`);
        }
        return;
      }
      case "later":
        this.ctx.db.intentDeferred(i.id, `not yet: ${reason}`, retryAt);
        log.info({ reason, retryInS: retryIn }, "the contract says not yet; retrying");
        return;
      case "rpc":
        this.ctx.db.intentDeferred(i.id, `RPC unavailable: ${reason}`, retryAt);
        log.warn({ err: reason, retryInS: retryIn }, "intent not sent: RPC unavailable; retrying");
        throw e;
      case "nonce": {
        if (i.status === "signed" && (await this.nonceSpent(i))) {
          this.ctx.db.intentUnsigned(i.id, `nonce ${i.nonce} was used by another transaction: ${reason}`, null, false);
          log.warn({ nonce: i.nonce, txHash: i.tx_hash }, "the signed transaction's nonce was used by another transaction of this account; re-signing after reconciling");
        } else {
          this.ctx.db.intentDeferred(i.id, reason, retryAt);
          log.warn({ err: reason, retryInS: retryIn }, "nonce conflict; retrying");
        }
        return;
      }
      case "fee": {
        if (e instanceof FeeTooLowError && i.status === "signed") {
          // Same nonce, current fees: at most one of the two transactions can be mined.
          try {
            const p = JSON.parse(i.payload) as { to: Address; data: Hex };
            const signed = await signTx(this.ctx.clients, p.to, p.data, i.nonce!);
            this.ctx.db.intentSigned(i.id, signed.hash, signed.raw, signed.nonce);
            log.warn({ nonce: signed.nonce, txHash: signed.hash, replaced: i.tx_hash }, "fee cap below the base fee: re-signed the same nonce at current fees");
            return;
          } catch (err) {
            log.warn({ err: toChainError(err).shortMessage }, "re-signing at current fees failed; retrying");
          }
        }
        this.ctx.db.intentDeferred(i.id, reason, retryAt);
        log.warn({ err: reason, retryInS: retryIn }, "transaction underpriced; retrying");
        return;
      }
      case "mined-revert": {
        if (await this.alreadyDone(i).catch(() => false)) {
          this.ctx.db.intentDone(i.id, "superseded", `mined and reverted; already done on chain by another transaction (${reason})`);
          log.info({ txHash: i.tx_hash }, "mined and reverted, but already done on chain: superseded");
          return;
        }
        if (i.reverts + 1 >= MAX_MINED_REVERTS) {
          this.fail(i, `mined and reverted ${i.reverts + 1} times (last ${i.tx_hash})`, log);
          return;
        }
        // The nonce is spent and nothing happened: the next attempt re-estimates (a revert then is decoded) and re-signs.
        this.ctx.db.intentUnsigned(i.id, reason, retryAt, true);
        log.warn({ txHash: i.tx_hash, retryInS: retryIn }, "transaction mined and reverted; re-estimating on the next attempt");
        return;
      }
      case "permanent": {
        if (await this.alreadyDone(i).catch(() => false)) {
          this.ctx.db.intentDone(i.id, "superseded", reason);
          log.info({ reason }, "superseded: already done on chain");
          return;
        }
        if (i.kind === "challenge" && e instanceof ContractRevertError && e.errorName === "DisputeGameChallengeCommitmentExpired" && this.renewCommitment(i, retryAt, reason, log)) return;
        if (GATED_KINDS.has(i.kind) && i.job_id !== null) {
          const closed = await this.gate.whyNotDisputable(BigInt(i.job_id)).catch(() => undefined);
          this.closeChallenge(i, closed?.refunded ? "superseded" : "failed", closed?.refunded ? closed.why : `challenge refused: ${reason}`, log);
          return;
        }
        this.fail(i, reason, log);
        return;
      }
      default:
        this.ctx.db.intentDeferred(i.id, reason, retryAt);
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
    const k = parseIntentKey(i.key);
    if (k.kind !== "challenge") return false;
    const base = formatIntentKey({ ...k, kind: "commitChallenge" });
    const renewals = this.ctx.db.allIntents().filter((x) => x.key.startsWith(`${base}:renew`));
    if (renewals.some((x) => x.status === "pending" || x.status === "signed")) {
      // the renewal is not mined yet: the challenge waits for it
      this.ctx.db.intentDeferred(i.id, `challenge commitment expired: waiting for the new commitment (${reason})`, retryAt);
      return true;
    }
    const n = renewals.length + 1;
    if (n > MAX_COMMIT_RENEWALS) return false;
    this.ctx.db.tx(() => {
      this.ctx.db.addIntent({ key: formatIntentKey({ ...k, kind: "commitChallenge", renew: n }), kind: "commitChallenge", jobId: i.job_id ?? undefined, segment: i.segment ?? undefined, payload: { to: p.to, data: p.commit, finding: p.finding } });
      this.ctx.db.intentDeferred(i.id, `challenge commitment expired: committing again first (${reason})`, retryAt);
    });
    log.warn({ renewal: n }, "challenge commitment expired while the challenge waited: committing again, then the challenge");
    return true;
  }

  private fail(i: IntentRow, reason: string, log: Logger): void {
    this.ctx.db.intentDone(i.id, "failed", reason);
    log.error({ reason }, `${i.kind} failed: ${reason}`);
  }

  /** Whether the signed transaction of `i` can never be mined: its nonce is below the account's and its hash is unknown. */
  private async nonceSpent(i: IntentRow): Promise<boolean> {
    const pub = this.ctx.clients.public;
    const [count, tx] = await Promise.all([
      withRetry(() => pub.getTransactionCount({ address: this.ctx.me, blockTag: "latest" }), { what: "nonce" }),
      pub.getTransaction({ hash: i.tx_hash as Hex }).catch(() => null),
    ]);
    return tx === null && count > i.nonce!;
  }

}
