/**
 * Where the final provider publishes a finalized job's provenance record: the record's canonical bytes go
 * into the content store, and the board (board/, the one SegmentBoard uses) maps (jobMarket, jobId) to the
 * record's CID at `<board>/<jobMarket>/<jobId>/provenance.cid` (served as
 * `GET /board/<jobMarket>/<jobId>/provenance` by `pouw serve`).
 *
 * NOTE: the pointer needs no trust: the buyer checks the fetched bytes against the CID (the store does)
 * and the record against the hash the provider anchored on chain (provenance/verify.ts).
 */
import type { Address } from "viem";
import type { LayeredBoard } from "../board/index.ts";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentStore } from "../store/index.ts";

const log = logger("board");

export class ProvenanceNotPublishedError extends PouwError {
  override name = "ProvenanceNotPublishedError";
  override readonly code: string = "PROVENANCE_NOT_PUBLISHED";
}

/** The board and content store (a SegmentBoard has both). */
export type ProvenanceBoard = { pointers: LayeredBoard; store: ContentStore };

/** Stores the record bytes and points the local board at them; returns the record's CID. */
export async function publishProvenance(board: ProvenanceBoard, market: Address, jobId: bigint, recordBytes: Uint8Array): Promise<string> {
  const cid = await board.store.put(recordBytes);
  await board.pointers.write({ market, jobId, entry: "provenance" }, cid);
  return cid;
}

/**
 * The published record's bytes (checked against their CID by the store), from the local board or else the
 * first remote board whose record the content sources serve. Throws ProvenanceNotPublishedError when none
 * has one, SourceUnavailableError when a source could not be asked.
 */
export async function lookupProvenance(board: ProvenanceBoard, market: Address, jobId: bigint): Promise<{ cid: string; bytes: Uint8Array }> {
  const missing: string[] = [];
  const found = await board.pointers.find({ market, jobId, entry: "provenance" }, async (cid, source) => {
    try {
      return { cid, bytes: await board.store.get(cid) };
    } catch (err) {
      if (err instanceof SourceUnavailableError) throw err;
      log.info({ cid, source, err: (err as Error).message }, "provenance record not fetched");
      missing.push(`${cid} (pointed to by ${source}): ${(err as Error).message}`);
      return undefined;
    }
  });
  if (found) return found;
  if (missing.length > 0) throw new ProvenanceNotPublishedError(`job ${jobId}: provenance record ${missing.join("; ")}`);
  throw new ProvenanceNotPublishedError(`job ${jobId}: no provenance record published on the board (${board.pointers.describe()}; the final provider publishes it with \`pouw provider claim\`)`);
}
