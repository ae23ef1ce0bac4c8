/**
 * The read-only HTTP server behind `pouw serve`: a content store and a board, for parties on other machines.
 *
 *   GET  /ipfs/<cid>                                 200 the raw bytes, `application/vnd.ipld.raw` (IPFS trustless
 *   HEAD /ipfs/<cid>                                     gateway path and type; `?format=raw` accepted)
 *   GET  /board/<jobMarket>/<jobId>/<segment>        200 the segment record's CID (text/plain)
 *   GET  /board/<jobMarket>/<jobId>/provenance       200 the provenance record's CID
 *   GET  /, /index.html, /app.js, ...                with `dapp`: the buyer dApp's built files (serve/dapp.ts)
 *   PUT  /ipfs/<cid>                                 with `upload`: stores the body as <cid> (201; 200 when already
 *                                                        held) after checking it hashes to <cid>
 *
 * 400 for a malformed CID, board key or path, 404 when absent, 405 for any other method (and PUT without `upload`),
 * 411 for a PUT without a Content-Length, 413 for a GET or HEAD with a body or a PUT body over `upload.maxBytes`, 507
 * for a PUT past the server's total upload quota (`upload.quotaBytes`),
 * 414 for an over-long URL, 422 for a PUT body that does not hash to its CID (nothing stored). Limits: header size,
 * header and request timeouts, keep-alive timeout, requests per socket and concurrent connections.
 *
 * INVARIANT: a request names content only through a parsed CID or a parsed board key (address, integers):
 * the raw path is never joined into a file path, so no path reaches outside the store and board.
 * INVARIANT: served content is read through the store, which verifies it against its CID first.
 * INVARIANT: an upload is stored only when its bytes hash to the CID in its path; no body over the limit is read.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIPv6 } from "node:net";
import { parseBoardKey, InvalidBoardKeyError, type BoardSource } from "../board/index.ts";
import { InputError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { cidOf, CidMismatchError, ContentNotFoundError, InvalidCidError, parseCid, type ContentSource, type ContentStore } from "../store/index.ts";
import { RAW_BLOCK_TYPE } from "../store/http.ts";
import { dappHeaders, type DappFiles } from "./dapp.ts";

const log = logger("serve");

/** The server cannot start (address in use, no permission, bad host). */
export class ServeError extends InputError {
  override name = "ServeError";
  override readonly code: string = "SERVE";
}

export type ContentServerOptions = {
  store: ContentSource;
  board?: BoardSource;
  /** The dApp's files by request path (loadDappFiles), served at / beside the content and the board. */
  dapp?: DappFiles;
  /** Accept `PUT /ipfs/<cid>` into `store` (what the dApp publishes a manifest or a small dataset with); off by default. */
  /** `quotaBytes`: the most bytes all uploads may add to the store over the server's life (507 beyond it). */
  upload?: { store: Pick<ContentStore, "put" | "has">; maxBytes: number; quotaBytes?: number };
  /** Default 127.0.0.1 (this machine only). */
  host?: string;
  /** 0 = an ephemeral port (default). */
  port?: number;
  /** Concurrent connections beyond which new ones are refused (default 64). */
  maxConnections?: number;
  /** A whole request, response included (default 120 000 ms). */
  requestTimeoutMs?: number;
  /** Receiving the request headers (default 10 000 ms). */
  headersTimeoutMs?: number;
};

export type ContentServer = {
  /** Base URL to give readers as `--source`. */
  url: string;
  host: string;
  port: number;
  server: Server;
  /** Stops accepting, lets requests in flight finish for up to `graceMs`, then cuts the rest. */
  close: (graceMs?: number) => Promise<void>;
};

export const MAX_URL_LENGTH = 2048;
/** Default largest upload: a manifest or a small dataset, not a checkpoint. */
export const DEFAULT_UPLOAD_MAX_BYTES = 16 * 1024 * 1024;
const MAX_HEADER_BYTES = 16 * 1024;

/** Starts the server and resolves once it listens. Throws ServeError when it cannot. */
export async function startContentServer(o: ContentServerOptions): Promise<ContentServer> {
  const host = o.host ?? "127.0.0.1";
  const server = createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, requestTimeout: o.requestTimeoutMs ?? 120_000, headersTimeout: o.headersTimeoutMs ?? 10_000, keepAliveTimeout: 5_000 },
    (req, res) => {
      handle(o, req, res).catch((err: unknown) => {
        log.error({ err, url: req.url }, "request failed");
        if (!res.headersSent) reply(res, req, 500, "internal error");
        else res.destroy();
      });
    },
  );
  server.maxConnections = o.maxConnections ?? 64;
  server.maxRequestsPerSocket = 1000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(new ServeError(`cannot listen on ${host}:${o.port ?? 0}: ${err.code ?? err.message}`, { cause: err }));
    server.once("error", onError);
    server.listen(o.port ?? 0, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (err) => log.error({ err }, "server error"));
  const port = (server.address() as { port: number }).port;
  const url = `http://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const close = (graceMs = 5_000) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    });
  log.info({ url }, "serving");
  return { url, host, port, server, close };
}

async function handle(o: ContentServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  res.on("finish", () => log.debug({ method: req.method, url: req.url?.slice(0, 200), status: res.statusCode, ms: Math.round(performance.now() - started) }, "request"));
  const raw = req.url ?? "";
  const put = req.method === "PUT" && o.upload !== undefined;
  if (req.method !== "GET" && req.method !== "HEAD" && !put) {
    res.setHeader("allow", o.upload ? "GET, HEAD, PUT" : "GET, HEAD");
    return reply(res, req, 405, o.upload ? `method ${req.method} not allowed: GET, HEAD, or PUT /ipfs/<cid>` : `method ${req.method} not allowed: this server is read-only (GET, HEAD; pouw serve --upload accepts PUT /ipfs/<cid>)`);
  }
  if (raw.length > MAX_URL_LENGTH) return reply(res, req, 414, `URL longer than ${MAX_URL_LENGTH} characters`);
  if (put) return acceptUpload(o.upload!, req, res, raw);
  const length = req.headers["content-length"];
  if ((length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined) return reply(res, req, 413, "requests take no body");
  const q = raw.indexOf("?");
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
  // INVARIANT: a dApp file is found by exact lookup of the path in the map loaded at start, never read by path
  const page = o.dapp?.get(path);
  if (page) {
    res.writeHead(200, dappHeaders(page));
    res.end(req.method === "HEAD" ? undefined : page.bytes);
    return;
  }
  if (path === "/") return reply(res, req, 404, "nothing here: GET /ipfs/<cid> or /board/<jobMarket>/<jobId>/<segment|provenance>");
  const parts = path.split("/").slice(1);
  // INVARIANT: every part is a plain name: no empty, dot or encoded part, so nothing is normalised into another path
  if (!path.startsWith("/") || parts.some((p) => p === "" || p === "." || p === ".." || /[%\\\0]/.test(p))) return reply(res, req, 400, "malformed path");
  if (parts[0] === "ipfs") return serveContent(o, req, res, parts.slice(1), query);
  if (parts[0] === "board") return serveBoard(o, req, res, parts.slice(1));
  return reply(res, req, 404, "unknown path: GET /ipfs/<cid> or /board/<jobMarket>/<jobId>/<segment|provenance>");
}

async function serveContent(o: ContentServerOptions, req: IncomingMessage, res: ServerResponse, parts: string[], query: URLSearchParams): Promise<void> {
  if (parts.length !== 1) return reply(res, req, 400, "a raw block has no sub-path: GET /ipfs/<cid>");
  let cid: string;
  try {
    cid = parseCid(parts[0]!).toString();
  } catch (err) {
    if (err instanceof InvalidCidError) return reply(res, req, 400, err.shortMessage.slice(0, 200));
    throw err;
  }
  const format = query.get("format");
  if (format !== null && format !== "raw") return reply(res, req, 400, `only format=raw is served, got ${JSON.stringify(format.slice(0, 32))}`);
  const headers = {
    "content-type": RAW_BLOCK_TYPE,
    "cache-control": "public, max-age=29030400, immutable",
    etag: `"${cid}.raw"`,
    "x-ipfs-path": `/ipfs/${cid}`,
    "x-content-type-options": "nosniff",
  };
  if (req.method === "HEAD") {
    if (!(await o.store.has(cid))) return reply(res, req, 404, `no content for ${cid}`);
    res.writeHead(200, headers);
    res.end();
    return;
  }
  let bytes: Uint8Array;
  try {
    bytes = await o.store.get(cid);
  } catch (err) {
    if (err instanceof ContentNotFoundError) return reply(res, req, 404, `no content for ${cid}`);
    if (err instanceof CidMismatchError) {
      // the local copy is corrupt: never serve it
      log.error({ cid, actual: err.actual }, "stored content does not match its CID; not served");
      return reply(res, req, 500, `stored content for ${cid} is corrupt`);
    }
    throw err;
  }
  res.writeHead(200, { ...headers, "content-length": bytes.byteLength });
  res.end(bytes);
}

async function serveBoard(o: ContentServerOptions, req: IncomingMessage, res: ServerResponse, parts: string[]): Promise<void> {
  let key;
  try {
    key = parseBoardKey(parts);
  } catch (err) {
    if (err instanceof InvalidBoardKeyError) return reply(res, req, 400, err.shortMessage);
    throw err;
  }
  const cid = o.board ? await o.board.read(key) : undefined;
  if (cid === undefined) return reply(res, req, 404, `no board entry ${parts.join("/")}`);
  const body = Buffer.from(cid);
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": body.byteLength, "cache-control": "no-cache", "x-content-type-options": "nosniff" });
  res.end(req.method === "HEAD" ? undefined : body);
}

/** Default total of new bytes uploads may add over a server's life: anyone who reaches the port may upload. */
export const DEFAULT_UPLOAD_QUOTA_BYTES = 256 * 1024 * 1024;
/** Bytes reserved or stored by the uploads of each server's upload option (reserved before the body is read). */
const uploadUsed = new WeakMap<object, number>();

/** PUT /ipfs/<cid>: the body, read up to the limit, stored when it hashes to <cid>. */
async function acceptUpload(upload: NonNullable<ContentServerOptions["upload"]>, req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
  const parts = raw.split("/").slice(1);
  if (raw.includes("?") || parts.length !== 2 || parts[0] !== "ipfs") return drain(req, res, 400, "uploads go to PUT /ipfs/<cid> (the CID of the body, raw codec)");
  let cid: string;
  try {
    cid = parseCid(parts[1]!).toString();
  } catch (err) {
    if (err instanceof InvalidCidError) return drain(req, res, 400, err.shortMessage.slice(0, 200));
    throw err;
  }
  const length = req.headers["content-length"];
  if (length === undefined || !/^[0-9]{1,12}$/.test(length)) return drain(req, res, 411, "an upload needs a Content-Length");
  // INVARIANT: no body over the limit is read: refused from its declared length, and cut if it sends more
  if (Number(length) > upload.maxBytes) return drain(req, res, 413, `upload of ${length} bytes is over this server's limit of ${upload.maxBytes} bytes`);
  // INVARIANT: all uploads together never add more than the quota to the store: each reserves its declared length before
  // its body is read and gives it back unless it stored new bytes
  const quota = upload.quotaBytes ?? DEFAULT_UPLOAD_QUOTA_BYTES;
  const used = uploadUsed.get(upload) ?? 0;
  if (used + Number(length) > quota) return drain(req, res, 507, `this server's upload quota is used: ${used} of ${quota} bytes (pouw serve --upload-quota-bytes)`);
  uploadUsed.set(upload, used + Number(length));
  let stored = false;
  try {
    stored = await receiveUpload(upload, req, res, cid, length);
  } finally {
    if (!stored) uploadUsed.set(upload, (uploadUsed.get(upload) ?? 0) - Number(length));
  }
}

/** Reads an upload's body and stores it when it hashes to `cid`; true when new bytes were stored. */
async function receiveUpload(upload: NonNullable<ContentServerOptions["upload"]>, req: IncomingMessage, res: ServerResponse, cid: string, length: string): Promise<boolean> {
  const chunks: Buffer[] = [];
  let got = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    got += chunk.byteLength;
    if (got > Number(length)) {
      drain(req, res, 400, `the body is longer than its Content-Length ${length}`);
      return false;
    }
    chunks.push(chunk);
  }
  if (got !== Number(length)) {
    reply(res, req, 400, `the body ended at ${got} of its Content-Length ${length} bytes`);
    return false;
  }
  const bytes = new Uint8Array(Buffer.concat(chunks));
  const actual = cidOf(bytes);
  if (actual !== cid) {
    reply(res, req, 422, `the body hashes to ${actual}, not ${cid}: nothing stored`);
    return false;
  }
  const had = await upload.store.has(cid);
  if (!had) await upload.store.put(bytes);
  log.info({ cid, bytes: bytes.byteLength, had }, "upload");
  const body = Buffer.from(`${cid}\n`);
  res.writeHead(had ? 200 : 201, { "content-type": "text/plain; charset=utf-8", "content-length": body.byteLength, location: `/ipfs/${cid}`, "cache-control": "no-store", "x-content-type-options": "nosniff" });
  res.end(body);
  return !had;
}

/** Replies `status` and closes the connection, so that an unread body is never taken as the next request. */
function drain(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  res.setHeader("connection", "close");
  reply(res, req, status, message);
  req.resume();
}

function reply(res: ServerResponse, req: IncomingMessage, status: number, message: string): void {
  const body = Buffer.from(`${message}\n`);
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": body.byteLength, "cache-control": "no-store", "x-content-type-options": "nosniff" });
  res.end(req.method === "HEAD" ? undefined : body);
}
