/**
 * Content-addressed store for checkpoints, weights and traces.
 *
 * Every file is addressed by a CIDv1 (raw codec 0x55, sha2-256 multihash), the same identifier
 * `ipfs add --cid-version=1 --raw-leaves` gives a file that fits one block, so a kubo client can
 * implement `ContentStore` later without changing any committed CID.
 *
 * Remote sources (HttpContentStore, store/http.ts) and a local store layered over them (LayeredStore,
 * store/layered.ts) implement the same interfaces; `pouw serve` (serve/) is the server side.
 *
 * INVARIANT: `get` never returns bytes whose sha2-256 does not match the requested CID.
 */
import { mkdir, readFile, rename, writeFile, access } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { CID } from "multiformats/cid";
import * as raw from "multiformats/codecs/raw";
import { create as createDigest } from "multiformats/hashes/digest";
import { sha256 } from "multiformats/hashes/sha2";
import { InputError, PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";

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

/** A string is not a CIDv1 raw/sha2-256 content id. */
export class InvalidCidError extends InputError {
  override name = "InvalidCidError";
  override readonly code: string = "INVALID_CID";
}

/** Somewhere content can be read from. Implementations must verify fetched bytes against the CID (use `verifyCid`). */
export interface ContentSource {
  /** Fetches the bytes of `cid`, verified; throws ContentNotFoundError or CidMismatchError (remote sources also SourceUnavailableError, net/). */
  get(cid: string): Promise<Uint8Array>;
  has(cid: string): Promise<boolean>;
}

/** A content source that can also store. */
export interface ContentStore extends ContentSource {
  /** Stores `bytes` and returns their CID (idempotent). */
  put(bytes: Uint8Array): Promise<string>;
}

/** CIDv1 (raw, sha2-256) of `bytes`, base32 string form ("bafkrei..."). */
export function cidOf(bytes: Uint8Array): string {
  const hash = createHash("sha256").update(bytes).digest();
  const digest = createDigest(sha256.code, new Uint8Array(hash.buffer, hash.byteOffset, hash.byteLength));
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
 * reader never sees a half-written file under a CID name.
 */
export class LocalDirStore implements ContentStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  pathOf(cid: string): string {
    return join(this.dir, parseCid(cid).toString());
  }

  async put(bytes: Uint8Array): Promise<string> {
    const cid = cidOf(bytes);
    const path = join(this.dir, cid);
    if (await exists(path)) return cid;
    await mkdir(this.dir, { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, path);
    log.debug({ cid, bytes: bytes.byteLength }, "stored");
    return cid;
  }

  async get(cid: string): Promise<Uint8Array> {
    const path = this.pathOf(cid);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readFile(path));
    } catch (err) {
      throw new ContentNotFoundError(`no content for ${cid} in ${this.dir}`, { cause: err });
    }
    verifyCid(cid, bytes);
    return bytes;
  }

  async has(cid: string): Promise<boolean> {
    return exists(this.pathOf(cid));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
