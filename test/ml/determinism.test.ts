import { expect } from "chai";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createRun, parseManifest, readTraceFile, type TraceFile } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree, verifyTraceProof } from "../../verifier/src/trace/index.ts";
import { pouwAsync, ROOT, tempDir, tinyManifest, tinyTransformerJson } from "./helpers.ts";

describe("ml/determinism: the same manifest trained twice gives identical traces", () => {
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
    const run = await createRun(tinyManifest(), { jobId: 42n });
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
    const run = await createRun(tinyManifest(), { jobId: 43n });
    expect(run.stateHashOf(run.initState())).to.not.equal(a.stateHashes[0]);
    const run42 = await createRun(tinyManifest(), { jobId: 42n });
    expect(run42.stateHashOf(run42.initState())).to.equal(a.stateHashes[0]);
  });

  it("rebuilds the batch of any step as a pure function of (data seed, step)", async () => {
    const r1 = await createRun(tinyManifest());
    const r2 = await createRun(tinyManifest());
    const late = r2.batchFor(5000); // touch a later epoch first: no hidden sequential state
    const b1 = r1.batchFor(7);
    const b2 = r2.batchFor(7);
    expect(b1.kind === "images" && b2.kind === "images").to.equal(true);
    if (b1.kind === "images" && b2.kind === "images" && late.kind === "images") {
      expect(Buffer.from(b1.x.buffer).equals(Buffer.from(b2.x.buffer))).to.equal(true);
      expect([...b1.y]).to.deep.equal([...b2.y]);
      expect([...late.y]).to.deep.equal([...(r1.batchFor(5000) as typeof late).y]);
    }
    const other = await createRun(parseManifest({ ...structuredClone(tinyManifest()), data: { seed: 8, testPerDigit: 20 } }));
    const b3 = other.batchFor(7);
    expect(b3.kind === "images" && b1.kind === "images" && Buffer.from(b3.x.buffer).equals(Buffer.from(b1.x.buffer))).to.equal(false);
  });

  it("char-transformer: two runs give identical hashes and the loss falls", async () => {
    const m = parseManifest(tinyTransformerJson());
    const hashes: string[][] = [];
    const losses: number[] = [];
    for (let rep = 0; rep < 2; rep++) {
      const run = await createRun(m, { jobId: 1n });
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
