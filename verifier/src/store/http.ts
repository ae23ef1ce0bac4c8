/**
 * A remote content source over HTTP: `GET <base>/ipfs/<cid>` for the bytes and `HEAD` for `has`, the path
 * and `application/vnd.ipld.raw` type of the IPFS trustless-gateway convention. `pouw serve` (serve/) is the
 * server; a kubo gateway serving the same raw-codec CIDs works too, for the blocks it holds.
 *
 * INVARIANT: every byte returned was verified against the CID here (verifyCid); a source that serves other
 * bytes raises CidMismatchError naming its URL.
 *
 * @example
 *   const remote = new HttpContentStore("http://provider.example:8090", { timeoutMs: 10_000 });
 *   const bytes = await remote.get("bafkrei...");
 */
import { httpRequest, joinUrl, SourceUnavailableError, type HttpSourceOptions } from "../net/index.ts";
import { ContentNotFoundError, parseCid, verifyCid, type ContentSource, type GetOptions } from "./index.ts";

/** The media type of a raw block (IPFS trustless gateway). */
export const RAW_BLOCK_TYPE = "application/vnd.ipld.raw";

export class HttpContentStore implements ContentSource {
  readonly baseUrl: string;
  readonly options: HttpSourceOptions;

  constructor(baseUrl: string, options: HttpSourceOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.options = options;
  }

  urlOf(cid: string): string {
    return joinUrl(this.baseUrl, `ipfs/${parseCid(cid).toString()}`);
  }

  /** `options.maxBytes` lowers the source's response cap for this request (an answer over it: SourceUnavailableError). */
  async get(cid: string, options: GetOptions = {}): Promise<Uint8Array> {
    const url = this.urlOf(cid);
    const cap = options.maxBytes === undefined ? this.options : { ...this.options, maxBytes: Math.min(options.maxBytes, this.options.maxBytes ?? Infinity) };
    const r = await httpRequest(url, "GET", RAW_BLOCK_TYPE, cap);
    if (r.status === 200) {
      verifyCid(cid, r.body, url);
      return r.body;
    }
    if (r.status === 404 || r.status === 410) throw new ContentNotFoundError(`no content for ${cid} at ${url} (HTTP ${r.status})`);
    throw new SourceUnavailableError(`GET ${url}: unexpected HTTP ${r.status}`, { url, status: r.status });
  }

  async has(cid: string): Promise<boolean> {
    const url = this.urlOf(cid);
    const r = await httpRequest(url, "HEAD", RAW_BLOCK_TYPE, this.options);
    if (r.status === 200) return true;
    if (r.status === 404 || r.status === 410) return false;
    throw new SourceUnavailableError(`HEAD ${url}: unexpected HTTP ${r.status}`, { url, status: r.status });
  }

  toString(): string {
    return this.baseUrl;
  }
}
