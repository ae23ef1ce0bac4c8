/**
 * The circuit model class in the engine (models/linear-tile.ts): Run.step is the circuit's reference step on the
 * engine's own batches, h(t) is the leaf DisputeGame.prove checks (circuitStateHash, the async Poseidon path), the
 * features are the documented function of the MNIST pixels, checkpoints outside the class are refused, and the manifest
 * refuses every parameter the circuit does not prove.
 */
import { expect } from "chai";
import { circuitStateHash, circuitTermsOfRun, jobManifestHashOf, circuitManifestHash, BatchTree } from "../../verifier/src/dispute/index.ts";
import { CheckpointError, createRun, encodeCheckpoint, manifestHash, offlineSalt, parseManifest, parseStrategy, StrategyError, type Run } from "../../verifier/src/ml/index.ts";
import { tileBatchOf, tileWeightsOf } from "../../verifier/src/ml/models/linear-tile.ts";
import { createStepper } from "../../verifier/src/ml/stepper.ts";
import { referenceStep, toFixed } from "../../verifier/src/zk/index.ts";
import { exampleJson } from "./helpers.ts";

const circuitJson = () => exampleJson("circuit.json") as Record<string, Record<string, unknown>>;

describe("linear-tile: the circuit model class in the engine", function () {
  this.timeout(60_000);
  let run: Run;

  before(async () => {
    run = await createRun(parseManifest(circuitJson()), { jobId: 3n, salt: offlineSalt(3n) });
  });

  it("steps exactly as the circuit's reference step, on the engine's salted batches, with the circuit's leaf", async () => {
    let state = run.initState();
    expect(run.stateHashOf(state)).to.equal(await circuitStateHash(3n, 0, tileWeightsOf(state.params)));
    for (let t = 1; t <= 6; t++) {
      const batch = run.tileBatch(t);
      const expected = referenceStep({ w: tileWeightsOf(state.params), x: batch.x, y: batch.y, lr: toFixed(0.5) });
      state = run.step(state, t).state;
      expect(tileWeightsOf(state.params)).to.deep.equal(expected);
      expect(run.stateHashOf(state)).to.equal(await circuitStateHash(3n, t, expected));
    }
    // another job's salt gives other batches from step 1 (the data order is salted like every class's)
    const other = await createRun(run.manifest, { jobId: 4n, salt: offlineSalt(4n) });
    expect(other.tileBatch(1)).to.not.deep.equal(run.tileBatch(1));
  });

  it("derives X from 4x2 block means and Y from the digit's bits", () => {
    const x = new Float32Array(8 * 784);
    const y = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 9]);
    // image 0: the top-left 7x14 block all white; image 1: the bottom-right block half grey (0.5)
    for (let r = 0; r < 7; r++) for (let c = 0; c < 14; c++) x[r * 28 + c] = 1;
    for (let r = 21; r < 28; r++) for (let c = 14; c < 28; c++) x[784 + r * 28 + c] = 0.5;
    const t = tileBatchOf({ kind: "images", size: 8, x, y });
    expect(t.x[0]).to.deep.equal([65536n, 0n, 0n, 0n, 0n, 0n, 0n, 0n]);
    expect(t.x[1]).to.deep.equal([0n, 0n, 0n, 0n, 0n, 0n, 0n, 32768n]);
    expect(t.y[7]).to.deep.equal([65536n, 0n, 0n, 65536n]); // 9 = 0b1001, least significant bit first
    expect(t.y[6]).to.deep.equal([0n, 65536n, 65536n, 0n]);
  });

  it("binds the circuit terms into the job's manifest hash", async () => {
    const { terms, tree } = await circuitTermsOfRun(run);
    expect(terms.lr).to.equal(32768n);
    const batches = Array.from({ length: 12 }, (_, i) => run.tileBatch(i + 1));
    expect(tree.root).to.equal((await BatchTree.of(batches)).root);
    expect(await jobManifestHashOf(run)).to.equal(circuitManifestHash(manifestHash(run.manifest), terms));
    expect(await jobManifestHashOf(run)).to.not.equal(manifestHash(run.manifest));
  });

  it("refuses a checkpoint whose weights are not in the class", () => {
    const good = run.checkpointBytes(run.initState());
    expect(run.loadCheckpoint(good, { step: 0 }).params[0]).to.deep.equal(run.initState().params[0]);
    const w = Float32Array.from(run.initState().params[0]!);
    w[5] = 0.1; // not a multiple of 2^-16
    const bad = encodeCheckpoint(run.paramSpecs, run.optSpecs, {
      metadata: { step: 0, jobId: 3n, manifestHash: run.manifestHash, model: "linear-tile", optimizer: "sgd" },
      params: [w],
      opt: [],
    });
    expect(() => run.loadCheckpoint(bad, { step: 0 })).to.throw(CheckpointError, /W\[1\]\[1\] = 0\.1.* not a multiple of 2\^-16/);
  });

  it("refuses the cheats that recombine gradient and optimizer steps, runs plant and skip", () => {
    expect(() => createStepper(run, parseStrategy("quarter-batch"))).to.throw(StrategyError, /quarter-batch is not defined for linear-tile/);
    expect(() => createStepper(run, parseStrategy("stale:2"))).to.throw(StrategyError, /stale is not defined/);
    const s0 = run.initState();
    const planted = createStepper(run, parseStrategy("plant:1")).step(s0, 1);
    const honest = run.step(s0, 1);
    expect(planted.state.params[0]![0]).to.equal(honest.state.params[0]![0]! + 0.25);
    expect(run.stateHashOf(planted.state)).to.not.equal(run.stateHashOf(honest.state));
    const skipper = createStepper(run, parseStrategy("skip:0.5")); // skips step 2, 4, ...
    const s1 = skipper.step(s0, 1).state;
    expect(run.stateHashOf(s1)).to.equal(run.stateHashOf(honest.state));
    expect(skipper.step(s1, 2).state.params[0]).to.deep.equal(s1.params[0]);
  });

  it("parses only the circuit's parameters", () => {
    const m = circuitJson();
    const bad = (patch: Record<string, unknown>, re: RegExp) => expect(() => parseManifest({ ...m, ...patch })).to.throw(re);
    bad({ model: { ...m.model, inputs: 16 } }, /model.inputs/);
    bad({ optimizer: { name: "adam", lr: 0.5 } }, /optimizer.name: must be sgd for linear-tile/);
    bad({ optimizer: { name: "sgd", lr: 0.1 } }, /optimizer.lr: must be a multiple of 2\^-16/);
    bad({ training: { ...m.training, batchSize: 16 } }, /training.batchSize: must be 8 for linear-tile/);
    bad({ numerics: "tolerance" }, /numerics: must be bitwise for linear-tile/);
    bad({ stateDigest: "sha256-v1" }, /stateDigest: is not used by linear-tile/);
  });
});
