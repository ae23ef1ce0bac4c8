/**
 * The IPFS node's storage: Helia's blockstore over the party's content store (StoreBlockstore), and the lock that
 * keeps two processes on one state dir from sharing a datastore (lockDatastore).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { CID } from "multiformats/cid";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { ContentNotFoundError, InvalidCidError, parseCid, verifyCid, type ContentStore } from "./index.ts";
import { concat } from "./ipfs-protocol.ts";

const log = logger("ipfs");

async function collect(bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  if (bytes instanceof Uint8Array) return bytes;
  const chunks: Uint8Array[] = [];
  for await (const c of bytes) chunks.push(c);
  return concat(chunks, chunks.reduce((n, c) => n + c.byteLength, 0));
}

/** The local store's key for a CID, or undefined for a CID it cannot hold (not CIDv1 raw/sha2-256). */
function storeKey(cid: CID): string | undefined {
  try {
    return parseCid(cid.toString()).toString();
  } catch (err) {
    if (err instanceof InvalidCidError) return undefined;
    throw err;
  }
}

/** interface-store's "not found" (matched by name, as its NotFoundError is). */
class BlockNotFoundError extends Error {
  override name = "NotFoundError";
}

/**
 * The datastore directory this process may use: `dir` itself, locked by a pid file; when another live process
 * holds it (e.g. `pouw serve --ipfs` next to `pouw provider run --ipfs` on one state dir), a fresh temporary one,
 * so the two nodes never share a key (one peer id = one node) or a datastore.
 */
export async function lockDatastore(dir: string): Promise<{ dir: string; holder: boolean; addrsFile: string; release: () => Promise<void> }> {
  await mkdir(dir, { recursive: true });
  const pidFile = join(dir, "..", `${basename(dir)}.pid`);
  // the holder's listen addresses, for a second process on the state dir to announce (stateDirAddrs)
  const addrsFile = join(dir, "..", `${basename(dir)}.addrs`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(pidFile, String(process.pid), { flag: "wx" });
      return { dir, holder: true, addrsFile, release: () => Promise.all([rm(addrsFile, { force: true }), rm(pidFile, { force: true })]).then(() => undefined) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
      const tmp = await mkdtemp(join(tmpdir(), "pouw-ipfs-"));
      log.warn({ dir, holder, tmp }, "the state dir's IPFS node runs in another process; this one uses a temporary key (another peer id)");
      return { dir: tmp, holder: false, addrsFile, release: () => rm(tmp, { recursive: true, force: true }) };
    }
    await rm(pidFile, { force: true }); // stale: its process is gone
  }
  throw new PouwError(`cannot lock the IPFS datastore ${dir} (${pidFile})`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Helia's blockstore over a ContentStore (interface-blockstore 7): blocks are the store's files, so one copy on
 * disk serves `pouw serve`, bitswap and the party itself. Only raw/sha2-256 CIDs exist in it; a put is re-checked.
 */
export class StoreBlockstore {
  readonly store: ContentStore;
  readonly maxBlockBytes: number;
  constructor(store: ContentStore, maxBlockBytes: number) {
    this.store = store;
    this.maxBlockBytes = maxBlockBytes;
  }

  async has(cid: CID): Promise<boolean> {
    const key = storeKey(cid);
    return key !== undefined && (await this.store.has(key));
  }

  async put(cid: CID, bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<CID> {
    const key = storeKey(cid);
    if (key === undefined) throw new InvalidCidError(`the content store holds CIDv1 raw/sha2-256 blocks only, not ${cid.toString()}`);
    const data = await collect(bytes);
    verifyCid(key, data, "a block put into the IPFS blockstore");
    await this.store.put(data);
    return cid;
  }

  async *get(cid: CID): AsyncGenerator<Uint8Array> {
    const key = storeKey(cid);
    if (key === undefined) throw new BlockNotFoundError(`not in the content store: ${cid.toString()}`);
    try {
      yield await this.store.get(key, { maxBytes: this.maxBlockBytes });
    } catch (err) {
      if (err instanceof ContentNotFoundError) throw new BlockNotFoundError(err.message);
      throw err;
    }
  }

  async *putMany(source: Iterable<{ cid: CID; bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array> }> | AsyncIterable<{ cid: CID; bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array> }>): AsyncGenerator<CID> {
    for await (const { cid, bytes } of source) yield await this.put(cid, bytes);
  }

  async *getMany(source: Iterable<CID> | AsyncIterable<CID>): AsyncGenerator<{ cid: CID; bytes: AsyncGenerator<Uint8Array> }> {
    for await (const cid of source) yield { cid, bytes: this.get(cid) };
  }

  /** NOTE: content is never deleted through IPFS (Helia's gc would otherwise empty the party's store). */
  async delete(_cid: CID): Promise<void> {}

  async *deleteMany(source: Iterable<CID> | AsyncIterable<CID>): AsyncGenerator<CID> {
    for await (const cid of source) yield cid;
  }

  // eslint-disable-next-line require-yield
  async *getAll(): AsyncGenerator<{ cid: CID; bytes: AsyncGenerator<Uint8Array> }> {
    // NOTE: not enumerated: only Helia's gc lists blocks, and content is never deleted through IPFS
    return;
  }
}
