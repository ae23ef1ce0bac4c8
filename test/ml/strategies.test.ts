import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createRun, offlineSalt, firstAffectedStep, ManifestError, parseManifest, parseStrategy, plantSpreadSteps, StrategyError, train, type Run, type TraceFile, type TrainState } from "../../verifier/src/ml/index.ts";
import { ContentNotFoundError, LocalDirStore } from "../../verifier/src/store/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";
import { adamPowers, screenConfigOf, screenState, writeStepStates } from "../../verifier/src/checks/index.ts";
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

  // one poisoned step makes the rest of the job free and bit-exact
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

describe("ml/strategies: the adaptive cheats (skip-powers, plant-bounded, plant-spread)", () => {
  const K = 4;
  let dir: string;
  let run: Run;

  before(async () => {
    dir = await tempDir("adaptive");
    run = await createRun(tinyManifest(), { jobId: 9n, salt: offlineSalt(9n) });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Every committed segment-start state and the final one, from the per-step states the cheater kept. */
  async function states(name: string): Promise<TrainState[]> {
    const out = join(dir, name.replace(/:/g, "-"));
    const { stepStateCids } = await train(run, { outDir: out, strategy: parseStrategy(name), evaluate: false, keepStepStates: true });
    const store = new LocalDirStore(join(out, "store"));
    return Promise.all(stepStateCids!.map(async (cid, t) => run.loadCheckpoint(await store.get(cid), { step: t })));
  }

  it("parses skip-powers[:<f>], plant-spread:<n> and plant-bounded, and rejects their malformed forms", () => {
    expect(parseStrategy("skip-powers")).to.deep.equal({ kind: "skip-powers", fraction: 1 });
    expect(parseStrategy("skip-powers:0.5")).to.deep.equal({ kind: "skip-powers", fraction: 0.5 });
    expect(parseStrategy("plant-spread:5")).to.deep.equal({ kind: "plant-spread", doses: 5 });
    expect(parseStrategy("plant-bounded")).to.deep.equal({ kind: "plant-bounded" });
    for (const bad of ["skip-powers:", "skip-powers:0", "skip-powers:1.5", "plant-spread", "plant-spread:0", "plant-spread:2.5", "plant-bounded:1"]) expect(() => parseStrategy(bad), bad).to.throw(StrategyError);
    // five doses over 12 steps: 1 + floor(12k/5)
    expect(plantSpreadSteps(5, 12)).to.deep.equal([1, 3, 5, 8, 10]);
  });

  it("skip-powers: weights and moments never move while the step and the powers advance exactly as the engine's; the screen passes every state, recompute does not", async () => {
    const s = await states("skip-powers");
    const n = run.paramSpecs.length;
    const cfg = run.manifest.optimizer as Extract<typeof run.manifest.optimizer, { name: "adam" }>;
    const config = screenConfigOf(run);
    for (let t = 1; t <= 12; t++) {
      for (let i = 0; i < 2 * n; i++) {
        const a = i < n ? s[t]!.params[i]! : s[t]!.opt[i - n]!;
        const b = i < n ? s[0]!.params[i]! : s[0]!.opt[i - n]!;
        expect(Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)), `step ${t} tensor ${i}`).to.equal(true);
      }
      // the powers are the screen's own b1^t, b2^t (an independent schedule: t float32 multiplications from 1)
      expect([s[t]!.opt[2 * n]![0], s[t]!.opt[2 * n + 1]![0]]).to.deep.equal(adamPowers(cfg, t));
    }
    for (let i = 1; i <= 3; i++) expect(screenState(config, s[i * K]!, s[(i - 1) * K]!).ok, `state ${i * K}`).to.equal(true);
    // what catches it: the honest step from any committed state differs
    expect(run.stateHashOf(run.step(s[8]!, 9).state)).to.not.equal(run.stateHashOf(s[9]!));
  });

  it("plant-bounded: every segment's end passes the screen against its start, yet the plant's entries end above the honest run's", async () => {
    const s = await states("plant-bounded");
    const honest = await states("honest");
    const config = screenConfigOf(run);
    for (let i = 1; i <= 3; i++) {
      const v = screenState(config, s[i * K]!, s[(i - 1) * K]!);
      expect(v.ok, `state ${i * K}`).to.equal(true);
      // inside the bound, but close to it: the cheater took what the screen leaves
      expect(v.details.weights!, `state ${i * K}`).to.be.within(0.99, 1);
    }
    let above = 0;
    for (let j = 0; j < 64; j++) above += s[12]!.params[0]![j]! - honest[12]!.params[0]![j]!;
    expect(above / 64).to.be.greaterThan(0.01);
    // the planted steps are the segment ends: recompute names step 4 in segment 0
    expect(run.stateHashOf(run.step(s[3]!, 4).state)).to.not.equal(run.stateHashOf(s[4]!));
    expect(run.stateHashOf(run.step(s[2]!, 3).state)).to.equal(run.stateHashOf(s[3]!));
  });

  it("skip-powers and plant-bounded need Adam", async () => {
    const sgd = await createRun(parseManifest({ ...structuredClone(tinyManifest()), optimizer: { name: "sgd", lr: 0.1 } }), { jobId: 9n, salt: offlineSalt(9n) });
    for (const name of ["skip-powers", "plant-bounded"]) {
      let err: unknown;
      try {
        await train(sgd, { outDir: join(dir, `${name}-sgd`), strategy: parseStrategy(name), evaluate: false });
      } catch (e) {
        err = e;
      }
      expect(err, name).to.be.instanceOf(StrategyError);
    }
  });
});
