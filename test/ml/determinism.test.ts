import { expect } from "chai";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createRun, jobSalt, offlineSalt, parseManifest, parseTraceFile, readTraceFile, SaltError, TraceFileError, type Batch, type Run, type TraceFile } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree, verifyTraceProof } from "../../verifier/src/trace/index.ts";
import { pouwAsync, ROOT, tempDir, tinyManifest, tinyTransformerJson } from "./helpers.ts";

describe("ml/determinism: the same manifest trained twice gives identical traces; another job, other batches", () => {
  let dirA: string;
  let dirB: string;
  let a: TraceFile;
  let b: TraceFile;

  before(async () => {
    dirA = await tempDir("det-a");
    dirB = await tempDir("det-b");
    // two separate OS processes, as two providers (or a provider and an auditor) would run it
    const manifest = join(ROOT, "examples/tiny.json");
    const [ra, rb] = await Promise.all([dirA, dirB].map((out) => pouwAsync(["train", "--manifest", manifest, "--out", out, "--job-id", "42"])));
    expect(ra!.status, ra!.stderr).to.equal(0);
    expect(rb!.status, rb!.stderr).to.equal(0);
    a = await readTraceFile(join(dirA, "trace.json"));
    b = await readTraceFile(join(dirB, "trace.json"));
  });
  after(async () => {
    await rm(dirA, { recursive: true, force: true });
    await rm(dirB, { recursive: true, force: true });
  });

  it("has identical roots for every segment and identical state hashes at every step", () => {
    expect(a.segments.length).to.equal(3);
    for (let i = 0; i < a.segments.length; i++) {
      expect(b.segments[i]!.traceRoot, `segment ${i}`).to.equal(a.segments[i]!.traceRoot);
      expect(b.segments[i]!.checkpointCid).to.equal(a.segments[i]!.checkpointCid);
    }
    expect(b.stateHashes).to.deep.equal(a.stateHashes);
    expect(b.finalCheckpointCid).to.equal(a.finalCheckpointCid);
    expect(new Set(a.stateHashes).size, "every state differs").to.equal(a.stateHashes.length);
  });

  it("commits roots that are the segment Merkle roots of the listed state hashes", () => {
    const K = a.stepsPerSegment;
    for (const s of a.segments) {
      const tree = new SegmentTree(s.firstStep, a.stateHashes.slice(s.firstStep, s.lastStep + 1));
      expect(tree.root).to.equal(s.traceRoot);
      expect(tree.endStateHash).to.equal(s.endStateHash);
      expect(s.firstStep).to.equal(s.index * K);
      expect(verifyTraceProof(s.traceRoot, s.lastStep, a.stateHashes[s.lastStep]!, tree.proof(s.lastStep))).to.equal(true);
    }
  });

  it("recomputes every segment in-process from its start checkpoint (the auditor's path)", async () => {
    const run = await createRun(tinyManifest(), { jobId: 42n, salt: offlineSalt(42n) });
    const store = new LocalDirStore(join(dirA, a.store));
    for (const s of a.segments) {
      let state = run.loadCheckpoint(await store.get(s.checkpointCid), { step: s.firstStep });
      expect(run.stateHashOf(state)).to.equal(a.stateHashes[s.firstStep]);
      for (let t = s.firstStep + 1; t <= s.lastStep; t++) {
        const r = run.step(state, t);
        state = r.state;
        expect(run.stateHashOf(state), `h(${t})`).to.equal(a.stateHashes[t]);
        expect(Math.round(r.loss * 1e6)).to.equal(a.stepLossE6[t - 1]);
      }
    }
  });

  it("binds the jobId into every state hash", async () => {
    const run = await createRun(tinyManifest(), { jobId: 43n, salt: offlineSalt(43n) });
    expect(run.stateHashOf(run.initState())).to.not.equal(a.stateHashes[0]);
    const run42 = await createRun(tinyManifest(), { jobId: 42n, salt: offlineSalt(42n) });
    expect(run42.stateHashOf(run42.initState())).to.equal(a.stateHashes[0]);
  });

  it("rebuilds the batch of any step as a pure function of (data seed, job salt, step)", async () => {
    const r1 = await createRun(tinyManifest(), { jobId: 0n, salt: offlineSalt(0n) });
    const r2 = await createRun(tinyManifest(), { jobId: 0n, salt: offlineSalt(0n) });
    const late = r2.batchFor(5000); // touch a later epoch first: no hidden sequential state
    const b1 = r1.batchFor(7);
    const b2 = r2.batchFor(7);
    const same = (x: Batch, y: Batch) => x.kind === "images" && y.kind === "images" && Buffer.from(x.x.buffer).equals(Buffer.from(y.x.buffer)) && Buffer.from(x.y).equals(Buffer.from(y.y));
    expect(same(b1, b2)).to.equal(true);
    expect(same(late, r1.batchFor(5000))).to.equal(true);
    const otherSeed = await createRun(parseManifest({ ...structuredClone(tinyManifest()), data: { seed: 8, testPerDigit: 20 } }), { jobId: 0n, salt: offlineSalt(0n) });
    expect(same(otherSeed.batchFor(7), b1)).to.equal(false);
  });

  it("gives every job its own batches from step 1 (the salt), whatever its job id in the state hash", async () => {
    const a0 = await createRun(tinyManifest(), { jobId: 42n, salt: offlineSalt(42n) });
    const b0 = await createRun(tinyManifest(), { jobId: 43n, salt: offlineSalt(43n) });
    // the same job id with another job's salt: the batches follow the salt alone
    const aAsB = await createRun(tinyManifest(), { jobId: 42n, salt: offlineSalt(43n) });
    const chain = await createRun(tinyManifest(), { jobId: 42n, salt: jobSalt({ chainId: 31337, jobMarket: "0x5FbDB2315678afecb367f032d93F642f64180aa3", jobId: 42n }) });
    const labels = (r: Run, t: number) => [...(r.batchFor(t) as Extract<Batch, { kind: "images" }>).y].join(",");
    for (const t of [1, 2, 5000]) {
      expect(labels(a0, t), `step ${t}`).to.not.equal(labels(b0, t));
      expect(labels(a0, t), `step ${t}`).to.not.equal(labels(chain, t));
      expect(labels(aAsB, t), `step ${t}`).to.equal(labels(b0, t));
    }
    // so the trained states differ from step 1, while the initial state (the buyer's init seed) is shared
    expect(a0.weightsBytes(a0.initState())).to.deep.equal(b0.weightsBytes(b0.initState()));
    expect(a0.weightsBytes(a0.step(a0.initState(), 1).state)).to.not.deep.equal(b0.weightsBytes(b0.step(b0.initState(), 1).state));
    // the trace of job 42 (trained by `pouw train --job-id 42`: its offline salt) is a0's
    expect(a.salt).to.equal(offlineSalt(42n));
    expect(a0.stateHashOf(a0.step(a0.initState(), 1).state)).to.equal(a.stateHashes[1]);
  });

  it("trace.json records the salt (pouw-trace-2) and a pouw-trace-1 trace, trained without one, is refused by name", () => {
    expect(a.format).to.equal("pouw-trace-2");
    const legacy = { ...structuredClone(a), format: "pouw-trace-1" } as Record<string, unknown>;
    delete legacy.salt;
    expect(() => parseTraceFile(legacy)).to.throw(TraceFileError, /^trace\.json format pouw-trace-1 predates job salts .* re-train with a version-2 manifest$/);
    const { salt: _salt, ...noSalt } = a;
    expect(() => parseTraceFile(noSalt)).to.throw(TraceFileError, /trace\.json field salt/);
  });

  it("refuses a malformed salt", async () => {
    const err = await createRun(tinyManifest(), { jobId: 1n, salt: "0x1234" }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(SaltError);
    expect((err as SaltError).message).to.match(/salt must be 0x and 64 hex digits/);
  });

  it("char-transformer: two runs give identical hashes and the loss falls", async () => {
    const m = parseManifest(tinyTransformerJson());
    const hashes: string[][] = [];
    const losses: number[] = [];
    for (let rep = 0; rep < 2; rep++) {
      const run = await createRun(m, { jobId: 1n, salt: offlineSalt(1n) });
      let state = run.initState();
      const hs = [run.stateHashOf(state)];
      for (let t = 1; t <= 4; t++) {
        const r = run.step(state, t);
        state = r.state;
        hs.push(run.stateHashOf(state));
        if (rep === 0) losses.push(r.loss);
      }
      hashes.push(hs);
      // checkpoint round trip of the transformer state
      expect(run.stateHashOf(run.loadCheckpoint(run.checkpointBytes(state)))).to.equal(hs[4]);
    }
    expect(hashes[1]).to.deep.equal(hashes[0]);
    expect(losses[0]).to.be.closeTo(Math.log(96), 0.5);
    expect(losses[3]!).to.be.lessThan(losses[0]!);
  });

  it("the written checkpoint file bytes match their CID and the final weights file", async () => {
    const final = new Uint8Array(await readFile(join(dirA, "final.safetensors")));
    const store = new LocalDirStore(join(dirA, "store"));
    expect(Buffer.from(await store.get(a.finalCheckpointCid)).equals(Buffer.from(final))).to.equal(true);
  });
});
