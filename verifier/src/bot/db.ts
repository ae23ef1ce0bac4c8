/**
 * The challenger bot's persistent state (SQLite via node:sqlite, built into Node 22). Everything the bot must not forget
 * across a crash lives here:
 *   meta      scan cursor (last block whose events are stored) and the private sampling secret
 *   jobs      jobs seen (manifest URI, audit rate once the manifest is read, provider, status): read as `BotJob`
 *   segments  committed segments, the sampling decision and the audit result: read as `CommittedSegment`
 *   intents   every transaction the bot means to send, recorded BEFORE it is signed; the signed bytes
 *             and hash are stored before broadcast, so a restart rebroadcasts the same transaction
 *             instead of sending a second one. An intent that cannot go out yet (funds short, RPC down, a fee
 *             or nonce problem) stays 'pending' with the reason in `error`, `attempts` counted and `retry_at`
 *             (ms since the epoch) set by the backoff; a terminal 'failed' always carries the decoded reason.
 *   receipts  signed EIP-712 audit receipts
 *   blocks    the hash of each block the indexer may have to check against the chain (the end of each scanned range,
 *             every block that carried an event, every block an own transaction was mined in), within the reorg depth
 *   events    every JobMarket event stored (block, log index, job, name): what a rollback removes and re-reads
 * Events and the cursor are written in one SQLite transaction: a crash never skips or repeats a block range.
 */
import type { DatabaseSync } from "node:sqlite";
import type { Address, Hex } from "viem";
import type { SegmentCommitment } from "../checks/segment.ts";
import { openBotDatabase } from "./db-schema.ts";

export type AuditStatus = "unsampled" | "pending" | "running" | "ok" | "bad" | "error";
export type IntentStatus = "pending" | "signed" | "confirmed" | "superseded" | "failed";

/** A committed segment as the bot knows it: the SegmentCommitted event, the sampling decision, screen and audit. */
export type CommittedSegment = {
  jobId: bigint;
  segment: number;
  traceRoot: Hex;
  endStateHash: Hex;
  /** The segment's K+1 state hashes, from the SegmentCommitted event (on-chain leaves). */
  stateHashes: readonly Hex[];
  checkpointCid: string;
  lossE6: bigint;
  /** The block of the SegmentCommitted event. */
  block: bigint;
  /** That block's hash (null in a row recorded before it was kept): what the commit's intent keys are tagged with. */
  blockHash: Hex | null;
  /** null: not decided yet. */
  sampled: boolean | null;
  audit: AuditStatus;
  firstBadStep: number | null;
  costMs: number | null;
  flops: number | null;
  detail: string | null;
  /** The state screen of the segment's start checkpoint: null not yet, "ok", "bad: <kind>: <message>", or "error: <why it could not run>". */
  screen: string | null;
  /** Chain time (s) of the first failure to fetch the segment's content from any source; null while none is open. */
  unavailableSince: number | null;
};

/** A job as the bot knows it (JobCreated, then status changes). */
export type BotJob = {
  jobId: bigint;
  buyer: Address;
  manifestUri: string;
  manifestHash: Hex;
  segments: number;
  stepsPerSegment: number;
  /** The manifest's audit rate, once the manifest is read. */
  auditRate: number | null;
  provider: Address | null;
  status: string;
};

/** A job id: bot/dispute/ still passes the decimal string. */
export type JobIdLike = bigint | string;

type SegmentRecord = {
  job_id: string;
  segment: number;
  trace_root: string;
  end_state_hash: string;
  state_hashes: string;
  checkpoint_cid: string;
  loss_e6: string;
  block: string;
  block_hash: string | null;
  sampled: number | null;
  audit: AuditStatus;
  first_bad_step: number | null;
  cost_ms: number | null;
  flops: number | null;
  detail: string | null;
  screen: string | null;
  unavailable_since: number | null;
};

type JobRecord = {
  job_id: string;
  buyer: string;
  manifest_uri: string;
  manifest_hash: string;
  segments: number;
  steps_per_segment: number;
  audit_rate: number | null;
  provider: string | null;
  status: string;
};

const segmentOf = (r: SegmentRecord): CommittedSegment => ({
  jobId: BigInt(r.job_id),
  segment: r.segment,
  traceRoot: r.trace_root as Hex,
  endStateHash: r.end_state_hash as Hex,
  stateHashes: JSON.parse(r.state_hashes) as Hex[],
  checkpointCid: r.checkpoint_cid,
  lossE6: BigInt(r.loss_e6),
  block: BigInt(r.block),
  blockHash: (r.block_hash ?? null) as Hex | null,
  sampled: r.sampled === null ? null : r.sampled === 1,
  audit: r.audit,
  firstBadStep: r.first_bad_step,
  costMs: r.cost_ms,
  flops: r.flops,
  detail: r.detail,
  screen: r.screen,
  unavailableSince: r.unavailable_since,
});

const jobOf = (r: JobRecord): BotJob => ({
  jobId: BigInt(r.job_id),
  buyer: r.buyer as Address,
  manifestUri: r.manifest_uri,
  manifestHash: r.manifest_hash as Hex,
  segments: r.segments,
  stepsPerSegment: r.steps_per_segment,
  auditRate: r.audit_rate,
  provider: r.provider as Address | null,
  status: r.status,
});

const id = (jobId: JobIdLike) => jobId.toString();

export type IntentRow = {
  id: number;
  key: string;
  kind: string;
  job_id: string | null;
  segment: number | null;
  payload: string;
  status: IntentStatus;
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  /** Latest reason: why a pending intent waits, or why it failed / was superseded. */
  error: string | null;
  created_at: number;
  updated_at: number;
  /** Attempts that did not go through (deferrals and retried failures). */
  attempts: number;
  /** Not before this time (ms since the epoch); null: on the next tick. */
  retry_at: number | null;
  /** Times a transaction of this intent was mined and reverted (each re-estimated and re-signed). */
  reverts: number;
  /** The block a confirmed intent's transaction was mined in (a reorg past it sends the same bytes again). */
  mined_block: number | null;
  /**
   * 0, or a signed intent whose target a reorg removed (its commit is gone): 1 its transaction must never be mined
   * (the outbox replaces it by a no-op at its nonce), 2 that no-op is signed (raw_tx/tx_hash are the no-op's).
   */
  cancel: number;
};

/** Intent kinds about one commit of a (job, segment): a reorg that removes the commit makes them stale. */
export const COMMIT_KINDS = ["approveBond", "commitChallenge", "challenge", "recordReceipt"] as const;
const COMMIT_KINDS_SQL = COMMIT_KINDS.map((k) => `'${k}'`).join(", ");

export class BotDb {
  readonly db: DatabaseSync;

  constructor(path: string) {
    this.db = openBotDatabase(path);
  }

  close(): void {
    this.db.close();
  }

  getMeta(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  /** Runs `fn` in one SQLite transaction. */
  tx<T>(fn: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const r = fn();
      this.db.exec("COMMIT");
      return r;
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
  }

  /** Records a job once (JobCreated); a later call for the same job changes nothing. */
  upsertJob(j: Omit<BotJob, "auditRate" | "provider"> & { provider?: Address | null }): void {
    this.db
      .prepare(
        `INSERT INTO jobs (job_id, buyer, manifest_uri, manifest_hash, segments, steps_per_segment, provider, status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(job_id) DO NOTHING`,
      )
      .run(id(j.jobId), j.buyer, j.manifestUri, j.manifestHash, j.segments, j.stepsPerSegment, j.provider ?? null, j.status);
  }

  setJobStatus(jobId: JobIdLike, status: string, provider?: Address | null): void {
    if (provider === undefined) this.db.prepare("UPDATE jobs SET status = ? WHERE job_id = ?").run(status, id(jobId));
    else this.db.prepare("UPDATE jobs SET status = ?, provider = ? WHERE job_id = ?").run(status, provider, id(jobId));
  }

  setAuditRate(jobId: JobIdLike, rate: number): void {
    this.db.prepare("UPDATE jobs SET audit_rate = ? WHERE job_id = ?").run(rate, id(jobId));
  }

  job(jobId: JobIdLike): BotJob | undefined {
    const r = this.db.prepare("SELECT * FROM jobs WHERE job_id = ?").get(id(jobId)) as JobRecord | undefined;
    return r && jobOf(r);
  }

  jobsWithStatus(...statuses: string[]): BotJob[] {
    return (this.db.prepare(`SELECT * FROM jobs WHERE status IN (${statuses.map(() => "?").join(",")})`).all(...statuses) as JobRecord[]).map(jobOf);
  }

  /** Records a committed segment once (SegmentCommitted). */
  insertSegment(s: Pick<CommittedSegment, "jobId" | "segment" | "traceRoot" | "endStateHash" | "stateHashes" | "checkpointCid" | "lossE6" | "block"> & { blockHash?: Hex | null }): void {
    this.db
      .prepare(
        `INSERT INTO segments (job_id, segment, trace_root, end_state_hash, state_hashes, checkpoint_cid, loss_e6, block, block_hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(id(s.jobId), s.segment, s.traceRoot, s.endStateHash, JSON.stringify(s.stateHashes), s.checkpointCid, s.lossE6.toString(), s.block.toString(), s.blockHash ?? null);
  }

  segment(jobId: JobIdLike, segment: number): CommittedSegment | undefined {
    const r = this.db.prepare("SELECT * FROM segments WHERE job_id = ? AND segment = ?").get(id(jobId), segment) as SegmentRecord | undefined;
    return r && segmentOf(r);
  }

  segmentsOf(jobId: JobIdLike): CommittedSegment[] {
    return (this.db.prepare("SELECT * FROM segments WHERE job_id = ? ORDER BY segment").all(id(jobId)) as SegmentRecord[]).map(segmentOf);
  }

  undecidedSegments(): CommittedSegment[] {
    return (this.db.prepare("SELECT * FROM segments WHERE sampled IS NULL ORDER BY CAST(block AS INTEGER), job_id, segment").all() as SegmentRecord[]).map(segmentOf);
  }

  setSampled(jobId: JobIdLike, segment: number, sampled: boolean): void {
    this.db.prepare("UPDATE segments SET sampled = ?, audit = ? WHERE job_id = ? AND segment = ?").run(sampled ? 1 : 0, sampled ? "pending" : "unsampled", id(jobId), segment);
  }

  /**
   * The on-chain commitments of segments 0..upTo of a job, as the audit pipeline takes them (checks/segment.ts), or
   * undefined when one of them is not in the database.
   */
  commitments(jobId: JobIdLike, upTo: number): SegmentCommitment[] | undefined {
    const out: SegmentCommitment[] = [];
    for (let i = 0; i <= upTo; i++) {
      const s = this.segment(jobId, i);
      if (!s) return undefined;
      out.push({ index: i, traceRoot: s.traceRoot, checkpointCid: s.checkpointCid, stateHashes: [...s.stateHashes] });
    }
    return out;
  }

  /** Segments whose start checkpoint has not been screened yet (every committed segment is, sampled or not). */
  unscreenedSegments(): CommittedSegment[] {
    return (this.db.prepare("SELECT * FROM segments WHERE screen IS NULL ORDER BY CAST(job_id AS INTEGER), segment").all() as SegmentRecord[]).map(segmentOf);
  }

  setScreen(jobId: JobIdLike, segment: number, screen: string): void {
    this.db.prepare("UPDATE segments SET screen = ? WHERE job_id = ? AND segment = ?").run(screen, id(jobId), segment);
  }

  /**
   * Audits a segment the sampler skipped (a screen failure points at it): sampled, audit pending. A segment already
   * audited (or being audited) is left as it is; returns whether this call queued it.
   */
  forceAudit(jobId: JobIdLike, segment: number): boolean {
    return this.db.prepare("UPDATE segments SET sampled = 1, audit = 'pending' WHERE job_id = ? AND segment = ? AND audit = 'unsampled'").run(id(jobId), segment).changes > 0;
  }

  /**
   * Records that the segment's content could not be fetched from any source at chain time `nowS` (seconds), unless an
   * earlier failure is already recorded; returns the first failure's time (the start of the provider's grace period).
   */
  markUnavailable(jobId: JobIdLike, segment: number, nowS: number): number {
    this.db.prepare("UPDATE segments SET unavailable_since = ? WHERE job_id = ? AND segment = ? AND unavailable_since IS NULL").run(nowS, id(jobId), segment);
    return (this.db.prepare("SELECT unavailable_since FROM segments WHERE job_id = ? AND segment = ?").get(id(jobId), segment) as { unavailable_since: number }).unavailable_since;
  }

  /** The segment's content was fetched: a later outage starts a new grace period. */
  clearUnavailable(jobId: JobIdLike, segment: number): void {
    this.db.prepare("UPDATE segments SET unavailable_since = NULL WHERE job_id = ? AND segment = ? AND unavailable_since IS NOT NULL").run(id(jobId), segment);
  }

  /** Audits to (re)run: pending ones and any left 'running' by a crash. */
  auditsToRun(): CommittedSegment[] {
    return (this.db.prepare("SELECT * FROM segments WHERE audit IN ('pending', 'running') ORDER BY CAST(block AS INTEGER), job_id, segment").all() as SegmentRecord[]).map(segmentOf);
  }

  setAudit(jobId: JobIdLike, segment: number, r: { audit: AuditStatus; firstBadStep?: number | null; costMs?: number; flops?: number; detail?: string }): void {
    this.db
      .prepare("UPDATE segments SET audit = ?, first_bad_step = ?, cost_ms = ?, flops = ?, detail = ? WHERE job_id = ? AND segment = ?")
      .run(r.audit, r.firstBadStep ?? null, r.costMs ?? null, r.flops ?? null, r.detail ?? null, id(jobId), segment);
  }

  allSegments(): CommittedSegment[] {
    return (this.db.prepare("SELECT * FROM segments ORDER BY CAST(job_id AS INTEGER), segment").all() as SegmentRecord[]).map(segmentOf);
  }

  /** A stale intent's no-op replacement is signed (cancel 2): its bytes are kept so a restart rebroadcasts the same no-op. */
  intentCancelSigned(id: number, txHash: string, raw: string): void {
    this.db.prepare("UPDATE intents SET cancel = 2, tx_hash = ?, raw_tx = ?, updated_at = ? WHERE id = ?").run(txHash, raw, Date.now(), id);
  }

  /** Records an intent once (by key). Returns the row (existing or new). */
  addIntent(i: { key: string; kind: string; jobId?: string; segment?: number; payload: unknown }): IntentRow {
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO intents (key, kind, job_id, segment, payload, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT(key) DO NOTHING`,
      )
      .run(i.key, i.kind, i.jobId ?? null, i.segment ?? null, JSON.stringify(i.payload, (_k, v) => (typeof v === "bigint" ? v.toString() : v)), now, now);
    return this.db.prepare("SELECT * FROM intents WHERE key = ?").get(i.key) as IntentRow;
  }

  hasIntent(key: string): boolean {
    return this.db.prepare("SELECT 1 FROM intents WHERE key = ?").get(key) !== undefined;
  }

  openIntents(): IntentRow[] {
    return this.db.prepare("SELECT * FROM intents WHERE status IN ('pending', 'signed') ORDER BY id").all() as IntentRow[];
  }

  allIntents(): IntentRow[] {
    return this.db.prepare("SELECT * FROM intents ORDER BY id").all() as IntentRow[];
  }

  intentSigned(id: number, txHash: string, raw: string, nonce: number): void {
    this.db.prepare("UPDATE intents SET status = 'signed', tx_hash = ?, raw_tx = ?, nonce = ?, retry_at = NULL, updated_at = ? WHERE id = ?").run(txHash, raw, nonce, Date.now(), id);
  }

  /**
   * A finished intent; `mined` (a confirmed one's block) is kept with the intent and its hash among the recorded blocks,
   * so the indexer's reorg check covers it even above its cursor.
   */
  intentDone(id: number, status: "confirmed" | "superseded" | "failed", error?: string, mined?: { number: bigint; hash: Hex }): void {
    const done = () => this.db.prepare("UPDATE intents SET status = ?, error = ?, retry_at = NULL, mined_block = ?, updated_at = ? WHERE id = ?").run(status, error ?? null, mined?.number ?? null, Date.now(), id);
    if (!mined) {
      done(); // NOTE: callable inside a caller's transaction (no BEGIN of its own)
      return;
    }
    this.tx(() => {
      done();
      this.setBlockHash(mined.number, mined.hash);
    });
  }

  intent(id: number): IntentRow | undefined {
    return this.db.prepare("SELECT * FROM intents WHERE id = ?").get(id) as IntentRow | undefined;
  }

  intentByKey(key: string): IntentRow | undefined {
    return this.db.prepare("SELECT * FROM intents WHERE key = ?").get(key) as IntentRow | undefined;
  }

  /**
   * The intent stays as it is (pending, or signed with its bytes kept) and waits: `reason` recorded, one more attempt
   * counted, not retried before `retryAt` (ms since the epoch; null: next tick).
   */
  intentDeferred(id: number, reason: string, retryAt: number | null): void {
    this.db.prepare("UPDATE intents SET error = ?, attempts = attempts + 1, retry_at = ?, updated_at = ? WHERE id = ?").run(reason, retryAt, Date.now(), id);
  }

  /**
   * A signed intent whose transaction can never take effect (its nonce was spent by another transaction, or it was
   * mined and reverted) goes back to 'pending' without its bytes: it is reconciled and re-signed on a later attempt.
   * IMPORTANT: only for a transaction that provably cannot be mined any more, or a second one could be sent.
   */
  intentUnsigned(id: number, reason: string, retryAt: number | null, minedRevert: boolean): void {
    this.db
      .prepare(
        "UPDATE intents SET status = 'pending', tx_hash = NULL, raw_tx = NULL, nonce = NULL, error = ?, attempts = attempts + 1, reverts = reverts + ?, retry_at = ?, updated_at = ? WHERE id = ?",
      )
      .run(reason, minedRevert ? 1 : 0, retryAt, Date.now(), id);
  }

  // ------------------------------------------------------------------ block hashes and rollback

  /** Records the hash of processed block `number` (the same number twice keeps the later hash). */
  setBlockHash(number: bigint, hash: Hex): void {
    this.db.prepare("INSERT INTO blocks (number, hash) VALUES (?, ?) ON CONFLICT(number) DO UPDATE SET hash = excluded.hash").run(number, hash);
  }

  blockHash(number: bigint): Hex | undefined {
    return (this.db.prepare("SELECT hash FROM blocks WHERE number = ?").get(number) as { hash: Hex } | undefined)?.hash;
  }

  /** Recorded blocks at or below `atMost`, newest first, at most `limit` of them: the candidates for a common ancestor. */
  recordedBlocks(atMost: bigint, limit: number): { number: bigint; hash: Hex }[] {
    return (this.db.prepare("SELECT number, hash FROM blocks WHERE number <= ? ORDER BY number DESC LIMIT ?").all(atMost, limit) as { number: number | bigint; hash: Hex }[]).map((r) => ({
      number: BigInt(r.number),
      hash: r.hash,
    }));
  }

  /** Forgets recorded hashes below `number` (older than the reorg depth). */
  pruneBlocks(number: bigint): void {
    this.db.prepare("DELETE FROM blocks WHERE number < ?").run(number);
  }

  /** Records a stored event (a rollback removes what came from orphaned blocks). */
  recordEvent(e: { block: bigint; logIndex: number; jobId: bigint | null; name: string }): void {
    this.db.prepare("INSERT INTO events (block, log_index, job_id, name) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").run(e.block, e.logIndex, e.jobId === null ? null : e.jobId.toString(), e.name);
  }

  /**
   * Rolls the database back to block `ancestor` (the last block still canonical): removes the events, segment commits
   * (with their sampling, screens and audits), their receipts and never-signed intents, jobs created in those blocks, and
   * the blocks' hashes; a confirmed intent mined in those blocks goes back to 'signed' (rebroadcast byte for byte), except
   * one about a removed commit, which is marked `cancel` (replaced by a no-op, never mined); the disputes followed from
   * those blocks are forgotten; the cursor and the dispute cursor go back to `ancestor` if they are above it. Returns the surviving jobs an orphaned event touched: their status came
   * from a block that is gone and must be read again. One SQLite transaction.
   */
  rollback(ancestor: bigint): bigint[] {
    return this.tx(() => {
      const orphaned = this.db.prepare("SELECT DISTINCT job_id, name FROM events WHERE block > ? AND job_id IS NOT NULL").all(ancestor) as { job_id: string; name: string }[];
      const created = new Set(orphaned.filter((e) => e.name === "JobCreated").map((e) => e.job_id));
      const segmentsGone = this.db.prepare("SELECT job_id, segment FROM segments WHERE CAST(block AS INTEGER) > ?").all(ancestor) as { job_id: string; segment: number }[];
      for (const s of segmentsGone) {
        this.db.prepare("DELETE FROM receipts WHERE job_id = ? AND segment = ?").run(s.job_id, s.segment);
        // an intent never signed sent nothing: the replacing commit's audit records its own, under its own keys
        this.db.prepare(`DELETE FROM intents WHERE job_id = ? AND segment = ? AND kind IN (${COMMIT_KINDS_SQL}) AND status = 'pending' AND tx_hash IS NULL`).run(s.job_id, s.segment);
      }
      this.db.prepare("DELETE FROM segments WHERE CAST(block AS INTEGER) > ?").run(ancestor);
      for (const j of created) {
        this.db.prepare("DELETE FROM receipts WHERE job_id = ?").run(j);
        this.db.prepare("DELETE FROM segments WHERE job_id = ?").run(j);
        this.db.prepare("DELETE FROM jobs WHERE job_id = ?").run(j);
      }
      // a confirmed transaction mined in an orphaned block is not on chain any more: back to 'signed' with the same bytes,
      // so the outbox rebroadcasts exactly that transaction (same nonce: it can never be sent twice) and re-classifies
      // what happens (its nonce taken by another -> re-evaluated and re-signed; reverted -> already done by anyone?)
      this.db
        .prepare("UPDATE intents SET status = 'signed', mined_block = NULL, error = ?, retry_at = NULL, updated_at = ? WHERE status = 'confirmed' AND mined_block > ? AND raw_tx IS NOT NULL")
        .run(`its block was orphaned by a reorg (rolled back to block ${ancestor}): rebroadcasting the same signed transaction`, Date.now(), ancestor);
      // INVARIANT: a signed transaction about a commit the reorg removed (its challenge names that commit's root and
      // leaves; its receipt that commit's root) is never mined on the new branch: it would revert, or leave the replacing
      // commit unchallenged behind its key. Marked for the outbox, which replaces it by a no-op at its nonce.
      for (const s of segmentsGone) {
        this.db
          .prepare(`UPDATE intents SET cancel = 1, error = ?, retry_at = NULL, updated_at = ? WHERE job_id = ? AND segment = ? AND kind IN (${COMMIT_KINDS_SQL}) AND status = 'signed' AND cancel = 0`)
          .run(`stale: the commit of segment ${s.segment} it is about was removed by a reorg (rolled back to block ${ancestor}): replacing it by a no-op at its nonce`, Date.now(), s.job_id, s.segment);
      }
      // the dispute follower (dispute/index.ts) forgets the disputes it read from orphaned blocks and reads again from the ancestor:
      // a dispute id is resolved against the chain, never kept from a removed block
      const followed = JSON.parse(this.getMeta("disputes") ?? "[]") as { block?: string }[];
      this.setMeta("disputes", JSON.stringify(followed.filter((f) => f.block === undefined || BigInt(f.block) <= ancestor)));
      const disputeCursor = this.getMeta("disputeCursor");
      if (disputeCursor !== undefined && BigInt(disputeCursor) > ancestor) this.setMeta("disputeCursor", ancestor.toString());
      this.db.prepare("DELETE FROM events WHERE block > ?").run(ancestor);
      this.db.prepare("DELETE FROM blocks WHERE number > ?").run(ancestor);
      // the cursor never moves forward here: blocks above it (an own transaction's) were never scanned
      const cursor = this.getMeta("cursor");
      if (cursor === undefined || BigInt(cursor) > ancestor) this.setMeta("cursor", ancestor.toString());
      return [...new Set(orphaned.map((e) => e.job_id))].filter((j) => !created.has(j)).map((j) => BigInt(j));
    });
  }

  saveReceipt(r: { jobId: string; segment: number; verdict: number; checks: number; sampledSteps: number; traceRoot: string; signature: string }): void {
    this.db
      .prepare("INSERT INTO receipts (job_id, segment, verdict, checks, sampled_steps, trace_root, signature) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .run(r.jobId, r.segment, r.verdict, r.checks, r.sampledSteps, r.traceRoot, r.signature);
  }

  receipts(): { job_id: string; segment: number; verdict: number; signature: string }[] {
    return this.db.prepare("SELECT * FROM receipts ORDER BY CAST(job_id AS INTEGER), segment").all() as never;
  }
}
