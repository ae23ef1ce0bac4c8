/**
 * The board protocol between IPFS peers (BOARD_PROTOCOL): a peer asks for one board key (a line of text) and the
 * other answers with the CID its LocalDirBoard holds for it, or nothing. Streams are read event by event with a size
 * and a time limit (readAll).
 */
import { parseBoardKey, type LocalDirBoard } from "../board/index.ts";
import { logger } from "../log/index.ts";
import { SourceUnavailableError } from "../net/index.ts";

const log = logger("ipfs");

/**
 * The board over libp2p: a request is one board key path and a newline (`<jobMarket>/<jobId>/<segment|provenance>`,
 * as `GET /board/...` of `pouw serve`), the answer the CID text or nothing. Pointers need no trust (board/).
 */
export const BOARD_PROTOCOL = "/pouw/board/1.0.0";
/** A request is a key path (about 60 bytes); an answer one CID. */
export const MAX_BOARD_MESSAGE = 256;

type StreamEvent = Event & { data?: Uint8Array | { subarray(): Uint8Array }; error?: Error };
export type Libp2pStream = {
  send(b: Uint8Array): boolean;
  close(): Promise<void>;
  abort(err: Error): void;
  readonly remoteWriteStatus: string;
  addEventListener(type: "message" | "remoteCloseWrite" | "close", fn: (evt: StreamEvent) => void): void;
  removeEventListener(type: "message" | "remoteCloseWrite" | "close", fn: (evt: StreamEvent) => void): void;
};

/**
 * Reads a stream until the remote closes its writable end, at most `max` bytes (more aborts it) and at most
 * `timeoutMs`. Event-based, not `for await`: the stream's async iterator ends only on a `remoteCloseWrite` it sees
 * fire, so one attached after the remote closed would wait out the timeout; here a close that came first is read
 * from `remoteWriteStatus` once the buffered data (dispatched in a microtask when the listener is added) is in.
 */
export function readAll(stream: Libp2pStream, max: number, timeoutMs: number): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.removeEventListener("message", onMessage);
      stream.removeEventListener("remoteCloseWrite", onEnd);
      stream.removeEventListener("close", onClose);
      if (err) reject(err);
      else resolve(concat(chunks, size));
    };
    const onMessage = (evt: StreamEvent) => {
      if (settled || evt.data === undefined) return;
      const b = evt.data instanceof Uint8Array ? evt.data : evt.data.subarray();
      size += b.byteLength;
      if (size > max) {
        stream.abort(new Error(`message over ${max} bytes`));
        finish(new SourceUnavailableError(`board message over ${max} bytes`, { url: "ipfs:board" }));
        return;
      }
      chunks.push(b);
    };
    const onEnd = () => finish();
    const onClose = (evt: StreamEvent) => finish(evt.error);
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${timeoutMs} ms`);
      stream.abort(err);
      finish(err);
    }, timeoutMs);
    stream.addEventListener("message", onMessage);
    stream.addEventListener("remoteCloseWrite", onEnd);
    stream.addEventListener("close", onClose);
    // the remote closed before we listened: its buffered bytes are dispatched in the microtask queued above, then end
    if (stream.remoteWriteStatus === "closed") queueMicrotask(() => queueMicrotask(onEnd));
  });
}

/** Answers one board request from `board` (the server side of BOARD_PROTOCOL); a bad key gets an empty answer. */
export async function answerBoard(board: LocalDirBoard, stream: Libp2pStream, timeoutMs: number): Promise<void> {
  try {
    const text = new TextDecoder().decode(await readAll(stream, MAX_BOARD_MESSAGE, timeoutMs)).trim();
    let cid: string | undefined;
    try {
      cid = await board.read(parseBoardKey(text.split("/")));
    } catch (err) {
      log.debug({ err: (err as Error).message }, "bad board request");
    }
    stream.send(new TextEncoder().encode(cid ?? ""));
    await stream.close();
  } catch (err) {
    log.debug({ err: (err as Error).message }, "board request failed");
    stream.abort(err as Error);
  }
}

export function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
