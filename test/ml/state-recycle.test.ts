/**
 * The state hand-back of the segment loop (verifier/src/ml/segments.ts): step t writes its state into the arrays of
 * state t-2 when the loop alone holds it, and the step's gradients go into one reused set (Run.step). Neither may
 * change a bit, and no array the loop handed back may still be needed: every state hash, stored checkpoint, yielded
 * state and the caller's start state must be what a run without the hand-back gives.
 */
import { expect } from "chai";
import type { Hex } from "viem";
import { createRun, offlineSalt, parseManifest, parseStrategy, type Manifest, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { replayStrategySteps, trainSegments, type SegmentResult } from "../../verifier/src/ml/segments.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { tempDir, tinyManifest, tinyTransformerJson } from "./helpers.ts";

type Loop = { segments: SegmentResult[]; kept: { hash: Hex; state: TrainState }[]; store: LocalDirStore };

async function loop(run: Run, start: TrainState, options: { recycleStates: boolean; hashWorker: boolean; strategy?: string }): Promise<Loop> {
  const store = new LocalDirStore(await tempDir("recycle"));
  const S = run.manifest.training.steps / run.manifest.training.stepsPerSegment;
  const segments: SegmentResult[] = [];
  const kept: Loop["kept"] = [];
  const { strategy, ...flags } = options;
  for await (const s of trainSegments(run, { strategy: parseStrategy(strategy ?? "honest"), store, start, endSegment: S, keepStepStates: true, ...flags })) {
    segments.push(s);
    // a consumer keeps every yielded state (provider run holds its last end state); the loop must never reuse one
    kept.push({ hash: s.stateHashes.at(-1)!, state: s.state });
  }
  return { segments, kept, store };
}

function cases(label: string, manifest: () => Manifest): void {
  describe(label, function () {
    this.timeout(300_000);
    let run: Run;
    let start: TrainState;
    let startHash: Hex;
    // the expectation: Run.step per step, every state a fresh one, hashed on the calling thread
    let hashes: Hex[];
    before(async () => {
      run = await createRun(manifest(), { jobId: 5n, salt: offlineSalt(5n) });
      start = run.initState();
      startHash = run.stateHashOf(start);
      hashes = [startHash];
      let state = start;
      for (let t = 1; t <= run.manifest.training.steps; t++) {
        state = run.step(state, t).state;
        hashes.push(run.stateHashOf(state));
      }
    });

    for (const hashWorker of [false, true]) {
      it(`hands states back without changing a hash, checkpoint or kept state (hash worker ${hashWorker ? "on" : "off"})`, async () => {
        const K = run.manifest.training.stepsPerSegment;
        const fresh = await loop(run, start, { recycleStates: false, hashWorker });
        const reused = await loop(run, start, { recycleStates: true, hashWorker });
        // the hand-back happened: every step but the first two of the run and the first of each later segment
        const S = fresh.segments.length;
        expect(fresh.segments.map((s) => s.recycled)).to.deep.equal(new Array(S).fill(0));
        expect(reused.segments.map((s) => s.recycled)).to.deep.equal([K - 2, ...new Array(S - 1).fill(K - 1)]);
        for (const [i, s] of reused.segments.entries()) {
          expect(s.stateHashes, `segment ${i} hashes`).to.deep.equal(hashes.slice(i * K, (i + 1) * K + 1));
          expect(s.stateHashes).to.deep.equal(fresh.segments[i]!.stateHashes);
          expect(s.stateCids, `segment ${i} checkpoints`).to.deep.equal(fresh.segments[i]!.stateCids);
          // every stored checkpoint loads to its hash: no state was reused before its bytes were taken
          for (const [j, cid] of s.stateCids!.entries()) {
            expect(run.stateHashOf(run.loadCheckpoint(await reused.store.get(cid), { step: i * K + j })), `state ${i * K + j}`).to.equal(hashes[i * K + j]);
          }
        }
        // after the whole loop, every yielded state and the caller's start state still hold their own bits
        for (const k of reused.kept) expect(run.stateHashOf(k.state), `kept state ${k.state.step}`).to.equal(k.hash);
        expect(run.stateHashOf(start)).to.equal(startHash);
      });
    }

    it("replays to a committed end state with the hand-back, leaving the caller's state untouched", () => {
      const to = run.manifest.training.steps;
      const r = replayStrategySteps(run, parseStrategy("honest"), start, to);
      expect(run.stateHashOf(r.state)).to.equal(hashes[to]);
      expect(run.stateHashOf(start)).to.equal(startHash);
    });

    it("does not hand back under a strategy whose states share arrays (skip), and keeps its bits", async () => {
      const a = await loop(run, start, { recycleStates: true, hashWorker: false, strategy: "skip:0.5" });
      const b = await loop(run, start, { recycleStates: false, hashWorker: false, strategy: "skip:0.5" });
      expect(a.segments.every((s) => s.recycled === 0)).to.equal(true);
      expect(a.segments.map((s) => s.stateHashes)).to.deep.equal(b.segments.map((s) => s.stateHashes));
    });

    it("refuses a handed-back state that is still the update's input, naming the tensor", () => {
      const s1 = run.step(start, 1).state;
      expect(() => run.step(s1, 2, { into: s1 })).to.throw(RangeError, /handed-back tensor 0 shares memory with the update's inputs/);
      const wrong = { params: s1.params.slice(1), opt: s1.opt };
      expect(() => run.step(s1, 2, { into: wrong })).to.throw(RangeError, /handed-back state has/);
    });
  });
}

describe("ml/segments: the state hand-back (the same bits, nothing reused while needed)", () => {
  cases("mnist-mlp, bitwise (kernel Adam)", tinyManifest);
  cases("char-transformer, bitwise-v3 (kernel Adam, gradients into one reused set)", () =>
    parseManifest({ ...tinyTransformerJson(), numerics: "bitwise-v3", stateDigest: "sha256-v2", training: { batchSize: 2, steps: 9, stepsPerSegment: 3 } }));
});
