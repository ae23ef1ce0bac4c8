/**
 * Where the final provider publishes a finalized job's provenance record: the record's canonical bytes go
 * into the content store, and the board (board/, the one SegmentBoard uses) maps (jobMarket, jobId) to the
 * record's CID at `<board>/<jobMarket>/<jobId>/provenance.cid` (served as
 * `GET /board/<jobMarket>/<jobId>/provenance` by `pouw serve`).
 *
 * NOTE: the pointer needs no trust: the buyer checks the fetched bytes against the CID (the store does)
 * and the record against the hash the provider anchored on chain (provenance/verify.ts).
 */
import { keccak256, type Address, type Hex } from "viem";
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
 * first remote board whose record the content sources serve; with `anchoredRecordHash`, the first whose bytes
 * hash to it (a source serving another record is skipped; if none has it, the first record fetched is
 * returned so that verification names what differs). Throws ProvenanceNotPublishedError when no record could
 * be fetched, SourceUnavailableError when a source could not be asked.
 */
export async function lookupProvenance(board: ProvenanceBoard, market: Address, jobId: bigint, options: { anchoredRecordHash?: Hex } = {}): Promise<{ cid: string; bytes: Uint8Array }> {
  const missing: string[] = [];
  let firstFetched: { cid: string; bytes: Uint8Array } | undefined;
  const found = await board.pointers.find({ market, jobId, entry: "provenance" }, async (cid, source) => {
    let bytes: Uint8Array;
    try {
      bytes = await board.store.get(cid);
    } catch (err) {
      if (err instanceof SourceUnavailableError) throw err;
      log.info({ cid, source, err: (err as Error).message }, "provenance record not fetched");
      missing.push(`${cid} (pointed to by ${source}): ${(err as Error).message}`);
      return undefined;
    }
    // a record that is not the anchored one (a stale or forged pointer) does not stop the search: try the next source
    if (options.anchoredRecordHash !== undefined && keccak256(bytes) !== options.anchoredRecordHash) {
      log.info({ cid, source }, "provenance record is not the anchored one; trying the next source");
      firstFetched ??= { cid, bytes };
      return undefined;
    }
    return { cid, bytes };
  });
  if (found) return found;
  // no source has the anchored record: hand back the first one fetched, so that verification names what differs
  if (firstFetched) return firstFetched;
  if (missing.length > 0) throw new ProvenanceNotPublishedError(`job ${jobId}: provenance record ${missing.join("; ")}`);
  throw new ProvenanceNotPublishedError(`job ${jobId}: no provenance record published on the board (${board.pointers.describe()}; the final provider publishes it with \`pouw provider claim\`)`);
}
