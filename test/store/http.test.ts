/**
 * HttpContentStore and LayeredStore against real loopback servers: the `pouw serve` server (round trip), a
 * tampering server that answers other bytes, servers that fail then recover, never answer, or answer too
 * much, and a port nobody listens on. The cache must only ever hold bytes that match their CID.
 */
import { expect } from "chai";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SourceUnavailableError } from "../../verifier/src/net/index.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { CidMismatchError, cidOf, ContentNotFoundError, InvalidCidError, LocalDirStore } from "../../verifier/src/store/index.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { freePort } from "../e2e/helpers.ts";

/** A loopback server with a custom handler; counts requests. */
async function fakeServer(handler: (path: string, n: number, res: import("node:http").ServerResponse) => void): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server: Server = createServer((req, res) => handler(req.url ?? "", ++n, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => n,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

const fast = { retries: 2, retryDelayMs: 10, timeoutMs: 2_000 };

describe("store: HTTP sources and the layered store", function () {
  this.timeout(30_000);
  let dir: string;
  let provider: LocalDirStore;
  let server: ContentServer;
  const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 31) % 256);
  let cid: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pouw-http-store-"));
    provider = new LocalDirStore(join(dir, "provider"));
    cid = await provider.put(bytes);
    server = await startContentServer({ store: provider, port: 0 });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("round trip: get returns the served bytes, has answers by HEAD", async () => {
    const remote = new HttpContentStore(`${server.url}/`, fast);
    expect(remote.urlOf(cid)).to.equal(`${server.url}/ipfs/${cid}`);
    expect(Buffer.from(await remote.get(cid)).equals(Buffer.from(bytes))).to.equal(true);
    expect(await remote.has(cid)).to.equal(true);
    const absent = cidOf(new Uint8Array([42]));
    expect(await remote.has(absent)).to.equal(false);
    const err = await rejection(remote.get(absent));
    expect(err).to.be.instanceOf(ContentNotFoundError);
    expect(err.message).to.include(`${server.url}/ipfs/${absent}`);
    expect(await rejection(remote.get("not-a-cid"))).to.be.instanceOf(InvalidCidError);
  });

  it("layered: fetches from the remote once, caches verified bytes, then reads locally", async () => {
    const local = new LocalDirStore(join(dir, "reader-1"));
    const layered = new LayeredStore(local, [new HttpContentStore(server.url, fast)]);
    expect(await local.has(cid)).to.equal(false);
    expect(await layered.has(cid)).to.equal(true);
    expect(Buffer.from(await layered.get(cid)).equals(Buffer.from(bytes))).to.equal(true);
    expect(await local.has(cid)).to.equal(true);
    // the cache answers now, with the remote gone
    const offline = new LayeredStore(local, [new HttpContentStore(`http://127.0.0.1:${await freePort()}`, fast)]);
    expect(cidOf(await offline.get(cid))).to.equal(cid);
    // put goes to the local store only
    const mine = await layered.put(new TextEncoder().encode("auditor's own"));
    expect(await local.has(mine)).to.equal(true);
    expect(await provider.has(mine)).to.equal(false);
  });

  it("a tampering source raises CidMismatchError naming its URL, and nothing is cached", async () => {
    const evil = await fakeServer((_path, _n, res) => {
      res.writeHead(200, { "content-type": "application/vnd.ipld.raw" });
      res.end(Buffer.from("other bytes"));
    });
    try {
      const err = await rejection(new HttpContentStore(evil.url, fast).get(cid));
      expect(err).to.be.instanceOf(CidMismatchError);
      expect((err as CidMismatchError).expected).to.equal(cid);
      expect((err as CidMismatchError).actual).to.equal(cidOf(new TextEncoder().encode("other bytes")));
      expect((err as CidMismatchError).source).to.equal(`${evil.url}/ipfs/${cid}`);
      expect(evil.requests()).to.equal(1); // wrong bytes are an answer, not retried

      const local = new LocalDirStore(join(dir, "reader-2"));
      const layered = new LayeredStore(local, [new HttpContentStore(evil.url, fast)]);
      const err2 = await rejection(layered.get(cid));
      expect(err2).to.be.instanceOf(CidMismatchError);
      expect(err2.message).to.include(evil.url);
      expect(await local.has(cid)).to.equal(false);
      expect(await readdir(local.dir).catch(() => [])).to.deep.equal([]);

      // with an honest source after it, the honest bytes are returned and cached
      const both = new LayeredStore(local, [new HttpContentStore(evil.url, fast), new HttpContentStore(server.url, fast)]);
      expect(cidOf(await both.get(cid))).to.equal(cid);
      expect(cidOf(await local.get(cid))).to.equal(cid);
    } finally {
      await evil.close();
    }
  });

  it("an unreachable source falls through to the next; alone it raises SourceUnavailableError naming the URL", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const local = new LocalDirStore(join(dir, "reader-3"));
    const layered = new LayeredStore(local, [new HttpContentStore(dead, fast), new HttpContentStore(server.url, fast)]);
    expect(cidOf(await layered.get(cid))).to.equal(cid);

    const err = await rejection(new HttpContentStore(dead, fast).get(cid));
    expect(err).to.be.instanceOf(SourceUnavailableError);
    expect((err as SourceUnavailableError).url).to.equal(`${dead}/ipfs/${cid}`);
    expect(err.message).to.match(/ECONNREFUSED \(3 attempts\)$/);
    const alone = await rejection(new LayeredStore(new LocalDirStore(join(dir, "reader-4")), [new HttpContentStore(dead, fast)]).get(cid));
    expect(alone).to.be.instanceOf(SourceUnavailableError);
    // absent everywhere reachable, but one source unreachable: unavailable (retry later), not "not found"
    const absent = cidOf(new Uint8Array([7, 7]));
    const mixed = new LayeredStore(new LocalDirStore(join(dir, "reader-5")), [new HttpContentStore(server.url, fast), new HttpContentStore(dead, fast)]);
    expect(await rejection(mixed.get(absent))).to.be.instanceOf(SourceUnavailableError);
    const reachable = new LayeredStore(new LocalDirStore(join(dir, "reader-5")), [new HttpContentStore(server.url, fast)]);
    expect(await rejection(reachable.get(absent))).to.be.instanceOf(ContentNotFoundError);
  });

  it("retries 5xx a bounded number of times, then succeeds or gives up", async () => {
    const flaky = await fakeServer((path, n, res) => {
      if (n <= 2) {
        res.writeHead(503);
        res.end();
        return;
      }
      res.writeHead(200);
      res.end(Buffer.from(bytes));
      void path;
    });
    try {
      expect(cidOf(await new HttpContentStore(flaky.url, fast).get(cid))).to.equal(cid);
      expect(flaky.requests()).to.equal(3);
      const err = await rejection(new HttpContentStore(flaky.url, { ...fast, retries: 0 }).get(cidOf(new Uint8Array([1]))));
      expect(err).to.be.instanceOf(CidMismatchError); // 4th request answers 200 with the other bytes
    } finally {
      await flaky.close();
    }
    const down = await fakeServer((_p, _n, res) => {
      res.writeHead(502);
      res.end();
    });
    try {
      const err = await rejection(new HttpContentStore(down.url, { ...fast, retries: 1 }).get(cid));
      expect(err).to.be.instanceOf(SourceUnavailableError);
      expect((err as SourceUnavailableError).status).to.equal(502);
      expect(down.requests()).to.equal(2);
    } finally {
      await down.close();
    }
  });

  it("times out a source that never answers", async () => {
    const silent = await fakeServer(() => {});
    try {
      const started = performance.now();
      const err = await rejection(new HttpContentStore(silent.url, { retries: 1, retryDelayMs: 10, timeoutMs: 200 }).get(cid));
      expect(err).to.be.instanceOf(SourceUnavailableError);
      expect(err.message).to.include("no answer within 200 ms (2 attempts)");
      expect(performance.now() - started).to.be.below(5_000);
    } finally {
      await silent.close();
    }
  });

  it("refuses a response over the size limit without retrying", async () => {
    const err = await rejection(new HttpContentStore(server.url, { ...fast, maxBytes: 1000 }).get(cid));
    expect(err).to.be.instanceOf(SourceUnavailableError);
    expect(err.message).to.include(`response of ${bytes.byteLength} bytes is over the limit of 1000`);
  });
});
