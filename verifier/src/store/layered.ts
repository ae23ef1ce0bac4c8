/**
 * The local store layered over remote sources: `get` reads the local store first, then each remote in the
 * order given, and caches bytes fetched from a remote in the local store; `put` writes locally only. This
 * is how a party on another machine reads what the provider (or anyone holding the content) serves.
 *
 * A remote that is unreachable, lacks the content, or serves other bytes is skipped for the next one. When
 * none serves it, the error says why, most telling first: CidMismatchError if some source served wrong
 * bytes, else SourceUnavailableError if some source could not answer (the content may exist there; retry),
 * else ContentNotFoundError.
 *
 * INVARIANT: only bytes that hash to the requested CID are cached or returned, whatever a remote does.
 *
 * @example
 *   const store = new LayeredStore(new LocalDirStore(".pouw/store"), [new HttpContentStore("http://provider:8090")]);
 */
import { logger } from "../log/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import { CidMismatchError, ContentNotFoundError, parseCid, verifyCid, type ContentSource, type ContentStore, type GetOptions } from "./index.ts";

const log = logger("store");

export class LayeredStore implements ContentStore {
  readonly local: ContentStore;
  readonly remotes: readonly ContentSource[];

  constructor(local: ContentStore, remotes: readonly ContentSource[]) {
    this.local = local;
    this.remotes = remotes;
  }

  put(bytes: Uint8Array): Promise<string> {
    return this.local.put(bytes);
  }

  /** `options.maxBytes` caps the local read and every remote answer. */
  async get(cid: string, options: GetOptions = {}): Promise<Uint8Array> {
    const canonical = parseCid(cid).toString();
    const failures: Error[] = [];
    try {
      return await this.local.get(canonical, options);
    } catch (err) {
      if (err instanceof CidMismatchError) log.warn({ cid: canonical }, "local copy does not match its CID; fetching from the remote sources");
      else if (!(err instanceof ContentNotFoundError)) throw err;
      failures.push(err);
    }
    for (const remote of this.remotes) {
      let bytes: Uint8Array;
      try {
        bytes = await remote.get(canonical, options);
      } catch (err) {
        if (!(err instanceof ContentNotFoundError || err instanceof CidMismatchError || err instanceof SourceUnavailableError)) throw err;
        log.info({ cid: canonical, source: String(remote), err: err.message }, "source did not serve the content; trying the next");
        failures.push(err);
        continue;
      }
      try {
        verifyCid(canonical, bytes, String(remote));
      } catch (err) {
        // a source whose get() does not verify (not ours): still never cached, never returned
        failures.push(err as Error);
        continue;
      }
      await this.local.put(bytes);
      log.debug({ cid: canonical, source: String(remote), bytes: bytes.byteLength }, "fetched and cached");
      return bytes;
    }
    const mismatch = failures.find((f) => f instanceof CidMismatchError);
    if (mismatch) throw mismatch;
    const unavailable = failures.filter((f) => f instanceof SourceUnavailableError);
    if (unavailable.length > 0) {
      throw new SourceUnavailableError(`${canonical}: not found at the reachable sources; unreachable: ${unavailable.map((u) => u.message).join("; ")}`, {
        url: unavailable[0]!.url,
        cause: unavailable[0],
      });
    }
    throw new ContentNotFoundError(`no content for ${canonical}: ${failures.map((f) => f.message).join("; ")}`, { cause: failures[0] });
  }

  /** True when the local store or a reachable remote has it (an unreachable remote counts as no). */
  async has(cid: string): Promise<boolean> {
    if (await this.local.has(cid)) return true;
    for (const remote of this.remotes) {
      try {
        if (await remote.has(cid)) return true;
      } catch (err) {
        if (!(err instanceof SourceUnavailableError)) throw err;
        log.info({ cid, source: String(remote), err: err.message }, "source unreachable for has()");
      }
    }
    return false;
  }
}
