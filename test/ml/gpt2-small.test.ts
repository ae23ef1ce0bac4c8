import { expect } from "chai";
import { createRun, offlineSalt, parseManifest, type Run } from "../../verifier/src/ml/index.ts";
import { jsTransformerKernelsV3 } from "../../verifier/src/ml/kernels/index.ts";
import { transformerParamSpecs } from "../../verifier/src/ml/state-layout.ts";
import { sizeOf } from "../../verifier/src/ml/tensors.ts";
import { exampleJson } from "./helpers.ts";

// The full GPT-2-small-class run (examples/gpt2-small.json: 85M parameters, ~1 GB of state) takes minutes a step on
// the shared build machine, so the suite checks its manifest and trains a shrunk model of the same class (12 layers,
// 12 heads, bitwise-v3, sha256-v2); the full run and its figures: docs/engine.md "GPT-2-small-class model".
describe("GPT-2-small-class char-transformer in bitwise-v3 (examples/gpt2-small.json)", function () {
  this.timeout(300_000);

  it("the example manifest parses: 12 layers, d_model 768, 12 heads, context 256, 85.36M parameters, bitwise-v3", () => {
    const m = parseManifest(exampleJson("gpt2-small.json"));
    if (m.model.arch !== "char-transformer") throw new Error(`arch ${m.model.arch}`);
    expect([m.model.layers, m.model.dModel, m.model.heads, m.model.context]).to.deep.equal([12, 768, 12, 256]);
    expect(m.numerics).to.equal("bitwise-v3");
    expect(m.stateDigest).to.equal("sha256-v2");
    const params = transformerParamSpecs({ ...m.model, ffHidden: m.model.ffHidden ?? 4 * m.model.dModel }).reduce((n, s) => n + sizeOf(s.shape), 0);
    // GPT-2 small's 85M non-embedding parameters; the 96-symbol vocabulary replaces its 38.6M BPE embedding
    expect(params).to.equal(85_363_296);
  });

  it("a shrunk model of the class (12 layers, 12 heads, d_model 24) trains 2 steps with the wasm kernels and the JS reference to the same state hashes", async () => {
    const json = { ...exampleJson("gpt2-small.json"), model: { arch: "char-transformer", layers: 12, dModel: 24, heads: 12, context: 8 } };
    const hashes = async (useReference: boolean): Promise<string[]> => {
      const run: Run = await createRun(parseManifest(json), { jobId: 5n, salt: offlineSalt(5n), ...(useReference ? { transformerKernels: jsTransformerKernelsV3 } : {}) });
      let state = run.initState();
      const out = [run.stateHashOf(state)];
      for (let t = 1; t <= 2; t++) {
        state = run.step(state, t).state;
        out.push(run.stateHashOf(state));
      }
      await run.close();
      return out;
    };
    const wasm = await hashes(false);
    expect(new Set(wasm).size).to.equal(3);
    expect(wasm).to.deep.equal(await hashes(true));
  });
});
