import { expect } from "chai";
import { replayUpdate } from "../../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest } from "../../verifier/src/ml/index.ts";
import { exampleJson } from "../ml/helpers.ts";

describe("checks/update: the optimizer replayed in plain JavaScript is bit-identical to the engine's", () => {
  const optimizers = [
    { name: "adam", lr: 0.01 },
    { name: "adam", lr: 0.003, beta1: 0.8, beta2: 0.99, epsilon: 1e-6 },
    { name: "sgd", lr: 0.1 },
  ];
  for (const opt of optimizers) {
    it(`${JSON.stringify(opt)}: same state hash as Run.applyUpdate at every one of 6 steps`, async () => {
      const run = await createRun(parseManifest({ ...exampleJson("tiny.json"), optimizer: opt }), { jobId: 2n, salt: offlineSalt(2n) });
      let state = run.initState();
      for (let t = 1; t <= 6; t++) {
        const { grads } = run.gradients(state.params, run.batchFor(t));
        const engine = run.applyUpdate(state, grads);
        const replay = replayUpdate(run.manifest.optimizer, state, grads);
        expect(run.stateHashOf(replay), `step ${t}`).to.equal(run.stateHashOf(engine));
        state = engine;
      }
    });
  }
});
