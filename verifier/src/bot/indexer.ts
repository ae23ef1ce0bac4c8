/**
 * The bot's indexer: JobMarket events -> the database. Scans from the stored cursor to head - (confirmations - 1), in
 * block chunks; the events of a chunk and the new cursor are stored in one SQLite transaction, so a crash never skips
 * or repeats a block range.
 */
import { getMarketLogs, withRetry, type MarketLog } from "../chain/index.ts";
import type { BotContext } from "./context.ts";

export class Indexer {
  private readonly ctx: BotContext;

  constructor(ctx: BotContext) {
    this.ctx = ctx;
  }

  /** Stores every event up to the confirmed head. */
  async scan(): Promise<void> {
    const { clients, deployment, db, options } = this.ctx;
    const head = await withRetry(() => clients.public.getBlockNumber({ cacheTime: 0 }), { what: "blockNumber" });
    const safe = head - BigInt(clients.confirmations - 1);
    let from = BigInt(db.getMeta("cursor") ?? (BigInt(deployment.startBlock) - 1n).toString()) + 1n;
    const chunk = BigInt(options.scanChunk ?? 2_000);
    while (from <= safe) {
      const to = from + chunk - 1n < safe ? from + chunk - 1n : safe;
      const logs = await getMarketLogs(clients.public, { jobMarket: deployment.jobMarket, fromBlock: from, toBlock: to });
      db.tx(() => {
        for (const l of logs) this.onEvent(l);
        db.setMeta("cursor", to.toString());
      });
      from = to + 1n;
    }
  }

  private onEvent(l: MarketLog): void {
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
          stateHashes: l.args.stateHashes,
          checkpointCid: l.args.checkpointCid,
          lossE6: l.args.lossE6,
          block: l.blockNumber,
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
      default:
        break;
    }
  }
}
