/**
 * The board across machines: a provider's SegmentBoard and store served by the `pouw serve` server, read by
 * another party's SegmentBoard layered over HttpBoard + HttpContentStore. Records are accepted only when
 * they reproduce the committed root; a source pointing at a wrong record is skipped for the next one; an
 * unreachable board source makes a lookup that found nothing throw (retry) instead of answering "none".
 */
import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keccak256, toHex, type Hex } from "viem";
import { LayeredBoard, LocalDirBoard, parseBoardKey, InvalidBoardKeyError, boardKeyPath } from "../../verifier/src/board/index.ts";
import { HttpBoard } from "../../verifier/src/board/http.ts";
import { lookupProvenance, publishProvenance, ProvenanceNotPublishedError } from "../../verifier/src/market/provenance-board.ts";
import { SegmentBoard, type SegmentRecord } from "../../verifier/src/market/segment-traces.ts";
import { SourceUnavailableError } from "../../verifier/src/net/index.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { traceRoot } from "../../verifier/src/trace/index.ts";
import { freePort } from "../e2e/helpers.ts";

const MARKET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const fast = { retries: 1, retryDelayMs: 10, timeoutMs: 2_000 };

function record(segment: number, salt: string): SegmentRecord {
  const K = 4;
  const stateHashes = Array.from({ length: K + 1 }, (_, i) => keccak256(toHex(`${salt}:${segment * K + i}`)));
  return { format: "pouw-segment-1", jobId: "7", segment, firstStep: segment * K, stateHashes, stepLossE6: [1, 2, 3, 4], checkpointCid: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku" };
}
const rootOf = (r: SegmentRecord) => traceRoot(r.firstStep, r.stateHashes as Hex[]);

describe("board: segment records and provenance pointers over HTTP", function () {
  this.timeout(30_000);
  let dir: string;
  let providerBoard: SegmentBoard;
  let server: ContentServer;
  let dead: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pouw-board-"));
    const store = new LocalDirStore(join(dir, "provider/store"));
    providerBoard = new SegmentBoard(join(dir, "provider/board"), store);
    server = await startContentServer({ store, board: new LocalDirBoard(providerBoard.dir), port: 0 });
    dead = `http://127.0.0.1:${await freePort()}`;
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Another machine: its own empty store and board, reading the given sources in order. */
  function reader(name: string, sources: string[]): SegmentBoard {
    const store = new LayeredStore(new LocalDirStore(join(dir, name, "store")), sources.map((u) => new HttpContentStore(u, fast)));
    return new SegmentBoard(join(dir, name, "board"), store, sources.map((u) => new HttpBoard(u, fast)));
  }

  it("parses board keys strictly and round-trips their path", () => {
    const key = parseBoardKey([MARKET.toLowerCase(), "7", "12"]);
    expect(key).to.deep.equal({ market: MARKET, jobId: 7n, entry: 12 });
    expect(boardKeyPath(key)).to.equal(`${MARKET.toLowerCase()}/7/12`);
    expect(parseBoardKey([MARKET, "7", "provenance"]).entry).to.equal("provenance");
    for (const bad of [[MARKET, "7"], ["0xzz", "7", "1"], [MARKET, "-1", "1"], [MARKET, "07", "1"], [MARKET, "7", "1.5"], [MARKET, "7", ".."], [MARKET, "7", "1", "x"]]) {
      expect(() => parseBoardKey(bad), bad.join("/")).to.throw(InvalidBoardKeyError);
    }
  });

  it("reads a segment record published on another machine, verified against the committed root", async () => {
    const r = record(1, "honest");
    await providerBoard.publish(MARKET, r);
    const auditor = reader("auditor-1", [server.url]);
    expect(await auditor.lookup(MARKET, 7n, 1, rootOf(r))).to.deep.equal(r);
    // a root the record does not reproduce: no record (the provider's leaves are not these)
    expect(await auditor.lookup(MARKET, 7n, 1, rootOf(record(1, "other")))).to.equal(undefined);
    // nothing published for segment 2
    expect(await auditor.lookup(MARKET, 7n, 2, rootOf(record(2, "honest")))).to.equal(undefined);
  });

  it("skips a source whose record does not match the root and reads the next", async () => {
    const honest = record(3, "honest");
    await providerBoard.publish(MARKET, honest);
    // a second party serves a different record under the same key
    const liarStore = new LocalDirStore(join(dir, "liar/store"));
    const liarBoard = new SegmentBoard(join(dir, "liar/board"), liarStore);
    await liarBoard.publish(MARKET, record(3, "forged"));
    const liar = await startContentServer({ store: liarStore, board: new LocalDirBoard(liarBoard.dir), port: 0 });
    try {
      const auditor = reader("auditor-2", [liar.url, server.url]);
      expect(await auditor.lookup(MARKET, 7n, 3, rootOf(honest))).to.deep.equal(honest);
    } finally {
      await liar.close();
    }
  });

  it("an unreachable board source falls through; when nothing was found it raises SourceUnavailableError", async () => {
    const r = record(4, "honest");
    await providerBoard.publish(MARKET, r);
    expect(await reader("auditor-3", [dead, server.url]).lookup(MARKET, 7n, 4, rootOf(r))).to.deep.equal(r);
    const err = await reader("auditor-4", [dead]).lookup(MARKET, 7n, 4, rootOf(r)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SourceUnavailableError);
    expect((err as Error).message).to.include(`${dead}/board/${MARKET.toLowerCase()}/7/4`);
  });

  it("the local board is read first and wins over remotes", async () => {
    const layered = new LayeredBoard(new LocalDirBoard(join(dir, "mine/board")), [new HttpBoard(dead, fast)]);
    const key = { market: MARKET, jobId: 7n, entry: 5 } as const;
    await layered.write(key, "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku");
    const seen: string[] = [];
    const v = await layered.find(key, async (cid, source) => (seen.push(source), cid));
    expect(v).to.equal("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku");
    expect(seen).to.deep.equal([join(dir, "mine/board")]);
  });

  it("a buyer elsewhere finds the provenance record the provider published", async () => {
    const bytes = new TextEncoder().encode('{"format":"pouw-provenance-1"}');
    const cid = await publishProvenance(providerBoard, MARKET, 7n, bytes);
    const buyer = reader("buyer", [dead, server.url]);
    const got = await lookupProvenance(buyer, MARKET, 7n);
    expect(got.cid).to.equal(cid);
    expect(new TextDecoder().decode(got.bytes)).to.equal('{"format":"pouw-provenance-1"}');
    const none = await lookupProvenance(reader("buyer-2", [server.url]), MARKET, 8n).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(none).to.be.instanceOf(ProvenanceNotPublishedError);
    expect((none as Error).message).to.include(server.url);
  });

  it("with the anchored record hash, a source serving another provenance record is skipped for the next one", async () => {
    const good = new TextEncoder().encode('{"format":"pouw-provenance-1","v":"anchored"}');
    const stale = new TextEncoder().encode('{"format":"pouw-provenance-1","v":"stale"}');
    await publishProvenance(providerBoard, MARKET, 9n, good);
    // a second party's server whose board points job 9 at another record
    const otherStore = new LocalDirStore(join(dir, "other/store"));
    const other = new SegmentBoard(join(dir, "other/board"), otherStore);
    await publishProvenance(other, MARKET, 9n, stale);
    const otherServer = await startContentServer({ store: otherStore, board: new LocalDirBoard(other.dir), port: 0 });
    try {
      const first = await lookupProvenance(reader("buyer-3", [otherServer.url, server.url]), MARKET, 9n);
      expect(new TextDecoder().decode(first.bytes)).to.include("stale"); // without the anchor the first source wins
      const anchored = await lookupProvenance(reader("buyer-4", [otherServer.url, server.url]), MARKET, 9n, { anchoredRecordHash: keccak256(good) });
      expect(new TextDecoder().decode(anchored.bytes)).to.include("anchored");
      // no source has the anchored record: the first one fetched comes back, for verification to name what differs
      const only = await lookupProvenance(reader("buyer-5", [otherServer.url]), MARKET, 9n, { anchoredRecordHash: keccak256(good) });
      expect(new TextDecoder().decode(only.bytes)).to.include("stale");
    } finally {
      await otherServer.close();
    }
  });
});
