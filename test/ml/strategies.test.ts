import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createRun, offlineSalt, firstAffectedStep, ManifestError, parseManifest, parseStrategy, StrategyError, train, type Run, type TraceFile } from "../../verifier/src/ml/index.ts";
import { ContentNotFoundError, LocalDirStore } from "../../verifier/src/store/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";
import { writeStepStates } from "../../verifier/src/checks/index.ts";
import { tempDir, tinyManifest } from "./helpers.ts";

describe("ml/strategies: each cheat changes the roots from its first affected segment on", () => {
  const K = 4;
  let dir: string;
  let run: Run;
  let honest: TraceFile;

  before(async () => {
    dir = await tempDir("strategies");
    run = await createRun(tinyManifest(), { jobId: 9n, salt: offlineSalt(9n) });
    honest = (await train(run, { outDir: join(dir, "honest"), strategy: { kind: "honest" }, evaluate: false })).trace;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases: { strategy: string; firstSegment: number; saves: boolean }[] = [
    { strategy: "skip:0.25", firstSegment: 0, saves: true }, // skips steps 4, 8, 12
    { strategy: "skip:0.2", firstSegment: 1, saves: true }, // first skipped step is 5 (segment 1)
    { strategy: "quarter-batch", firstSegment: 0, saves: true },
    { strategy: "stale:3", firstSegment: 0, saves: true },
    { strategy: "fp16", firstSegment: 0, saves: true },
    { strategy: "plant:6", firstSegment: 1, saves: false },
    { strategy: "plant:9", firstSegment: 2, saves: false },
    { strategy: "near-zero", firstSegment: 0, saves: true },
    { strategy: "state-poison", firstSegment: 0, saves: true }, // poisons at step 1
    { strategy: "state-poison:5", firstSegment: 1, saves: true },
    { strategy: "nan-plant", firstSegment: 0, saves: true },
    { strategy: "nan-plant:9", firstSegment: 2, saves: true },
  ];

  for (const c of cases) {
    it(`${c.strategy}: roots equal before segment ${c.firstSegment}, differ from it on`, async () => {
      const strategy = parseStrategy(c.strategy);
      expect(Math.ceil(firstAffectedStep(strategy, 12) / K) - 1).to.equal(c.firstSegment);
      const { trace } = await train(run, { outDir: join(dir, c.strategy.replace(":", "-")), strategy, evaluate: false });
      expect(trace.strategy).to.equal(c.strategy);
      expect(trace.segments.length).to.equal(honest.segments.length);
      for (const s of trace.segments) {
        if (s.index < c.firstSegment) expect(s.traceRoot, `segment ${s.index}`).to.equal(honest.segments[s.index]!.traceRoot);
        else expect(s.traceRoot, `segment ${s.index}`).to.not.equal(honest.segments[s.index]!.traceRoot);
      }
      if (c.saves) {
        expect(trace.compute.savedFlops).to.be.greaterThan(0);
        expect(trace.compute.savedFraction).to.be.within(0.01, 1);
      } else {
        expect(trace.compute.savedFlops).to.equal(0);
        expect(trace.planted?.step).to.equal(strategy.kind === "plant" ? strategy.step : -1);
      }
    });
  }

  it("records what each compute-saving cheat saved", async () => {
    const skip = (await train(run, { outDir: join(dir, "skip-half"), strategy: parseStrategy("skip:0.5"), evaluate: false })).trace;
    expect(skip.compute.stepsSkipped).to.equal(6);
    expect(skip.compute.savedFraction).to.equal(0.5);
    const stale = (await train(run, { outDir: join(dir, "stale-4"), strategy: parseStrategy("stale:4"), evaluate: false })).trace;
    expect(stale.compute.gradientsComputed).to.equal(3);
    expect(stale.compute.savedFraction).to.equal(0.75);
    expect(honest.compute.savedFlops).to.equal(0);
    expect(honest.compute.gradientsComputed).to.equal(12);
  });

  it("copy:<dir> re-keys a peer's trace: only state 0 (the buyer's init) equals the honest one, every later state and root differs (the job salt)", async () => {
    const peerRun = await createRun(tinyManifest(), { jobId: 8n, salt: offlineSalt(8n) });
    const peerDir = join(dir, "peer");
    await train(peerRun, { outDir: peerDir, strategy: { kind: "honest" }, evaluate: false });
    const { trace } = await train(run, { outDir: join(dir, "copy"), strategy: parseStrategy(`copy:${peerDir}`), evaluate: false });
    expect(trace.compute.savedFraction).to.equal(1);
    expect(trace.salt).to.equal(run.salt);
    expect(trace.stateHashes[0]).to.equal(honest.stateHashes[0]);
    expect(trace.segments[0]!.checkpointCid).to.equal(honest.segments[0]!.checkpointCid);
    // the peer trained its own batches: its re-keyed segment boundaries are not this job's honest states
    expect(trace.stateHashes[4]).to.not.equal(honest.stateHashes[4]);
    for (const s of trace.segments) {
      if (s.index > 0) expect(s.checkpointCid).to.not.equal(honest.segments[s.index]!.checkpointCid);
      expect(s.traceRoot).to.not.equal(honest.segments[s.index]!.traceRoot);
    }
  });

  it("copy:<dir> refuses a trace of the same job and a missing trace", async () => {
    try {
      await train(run, { outDir: join(dir, "copy-self"), strategy: parseStrategy(`copy:${join(dir, "honest")}`), evaluate: false });
      expect.fail("copied its own job");
    } catch (err) {
      expect(err).to.be.instanceOf(StrategyError);
    }
    try {
      await train(run, { outDir: join(dir, "copy-none"), strategy: parseStrategy(`copy:${join(dir, "nope")}`), evaluate: false });
      expect.fail("copied a missing trace");
    } catch (err) {
      expect(err).to.be.instanceOf(InputError);
    }
  });

  it("full-copy:<dir> re-keys every per-step state of a peer: nothing computed, every state the peer's weights under this job's hashes", async () => {
    const peerRun = await createRun(tinyManifest(), { jobId: 8n, salt: offlineSalt(8n) });
    const peerDir = join(dir, "full-peer");
    const peer = await train(peerRun, { outDir: peerDir, strategy: { kind: "honest" }, evaluate: false, keepStepStates: true });
    await writeStepStates(peerRun, peerDir, peer.stepStateCids!);
    const { trace, stepStateCids } = await train(run, { outDir: join(dir, "full-copy"), strategy: parseStrategy(`full-copy:${peerDir}`), evaluate: false });
    expect(trace.strategy).to.equal(`full-copy:${peerDir}`);
    expect(trace.compute).to.include({ savedFraction: 1, gradientsComputed: 0 });
    expect(stepStateCids).to.have.length(13);
    const store = new LocalDirStore(join(dir, "full-copy", "store"));
    const peerStore = new LocalDirStore(join(peerDir, "store"));
    for (const t of [0, 1, 5, 12]) {
      const mine = run.loadCheckpoint(await store.get(stepStateCids![t]!), { step: t });
      const theirs = peerRun.loadCheckpoint(await peerStore.get(peer.stepStateCids![t]!), { step: t });
      expect(run.stateHashOf(mine), `h(${t})`).to.equal(trace.stateHashes[t]);
      expect(run.weightsBytes(mine), `state ${t}`).to.deep.equal(peerRun.weightsBytes(theirs));
    }
    for (const s of trace.segments) expect(s.traceRoot).to.not.equal(honest.segments[s.index]!.traceRoot);
    await train(run, { outDir: join(dir, "full-copy-none"), strategy: parseStrategy(`full-copy:${join(dir, "honest")}`), evaluate: false }).then(
      () => expect.fail("full-copied a peer that serves no per-step states"),
      (err: unknown) => expect(err).to.be.instanceOf(StrategyError),
    );
  });

  it("fine-tunes from a base checkpoint named by init.checkpointCid", async () => {
    const base = structuredClone(tinyManifest());
    const m = parseManifest({ ...base, init: { checkpointCid: honest.finalCheckpointCid, optimizerState: "fresh" } });
    const ft = await createRun(m, { jobId: 9n, salt: offlineSalt(9n) });
    expect(() => ft.initState()).to.throw(ManifestError, /checkpointCid/);
    const s0 = await ft.initFromStore(new LocalDirStore(join(dir, "honest", "store")));
    expect(s0.step).to.equal(0);
    const final = run.loadCheckpoint(await new LocalDirStore(join(dir, "honest", "store")).get(honest.finalCheckpointCid));
    expect(Buffer.from(ft.weightsBytes(s0)).equals(Buffer.from(run.weightsBytes(final)))).to.equal(true);
    // ... with a fresh optimizer state, not the base's (init.optimizerState "fresh")
    expect(Buffer.from(ft.optimizerStateBytes(s0)).equals(Buffer.from(run.optimizerStateBytes(run.initState())))).to.equal(true);
    expect(Buffer.from(ft.optimizerStateBytes(s0)).equals(Buffer.from(run.optimizerStateBytes(final)))).to.equal(false);
    try {
      await ft.initFromStore(new LocalDirStore(join(dir, "empty-store")));
      expect.fail("loaded a base checkpoint from an empty store");
    } catch (err) {
      expect(err).to.be.instanceOf(ContentNotFoundError);
    }
  });

  it("rejects malformed strategies with a StrategyError", () => {
    for (const bad of ["", "lazy", "skip", "skip:1", "skip:0", "skip:abc", "stale:1", "stale:2.5", "plant:0", "plant", "copy:", "fp16:2", "honest:1", "state-poison:0", "state-poison:", "nan-plant:x", "steer:", "steer", "full-copy", "full-copy:"]) {
      expect(() => parseStrategy(bad), bad).to.throw(StrategyError);
    }
    expect(parseStrategy("state-poison")).to.deep.equal({ kind: "state-poison", step: 1 });
    expect(parseStrategy("nan-plant:3")).to.deep.equal({ kind: "nan-plant", step: 3 });
    expect(parseStrategy("full-copy:/a:b")).to.deep.equal({ kind: "full-copy", dir: "/a:b" });
  });

  // issue 13: one poisoned step makes the rest of the job free and bit-exact
  for (const [name, saved] of [["state-poison", 59 / 60], ["nan-plant", 59 / 60]] as const) {
    it(`${name} on a 60-step job computes one gradient, and every later state is the engine's step from the one before`, async () => {
      const long = await createRun(parseManifest({ ...structuredClone(tinyManifest()), training: { batchSize: 8, steps: 60, stepsPerSegment: 4 } }), { jobId: 9n, salt: offlineSalt(9n) });
      const out = join(dir, `${name}-60`);
      const { trace, stepStateCids } = await train(long, { outDir: out, strategy: parseStrategy(name), evaluate: false, keepStepStates: true });
      expect(trace.compute.gradientsComputed).to.equal(1);
      expect(trace.compute.savedFraction).to.be.closeTo(saved, 1e-12);
      const store = new LocalDirStore(join(out, "store"));
      for (const t of [2, 3, 30, 60]) {
        const prev = long.loadCheckpoint(await store.get(stepStateCids![t - 1]!), { step: t - 1 });
        expect(long.stateHashOf(long.step(prev, t).state), `step ${t}`).to.equal(trace.stateHashes[t]);
      }
    });
  }

  it("state-poison needs Adam; steer needs a peer that serves its per-step states", async () => {
    const sgd = await createRun(parseManifest({ ...structuredClone(tinyManifest()), optimizer: { name: "sgd", lr: 0.1 } }), { jobId: 9n, salt: offlineSalt(9n) });
    try {
      await train(sgd, { outDir: join(dir, "poison-sgd"), strategy: parseStrategy("state-poison"), evaluate: false });
      expect.fail("poisoned an SGD run");
    } catch (err) {
      expect(err).to.be.instanceOf(StrategyError);
    }
    try {
      await train(run, { outDir: join(dir, "steer-none"), strategy: parseStrategy(`steer:${join(dir, "honest")}`), evaluate: false });
      expect.fail("steered without the peer's per-step states");
    } catch (err) {
      expect(err).to.be.instanceOf(StrategyError);
    }
  });
});
