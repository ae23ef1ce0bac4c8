/**
 * Content-addressed store for checkpoints, weights and traces.
 *
 * Every file is addressed by a CIDv1 (raw codec 0x55, sha2-256 multihash), the same identifier
 * `ipfs add --cid-version=1 --raw-leaves` gives a file that fits one block, so a kubo client can
 * implement `ContentStore` later without changing any committed CID.
 *
 * Remote sources (HttpContentStore, store/http.ts; IpfsSource, store/ipfs.ts, a Helia node whose blockstore is a
 * LocalDirStore) and a local store layered over them (LayeredStore, store/layered.ts) implement the same
 * interfaces; `pouw serve` (serve/, and `--ipfs`) is the server side.
 *
 * INVARIANT: `get` never returns bytes whose sha2-256 does not match the requested CID.
 * INVARIANT: `LocalDirStore.get` reads only regular files (a symlink only when it resolves inside the
 * store directory), never more than the size cap, and never blocks on a FIFO or device: a store
 * directory is served by the provider, so its entries are hostile input (a CID name that is a symlink
 * to /dev/zero, a FIFO, a 100 GB file).
 */
import { constants as fsConstants } from "node:fs";
import { lstat, mkdir, open, realpath, rename, writeFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { CID } from "multiformats/cid";
import * as raw from "multiformats/codecs/raw";
import { create as createDigest } from "multiformats/hashes/digest";
import { sha256 } from "multiformats/hashes/sha2";
import { InputError, PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { sha256Chunks } from "../trace/sha256.ts";

const log = logger("store");

/** The bytes fetched for a CID do not hash to that CID. */
export class CidMismatchError extends PouwError {
  override name = "CidMismatchError";
  override readonly code: string = "CID_MISMATCH";
  readonly expected: string;
  readonly actual: string;
  /** Where the bytes came from (a URL), when not the local store. */
  readonly source: string | undefined;
  constructor(expected: string, actual: string, source?: string) {
    super(`content does not match its CID: expected ${expected}, got ${actual}${source ? ` from ${source}` : ""}`);
    this.expected = expected;
    this.actual = actual;
    this.source = source;
  }
}

/** No content is stored under the CID. */
export class ContentNotFoundError extends PouwError {
  override name = "ContentNotFoundError";
  override readonly code: string = "CONTENT_NOT_FOUND";
}

/** Why a stored entry was refused (UnreadableContentError.reason). */
export type UnreadableReason = "not-a-regular-file" | "outside-store" | "too-large";

/**
 * A stored entry exists but is refused before reading: not a regular file (FIFO, device, socket,
 * directory), a symlink that leaves the store directory, or larger than the size cap. A subclass of
 * ContentNotFoundError: nothing usable is stored under the CID (LayeredStore then asks its remotes;
 * an audit reports checkpoint-missing).
 */
export class UnreadableContentError extends ContentNotFoundError {
  override name = "UnreadableContentError";
  override readonly code: string = "CONTENT_UNREADABLE";
  readonly reason: UnreadableReason;
  readonly path: string;
  constructor(reason: UnreadableReason, path: string, message: string) {
    super(message);
    this.reason = reason;
    this.path = path;
  }
}

/** Largest content a store reads when the caller names no cap (1 GiB, as the HTTP sources: net/). */
export const DEFAULT_MAX_CONTENT_BYTES = 1 << 30;

export type GetOptions = {
  /**
   * Largest content accepted, in bytes (default: the store's own cap). A caller that knows what it
   * fetches passes its size bound, e.g. a checkpoint's (ml/checkpoint.ts checkpointSizeBound).
   */
  readonly maxBytes?: number;
};

/** A string is not a CIDv1 raw/sha2-256 content id. */
export class InvalidCidError extends InputError {
  override name = "InvalidCidError";
  override readonly code: string = "INVALID_CID";
}

/** Somewhere content can be read from. Implementations must verify fetched bytes against the CID (use `verifyCid`). */
export interface ContentSource {
  /**
   * Fetches the bytes of `cid`, verified, refusing content over `options.maxBytes`; throws
   * ContentNotFoundError (UnreadableContentError for a refused local entry) or CidMismatchError
   * (remote sources also SourceUnavailableError, net/, for an answer over the cap).
   */
  get(cid: string, options?: GetOptions): Promise<Uint8Array>;
  has(cid: string): Promise<boolean>;
}

/** A content source that can also store. */
export interface ContentStore extends ContentSource {
  /** Stores `bytes` and returns their CID (idempotent). */
  put(bytes: Uint8Array): Promise<string>;
}

/** CIDv1 (raw, sha2-256) of `bytes`, base32 string form ("bafkrei..."). */
export function cidOf(bytes: Uint8Array): string {
  // trace/sha256.ts: node:crypto in Node, JavaScript in the dApp (the same bits)
  const digest = createDigest(sha256.code, sha256Chunks([bytes]));
  return CID.createV1(raw.code, digest).toString();
}

/** Parses and checks a CID string: CIDv1, raw codec, sha2-256. */
export function parseCid(cid: string): CID {
  let parsed: CID;
  try {
    parsed = CID.parse(cid);
  } catch (err) {
    throw new InvalidCidError(`not a CID: ${JSON.stringify(cid)}`, { cause: err });
  }
  if (parsed.version !== 1 || parsed.code !== raw.code || parsed.multihash.code !== sha256.code) {
    throw new InvalidCidError(`unsupported CID ${cid}: need CIDv1, raw codec, sha2-256`);
  }
  return parsed;
}

/** Throws CidMismatchError unless `bytes` hash to `cid`; `source` (a URL) is named in the error. */
export function verifyCid(cid: string, bytes: Uint8Array, source?: string): void {
  const canonical = parseCid(cid).toString();
  const actual = cidOf(bytes);
  if (actual !== canonical) throw new CidMismatchError(canonical, actual, source);
}

/**
 * A directory of files named by their CID. Writes go through a temporary file and a rename, so a
 * reader never sees a half-written file under a CID name. Reads are bounded (readStoredFile).
 */
export class LocalDirStore implements ContentStore {
  readonly dir: string;
  /** Size cap of a `get` without its own maxBytes. */
  readonly maxBytes: number;

  constructor(dir: string, options: { maxBytes?: number } = {}) {
    this.dir = dir;
    this.maxBytes = checkCap(options.maxBytes ?? DEFAULT_MAX_CONTENT_BYTES);
  }

  pathOf(cid: string): string {
    return join(this.dir, parseCid(cid).toString());
  }

  async put(bytes: Uint8Array): Promise<string> {
    const cid = cidOf(bytes);
    const path = join(this.dir, cid);
    // an entry that is not a plain regular file (a planted symlink or FIFO) is replaced, not trusted
    if ((await entryKind(path, this.dir)) === "file") return cid;
    await mkdir(this.dir, { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, path);
    log.debug({ cid, bytes: bytes.byteLength }, "stored");
    return cid;
  }

  async get(cid: string, options: GetOptions = {}): Promise<Uint8Array> {
    const path = this.pathOf(cid);
    const maxBytes = Math.min(this.maxBytes, checkCap(options.maxBytes ?? this.maxBytes));
    const bytes = await readStoredFile(path, { maxBytes, root: this.dir, label: cid });
    verifyCid(cid, bytes);
    return bytes;
  }

  async has(cid: string): Promise<boolean> {
    return (await entryKind(this.pathOf(cid), this.dir)) === "file";
  }
}

function checkCap(maxBytes: number): number {
  if (!(Number.isSafeInteger(maxBytes) && maxBytes >= 0)) throw new InputError(`content size cap must be a non-negative integer, got ${maxBytes}`);
  return maxBytes;
}

/** What a path is, without following a symlink out of `root` or opening anything. */
async function entryKind(path: string, root: string): Promise<"missing" | "file" | "refused"> {
  try {
    const st = await lstat(path);
    if (st.isFile()) return "file";
    if (!st.isSymbolicLink()) return "refused";
    const real = await realpath(path);
    if (!(await isInside(real, root))) return "refused";
    return (await lstat(real)).isFile() ? "file" : "refused";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    return "refused";
  }
}

async function isInside(real: string, root: string): Promise<boolean> {
  let rootReal: string;
  try {
    rootReal = await realpath(root);
  } catch {
    rootReal = resolve(root);
  }
  return real.startsWith(rootReal + sep);
}

/**
 * Reads a file that untrusted parties may have placed: only a regular file (a symlink only when it
 * resolves to a regular file inside `root`), at most `maxBytes`, opened non-blocking and without
 * following a symlink swapped in after the check, so a FIFO, a device or /dev/zero fails at once
 * with UnreadableContentError and memory stays bounded by the cap. A missing file is
 * ContentNotFoundError.
 */
export async function readStoredFile(path: string, o: { maxBytes: number; root: string; label?: string }): Promise<Uint8Array> {
  const label = o.label ?? path;
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    throw new ContentNotFoundError(`no content for ${label} in ${o.root}`, { cause: err });
  }
  let target = path;
  if (st.isSymbolicLink()) {
    let real: string;
    try {
      real = await realpath(path);
    } catch (err) {
      throw new ContentNotFoundError(`${label}: dangling symlink in ${o.root}`, { cause: err });
    }
    if (!(await isInside(real, o.root))) throw new UnreadableContentError("outside-store", path, `${label}: refused, a symlink to ${real} outside ${o.root}`);
    target = real;
  } else if (!st.isFile()) {
    throw new UnreadableContentError("not-a-regular-file", path, `${label}: refused, not a regular file (${describe(st)})`);
  }
  let fh;
  try {
    // O_NONBLOCK: a FIFO swapped in after lstat opens at once instead of waiting for a writer
    fh = await open(target, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new ContentNotFoundError(`no content for ${label} in ${o.root}`, { cause: err });
    throw new UnreadableContentError("not-a-regular-file", path, `${label}: refused, cannot be opened as a regular file (${code ?? "error"})`);
  }
  try {
    const fst = await fh.stat();
    if (!fst.isFile()) throw new UnreadableContentError("not-a-regular-file", path, `${label}: refused, not a regular file (${describe(fst)})`);
    if (fst.size > o.maxBytes) throw new UnreadableContentError("too-large", path, `${label}: refused, ${fst.size} bytes is over the cap of ${o.maxBytes}`);
    // never more than the size seen at open (<= the cap); a file changed meanwhile fails its CID check
    const buf = new Uint8Array(fst.size);
    let at = 0;
    while (at < buf.length) {
      const { bytesRead } = await fh.read(buf, at, buf.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === buf.length ? buf : buf.subarray(0, at);
  } finally {
    await fh.close();
  }
}

function describe(st: { isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isDirectory(): boolean; isSocket(): boolean }): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isDirectory()) return "a directory";
  if (st.isSocket()) return "a socket";
  return "not a file";
}
