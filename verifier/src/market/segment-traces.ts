/**
 * Where a provider publishes the leaves of each committed segment (its K+1 state hashes) so that an
 * auditor who finds a mismatch can name the first divergent step and prove the provider's own leaves
 * h(s-1), h(s) against the committed root. The record itself is content-addressed (ContentStore); this
 * board maps (jobMarket, jobId, segment) to the record's CID.
 *
 * NOTE: the board is a directory next to the content store (shared by parties on one machine, or
 * synced); a networked deployment would serve the same records over HTTP or IPNS. The record is
 * self-verifying against the on-chain root, so the board needs no trust.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { z } from "zod";
import { traceRoot } from "../trace/index.ts";
import type { ContentStore } from "../store/index.ts";

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
  readonly dir: string;
  readonly store: ContentStore;
  constructor(dir: string, store: ContentStore) {
    this.dir = dir;
    this.store = store;
  }

  private path(market: Address, jobId: bigint, segment: number): string {
    return join(this.dir, market.toLowerCase(), jobId.toString(), `${segment}.cid`);
  }

  async publish(market: Address, record: SegmentRecord): Promise<string> {
    const cid = await this.store.put(new TextEncoder().encode(JSON.stringify(record)));
    const path = this.path(market, BigInt(record.jobId), record.segment);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(`${path}.tmp`, cid);
    await rename(`${path}.tmp`, path);
    return cid;
  }

  /** The provider's record for a segment, if published and consistent with `committedRoot`. */
  async lookup(market: Address, jobId: bigint, segment: number, committedRoot: Hex): Promise<SegmentRecord | undefined> {
    let cid: string;
    try {
      cid = (await readFile(this.path(market, jobId, segment), "utf8")).trim();
    } catch {
      return undefined;
    }
    const parsed = SegmentRecord.safeParse(JSON.parse(new TextDecoder().decode(await this.store.get(cid))));
    if (!parsed.success) return undefined;
    const r = parsed.data;
    if (traceRoot(r.firstStep, r.stateHashes as Hex[]) !== committedRoot) return undefined;
    return r;
  }
}
