/**
 * The bot's indexer: JobMarket events -> the database. One head read per tick; when the head's hash is the one the last
 * scan saw, nothing else is read (an idle chain costs one request a tick). Otherwise it checks that the last processed
 * block is still canonical, rolls back past a reorg, and scans from the stored cursor to head - (confirmations - 1), in
 * block chunks; the events of a chunk, the hashes of its blocks and the new cursor are stored in one SQLite transaction,
 * so a crash never skips or repeats a block range.
 *
 * Reorgs: the hash of every processed block that carried an event and of the last block of each scanned range is
 * recorded (db `blocks`, the last `reorgDepth` blocks). When the cursor's block hash differs from the chain's, the
 * recorded blocks are compared newest first; the first that still matches is the common ancestor: everything recorded
 * from later blocks is rolled back (db.rollback: events, segment commits with their audits, receipts, never-signed
 * intents, jobs created there; signed intents about a removed commit marked to be replaced by a no-op; the disputes
 * followed from those blocks) and re-indexed, so a commit that replaced an audited one is a new commit, audited again
 * and acted on under its own intent keys (tagged with its block hash: intent-key.ts).
 */
import { committedLogKey, getBlockRef, getJob, getMarketLogs, resolveCommittedLeaves, type BlockRef, type MarketLog } from "../chain/index.ts";
import type { Hex } from "viem";
import { PouwError } from "../errors/index.ts";
import type { BotContext } from "./context.ts";

/** Blocks back the indexer can roll back by default (BotOptions.reorgDepth). */
export const DEFAULT_REORG_DEPTH = 64;

/** A reorg reached below every block hash the bot kept: its database cannot be rolled back safely. */
export class ReorgTooDeepError extends PouwError {
  override name = "ReorgTooDeepError";
  override readonly code: string = "REORG_TOO_DEEP";
}

/** What one scan saw: the head, whether it moved since the last scan, and the jobs whose events (or rollback) it stored. */
export type ScanResult = {
  head: BlockRef;
  /** false: the head is the block the previous scan saw (no new block, no reorg): nothing was read but the head. */
  moved: boolean;
  /** Jobs with an event stored by this scan, or whose stored state a rollback removed. */
  touched: ReadonlySet<bigint>;
  /** Blocks rolled back by this scan (0: no reorg). */
  rolledBack: number;
};

export class Indexer {
  private readonly ctx: BotContext;
  private lastHead: string | undefined;
  /** Reorgs seen (each rolled back) since start (metrics, tests). */
  reorgs = 0;
  /** Blocks rolled back since start, over every reorg (metrics). */
  rolledBackBlocks = 0;

  constructor(ctx: BotContext) {
    this.ctx = ctx;
  }

  private get depth(): number {
    return this.ctx.options.reorgDepth ?? DEFAULT_REORG_DEPTH;
  }

  /** Stores every event up to the confirmed head, first rolling back a reorg of processed blocks. */
  async scan(): Promise<ScanResult> {
    const { clients, deployment, db, options } = this.ctx;
    const head = await getBlockRef(clients.public);
    const touched = new Set<bigint>();
    if (head.hash === this.lastHead) return { head, moved: false, touched, rolledBack: 0 };
    const rolledBack = await this.checkCanonical(head, touched);
    const safe = head.number - BigInt(clients.confirmations - 1);
    let from = BigInt(db.getMeta("cursor") ?? (BigInt(deployment.startBlock) - 1n).toString()) + 1n;
    const chunk = BigInt(options.scanChunk ?? 2_000);
    while (from <= safe) {
      const to = from + chunk - 1n < safe ? from + chunk - 1n : safe;
      const end = to === head.number ? head : await getBlockRef(clients.public, { blockNumber: to });
      const logs = await getMarketLogs(clients.public, { jobMarket: deployment.jobMarket, fromBlock: from, toBlock: to });
      // the leaves of each commit (its SegmentLeaves event or its transaction's input, checked against the root), read
      // before the range's one database transaction
      const leaves = await resolveCommittedLeaves(clients.public, deployment.jobMarket, logs);
      db.tx(() => {
        for (const l of logs) {
          this.onEvent(l, leaves);
          const jobId = "jobId" in l.args ? (l.args.jobId as bigint) : null;
          if (jobId !== null) touched.add(jobId);
          db.recordEvent({ block: l.blockNumber, logIndex: l.logIndex, jobId, name: l.eventName });
          db.setBlockHash(l.blockNumber, l.blockHash);
        }
        // NOTE: a block gone between the two reads has no hash to record; the next scan's check compares the logs' blocks
        if (end) db.setBlockHash(to, end.hash);
        db.setMeta("cursor", to.toString());
      });
      from = to + 1n;
    }
    db.pruneBlocks(safe - BigInt(this.depth));
    this.lastHead = head.hash;
    return { head, moved: true, touched, rolledBack };
  }

  /**
   * Whether the newest recorded block (the last processed one, or the block of the bot's own newest confirmed
   * transaction) is still canonical; if not, rolls the database back to the newest recorded block
   * that is (the common ancestor) and adds the jobs whose stored state changed to `touched`, after reading their status
   * again. Returns the number of blocks rolled back.
   */
  private async checkCanonical(head: BlockRef, touched: Set<bigint>): Promise<number> {
    const { clients, db, log, deployment } = this.ctx;
    // the newest recorded block: the cursor's, or one the outbox saw its own transaction mined in (above the cursor)
    const [newest] = db.recordedBlocks(2n ** 63n - 1n, 1);
    if (newest === undefined) return 0; // nothing processed yet, or a database from before block hashes were kept
    // the common case, new blocks on top of the newest recorded one: one block needs no further read (its parent hash)
    if (newest.number === head.number - 1n && head.parentHash === newest.hash) return 0;
    const canonical = newest.number === head.number ? head : newest.number > head.number ? undefined : await getBlockRef(clients.public, { blockNumber: newest.number });
    if (canonical?.hash === newest.hash) return 0;
    const cursor = newest.number;
    let ancestor: bigint | undefined;
    for (const b of db.recordedBlocks(cursor < head.number ? cursor : head.number, this.depth + 1)) {
      const c = b.number === head.number ? head : await getBlockRef(clients.public, { blockNumber: b.number });
      if (c?.hash === b.hash) {
        ancestor = b.number;
        break;
      }
    }
    if (ancestor === undefined) {
      throw new ReorgTooDeepError(`block ${cursor} the bot processed is no longer canonical and no recorded block within ${this.depth} blocks is`, {
        details: "the reorg is deeper than the recorded hashes (BotOptions.reorgDepth): restart the bot with a fresh database (it re-indexes from the deployment's start block)",
      });
    }
    this.reorgs++;
    const jobs = db.rollback(ancestor);
    // a surviving job's status came from an orphaned event: read it again at the head
    for (const jobId of jobs) {
      const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
      db.setJobStatus(jobId, job.status, job.status === "Open" ? null : job.provider);
      touched.add(jobId);
    }
    log.warn({ event: "reorg", from: cursor.toString(), ancestor: ancestor.toString(), jobs: jobs.map(String) }, `reorg: block ${cursor} is no longer canonical; rolled back to block ${ancestor} and re-indexing`);
    this.rolledBackBlocks += Number(cursor - ancestor);
    return Number(cursor - ancestor);
  }

  private onEvent(l: MarketLog, leaves: ReadonlyMap<string, Hex[]>): void {
    const { db } = this.ctx;
    switch (l.eventName) {
      case "JobCreated": {
        const policy = l.args.policy;
        db.upsertJob({
          jobId: l.args.jobId,
          buyer: l.args.buyer,
          manifestUri: l.args.manifestUri,
          manifestHash: l.args.manifestHash,
          segments: policy.segments,
          stepsPerSegment: policy.stepsPerSegment,
          status: "Open",
        });
        break;
      }
      case "JobAccepted":
        db.setJobStatus(l.args.jobId, "Active", l.args.provider);
        break;
      case "SegmentCommitted":
        db.insertSegment({
          jobId: l.args.jobId,
          segment: Number(l.args.segment),
          traceRoot: l.args.traceRoot,
          endStateHash: l.args.endStateHash,
          stateHashes: leaves.get(committedLogKey(l))!,
          checkpointCid: l.args.checkpointCid,
          lossE6: l.args.lossE6,
          block: l.blockNumber,
          blockHash: l.blockHash,
        });
        break;
      case "JobCancelled":
        db.setJobStatus(l.args.jobId, "Cancelled");
        break;
      case "JobTimedOut":
        // A tenure that committed segments stays disputable until `disputableUntil` (TimedOut); one that committed
        // nothing re-opens at once (disputableUntil 0).
        if (l.args.disputableUntil === 0n) db.setJobStatus(l.args.jobId, "Open", null);
        else db.setJobStatus(l.args.jobId, "TimedOut", l.args.provider);
        break;
      case "JobReopened":
        db.setJobStatus(l.args.jobId, "Open", null);
        break;
      case "JobFinalized":
        db.setJobStatus(l.args.jobId, "Finalized");
        break;
      case "ProviderFaultSettled":
        db.setJobStatus(l.args.jobId, "Refunded");
        break;
      case "JobUnresolved":
        db.setJobStatus(l.args.jobId, "Unresolved");
        break;
      default:
        break;
    }
  }
}
