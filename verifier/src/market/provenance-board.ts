/**
 * Where the final provider publishes a finalized job's provenance record: the record's canonical bytes go
 * into the content store, and the board directory (the one SegmentBoard uses) maps (jobMarket, jobId) to
 * the record's CID at `<board>/<jobMarket>/<jobId>/provenance.cid`.
 *
 * NOTE: the pointer needs no trust: the buyer checks the fetched bytes against the CID (the store does)
 * and the record against the hash the provider anchored on chain (provenance/verify.ts).
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Address } from "viem";
import { PouwError } from "../errors/index.ts";
import type { ContentStore } from "../store/index.ts";

export class ProvenanceNotPublishedError extends PouwError {
  override name = "ProvenanceNotPublishedError";
  override readonly code: string = "PROVENANCE_NOT_PUBLISHED";
}

/** The shared board directory and content store (a SegmentBoard has both). */
export type ProvenanceBoard = { dir: string; store: ContentStore };

function pointerPath(board: ProvenanceBoard, market: Address, jobId: bigint): string {
  return join(board.dir, market.toLowerCase(), jobId.toString(), "provenance.cid");
}

/** Stores the record bytes and points the board at them; returns the record's CID. */
export async function publishProvenance(board: ProvenanceBoard, market: Address, jobId: bigint, recordBytes: Uint8Array): Promise<string> {
  const cid = await board.store.put(recordBytes);
  const path = pointerPath(board, market, jobId);
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(`${path}.tmp`, cid);
  await rename(`${path}.tmp`, path);
  return cid;
}

/** The published record's bytes (checked against their CID by the store). */
export async function lookupProvenance(board: ProvenanceBoard, market: Address, jobId: bigint): Promise<{ cid: string; bytes: Uint8Array }> {
  const path = pointerPath(board, market, jobId);
  let cid: string;
  try {
    cid = (await readFile(path, "utf8")).trim();
  } catch (err) {
    throw new ProvenanceNotPublishedError(`job ${jobId}: no provenance record published at ${path} (the final provider publishes it with \`pouw provider claim\`)`, { cause: err });
  }
  try {
    return { cid, bytes: await board.store.get(cid) };
  } catch (err) {
    throw new ProvenanceNotPublishedError(`job ${jobId}: provenance record ${cid} is not in the content store`, { cause: err });
  }
}
