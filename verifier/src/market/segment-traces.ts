/**
 * Where a provider publishes the leaves of each committed segment (its K+1 state hashes) so that an
 * auditor who finds a mismatch can name the first divergent step and prove the provider's own leaves
 * h(s-1), h(s) against the committed root. The record itself is content-addressed (ContentStore); the
 * board (board/) maps (jobMarket, jobId, segment) to the record's CID.
 *
 * NOTE: the board is a directory next to the content store, served to other machines by `pouw serve`;
 * readers elsewhere layer remote boards over their own (`--source URL`). The record is self-verifying
 * against the on-chain root, so neither the board nor its transport needs trust.
 */
import type { Address, Hex } from "viem";
import { z } from "zod";
import { LayeredBoard, LocalDirBoard, type BoardSource } from "../board/index.ts";
import { logger } from "../log/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import { traceRoot } from "../trace/index.ts";
import type { ContentStore } from "../store/index.ts";

const log = logger("board");

export const SegmentRecord = z.strictObject({
  format: z.literal("pouw-segment-1"),
  jobId: z.string(),
  segment: z.number().int().min(0),
  firstStep: z.number().int().min(0),
  /** h(firstStep) .. h(firstStep + K). */
  stateHashes: z.array(z.string().regex(/^0x[0-9a-f]{64}$/)),
  /** Training loss of steps firstStep+1 .. firstStep+K, x 1e6. */
  stepLossE6: z.array(z.number().int()),
  checkpointCid: z.string(),
});
export type SegmentRecord = z.infer<typeof SegmentRecord>;

export class SegmentBoard {
  /** The local board directory (what `pouw serve` serves). */
  readonly dir: string;
  readonly store: ContentStore;
  /** The local board, then the remote boards (`--source`). */
  readonly pointers: LayeredBoard;
  constructor(dir: string, store: ContentStore, remotes: readonly BoardSource[] = []) {
    this.dir = dir;
    this.store = store;
    this.pointers = new LayeredBoard(new LocalDirBoard(dir), remotes);
  }

  async publish(market: Address, record: SegmentRecord): Promise<string> {
    const cid = await this.store.put(new TextEncoder().encode(JSON.stringify(record)));
    await this.pointers.write({ market, jobId: BigInt(record.jobId), entry: record.segment }, cid);
    return cid;
  }

  /**
   * The provider's record for a segment, if published (on the local board or a remote one) and consistent
   * with `committedRoot`. Throws SourceUnavailableError when no consistent record was found but a source
   * could not be asked: the record may be there, so the caller should retry rather than conclude.
   */
  async lookup(market: Address, jobId: bigint, segment: number, committedRoot: Hex): Promise<SegmentRecord | undefined> {
    return this.pointers.find({ market, jobId, entry: segment }, async (cid, source) => {
      let text: string;
      try {
        text = new TextDecoder().decode(await this.store.get(cid));
      } catch (err) {
        if (err instanceof SourceUnavailableError) throw err;
        log.info({ cid, source, err: (err as Error).message }, "segment record not fetched");
        return undefined;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return undefined;
      }
      const parsed = SegmentRecord.safeParse(json);
      if (!parsed.success) return undefined;
      const r = parsed.data;
      if (r.segment !== segment || r.jobId !== jobId.toString()) return undefined;
      if (traceRoot(r.firstStep, r.stateHashes as Hex[]) !== committedRoot) return undefined;
      return r;
    });
  }
}
