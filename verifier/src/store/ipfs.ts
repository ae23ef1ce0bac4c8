/**
 * Content over IPFS: a Helia node whose blockstore IS the local content store (LocalDirStore), so every file the
 * party holds (checkpoints, segment records, provenance records, manifests) is served over bitswap under the same
 * CIDv1 raw/sha2-256 the store, the chain and `pouw serve` use, and every block fetched from a peer lands in the
 * store, verified. `IpfsSource` is the fetching side, a ContentSource kept in the LayeredStore order after the local
 * store and before the HTTP sources (`--source`, `pouw serve` or a trustless gateway), which stay the fallback.
 *
 * The network is closed by construction: libp2p with TCP only, on the listen addresses given (default loopback, a
 * free port), noise encryption, yamux, identify; no bootstrap list, no mDNS, no DHT, no relay, no WebRTC, no
 * delegated HTTP routing and no public gateways (Helia's defaults have all of these; none is configured here).
 * Peers are dialled explicitly (`--ipfs-peer` multiaddrs, or the ones a provider announced: store/ipfs-peers.ts).
 * The node's key lives in its datastore (datastore-fs, `<state dir>/ipfs`), so its peer id is stable across runs;
 * a peer id is the hash of the node's public key and noise proves the remote holds it.
 *
 * INVARIANT: no byte is returned or stored unless it hashes to the requested CID: Helia checks every block a
 * broker retrieves against its CID (a peer that serves other bytes is never matched to the want, so its answer is
 * dropped), the blockstore adapter re-checks every put, and IpfsSource.get checks again with verifyCid.
 * IMPORTANT: one content = one block. Bitswap moves blocks of at most `maxBlockBytes` (default 16 MiB, both
 * directions); larger content is fetched over the HTTP fallback.
 *
 * helia and libp2p are imported lazily (startIpfsNode), so a command that does not use IPFS never loads them.
 *
 * @example
 *   const local = new LocalDirStore(".pouw/store");
 *   const node = await startIpfsNode(local, { dir: ".pouw/ipfs", peers: ["/ip4/127.0.0.1/tcp/4001/p2p/12D3Koo..."] });
 *   const store = new LayeredStore(local, [node.source()]);
 *   const bytes = await store.get("bafkrei...");
 *   await node.stop();
 */
import { readFile, writeFile } from "node:fs/promises";
import type { CID } from "multiformats/cid";
import { InputError, PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import { boardKeyPath, type BoardKey, type BoardSource, type LocalDirBoard } from "../board/index.ts";
import { ContentNotFoundError, InvalidCidError, parseCid, verifyCid, type ContentSource, type ContentStore, type GetOptions } from "./index.ts";
import { lockDatastore, StoreBlockstore } from "./ipfs-blockstore.ts";
import { checkMultiaddr } from "./multiaddr.ts";

// the multiaddr check lives in multiaddr.ts (no IPFS or viem code), so the config can validate flags without loading this module
export { checkMultiaddr, InvalidMultiaddrError } from "./multiaddr.ts";
import { answerBoard, BOARD_PROTOCOL, concat, MAX_BOARD_MESSAGE, readAll, type Libp2pStream } from "./ipfs-protocol.ts";

export { StoreBlockstore } from "./ipfs-blockstore.ts";
export { BOARD_PROTOCOL, readAll, type Libp2pStream } from "./ipfs-protocol.ts";

const log = logger("ipfs");

/** Default listen address: loopback, a free port. */
export const DEFAULT_IPFS_LISTEN = "/ip4/127.0.0.1/tcp/0";
/** Largest block moved over bitswap, both directions (the HTTP fallback carries anything larger). */
export const DEFAULT_MAX_BLOCK_BYTES = 16 << 20;
export const DEFAULT_IPFS_TIMEOUT_MS = 30_000;
/** How long libp2p's own identify of a new connection waits (@libp2p/identify's default, not set here). */
const LIBP2P_IDENTIFY_TIMEOUT_MS = 5_000;

export type IpfsOptions = {
  /** The node's datastore directory (peer key, peer store), e.g. `<state dir>/ipfs`. */
  readonly dir: string;
  /** TCP multiaddrs to listen on (default loopback, a free port). */
  readonly listen?: readonly string[];
  /** Peers to dial at start: multiaddrs ending in /p2p/<peer id>. */
  readonly peers?: readonly string[];
  /**
   * Per fetch, the longest wait for the connected peers to serve a block (default 30 000 ms): content nobody holds
   * ends here with IpfsFetchTimeoutError. Also bounds each dial and board request.
   */
  readonly timeoutMs?: number;
  readonly maxBlockBytes?: number;
  /** The party's board, answered over BOARD_PROTOCOL to connected peers (read-only). */
  readonly board?: LocalDirBoard;
};


/** A peer could not be dialled (refused, timed out, or its key does not match the /p2p/ peer id). */
export class IpfsDialError extends PouwError {
  override name = "IpfsDialError";
  override readonly code: string = "IPFS_DIAL";
  readonly peer: string;
  constructor(peer: string, message: string, cause?: unknown) {
    super(message, { cause });
    this.peer = peer;
  }
}

/**
 * No connected peer served bytes matching the CID within the fetch timeout (`--ipfs-timeout`): none has it (content
 * nobody holds ends here, bounded, never a hang), none is connected, or the ones that answered served other bytes
 * (dropped by CID). Names the CID, the peers asked and the wait. A SourceUnavailableError: the content may exist,
 * retry later (the challenger bot records no verdict on it).
 */
export class IpfsFetchTimeoutError extends SourceUnavailableError {
  override name = "IpfsFetchTimeoutError";
  override readonly code: string = "IPFS_FETCH_TIMEOUT";
  readonly cid: string;
  /** The peer ids that were connected (asked over bitswap) during the fetch; empty when none was. */
  readonly peers: readonly string[];
  /** How long the fetch waited (0 when no peer was connected: nothing to wait for). */
  readonly timeoutMs: number;
  constructor(cid: string, o: { peers: readonly string[]; timeoutMs: number; cause?: unknown }) {
    super(
      o.peers.length === 0
        ? `${cid}: no IPFS peer connected (pass --ipfs-peer, or the job's party has not announced a reachable node)`
        : `${cid}: none of the ${o.peers.length} connected IPFS peer(s) (${o.peers.join(", ")}) served matching bytes within ${o.timeoutMs} ms (--ipfs-timeout)`,
      { url: `ipfs:${cid}`, cause: o.cause },
    );
    this.cid = cid;
    this.peers = Object.freeze([...o.peers]);
    this.timeoutMs = o.timeoutMs;
  }
}

type Helia = Awaited<ReturnType<typeof import("helia").createHelia>>;

/** A running Helia node over the local content store. */
export class IpfsNode {
  readonly helia: Helia;
  readonly timeoutMs: number;
  readonly peerId: string;
  private readonly _multiaddr: typeof import("@multiformats/multiaddr").multiaddr;
  private readonly _release: () => Promise<void>;
  private readonly _lock: { holder: boolean; addrsFile: string };
  /** Ids of the open connections whose identify completed (bitswap knows the remote speaks it): see _watchIdentify. */
  private readonly _identified = new Set<string>();
  /** Connections whose identify this node is running again, and the watchdog timers (cleared on stop). */
  private readonly _reidentifying = new Map<string, Promise<void>>();
  private readonly _timers = new Set<ReturnType<typeof setTimeout>>();
  private _stopped = false;

  constructor(
    helia: Helia,
    timeoutMs: number,
    multiaddr: typeof import("@multiformats/multiaddr").multiaddr,
    release: () => Promise<void>,
    lock: { holder: boolean; addrsFile: string } = { holder: true, addrsFile: "" },
  ) {
    this.helia = helia;
    this.timeoutMs = timeoutMs;
    this.peerId = helia.libp2p.peerId.toString();
    this._multiaddr = multiaddr;
    this._release = release;
    this._lock = lock;
    const events = helia.libp2p as unknown as { addEventListener(type: string, fn: (evt: CustomEvent<Libp2pConnection & { connection?: Libp2pConnection }>) => void): void };
    events.addEventListener("peer:identify", (evt) => void (evt.detail.connection && this._identified.add(evt.detail.connection.id)));
    events.addEventListener("connection:open", (evt) => this._watchIdentify(evt.detail));
    events.addEventListener("connection:close", (evt) => {
      this._identified.delete(evt.detail.id);
      this._reidentifying.delete(evt.detail.id);
    });
  }

  /** Whether this node holds the state dir's key (false: another process's node does; this one's key is temporary). */
  get holdsStateKey(): boolean {
    return this._lock.holder;
  }

  /**
   * The addresses of the state dir's node, the one worth announcing (its peer id is stable): this node's when it
   * holds the key, else the ones the holding process wrote to `<dir>.addrs` (e.g. `pouw serve --ipfs`), checked.
   * Empty when the holder wrote none.
   */
  async stateDirAddrs(): Promise<string[]> {
    if (this._lock.holder) return this.multiaddrs();
    const text = await readFile(this._lock.addrsFile, "utf8").catch(() => "[]");
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch {
      list = [];
    }
    if (!Array.isArray(list)) return [];
    return list.filter((a): a is string => {
      if (typeof a !== "string") return false;
      try {
        checkMultiaddr(a, { peer: true });
        return true;
      } catch {
        return false;
      }
    });
  }

  /** The addresses peers dial, each ending in /p2p/<this peer id>. */
  multiaddrs(): string[] {
    return this.helia.libp2p.getMultiaddrs().map((a) => a.toString());
  }

  /** The peer ids this node is connected to. */
  connectedPeers(): string[] {
    return [...new Set(this.helia.libp2p.getConnections().map((c) => c.remotePeer.toString()))];
  }

  /**
   * Dials `addr` (a multiaddr ending in /p2p/<peer id>); noise authenticates the peer id. Throws IpfsDialError.
   */
  async connect(addr: string): Promise<void> {
    checkMultiaddr(addr, { peer: true });
    if (addr.endsWith(`/p2p/${this.peerId}`)) return; // ourselves (a party that lists its own announcement)
    try {
      await this.helia.libp2p.dial(this._multiaddr(addr), { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new IpfsDialError(addr, `cannot connect to IPFS peer ${addr}: ${(err as Error).message}`, err);
    }
    log.debug({ peer: addr }, "connected");
  }

  /**
   * The identify watchdog of one connection: once libp2p's own identify of it has surely ended (its 5 s timeout
   * after the connection opened), runs identify again unless it completed.
   *
   * IMPORTANT: bitswap sends wants only to the peers its topology was told about, and libp2p tells it only when
   * identify completes. libp2p runs identify once per connection, with a 5 s timeout; when that fails (the process
   * busy for 5 s while it loads modules, or a loaded machine: a timer fires before the I/O it waited for is read)
   * the connection stays open, `connectedPeers()` lists the peer, and no want is ever sent to it: every fetch from it
   * ended in IpfsFetchTimeoutError (the IPFS walkthrough's `provider run 1` did, at load 7). Once identify
   * completes, bitswap sends the peer the whole want list, so a fetch already waiting is answered.
   * test/store/ipfs.test.ts plays it by sleeping the thread 6 s after a dial.
   */
  private _watchIdentify(c: Libp2pConnection): void {
    const at = c.timeline.open + LIBP2P_IDENTIFY_TIMEOUT_MS + 250;
    const timer = setTimeout(() => {
      this._timers.delete(timer);
      this.reidentifyStale();
    }, Math.max(0, at - Date.now()));
    timer.unref();
    this._timers.add(timer);
  }

  /**
   * Runs identify again (in the background, retried until the fetch timeout) on every open connection whose
   * libp2p identify has ended without completing (see _watchIdentify). Never throws: a peer that cannot be
   * identified is logged, and a fetch from it names it in IpfsFetchTimeoutError.
   */
  reidentifyStale(): void {
    if (this._stopped) return;
    const identify = (this.helia.libp2p as unknown as { services: { identify?: { identify(c: unknown, o: { signal: AbortSignal }): Promise<unknown> } } }).services.identify;
    if (!identify) return;
    for (const c of this.helia.libp2p.getConnections() as unknown as Libp2pConnection[]) {
      if (c.status !== "open" || this._identified.has(c.id) || this._reidentifying.has(c.id)) continue;
      if (Date.now() < c.timeline.open + LIBP2P_IDENTIFY_TIMEOUT_MS + 250) continue; // libp2p's own may still be running
      const peer = c.remotePeer.toString();
      const deadline = Date.now() + this.timeoutMs;
      const run = (async () => {
        // retried: the remote refuses a second identify stream until it has closed the first (aborted) one
        for (let attempt = 1; ; attempt++) {
          if (this._stopped || this._identified.has(c.id) || c.status !== "open") return;
          try {
            await identify.identify(c, { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
            this._identified.add(c.id);
            log.info({ peer, attempt }, "IPFS peer identified again (libp2p's identify of the connection had not completed): bitswap now asks it");
            return;
          } catch (err) {
            if (Date.now() + 200 * attempt >= deadline) {
              log.warn({ peer, attempt, err: (err as Error).message }, "IPFS peer not identified: bitswap does not ask it");
              return;
            }
            await new Promise((r) => setTimeout(r, 200 * attempt).unref());
          }
        }
      })().finally(() => this._reidentifying.delete(c.id));
      this._reidentifying.set(c.id, run);
    }
  }

  /** The connected peers' boards, as a BoardSource (what a LayeredBoard lists after the local board). */
  board(): IpfsBoard {
    return new IpfsBoard(this);
  }

  /** This node as a ContentSource (what a LayeredStore lists after the local store). */
  source(): IpfsSource {
    return new IpfsSource(this);
  }

  /** Stops libp2p and releases the datastore (idempotent). */
  async stop(): Promise<void> {
    if (this._stopped) return;
    this._stopped = true;
    for (const t of this._timers) clearTimeout(t);
    this._timers.clear();
    await this.helia.stop();
    await this._release();
  }
}

/**
 * Fetches content from the connected peers over bitswap. Verified bytes are stored in the local store by the
 * node's blockstore (the adapter), so a LayeredStore's cache write after it is a no-op.
 */
export class IpfsSource implements ContentSource {
  readonly node: IpfsNode;
  constructor(node: IpfsNode) {
    this.node = node;
  }

  async get(cid: string, options: GetOptions = {}): Promise<Uint8Array> {
    const parsed = parseCid(cid);
    const canonical = parsed.toString();
    this.node.reidentifyStale(); // a connection whose identify failed gets no wants (IpfsNode._watchIdentify)
    const asked = new Set(this.node.connectedPeers());
    if (asked.size === 0) throw new IpfsFetchTimeoutError(canonical, { peers: [], timeoutMs: 0 });
    // a peer that connects during the wait is asked too (bitswap sends it the want list): name it if it fails
    const onConnect = (evt: CustomEvent<{ toString(): string }>) => asked.add(evt.detail.toString());
    this.node.helia.libp2p.addEventListener("peer:connect", onConnect as never);
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of this.node.helia.blockstore.get(parsed as never, { signal: AbortSignal.timeout(this.node.timeoutMs) })) {
        size += chunk.byteLength;
        if (options.maxBytes !== undefined && size > options.maxBytes) throw new SourceUnavailableError(`${canonical} over IPFS: over the cap of ${options.maxBytes} bytes`, { url: `ipfs:${canonical}` });
        chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof SourceUnavailableError || err instanceof ContentNotFoundError) throw err;
      const name = (err as Error).name;
      // Helia gives up with LoadBlockFailedError when the signal fires: no broker got a block matching the CID
      if (name === "AbortError" || name === "TimeoutError" || name === "LoadBlockFailedError") {
        const e = new IpfsFetchTimeoutError(canonical, { peers: [...asked], timeoutMs: this.node.timeoutMs, cause: err });
        log.info({ cid: canonical, peers: e.peers, timeoutMs: e.timeoutMs }, "no IPFS peer served the content in time");
        throw e;
      }
      throw err;
    } finally {
      this.node.helia.libp2p.removeEventListener("peer:connect", onConnect as never);
    }
    const bytes = chunks.length === 1 ? chunks[0]! : concat(chunks, size);
    verifyCid(canonical, bytes, `ipfs:${this.node.peerId}`);
    return bytes;
  }

  /** True when a connected peer serves it within the timeout (a fetch: it is then stored locally). */
  async has(cid: string): Promise<boolean> {
    try {
      await this.get(cid);
      return true;
    } catch (err) {
      if (err instanceof SourceUnavailableError || err instanceof ContentNotFoundError) return false;
      throw err;
    }
  }

  toString(): string {
    return `ipfs:${this.node.peerId}`;
  }
}

/**
 * The boards of the connected peers (BOARD_PROTOCOL), asked in turn; the first CID a peer answers is returned
 * (LayeredBoard then checks the record it names, and only when that is rejected asks its next source).
 */
export class IpfsBoard implements BoardSource {
  readonly node: IpfsNode;
  constructor(node: IpfsNode) {
    this.node = node;
  }

  async read(key: BoardKey): Promise<string | undefined> {
    const peers = this.node.helia.libp2p.getConnections().map((c) => c.remotePeer);
    const seen = new Set<string>();
    let failed: unknown;
    let answered = 0;
    for (const peer of peers) {
      if (seen.has(peer.toString())) continue;
      seen.add(peer.toString());
      try {
        const stream = (await this.node.helia.libp2p.dialProtocol(peer, BOARD_PROTOCOL, { signal: AbortSignal.timeout(this.node.timeoutMs) })) as unknown as Libp2pStream;
        // IMPORTANT: listen before closing our end: an answer and the remote's close that arrive while close() is
        // pending would otherwise be missed (the read then waited out its timeout, a flake under load)
        const answer = readAll(stream, MAX_BOARD_MESSAGE, this.node.timeoutMs);
        answer.catch(() => {}); // awaited below; a failed send must not leave it unhandled
        stream.send(new TextEncoder().encode(`${boardKeyPath(key)}\n`));
        await stream.close();
        const text = new TextDecoder().decode(await answer).trim();
        answered++;
        if (text === "") continue;
        try {
          return parseCid(text).toString();
        } catch (err) {
          if (!(err instanceof InvalidCidError)) throw err;
          log.warn({ peer: peer.toString() }, "board answer is not a CID; ignored");
        }
      } catch (err) {
        // a peer without the protocol (or gone) is not an answer; ask the next
        log.debug({ peer: peer.toString(), err: (err as Error).message }, "board not read from peer");
        failed = err;
      }
    }
    // every connected peer failed to answer: the pointer may be there (retry), not "absent"
    if (answered === 0 && seen.size > 0) throw new SourceUnavailableError(`board ${boardKeyPath(key)} over IPFS: none of ${seen.size} connected peer(s) answered`, { url: "ipfs:board", cause: failed });
    return undefined;
  }

  toString(): string {
    return `ipfs-board:${this.node.peerId}`;
  }
}

/** What the identify watchdog reads of a libp2p connection. */
type Libp2pConnection = { id: string; status: string; timeline: { open: number }; remotePeer: { toString(): string } };

/**
 * Starts a Helia node over `local` (the party's LocalDirStore): datastore in `options.dir`, TCP on the listen
 * addresses, the given peers dialled (a peer that cannot be dialled is logged and skipped: the node may still
 * reach others; IpfsSource.get says when none is connected).
 */
export async function startIpfsNode(local: ContentStore, options: IpfsOptions): Promise<IpfsNode> {
  const listen = (options.listen && options.listen.length > 0 ? options.listen : [DEFAULT_IPFS_LISTEN]).map((a) => checkMultiaddr(a, { peer: false }));
  const peers = (options.peers ?? []).map((a) => checkMultiaddr(a, { peer: true }));
  const timeoutMs = options.timeoutMs ?? DEFAULT_IPFS_TIMEOUT_MS;
  const maxBlockBytes = options.maxBlockBytes ?? DEFAULT_MAX_BLOCK_BYTES;
  const [{ createHelia }, { tcp }, { noise }, { yamux }, { identify }, { FsDatastore }, { multiaddr }] = await Promise.all([
    import("helia"),
    import("@libp2p/tcp"),
    import("@chainsafe/libp2p-noise"),
    import("@chainsafe/libp2p-yamux"),
    import("@libp2p/identify"),
    import("datastore-fs"),
    import("@multiformats/multiaddr"),
  ]);
  const lock = await lockDatastore(options.dir);
  const datastore = new FsDatastore(lock.dir);
  await datastore.open();
  const helia = await createHelia({
    // interface-blockstore's types are nested per package version; the adapter implements the v7 shape helia 7 calls
    blockstore: new StoreBlockstore(local, maxBlockBytes) as never,
    datastore: datastore as never,
    // no delegated routers, no recursive gateways: nothing is asked outside the given peers
    http: { delegatedRouters: [], recursiveGateways: [] },
    bitswap: { maxIncomingMessageSize: maxBlockBytes + (64 << 10), maxOutgoingMessageSize: maxBlockBytes + (64 << 10) },
    libp2p: {
      addresses: { listen: [...listen] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      peerDiscovery: [],
      services: { identify: identify() },
      connectionMonitor: { enabled: false },
    } as never,
  });
  await helia.start();
  const node = new IpfsNode(
    helia,
    timeoutMs,
    multiaddr,
    async () => {
      await datastore.close();
      await lock.release();
    },
    lock,
  );
  if (lock.holder) await writeFile(lock.addrsFile, JSON.stringify(node.multiaddrs()) + "\n");
  const board = options.board;
  if (board) await helia.libp2p.handle(BOARD_PROTOCOL, (stream) => answerBoard(board, stream as unknown as Libp2pStream, timeoutMs));
  log.info({ peerId: node.peerId, addrs: node.multiaddrs() }, "IPFS node started");
  for (const p of peers) {
    try {
      await node.connect(p);
    } catch (err) {
      if (!(err instanceof IpfsDialError)) throw err;
      log.warn({ peer: p, err: err.message }, "IPFS peer not reachable; continuing with the others");
    }
  }
  return node;
}
