/**
 * A remote board over HTTP: `GET <base>/board/<jobMarket>/<jobId>/<segment|provenance>` answers the record's
 * CID as text (served by `pouw serve`, serve/). 404 means no pointer; a body that is not a CID is treated as
 * no pointer (and logged), since the pointer is untrusted anyway.
 */
import { logger } from "../log/index.ts";
import { httpRequest, joinUrl, SourceUnavailableError, type HttpSourceOptions } from "../net/index.ts";
import { InvalidCidError, parseCid } from "../store/index.ts";
import { boardKeyPath, type BoardKey, type BoardSource } from "./index.ts";

const log = logger("board");

/** A pointer is one CID: a few dozen bytes. */
const MAX_POINTER_BYTES = 1024;

export class HttpBoard implements BoardSource {
  readonly baseUrl: string;
  readonly options: HttpSourceOptions;
  constructor(baseUrl: string, options: HttpSourceOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.options = { ...options, maxBytes: MAX_POINTER_BYTES };
  }

  urlOf(key: BoardKey): string {
    return joinUrl(this.baseUrl, `board/${boardKeyPath(key)}`);
  }

  async read(key: BoardKey): Promise<string | undefined> {
    const url = this.urlOf(key);
    const r = await httpRequest(url, "GET", "text/plain", this.options);
    if (r.status === 404 || r.status === 410) return undefined;
    if (r.status !== 200) throw new SourceUnavailableError(`GET ${url}: unexpected HTTP ${r.status}`, { url, status: r.status });
    const text = new TextDecoder().decode(r.body).trim();
    try {
      return parseCid(text).toString();
    } catch (err) {
      if (!(err instanceof InvalidCidError)) throw err;
      log.warn({ url }, "board answer is not a CID; ignored");
      return undefined;
    }
  }

  toString(): string {
    return this.baseUrl;
  }
}
