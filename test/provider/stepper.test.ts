/**
 * The strategy stepper (verifier/src/ml/stepper.ts) driven step by step, as the provider that commits
 * segment by segment does, against the engine's whole-run trainer (verifier/src/ml/train.ts): for every
 * strategy both must produce the same state hash at every step. Also: resuming the stepper at a segment
 * start gives the same hashes as running straight through.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { createStepper } from "../../verifier/src/ml/stepper.ts";

const manifest = parseManifest(JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8")));
const STRATEGIES = ["honest", "skip:0.3", "stale:2", "plant:5", "quarter-batch", "fp16", "near-zero", "skip-powers", "skip-powers:0.5", "plant-bounded", "plant-spread:5"];

function stepThrough(run: Run, strategy: string, from: TrainState, first: number, last: number): { hashes: Hex[]; state: TrainState } {
  const stepper = createStepper(run, parseStrategy(strategy), first);
  let state = from;
  const hashes: Hex[] = [];
  for (let t = first; t <= last; t++) {
    state = stepper.step(state, t).state;
    hashes.push(run.stateHashOf(state));
  }
  return { hashes, state };
}

describe("provider stepper matches the engine trainer", function () {
  this.timeout(180_000);
  let run: Run;
  before(async () => {
    run = await createRun(manifest, { jobId: 3n, salt: offlineSalt(3n) });
  });

  for (const s of STRATEGIES) {
    it(`gives the trainer's state hashes at every step for ${s}`, async () => {
      const out = mkdtempSync(join(tmpdir(), "pouw-stepper-"));
      const { trace } = await train(run, { outDir: out, strategy: parseStrategy(s), evaluate: false });
      const mine = stepThrough(run, s, run.initState(), 1, manifest.training.steps).hashes;
      expect(mine).to.deep.equal(trace.stateHashes.slice(1));
    });
  }

  it("resumes at a segment start with the same hashes (stale:2 at an even segment boundary, the adaptive cheats)", () => {
    const K = manifest.training.stepsPerSegment;
    const straight = stepThrough(run, "stale:2", run.initState(), 1, 3 * K).hashes;
    const firstSeg = stepThrough(run, "stale:2", run.initState(), 1, K);
    const resumed = stepThrough(run, "stale:2", firstSeg.state, K + 1, 3 * K).hashes;
    expect([...firstSeg.hashes, ...resumed]).to.deep.equal(straight);
    expect(() => createStepper(run, parseStrategy("stale:3"), 5)).to.throw(/cannot resume/);
    // the adaptive cheats resume at a segment start too (plant-bounded measures its allowance from the segment's start)
    for (const s of ["plant-bounded", "skip-powers:0.5", "plant-spread:5"]) {
      const whole = stepThrough(run, s, run.initState(), 1, 3 * K).hashes;
      const head = stepThrough(run, s, run.initState(), 1, K);
      expect([...head.hashes, ...stepThrough(run, s, head.state, K + 1, 3 * K).hashes], s).to.deep.equal(whole);
    }
    expect(() => createStepper(run, parseStrategy("copy:/tmp/x"))).to.throw(/segment by segment/);
  });
});
