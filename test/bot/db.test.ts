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
});
