/**
 * The board: where a provider points from (jobMarket, jobId, entry) to the CID of a record it published in
 * the content store. An entry is a segment number (that segment's leaves, market/segment-traces.ts) or
 * "provenance" (the finalized job's provenance record, market/provenance-board.ts).
 *
 *   local directory  <dir>/<jobMarket, lowercase>/<jobId>/<entry>.cid   (LocalDirBoard)
 *   over HTTP        GET <base>/board/<jobMarket>/<jobId>/<entry>       (HttpBoard in board/http.ts; served by serve/)
 *
 * A LayeredBoard reads the local board, then each remote board in order, and offers each pointer it finds
 * to the caller's check; the first record that passes wins. Pointers need no trust: the record's bytes are
 * checked against the CID by the store and the record against the chain by its reader, so a source that
 * points somewhere wrong only costs a fetch.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { getAddress, isAddress, type Address } from "viem";
import { InputError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import { InvalidCidError, parseCid } from "../store/index.ts";

const log = logger("board");

export type BoardEntry = number | "provenance";
export type BoardKey = { readonly market: Address; readonly jobId: bigint; readonly entry: BoardEntry };

/** A board path that is not <jobMarket address>/<jobId>/<segment | provenance>. */
export class InvalidBoardKeyError extends InputError {
  override name = "InvalidBoardKeyError";
  override readonly code: string = "INVALID_BOARD_KEY";
}

const JOB_ID = /^(0|[1-9][0-9]{0,76})$/;
const SEGMENT = /^(0|[1-9][0-9]{0,9})$/;

/** "<market lowercase>/<jobId>/<entry>": the key's relative path (directory layout and URL path alike). */
export function boardKeyPath(key: BoardKey): string {
  return `${key.market.toLowerCase()}/${key.jobId.toString()}/${key.entry}`;
}

/**
 * Parses the three path segments of a board key strictly (the server's input): an address, a decimal job id
 * and a decimal segment or "provenance". Throws InvalidBoardKeyError naming the bad part.
 */
export function parseBoardKey(parts: readonly string[]): BoardKey {
  if (parts.length !== 3) throw new InvalidBoardKeyError(`a board path is <jobMarket>/<jobId>/<segment|provenance>, got ${parts.length} part(s)`);
  const [m, j, e] = parts as [string, string, string];
  if (!/^0x[0-9a-fA-F]{40}$/.test(m) || !isAddress(m, { strict: false })) throw new InvalidBoardKeyError(`not a jobMarket address: ${JSON.stringify(m.slice(0, 64))}`);
  if (!JOB_ID.test(j)) throw new InvalidBoardKeyError(`not a job id: ${JSON.stringify(j.slice(0, 64))}`);
  if (e !== "provenance" && !SEGMENT.test(e)) throw new InvalidBoardKeyError(`not a segment number or "provenance": ${JSON.stringify(e.slice(0, 64))}`);
  return { market: getAddress(m.toLowerCase()), jobId: BigInt(j), entry: e === "provenance" ? e : Number(e) };
}

/** Somewhere board pointers can be read. */
export interface BoardSource {
  /** The record CID the board holds for `key` (canonical), or undefined; remote boards may throw SourceUnavailableError. */
  read(key: BoardKey): Promise<string | undefined>;
}

/** The board directory of this machine (what `pouw serve` serves). */
export class LocalDirBoard implements BoardSource {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
  }

  pathOf(key: BoardKey): string {
    if (typeof key.entry === "number" && !(Number.isInteger(key.entry) && key.entry >= 0)) throw new InvalidBoardKeyError(`segment must be a whole number, got ${key.entry}`);
    return join(this.dir, key.market.toLowerCase(), key.jobId.toString(), `${key.entry}.cid`);
  }

  async write(key: BoardKey, cid: string): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(`${path}.${process.pid}.tmp`, parseCid(cid).toString());
    await rename(`${path}.${process.pid}.tmp`, path);
  }

  async read(key: BoardKey): Promise<string | undefined> {
    let text: string;
    try {
      text = await readFile(this.pathOf(key), "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      throw err;
    }
    try {
      return parseCid(text.trim()).toString();
    } catch (err) {
      if (!(err instanceof InvalidCidError)) throw err;
      log.warn({ path: this.pathOf(key) }, "board entry is not a CID; ignored");
      return undefined;
    }
  }

  toString(): string {
    return this.dir;
  }
}

/** The local board first, then each remote board in order. Writes go to the local board only. */
export class LayeredBoard {
  readonly local: LocalDirBoard;
  readonly remotes: readonly BoardSource[];
  constructor(local: LocalDirBoard, remotes: readonly BoardSource[] = []) {
    this.local = local;
    this.remotes = remotes;
  }

  write(key: BoardKey, cid: string): Promise<void> {
    return this.local.write(key, cid);
  }

  /** Where pointers are read, for messages: the local directory and the remote URLs. */
  describe(): string {
    return [this.local, ...this.remotes].map(String).join(", ");
  }

  /**
   * Offers each pointer found for `key` (local first, each CID once) to `accept`, and returns the first value
   * it accepts (not undefined). `accept` throws SourceUnavailableError when the record cannot be fetched now.
   * Returns undefined when no source has an acceptable record; throws SourceUnavailableError instead when a
   * source could not be asked (or its record not fetched), since the record may be there.
   */
  async find<T>(key: BoardKey, accept: (cid: string, source: string) => Promise<T | undefined>): Promise<T | undefined> {
    const unavailable: SourceUnavailableError[] = [];
    const seen = new Set<string>();
    for (const source of [this.local, ...this.remotes]) {
      try {
        const cid = await source.read(key);
        if (cid === undefined || seen.has(cid)) continue;
        seen.add(cid);
        const value = await accept(cid, String(source));
        if (value !== undefined) return value;
        log.info({ key: boardKeyPath(key), cid, source: String(source) }, "board record rejected; trying the next source");
      } catch (err) {
        if (!(err instanceof SourceUnavailableError)) throw err;
        log.info({ key: boardKeyPath(key), source: String(source), err: err.message }, "board source unavailable; trying the next");
        unavailable.push(err);
      }
    }
    if (unavailable.length > 0) {
      throw new SourceUnavailableError(`board entry ${boardKeyPath(key)}: no acceptable record at the reachable sources; unavailable: ${unavailable.map((u) => u.message).join("; ")}`, {
        url: unavailable[0]!.url,
        cause: unavailable[0],
      });
    }
    return undefined;
  }
}
