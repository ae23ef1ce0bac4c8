import { expect } from "chai";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { affectedSegments, AuditInputError, auditRun, cheatedSteps, openTraceDir, recomputeSegment, runCheck, writeStepStates } from "../../verifier/src/checks/index.ts";
import { createRun, offlineSalt, decodeCheckpoint, encodeCheckpoint, parseStrategy, StrategyError, train } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree, verifyTraceProof } from "../../verifier/src/trace/index.ts";
import { Fixture, JOB_ID, tinyVariant } from "./fixture.ts";

describe("checks/recompute: bit-exact segment recompute", () => {
  const fx = new Fixture();
  before(async () => fx.setup());
  after(async () => fx.teardown());

  it("passes every segment of honest runs with two different data seeds", async () => {
    for (const seed of [7, 11]) {
      const run = seed === 7 ? fx.run : await createRun(tinyVariant({ dataSeed: seed }), { jobId: JOB_ID, salt: offlineSalt(JOB_ID) });
      const dir = join(fx.dir, `honest-seed-${seed}`);
      await train(run, { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
      const report = await auditRun(await openTraceDir(run, dir), { checks: ["recompute"] });
      expect(report.ok, `seed ${seed}`).to.equal(true);
      expect(report.segments.map((s) => s.segment)).to.deep.equal([0, 1, 2]);
      for (const s of report.segments) expect(s.results[0]!.stepsChecked).to.equal(4);
    }
  });

  const strategies = ["skip:0.25", "skip:0.2", "quarter-batch", "stale:3", "fp16", "plant:6", "plant:9", "near-zero", "copy"];
  for (const name of strategies) {
    it(`${name}: fails exactly the segments holding a cheated step, at the first cheated step, with proofs that verify`, async () => {
      let strategyText = name;
      if (name === "copy") {
        const peerRun = await createRun(tinyVariant(), { jobId: JOB_ID + 1n, salt: offlineSalt(JOB_ID + 1n) });
        const peerDir = join(fx.dir, "peer");
        await train(peerRun, { outDir: peerDir, strategy: { kind: "honest" }, evaluate: false });
        strategyText = `copy:${peerDir}`;
      }
      const strategy = parseStrategy(strategyText);
      const { dir } = await fx.trace(strategyText);
      const ctx = await openTraceDir(fx.run, dir);
      const affected = affectedSegments(strategy, 12, 4);
      expect(affected.length).to.be.greaterThan(0);
      const cheated = cheatedSteps(strategy, 12);
      for (let seg = 0; seg < 3; seg++) {
        const r = await recomputeSegment(ctx, seg);
        if (!affected.includes(seg)) {
          expect(r.ok, `segment ${seg} holds no cheated step`).to.equal(true);
          continue;
        }
        expect(r.ok, `segment ${seg}`).to.equal(false);
        expect(r.failure!.kind).to.equal("state-divergence");
        const first = cheated.find((t) => t > seg * 4 && t <= seg * 4 + 4)!;
        expect(r.firstBadStep).to.equal(first);
        const p = r.proof!;
        expect(p.step).to.equal(first);
        expect(p.traceRoot).to.equal(ctx.trace.segments[seg]!.traceRoot);
        expect(verifyTraceProof(p.traceRoot, first - 1, p.prevStateHash, p.prevProof)).to.equal(true);
        expect(verifyTraceProof(p.traceRoot, first, p.stateHash, p.proof)).to.equal(true);
        expect(p.expectedStateHash).to.not.equal(p.stateHash);
      }
    });
  }

  describe("full-copy: a peer job's per-step states re-keyed to another job id (the job salt)", () => {
    it("fail recompute and Freivalds at the first step of every segment; the same states under the peer's salt would pass", async () => {
      // job JOB_ID + 1: an honest provider of the same manifest that serves every per-step state (steps.json)
      const peerRun = await createRun(tinyVariant(), { jobId: JOB_ID + 1n, salt: offlineSalt(JOB_ID + 1n) });
      const peerDir = join(fx.dir, "full-copy-peer");
      const peer = await train(peerRun, { outDir: peerDir, strategy: { kind: "honest" }, evaluate: false, keepStepStates: true });
      await writeStepStates(peerRun, peerDir, peer.stepStateCids!);
      // job JOB_ID re-keys all of them to its own id and commits their hashes, computing nothing
      const dir = join(fx.dir, "full-copy");
      const { trace, stepStateCids } = await train(fx.run, { outDir: dir, strategy: parseStrategy(`full-copy:${peerDir}`), evaluate: false });
      await writeStepStates(fx.run, dir, stepStateCids!);
      expect(trace.compute.gradientsComputed).to.equal(0);
      expect(trace.salt).to.equal(fx.run.salt).and.to.not.equal(peerRun.salt);
      // the copy is the peer's trajectory bit for bit, only keyed to this job
      const peerStore = new LocalDirStore(join(peerDir, "store"));
      const final = fx.run.loadCheckpoint(await new LocalDirStore(join(dir, "store")).get(trace.finalCheckpointCid), { step: 12 });
      const peerFinal = peerRun.loadCheckpoint(await peerStore.get(peer.trace.finalCheckpointCid), { step: 12 });
      expect(fx.run.weightsBytes(final)).to.deep.equal(peerRun.weightsBytes(peerFinal));
      expect(trace.stateHashes[12]).to.not.equal(peer.trace.stateHashes[12]);

      const ctx = await openTraceDir(fx.run, dir);
      expect(affectedSegments(parseStrategy(`full-copy:${peerDir}`), 12, 4)).to.deep.equal([0, 1, 2]);
      for (let seg = 0; seg < 3; seg++) {
        const first = seg * 4 + 1;
        for (const check of ["recompute", "freivalds"] as const) {
          const r = await runCheck(ctx, seg, check);
          expect(r.ok, `${check} segment ${seg}`).to.equal(false);
          expect(r.failure!.kind, `${check} segment ${seg}`).to.equal("state-divergence");
          expect(r.firstBadStep, `${check} segment ${seg}`).to.equal(first);
          const p = r.proof!;
          expect(verifyTraceProof(p.traceRoot, first - 1, p.prevStateHash, p.prevProof)).to.equal(true);
          expect(verifyTraceProof(p.traceRoot, first, p.stateHash, p.proof)).to.equal(true);
        }
        // the states are a real optimizer trajectory: the checks that read only the states see nothing
        expect((await runCheck(ctx, seg, "magnitude")).ok, `magnitude segment ${seg}`).to.equal(true);
      }
      // the control: recomputed with the peer's data order (what every job of a manifest shared before the salt), the
      // re-keyed states pass every segment, so the batches are all that catch the copy
      const peerOrder = await createRun(tinyVariant(), { jobId: JOB_ID, salt: peerRun.salt });
      for (let seg = 0; seg < 3; seg++) expect((await recomputeSegment({ ...ctx, run: peerOrder }, seg)).ok, `segment ${seg} under the peer's salt`).to.equal(true);
    });

    it("refuses a trace that records another job's salt as the audit's bad input, and a copy of its own job", async () => {
      const { dir } = await fx.trace("honest");
      const otherSalt = await createRun(tinyVariant(), { jobId: JOB_ID, salt: offlineSalt(JOB_ID + 1n) });
      const err = await openTraceDir(otherSalt, dir).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AuditInputError);
      expect((err as Error).message).to.match(/trace is for job salt 0x[0-9a-f]{64}, the audit runs salt/);
      const self = await train(fx.run, { outDir: join(fx.dir, "full-copy-self"), strategy: parseStrategy(`full-copy:${dir}`), evaluate: false }).catch((e: unknown) => e);
      expect(self).to.be.instanceOf(StrategyError);
    });
  });

  describe("tampered data is its own failure kind, never a crash", () => {
    it("a tampered checkpoint (re-stored under a new CID that the commitment names): checkpoint-state-mismatch", async () => {
      const dir = await fx.copy("honest", "tamper-ckpt");
      const ctx = await openTraceDir(fx.run, dir);
      const store = new LocalDirStore(join(dir, "store"));
      const seg = ctx.trace.segments[1]!;
      const c = decodeCheckpoint(await store.get(seg.checkpointCid), fx.run.paramSpecs, fx.run.optSpecs);
      c.params[0]![100] = c.params[0]![100]! + 0.5;
      const cid = await store.put(encodeCheckpoint(fx.run.paramSpecs, fx.run.optSpecs, c));
      const commitments = ctx.trace.segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot as `0x${string}`, checkpointCid: s.index === 1 ? cid : s.checkpointCid }));
      const r = await recomputeSegment({ ...ctx, commitments }, 1);
      expect(r.ok).to.equal(false);
      expect(r.failure!.kind).to.equal("checkpoint-state-mismatch");
      // a start that cannot be opened is the segment's own fault, claimed at its first step (what a panel votes Fault on)
      expect(r.firstBadStep).to.equal(5);
      expect(r.proof!.step).to.equal(5);
      expect(verifyTraceProof(r.proof!.traceRoot, 4, r.proof!.prevStateHash, r.proof!.prevProof)).to.equal(true);
      expect(verifyTraceProof(r.proof!.traceRoot, 5, r.proof!.stateHash, r.proof!.proof)).to.equal(true);
      expect(r.noClaim).to.equal(undefined);
      expect((await recomputeSegment({ ...ctx, commitments }, 0)).ok).to.equal(true);
    });

    it("a tampered trace leaf (served hashes that do not reproduce the committed root): trace-leaf-mismatch", async () => {
      const dir = await fx.copy("honest", "tamper-leaf");
      const path = join(dir, "trace.json");
      const trace = JSON.parse(await readFile(path, "utf8")) as { stateHashes: string[] };
      trace.stateHashes[6] = `0x${"ab".repeat(32)}`;
      await writeFile(path, JSON.stringify(trace));
      const ctx = await openTraceDir(fx.run, dir);
      const r = await recomputeSegment(ctx, 1);
      expect(r.ok).to.equal(false);
      expect(r.failure!.kind).to.equal("trace-leaf-mismatch");
      // served leaves that do not give the committed root name no step: the reason says where a claim comes from
      expect(r.proof).to.equal(null);
      expect(r.noClaim).to.match(/on-chain leaves/);
      expect((await recomputeSegment(ctx, 0)).ok).to.equal(true);
      // segment 2 starts at h(8): the previous segment's leaves no longer reproduce its root either
      expect((await recomputeSegment(ctx, 2)).failure?.kind).to.equal("trace-leaf-mismatch");
    });

    it("trace.json's own segment entry lies (end state, step range, index): trace-entry-mismatch for that segment, not bad input", async () => {
      const dir = await fx.copy("honest", "tamper-entry");
      const path = join(dir, "trace.json");
      const honest = JSON.parse(await readFile(path, "utf8")) as { segments: { index: number; firstStep: number; endStateHash: string }[] };
      const lie = async (edit: (t: typeof honest) => void) => {
        const t = structuredClone(honest);
        edit(t);
        await writeFile(path, JSON.stringify(t));
        return openTraceDir(fx.run, dir);
      };
      // a backdoored end state next to honest leaves
      let ctx = await lie((t) => (t.segments[2]!.endStateHash = `0x${"cd".repeat(32)}`));
      let r = await recomputeSegment(ctx, 2);
      expect(r.failure?.kind).to.equal("trace-entry-mismatch");
      expect(r.failure?.message).to.match(/segments\[2\] says endStateHash 0xcdcd/);
      expect((await recomputeSegment(ctx, 1)).ok).to.equal(true);
      // a wrong step range, and an entry filed under another index (before: the auditor's bad input, exit 2)
      ctx = await lie((t) => (t.segments[1]!.firstStep = 3));
      expect((await recomputeSegment(ctx, 1)).failure?.kind).to.equal("trace-entry-mismatch");
      ctx = await lie((t) => (t.segments[0]!.index = 5));
      r = await recomputeSegment(ctx, 0);
      expect(r.failure?.kind).to.equal("trace-entry-mismatch");
      expect(r.failure?.message).to.match(/index 5/);
      expect((await recomputeSegment(ctx, 2)).ok).to.equal(true);
    });

    it("a checkpoint whose bytes do not match its CID: checkpoint-cid-mismatch", async () => {
      const dir = await fx.copy("honest", "tamper-cid");
      const ctx = await openTraceDir(fx.run, dir);
      const cid = ctx.trace.segments[2]!.checkpointCid;
      const file = join(dir, "store", cid);
      const bytes = new Uint8Array(await readFile(file));
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
      await writeFile(file, bytes);
      const r = await recomputeSegment(ctx, 2);
      expect(r.ok).to.equal(false);
      expect(r.failure!.kind).to.equal("checkpoint-cid-mismatch");
    });

    it("a missing checkpoint and a truncated one: checkpoint-missing and checkpoint-invalid", async () => {
      const dir = await fx.copy("honest", "tamper-missing");
      const ctx = await openTraceDir(fx.run, dir);
      const cid = ctx.trace.segments[1]!.checkpointCid;
      const bytes = await ctx.store.get(cid);
      await rm(join(dir, "store", cid));
      const missing = await recomputeSegment(ctx, 1);
      expect(missing.failure?.kind).to.equal("checkpoint-missing");
      expect(missing.proof?.step, "withholding is claimable at the segment's first step").to.equal(5);
      const truncated = await ctx.store.put(bytes.subarray(0, bytes.length - 8));
      const commitments = ctx.trace.segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot as `0x${string}`, checkpointCid: s.index === 1 ? truncated : s.checkpointCid }));
      expect((await recomputeSegment({ ...ctx, commitments }, 1)).failure?.kind).to.equal("checkpoint-invalid");
    });

    it("a segment 0 that does not start from the manifest's initial state: initial-state-mismatch", async () => {
      const other = await createRun(tinyVariant(), { jobId: JOB_ID, salt: offlineSalt(JOB_ID) });
      const { dir } = await fx.trace("honest");
      const ctx = await openTraceDir(other, dir);
      const trace = { ...ctx.trace, stateHashes: [...ctx.trace.stateHashes] };
      trace.stateHashes[0] = `0x${"cd".repeat(32)}`;
      const root0 = new SegmentTree(0, trace.stateHashes.slice(0, 5) as `0x${string}`[]).root;
      const commitments = ctx.trace.segments.map((s, i) => ({ index: i, traceRoot: i === 0 ? root0 : (s.traceRoot as `0x${string}`), checkpointCid: s.checkpointCid }));
      const r = await recomputeSegment({ ...ctx, trace, commitments }, 0);
      expect(r.failure?.kind).to.equal("initial-state-mismatch");
    });
  });
});
