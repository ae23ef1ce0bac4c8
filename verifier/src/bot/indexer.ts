/**
 * The bot's indexer: JobMarket events -> the database. Scans from the stored cursor to head - (confirmations - 1), in
 * block chunks; the events of a chunk and the new cursor are stored in one SQLite transaction, so a crash never skips
 * or repeats a block range.
 */
import { getMarketLogs, withRetry } from "../chain/index.ts";
import type { BotContext } from "./context.ts";

const key = (s: bigint | string | number) => s.toString();

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
        for (const l of logs) this.onEvent(l as never);
        db.setMeta("cursor", to.toString());
      });
      from = to + 1n;
    }
  }

  private onEvent(l: { eventName: string; args: Record<string, unknown>; blockNumber: bigint }): void {
    const { db } = this.ctx;
    const a = l.args;
    switch (l.eventName) {
      case "JobCreated": {
        const policy = a.policy as { segments: number; stepsPerSegment: number };
        db.upsertJob({
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
        db.setJobStatus(key(a.jobId as bigint), "Active", a.provider as string);
        break;
      case "SegmentCommitted":
        db.insertSegment({
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
        db.setJobStatus(key(a.jobId as bigint), "Cancelled");
        break;
      case "JobTimedOut":
        // A tenure that committed segments stays disputable until `disputableUntil` (TimedOut); one that committed
        // nothing re-opens at once (disputableUntil 0).
        if ((a.disputableUntil as bigint) === 0n) db.setJobStatus(key(a.jobId as bigint), "Open", null);
        else db.setJobStatus(key(a.jobId as bigint), "TimedOut", a.provider as string);
        break;
      case "JobReopened":
        db.setJobStatus(key(a.jobId as bigint), "Open", null);
        break;
      case "JobFinalized":
        db.setJobStatus(key(a.jobId as bigint), "Finalized");
        break;
      case "ProviderFaultSettled":
        db.setJobStatus(key(a.jobId as bigint), "Refunded");
        break;
      default:
        break;
    }
  }
}
