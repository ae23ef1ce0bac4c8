/**
 * The HTTP client the remote sources share (HttpContentStore in store/http.ts, HttpBoard in board/http.ts):
 * one GET or HEAD with a timeout per attempt, a bounded number of retries with exponential backoff for the
 * failures that may pass (network errors, timeouts, 408, 429, 5xx), and a cap on the response size. Every
 * other status is an answer, and the caller decides what it means (404: not there).
 *
 * NOTE: this layer moves bytes only; what the bytes must be is checked by the caller (verifyCid for content,
 * the on-chain commitments for board records). Nothing fetched here is trusted.
 */
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";

const log = logger("net");

/** A remote source could not answer: unreachable, timed out, 5xx after the retries, or an answer it should not give. */
export class SourceUnavailableError extends PouwError {
  override name = "SourceUnavailableError";
  override readonly code: string = "SOURCE_UNAVAILABLE";
  /** The URL that failed. */
  readonly url: string;
  /** The last HTTP status, when the source answered at all. */
  readonly status: number | undefined;
  constructor(message: string, o: { url: string; status?: number; cause?: unknown }) {
    super(message, { cause: o.cause });
    this.url = o.url;
    this.status = o.status;
  }
}

export type HttpSourceOptions = {
  /** Per attempt, including reading the body (default 30 000 ms). */
  timeoutMs?: number;
  /** Further attempts after a failure that may pass (default 2). */
  retries?: number;
  /** Delay before the first retry; doubles for each further one (default 250 ms). */
  retryDelayMs?: number;
  /** Largest response body accepted (default 1 GiB). */
  maxBytes?: number;
};

export const DEFAULT_HTTP_SOURCE_OPTIONS: Required<HttpSourceOptions> = { timeoutMs: 30_000, retries: 2, retryDelayMs: 250, maxBytes: 1 << 30 };

export type HttpAnswer = { status: number; body: Uint8Array };

/** Statuses below 500 that a retry may fix. */
const RETRYABLE = new Set([408, 425, 429]);

/** `base` without trailing slashes, so `${base}/ipfs/<cid>` is the one URL of a CID (a path prefix is kept). */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/**
 * One request with retries. Returns the final status and body (empty for HEAD) for any answer that is not
 * retryable; throws SourceUnavailableError (naming the URL, the reason and the attempts) otherwise, and at
 * once for a body over `maxBytes`.
 */
export async function httpRequest(url: string, method: "GET" | "HEAD", accept: string, options: HttpSourceOptions = {}): Promise<HttpAnswer> {
  const o = { ...DEFAULT_HTTP_SOURCE_OPTIONS, ...options };
  for (let attempt = 0; ; attempt++) {
    let why: string;
    let status: number | undefined;
    let cause: unknown;
    try {
      const res = await fetch(url, { method, headers: { accept }, signal: AbortSignal.timeout(o.timeoutMs), redirect: "follow" });
      status = res.status;
      if (res.status >= 500 || RETRYABLE.has(res.status)) {
        await res.body?.cancel().catch(() => {});
        why = `HTTP ${res.status}`;
      } else {
        return { status: res.status, body: method === "HEAD" || res.status !== 200 ? await drain(res) : await readCapped(res, url, o.maxBytes) };
      }
    } catch (err) {
      if (err instanceof SourceUnavailableError) throw err;
      why = describeFailure(err, o.timeoutMs);
      cause = err;
    }
    if (attempt >= o.retries) {
      throw new SourceUnavailableError(`${method} ${url}: ${why} (${attempt + 1} attempt${attempt ? "s" : ""})`, { url, ...(status !== undefined ? { status } : {}), cause });
    }
    const delay = o.retryDelayMs * 2 ** attempt;
    log.debug({ url, method, attempt, why, delay }, "request failed; retrying");
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** Discards a body we do not use (a 404 page), so the connection can be reused. */
async function drain(res: Response): Promise<Uint8Array> {
  await res.body?.cancel().catch(() => {});
  return new Uint8Array();
}

async function readCapped(res: Response, url: string, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  const tooBig = (n: number) => new SourceUnavailableError(`GET ${url}: response of ${n} bytes is over the limit of ${maxBytes}`, { url, status: res.status });
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooBig(declared);
  }
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooBig(total);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  if (e?.cause?.code) return e.cause.code;
  return e?.cause?.message ?? e?.message ?? String(err);
}
