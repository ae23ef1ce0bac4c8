import { expect } from "chai";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { BotDb } from "../../verifier/src/bot/db.ts";

const h = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;

describe("bot database: rows come out as domain objects", () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), "pouw-botdb-"))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it("a job and a committed segment read back with bigint ids, amounts and blocks, parsed leaves and a boolean sampling decision", () => {
    const db = new BotDb(join(dir, "a.sqlite"));
    try {
      // a job id and a loss past 2^53, which a JS number would round
      const jobId = 2n ** 64n + 7n;
      db.upsertJob({ jobId, buyer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", manifestUri: "mem://m", manifestHash: h(1), segments: 3, stepsPerSegment: 4, status: "Open" });
      db.setJobStatus(jobId, "Active", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
      db.setAuditRate(jobId, 0.25);
      expect(db.job(jobId)).to.deep.equal({
        jobId,
        buyer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        manifestUri: "mem://m",
        manifestHash: h(1),
        segments: 3,
        stepsPerSegment: 4,
        auditRate: 0.25,
        provider: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
        status: "Active",
      });
      expect(db.jobsWithStatus("Active").map((j) => j.jobId)).to.deep.equal([jobId]);
      db.insertSegment({ jobId, segment: 0, traceRoot: h(2), endStateHash: h(6), stateHashes: [h(3), h(4), h(5), h(7), h(6)], checkpointCid: "cid0", lossE6: 9_007_199_254_740_993n, block: 12_345_678_901n });
      const s = db.segment(jobId, 0)!;
      expect([s.jobId, s.lossE6, s.block, s.sampled, s.audit, s.unavailableSince]).to.deep.equal([jobId, 9_007_199_254_740_993n, 12_345_678_901n, null, "unsampled", null]);
      expect(s.stateHashes).to.deep.equal([h(3), h(4), h(5), h(7), h(6)]);
      db.setSampled(jobId, 0, true);
      db.setAudit(jobId, 0, { audit: "bad", firstBadStep: 2, costMs: 1.5, flops: 10, detail: "state-divergence: x" });
      const t = db.segment(jobId.toString(), 0)!;
      expect([t.sampled, t.audit, t.firstBadStep, t.costMs, t.flops, t.detail]).to.deep.equal([true, "bad", 2, 1.5, 10, "state-divergence: x"]);
      expect(db.commitments(jobId, 0)).to.deep.equal([{ index: 0, traceRoot: h(2), checkpointCid: "cid0", stateHashes: [h(3), h(4), h(5), h(7), h(6)] }]);
      expect(db.commitments(jobId, 1)).to.equal(undefined);
    } finally {
      db.close();
    }
  });
  it("an older database gains the columns added since its release, and its rows read back with their defaults", () => {
    const path = join(dir, "old.sqlite");
    const { DatabaseSync: Sqlite } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: new (p: string) => DatabaseSync };
    const old = new Sqlite(path);
    // the first release's intents and segments tables: no attempts, retry_at, reverts, mined_block, screen, unavailable_since
    old.exec(`CREATE TABLE intents (
      id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, job_id TEXT, segment INTEGER,
      payload TEXT NOT NULL, status TEXT NOT NULL, tx_hash TEXT, raw_tx TEXT, nonce INTEGER, error TEXT,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    CREATE TABLE segments (
      job_id TEXT NOT NULL, segment INTEGER NOT NULL, trace_root TEXT NOT NULL, end_state_hash TEXT NOT NULL,
      state_hashes TEXT NOT NULL DEFAULT '[]',
      checkpoint_cid TEXT NOT NULL, loss_e6 TEXT NOT NULL, block TEXT NOT NULL, sampled INTEGER,
      audit TEXT NOT NULL DEFAULT 'unsampled', first_bad_step INTEGER, cost_ms REAL, flops REAL, detail TEXT,
      PRIMARY KEY (job_id, segment));`);
    old.prepare("INSERT INTO intents (key, kind, payload, status, created_at, updated_at) VALUES ('claimStake:0', 'claimStake', '{}', 'pending', 1, 1)").run();
    old.close();

    const db = new BotDb(path);
    try {
      const intent = db.intentByKey("claimStake:0")!;
      expect({ attempts: intent.attempts, retry_at: intent.retry_at, reverts: intent.reverts, mined_block: intent.mined_block }).to.deep.equal({ attempts: 0, retry_at: null, reverts: 0, mined_block: null });
      db.intentDeferred(intent.id, "funds short", 5);
      expect(db.intent(intent.id)).to.include({ attempts: 1, retry_at: 5, error: "funds short" });
      const columns = (db.db.prepare("PRAGMA table_info(segments)").all() as { name: string }[]).map((c) => c.name);
      expect(columns).to.include.members(["screen", "unavailable_since"]);
    } finally {
      db.close();
    }
  });
  it("a rollback marks the signed intents about a removed commit for cancelling, and forgets the disputes read from orphaned blocks", () => {
    const db = new BotDb(join(dir, "rollback.sqlite"));
    try {
      const jobId = 3n;
      db.upsertJob({ jobId, buyer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", manifestUri: "mem://m", manifestHash: h(1), segments: 2, stepsPerSegment: 4, status: "Active" });
      // segment 0 committed in block 10 (survives), segment 1 in block 20 (removed by a reorg back to block 15)
      for (const [segment, block] of [[0, 10n], [1, 20n]] as const) {
        db.insertSegment({ jobId, segment, traceRoot: h(segment + 2), endStateHash: h(9), stateHashes: [h(9)], checkpointCid: "c", lossE6: 1n, block, blockHash: h(100 + segment) });
        db.recordEvent({ block, logIndex: 0, jobId, name: "SegmentCommitted" });
        db.setBlockHash(block, h(100 + segment));
      }
      const mk = (key: string, kind: string, segment: number) => db.addIntent({ key, kind, jobId: "3", segment, payload: { to: h(1), data: "0x" } });
      const signedOn1 = mk("challenge:3:1:c000000000065", "challenge", 1);
      db.intentSigned(signedOn1.id, h(50), "0x01", 4);
      const pendingOn1 = mk("approveBond:3:1:c000000000065", "approveBond", 1);
      const signedOn0 = mk("challenge:3:0:c000000000064", "challenge", 0);
      db.intentSigned(signedOn0.id, h(51), "0x02", 5);
      db.setMeta("disputes", JSON.stringify([{ id: "1", block: "12", done: false }, { id: "2", block: "18", done: false }, { id: "3", done: true }]));
      db.setMeta("disputeCursor", "22");
      db.setMeta("cursor", "22");

      expect(db.rollback(15n)).to.deep.equal([jobId]);
      expect(db.segment(jobId, 1), "the removed commit").to.equal(undefined);
      expect(db.intent(pendingOn1.id), "a never-signed intent about it is dropped").to.equal(undefined);
      const stale = db.intent(signedOn1.id)!;
      expect([stale.status, stale.cancel]).to.deep.equal(["signed", 1]);
      expect(stale.error).to.match(/^stale: the commit of segment 1 it is about was removed by a reorg \(rolled back to block 15\)/);
      expect(db.intent(signedOn0.id)!.cancel, "an intent about a surviving commit is kept as it is").to.equal(0);
      expect((JSON.parse(db.getMeta("disputes")!) as { id: string }[]).map((d) => d.id), "dispute 2 was read from an orphaned block").to.deep.equal(["1", "3"]);
      expect([db.getMeta("disputeCursor"), db.getMeta("cursor")]).to.deep.equal(["15", "15"]);
    } finally {
      db.close();
    }
  });
});
