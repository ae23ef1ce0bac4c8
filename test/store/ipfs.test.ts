/**
 * Content over IPFS between real Helia nodes on loopback (TCP, noise, yamux, bitswap), each with its own state
 * directory: the provider's node holds a trained job's checkpoints in its content store; the auditor's node, given
 * only the provider's multiaddr, fetches them by CID and the audit passes through the checks/ pipeline. A node that
 * serves other bytes under a CID is never believed: alone it yields IpfsFetchTimeoutError and nothing is cached;
 * beside an honest node the honest bytes win. The board answers over /pouw/board/1.0.0.
 */
import { expect } from "chai";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { getAddress } from "viem";
import { LocalDirBoard } from "../../verifier/src/board/index.ts";
import { auditRun, openTraceDir } from "../../verifier/src/checks/index.ts";
import { copyFile, mkdir } from "node:fs/promises";
import { cidOf, CidMismatchError, LocalDirStore, type ContentStore } from "../../verifier/src/store/index.ts";
import { checkMultiaddr, IpfsDialError, IpfsFetchTimeoutError, InvalidMultiaddrError, readAll, startIpfsNode, StoreBlockstore, type IpfsNode, type Libp2pStream } from "../../verifier/src/store/ipfs.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { SourceUnavailableError } from "../../verifier/src/net/index.ts";
import { freePort } from "../e2e/helpers.ts";
import { Fixture } from "../checks/fixture.ts";

/** A store that claims every CID and serves the same wrong bytes for each: what a cheating peer's node serves. */
class LyingStore implements ContentStore {
  readonly junk = new TextEncoder().encode("not the checkpoint you asked for");
  async put(bytes: Uint8Array): Promise<string> {
    return cidOf(bytes);
  }
  async get(): Promise<Uint8Array> {
    return this.junk;
  }
  async has(): Promise<boolean> {
    return true;
  }
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

describe("store/ipfs: two Helia nodes on loopback", function () {
  this.timeout(60_000);
  const fx = new Fixture();
  const nodes: IpfsNode[] = [];
  let provider: IpfsNode;
  let traceDir: string;
  const market = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");

  before(async () => {
    await fx.setup();
    traceDir = (await fx.trace("honest")).dir;
    const board = new LocalDirBoard(join(fx.dir, "provider-board"));
    await board.write({ market, jobId: 5n, entry: "provenance" }, cidOf(new TextEncoder().encode("a record")));
    provider = await startIpfsNode(new LocalDirStore(join(traceDir, "store")), { dir: join(fx.dir, "provider-ipfs"), board });
    nodes.push(provider);
  });

  after(async () => {
    // INVARIANT: every node is stopped before its directory goes: readers first (the newest nodes, which may still be
    // writing fetched blocks into their stores), the provider last; a node that fails to stop fails the hook
    for (const n of [...nodes].reverse()) await n.stop();
    await rm(join(fx.dir, "victim"), { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    await fx.teardown();
  });

  it("the auditor's node fetches the job's checkpoints by CID from the provider's node and the audit passes", async () => {
    const dir = join(fx.dir, "auditor");
    await mkdir(dir, { recursive: true });
    await copyFile(join(traceDir, "trace.json"), join(dir, "trace.json")); // the commitments; no content
    const local = new LocalDirStore(join(dir, "store"));
    const auditor = await startIpfsNode(local, { dir: join(dir, "ipfs"), peers: provider.multiaddrs(), timeoutMs: 10_000 });
    nodes.push(auditor);
    expect(auditor.connectedPeers()).to.deep.equal([provider.peerId]);
    expect(auditor.peerId).to.not.equal(provider.peerId);

    const ctx = await openTraceDir(fx.run, dir, undefined, [auditor.source()]);
    const report = await auditRun(ctx, { checks: ["recompute"] });
    expect(report.ok).to.equal(true);
    expect(report.segments.map((s) => s.ok)).to.deep.equal([true, true, true]);
    // every checkpoint came over bitswap, verified, into the auditor's own store
    const cached = await readdir(join(dir, "store"));
    for (const s of ctx.trace.segments) expect(cached).to.include(s.checkpointCid);
  });

  it("answers board pointers over /pouw/board/1.0.0 and nothing for a key it does not hold", async () => {
    const reader = await startIpfsNode(new LocalDirStore(join(fx.dir, "reader", "store")), { dir: join(fx.dir, "reader", "ipfs"), peers: provider.multiaddrs(), timeoutMs: 5_000 });
    nodes.push(reader);
    expect(await reader.board().read({ market, jobId: 5n, entry: "provenance" })).to.equal(cidOf(new TextEncoder().encode("a record")));
    expect(await reader.board().read({ market, jobId: 6n, entry: "provenance" })).to.equal(undefined);
  });

  it("reads an answer whose sender closed before the reader listened (the board request's race under load)", async () => {
    const reader = nodes[2]!; // connected to the provider (board test above)
    const protocol = "/pouw/test-answer-and-close/1.0.0";
    await provider.helia.libp2p.handle(protocol, async (s) => {
      const stream = s as unknown as Libp2pStream;
      stream.send(new TextEncoder().encode("the answer"));
      await stream.close();
    });
    try {
      const stream = (await reader.helia.libp2p.dialProtocol(provider.helia.libp2p.peerId, protocol)) as unknown as Libp2pStream;
      // the answer and the remote's close arrive before anyone listens (the async iterator then never ended)
      const deadline = Date.now() + 10_000;
      while (stream.remoteWriteStatus !== "closed" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(stream.remoteWriteStatus).to.equal("closed");
      expect(new TextDecoder().decode(await readAll(stream, 256, 5_000))).to.equal("the answer");
      await stream.close();
    } finally {
      await provider.helia.libp2p.unhandle(protocol);
    }
  });

  it("a node serving other bytes under a CID is dropped by CID: alone, a named timeout and nothing cached; beside an honest node, the honest bytes", async () => {
    const liar = await startIpfsNode(new LyingStore(), { dir: join(fx.dir, "liar-ipfs") });
    nodes.push(liar);
    const cid = (await readdir(join(traceDir, "store")))[0]!;

    const dir = join(fx.dir, "victim");
    const local = new LocalDirStore(join(dir, "store"));
    const victim = await startIpfsNode(local, { dir: join(dir, "ipfs"), peers: liar.multiaddrs(), timeoutMs: 1_000 });
    nodes.push(victim);
    const direct = await rejection(victim.source().get(cid));
    expect(direct).to.be.instanceOf(IpfsFetchTimeoutError);
    expect(direct.message).to.include(liar.peerId);
    // through the layered store: "unavailable, retry" (the bot records no verdict), never the liar's bytes
    const err = await rejection(new LayeredStore(local, [victim.source()]).get(cid));
    expect(err).to.be.instanceOf(SourceUnavailableError);
    expect(err.cause).to.be.instanceOf(IpfsFetchTimeoutError);
    expect(await local.has(cid)).to.equal(false);

    await victim.connect(provider.multiaddrs()[0]!);
    const bytes = await new LayeredStore(local, [victim.source()]).get(cid);
    expect(cidOf(bytes)).to.equal(cid);
    expect(await local.has(cid)).to.equal(true);
  });

  it("content nobody holds ends after the fetch timeout with IpfsFetchTimeoutError naming the CID, the peers asked and the wait", async () => {
    const dir = join(fx.dir, "absent");
    const local = new LocalDirStore(join(dir, "store"));
    const node = await startIpfsNode(local, { dir: join(dir, "ipfs"), peers: provider.multiaddrs(), timeoutMs: 1_500 });
    nodes.push(node);
    const cid = cidOf(new TextEncoder().encode("content that nobody holds"));
    const started = performance.now();
    const err = await rejection(new LayeredStore(local, [node.source()]).get(cid));
    const waited = performance.now() - started;
    // unavailable (retry later), not "absent for good" and not a hang: the bound is the configured timeout
    expect(err).to.be.instanceOf(SourceUnavailableError);
    const cause = err.cause as IpfsFetchTimeoutError;
    expect(cause).to.be.instanceOf(IpfsFetchTimeoutError);
    expect(cause.cid).to.equal(cid);
    expect(cause.peers).to.deep.equal([provider.peerId]);
    expect(cause.timeoutMs).to.equal(1_500);
    expect(cause.message).to.include(cid).and.include(provider.peerId).and.include("1500 ms");
    expect(waited).to.be.at.least(1_400);
    // no peer at all: named at once, nothing to wait for
    const alone = await startIpfsNode(new LocalDirStore(join(dir, "alone", "store")), { dir: join(dir, "alone", "ipfs"), timeoutMs: 60_000 });
    nodes.push(alone);
    const none = (await rejection(alone.source().get(cid))) as IpfsFetchTimeoutError;
    expect(none).to.be.instanceOf(IpfsFetchTimeoutError);
    expect(none.peers).to.deep.equal([]);
    expect(none.message).to.match(/no IPFS peer connected/);
  });

  it("fetches from a peer whose first identify failed (the process was busy 6 s after the dial): bitswap asks it only once identified", async () => {
    // the IPFS walkthrough's `provider run 1` at load 7: connected to the buyer's serve node, never sent it a want
    // (bitswap learns of a peer from identify, which libp2p runs once per connection with a 5 s timeout)
    const dir = join(fx.dir, "busy");
    const bytes = new TextEncoder().encode(`a manifest written after the serve node started ${Date.now()}`);
    const holder = await startIpfsNode(new LocalDirStore(join(dir, "holder", "store")), { dir: join(dir, "holder", "ipfs") });
    nodes.push(holder);
    const cid = await new LocalDirStore(join(dir, "holder", "store")).put(bytes);
    const reader = await startIpfsNode(new LocalDirStore(join(dir, "reader", "store")), { dir: join(dir, "reader", "ipfs"), timeoutMs: 8_000 });
    nodes.push(reader);
    const { multiaddr } = await import("@multiformats/multiaddr");
    await reader.helia.libp2p.dial(multiaddr(holder.multiaddrs()[0]!)); // libp2p's dial: identify runs in the background
    // the thread sleeps 6 s (no CPU): when it wakes, identify's 5 s timer fires before the answer is read
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 6_000);
    expect(reader.connectedPeers()).to.deep.equal([holder.peerId]);
    const got = await reader.source().get(cid);
    expect(cidOf(got)).to.equal(cid);
    // it also came into the reader's own store (the blockstore adapter)
    expect(await new LocalDirStore(join(dir, "reader", "store")).has(cid)).to.equal(true);
  });

  it("the blockstore adapter refuses a put whose bytes do not hash to the CID, and IpfsSource refuses bytes its blockstore returns for another CID", async () => {
    const { CID } = await import("multiformats/cid");
    const good = new TextEncoder().encode("the real block");
    const cid = CID.parse(cidOf(good));
    const adapter = new StoreBlockstore(new LocalDirStore(join(fx.dir, "adapter", "store")), 1 << 20);
    expect(await rejection(adapter.put(cid, new TextEncoder().encode("other bytes")))).to.be.instanceOf(CidMismatchError);
    expect(await adapter.has(cid)).to.equal(false);
    // a node whose own store lies (serves junk for every CID): the junk never leaves IpfsSource as the CID's bytes
    const liarLocal = await startIpfsNode(new LyingStore(), { dir: join(fx.dir, "liar-local-ipfs"), peers: provider.multiaddrs(), timeoutMs: 2_000 });
    nodes.push(liarLocal);
    expect(await rejection(liarLocal.source().get(cid.toString()))).to.be.instanceOf(CidMismatchError);
  });

  it("a tampered block in the node's own store is refused with CidMismatchError, not served as the CID", async () => {
    const dir = join(fx.dir, "tampered");
    const local = new LocalDirStore(join(dir, "store"));
    const bytes = new TextEncoder().encode("original");
    const cid = await local.put(bytes);
    const { writeFile } = await import("node:fs/promises");
    await writeFile(local.pathOf(cid), "changed!");
    const node = await startIpfsNode(local, { dir: join(dir, "ipfs"), peers: provider.multiaddrs(), timeoutMs: 2_000 });
    nodes.push(node);
    expect(await rejection(node.source().get(cid))).to.be.instanceOf(CidMismatchError);
  });

  it("names a bad multiaddr and an unreachable peer", async () => {
    expect(() => checkMultiaddr("/ip4/127.0.0.1/udp/4001/quic", { peer: false })).to.throw(InvalidMultiaddrError);
    expect(() => checkMultiaddr("/ip4/127.0.0.1/tcp/4001", { peer: true })).to.throw(InvalidMultiaddrError, /\/p2p\//);
    expect(() => checkMultiaddr(`/ip4/127.0.0.1/tcp/1/p2p/${provider.peerId}`, { peer: false })).to.throw(InvalidMultiaddrError);
    const dead = `/ip4/127.0.0.1/tcp/${await freePort()}/p2p/${nodes[3]!.peerId}`; // the liar's peer id (not connected to the provider) at a port nobody listens on
    const err = await rejection(provider.connect(dead));
    expect(err).to.be.instanceOf(IpfsDialError);
    expect((err as IpfsDialError).peer).to.equal(dead);
  });
});
