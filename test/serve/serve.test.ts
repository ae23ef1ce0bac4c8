/**
 * `pouw serve`'s server (verifier/src/serve) over real loopback HTTP: raw bytes with the trustless-gateway
 * type, HEAD, board pointers, and every refusal: malformed CIDs and board keys, traversal attempts sent with
 * the path exactly as written (no client-side normalisation), methods other than GET/HEAD, bodies, long
 * URLs, a corrupt stored file. Ends with a graceful close while a request is in flight.
 */
import { expect } from "chai";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalDirBoard } from "../../verifier/src/board/index.ts";
import { startContentServer, ServeError, type ContentServer } from "../../verifier/src/serve/index.ts";
import { cidOf, LocalDirStore, type ContentSource } from "../../verifier/src/store/index.ts";

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** One request with the path sent byte for byte as given. */
function raw(base: string, method: string, path: string, o: { body?: string; headers?: Record<string, string> } = {}): Promise<Raw> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers: o.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

const MARKET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

describe("serve: read-only HTTP content store and board", () => {
  let dir: string;
  let server: ContentServer;
  let store: LocalDirStore;
  const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256);
  let cid: string;
  let recordCid: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pouw-serve-"));
    store = new LocalDirStore(join(dir, "store"));
    cid = await store.put(bytes);
    recordCid = await store.put(new TextEncoder().encode('{"record":1}'));
    const board = new LocalDirBoard(join(dir, "board"));
    await board.write({ market: MARKET, jobId: 3n, entry: 2 }, recordCid);
    await board.write({ market: MARKET, jobId: 3n, entry: "provenance" }, cid);
    server = await startContentServer({ store, board, port: 0 });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves the raw bytes of a CID with the trustless-gateway content type", async () => {
    const r = await raw(server.url, "GET", `/ipfs/${cid}`);
    expect(r.status).to.equal(200);
    expect(r.headers["content-type"]).to.equal("application/vnd.ipld.raw");
    expect(r.headers["content-length"]).to.equal(String(bytes.byteLength));
    expect(r.headers.etag).to.equal(`"${cid}.raw"`);
    expect(cidOf(r.body)).to.equal(cid);
    expect((await raw(server.url, "GET", `/ipfs/${cid}?format=raw`)).status).to.equal(200);
  });

  it("answers HEAD with 200 for stored content and 404 for absent content, without a body", async () => {
    const head = await raw(server.url, "HEAD", `/ipfs/${cid}`);
    expect(head.status).to.equal(200);
    expect(head.body.byteLength).to.equal(0);
    const absent = cidOf(new Uint8Array([1, 2, 3]));
    expect((await raw(server.url, "HEAD", `/ipfs/${absent}`)).status).to.equal(404);
    expect((await raw(server.url, "GET", `/ipfs/${absent}`)).status).to.equal(404);
  });

  it("serves board pointers for a segment and for the provenance record", async () => {
    const seg = await raw(server.url, "GET", `/board/${MARKET}/3/2`);
    expect(seg.status).to.equal(200);
    expect(seg.body.toString()).to.equal(recordCid);
    // the address is case-insensitive (the directory is lowercase)
    expect((await raw(server.url, "GET", `/board/${MARKET.toLowerCase()}/3/provenance`)).body.toString()).to.equal(cid);
    expect((await raw(server.url, "GET", `/board/${MARKET}/3/1`)).status).to.equal(404);
    expect((await raw(server.url, "GET", `/board/${MARKET}/4/2`)).status).to.equal(404);
  });

  it("rejects malformed CIDs and board keys with 400", async () => {
    const v0 = "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o";
    for (const path of ["/ipfs/hello", `/ipfs/${v0}`, `/ipfs/${cid.slice(0, -1)}`, `/ipfs/${cid}/sub`, `/ipfs/${cid}?format=car`]) {
      const r = await raw(server.url, "GET", path);
      expect(r.status, path).to.equal(400);
      expect(r.headers["content-type"], path).to.match(/^text\/plain/);
    }
    for (const path of [`/board/0x1234/3/2`, `/board/${MARKET}/03/2`, `/board/${MARKET}/3/-1`, `/board/${MARKET}/3/2.cid`, `/board/${MARKET}/3`, `/board/${MARKET}/3/2/x`]) {
      expect((await raw(server.url, "GET", path)).status, path).to.equal(400);
    }
  });

  it("refuses traversal attempts, however encoded, without reading outside the store and board", async () => {
    await writeFile(join(dir, "secret.txt"), "secret");
    const attempts = [
      "/ipfs/../secret.txt",
      "/ipfs/../../etc/passwd",
      "/ipfs/..%2Fsecret.txt",
      "/ipfs/%2e%2e/secret.txt",
      `/ipfs/${cid}/../../secret.txt`,
      "/board/../store/" + cid,
      `/board/${MARKET}/3/..%2F..%2F..%2Fsecret.txt`,
      `/board/${MARKET}/../../secret.txt`,
      "//secret.txt",
      "/ipfs/.\\..\\secret.txt",
      "/secret.txt",
      "secret.txt",
    ];
    for (const path of attempts) {
      const r = await raw(server.url, "GET", path);
      expect(r.status, path).to.be.within(400, 404);
      expect(r.body.toString(), path).to.not.include("secret\n").and.to.not.equal("secret");
    }
  });

  it("is read-only: other methods get 405 with Allow, bodies 413, long URLs 414", async () => {
    for (const method of ["PUT", "POST", "DELETE", "PATCH"]) {
      const r = await raw(server.url, method, `/ipfs/${cid}`, { body: "x" });
      expect(r.status, method).to.equal(405);
      expect(r.headers.allow).to.equal("GET, HEAD");
    }
    expect((await raw(server.url, "GET", `/ipfs/${cid}`, { body: "x", headers: { "content-length": "1" } })).status).to.equal(413);
    expect((await raw(server.url, "GET", `/ipfs/${"b".repeat(3000)}`)).status).to.equal(414);
    expect((await raw(server.url, "GET", "/")).status).to.equal(404);
  });

  it("never serves a stored file whose bytes do not match its CID", async () => {
    const c = await store.put(new TextEncoder().encode("original"));
    await writeFile(store.pathOf(c), "tampered");
    const r = await raw(server.url, "GET", `/ipfs/${c}`);
    expect(r.status).to.equal(500);
    expect(r.body.toString()).to.not.include("tampered");
  });

  it("fails to start on a port in use with a ServeError naming it", async () => {
    try {
      await startContentServer({ store, port: server.port });
      expect.fail("started twice on one port");
    } catch (err) {
      expect(err).to.be.instanceOf(ServeError);
      expect((err as ServeError).shortMessage).to.equal(`cannot listen on 127.0.0.1:${server.port}: EADDRINUSE`);
    }
  });

  it("closes gracefully: a request in flight completes, new connections are refused", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: ContentSource = { get: async (c) => (await gate, store.get(c)), has: (c) => store.has(c) };
    const s2 = await startContentServer({ store: slow, port: 0 });
    const inFlight = raw(s2.url, "GET", `/ipfs/${cid}`);
    await new Promise((r) => setTimeout(r, 100));
    const closed = s2.close(10_000);
    await new Promise((r) => setTimeout(r, 50));
    const refused = await raw(s2.url, "GET", `/ipfs/${cid}`).then(
      () => "answered",
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(refused).to.equal("ECONNREFUSED");
    release();
    const r = await inFlight;
    expect(r.status).to.equal(200);
    expect(cidOf(r.body)).to.equal(cid);
    await closed;
  });
});

describe("serve --upload: PUT /ipfs/<cid> stores a body that hashes to its CID", () => {
  let dir: string;
  let server: ContentServer;
  let store: LocalDirStore;
  const MAX = 1024;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pouw-serve-upload-"));
    store = new LocalDirStore(join(dir, "store"));
    server = await startContentServer({ store, upload: { store, maxBytes: MAX } });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("stops at the server's total upload quota (507, nothing stored); refused and repeated uploads use none of it", async () => {
    const qdir = await mkdtemp(join(tmpdir(), "pouw-serve-quota-"));
    const qstore = new LocalDirStore(join(qdir, "store"));
    const q = await startContentServer({ store: qstore, upload: { store: qstore, maxBytes: MAX, quotaBytes: 100 } });
    try {
      const put = (body: string, cid = cidOf(new TextEncoder().encode(body))) => raw(q.url, "PUT", `/ipfs/${cid}`, { body });
      expect((await put("a".repeat(40))).status).to.equal(201);
      expect((await put("a".repeat(40))).status).to.equal(200); // already held: no new bytes
      expect((await put("b".repeat(40), cidOf(new TextEncoder().encode("other")))).status).to.equal(422); // refused: gives its reservation back
      expect((await put("c".repeat(60))).status).to.equal(201); // 40 + 60 = the quota
      const over = await put("d");
      expect([over.status, over.body.toString()]).to.deep.equal([507, "this server's upload quota is used: 100 of 100 bytes (pouw serve --upload-quota-bytes)\n"]);
      expect(await qstore.has(cidOf(new TextEncoder().encode("d")))).to.equal(false);
    } finally {
      await q.close();
      await rm(qdir, { recursive: true, force: true });
    }
  });

  it("stores the body under its CID (201, then 200 when held) and serves it back byte for byte", async () => {
    const body = '{"manifest":"a buyer\'s job"}';
    const cid = cidOf(new TextEncoder().encode(body));
    let r = await raw(server.url, "PUT", `/ipfs/${cid}`, { body });
    expect(r.status, r.body.toString()).to.equal(201);
    expect(r.body.toString()).to.equal(`${cid}\n`);
    expect(r.headers.location).to.equal(`/ipfs/${cid}`);
    expect(await store.has(cid)).to.equal(true);
    r = await raw(server.url, "PUT", `/ipfs/${cid}`, { body });
    expect(r.status).to.equal(200);
    r = await raw(server.url, "GET", `/ipfs/${cid}`);
    expect(r.body.toString()).to.equal(body);
  });

  it("refuses, storing nothing: a body of other bytes (422 naming both CIDs), over the limit (413), without a length (411), a bad CID or path (400)", async () => {
    const claimed = cidOf(new TextEncoder().encode("what the page meant to send"));
    let r = await raw(server.url, "PUT", `/ipfs/${claimed}`, { body: "other bytes" });
    expect(r.status).to.equal(422);
    expect(r.body.toString()).to.include(cidOf(new TextEncoder().encode("other bytes"))).and.include(claimed).and.include("nothing stored");
    expect(await store.has(claimed)).to.equal(false);

    const big = "x".repeat(MAX + 1);
    r = await raw(server.url, "PUT", `/ipfs/${cidOf(new TextEncoder().encode(big))}`, { body: big });
    expect(r.status).to.equal(413);
    expect(r.body.toString()).to.include(`${MAX + 1} bytes is over this server's limit of ${MAX} bytes`);
    expect(await store.has(cidOf(new TextEncoder().encode(big)))).to.equal(false);

    r = await raw(server.url, "PUT", `/ipfs/${claimed}`, { body: "chunked", headers: { "transfer-encoding": "chunked" } });
    expect(r.status).to.equal(411);
    expect((await raw(server.url, "PUT", "/ipfs/not-a-cid", { body: "x" })).status).to.equal(400);
    expect((await raw(server.url, "PUT", `/board/${claimed}`, { body: "x" })).status).to.equal(400);
    r = await raw(server.url, "POST", `/ipfs/${claimed}`, { body: "x" });
    expect(r.status).to.equal(405);
    expect(r.headers.allow).to.equal("GET, HEAD, PUT");
  });
});
