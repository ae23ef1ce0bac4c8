/**
 * The one segment loop (verifier/src/ml/segments.ts), against an independent expectation: the strategy stepper driven
 * step by step with every state hashed on the calling thread. Resuming at a segment start (what `pouw provider run`
 * does after a restart), the hash worker and closing the loop early must not change a bit.
 */
import { expect } from "chai";
import type { Hex } from "viem";
import { createRun, offlineSalt, parseStrategy, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { lossE6, replayStrategySteps, trainSegments, type SegmentResult } from "../../verifier/src/ml/segments.ts";
import { createStepper } from "../../verifier/src/ml/stepper.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { traceRoot } from "../../verifier/src/trace/index.ts";
import { tempDir, tinyManifest } from "./helpers.ts";

const newStore = async (): Promise<LocalDirStore> => new LocalDirStore(await tempDir("segments"));

async function collect(loop: AsyncGenerator<SegmentResult>): Promise<SegmentResult[]> {
  const out: SegmentResult[] = [];
  for await (const s of loop) out.push(s);
  return out;
}

describe("ml/segments: the one segment loop of pouw train and pouw provider run", function () {
  this.timeout(120_000);
  const manifest = tinyManifest();
  const K = manifest.training.stepsPerSegment;
  const S = manifest.training.steps / K;
  let run: Run;
  // the expectation: stepper + stateHashOf per step, no segment loop
  let hashes: Hex[];
  let losses: number[];
  let states: TrainState[];
  before(async () => {
    run = await createRun(manifest, { jobId: 3n, salt: offlineSalt(3n) });
    const stepper = createStepper(run, parseStrategy("stale:2"));
    let state = run.initState();
    hashes = [run.stateHashOf(state)];
    losses = [];
    states = [state];
    for (let t = 1; t <= S * K; t++) {
      const o = stepper.step(state, t);
      state = o.state;
      hashes.push(run.stateHashOf(state));
      losses.push(o.loss);
      states.push(state);
    }
  });

  function expectSegment(s: SegmentResult, seg: number): void {
    expect([s.index, s.firstStep, s.lastStep]).to.deep.equal([seg, seg * K, (seg + 1) * K]);
    expect(s.stateHashes).to.deep.equal(hashes.slice(seg * K, (seg + 1) * K + 1));
    expect(s.traceRoot).to.equal(traceRoot(seg * K, hashes.slice(seg * K, (seg + 1) * K + 1)));
    expect(s.losses).to.deep.equal(losses.slice(seg * K, (seg + 1) * K));
    const mean = losses.slice(seg * K, (seg + 1) * K).reduce((a, b) => a + b, 0) / K;
    expect(s.lossE6).to.equal(lossE6(mean));
    expect(run.stateHashOf(s.state)).to.equal(hashes[(seg + 1) * K]);
  }

  it("yields every segment's hashes, root, losses and end state as the stepper gives them", async () => {
    const store = await newStore();
    const segs = await collect(trainSegments(run, { strategy: parseStrategy("stale:2"), store, start: run.initState(), endSegment: S, hashWorker: false }));
    expect(segs.length).to.equal(S);
    segs.forEach(expectSegment);
    // the start checkpoint of each segment is stored and decodes to that segment's start state
    for (const s of segs) expect(run.stateHashOf(run.loadCheckpoint(await store.get(s.checkpointCid), { step: s.firstStep }))).to.equal(hashes[s.firstStep]);
  });

  it("gives the same bits with the hash worker, resumed at a segment start, and with every state stored", async () => {
    const store = await newStore();
    const piped = await collect(trainSegments(run, { strategy: parseStrategy("stale:2"), store, start: run.initState(), endSegment: S, hashWorker: true }));
    piped.forEach(expectSegment);
    const resumed = await collect(trainSegments(run, { strategy: parseStrategy("stale:2"), store, start: states[2 * K]!, startSegment: 2, endSegment: S }));
    expect(resumed.map((s) => s.index)).to.deep.equal([2]);
    expectSegment(resumed[0]!, 2);
    const kept = await collect(trainSegments(run, { strategy: parseStrategy("stale:2"), store, start: run.initState(), endSegment: 1, keepStepStates: true }));
    expect(kept[0]!.stateCids!.length).to.equal(K);
    for (let j = 0; j < K; j++) expect(run.stateHashOf(run.loadCheckpoint(await store.get(kept[0]!.stateCids![j]!), { step: j }))).to.equal(hashes[j]);
  });

  it("stops cleanly when its consumer stops early (the hash worker is closed)", async () => {
    const loop = trainSegments(run, { strategy: parseStrategy("stale:2"), store: await newStore(), start: run.initState(), endSegment: S, hashWorker: true });
    for await (const s of loop) {
      expectSegment(s, 0);
      break;
    }
    expect((await loop.next()).done).to.equal(true);
  });

  it("refuses a start state that is not the first segment's start", async () => {
    const loop = trainSegments(run, { strategy: parseStrategy("honest"), store: await newStore(), start: run.initState(), startSegment: 1, endSegment: S });
    let err: unknown;
    try {
      await loop.next();
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(RangeError);
    expect((err as Error).message).to.contain("segment 1 starts at state 4, got state 0");
  });

  it("replays a segment's steps to its end state (a provider rebuilding a committed end state)", () => {
    const r = replayStrategySteps(run, parseStrategy("stale:2"), states[K]!, 2 * K);
    expect(run.stateHashOf(r.state)).to.equal(hashes[2 * K]);
    expect(r.flops).to.be.greaterThan(0);
  });
});
