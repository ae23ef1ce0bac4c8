import { expect } from "chai";
import { verifyStepWitness } from "../../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, type Run } from "../../verifier/src/ml/index.ts";
import {
  fastestTransformerKernelsV3, jsTransformerKernelsV3, matmul32Ref, matmulV3Ref, quantizeOperandsV3, quantizeV3, ThreadedKernels,
  v3TransformerKernels, WasmKernels, type TransformerKernels,
} from "../../verifier/src/ml/kernels/index.ts";
import { checkEngine, defaultBackend } from "../../verifier/src/ml/engines.ts";
import { exampleJson, tinyTransformerJson } from "./helpers.ts";

const STEPS = 3;

function v3Manifest() {
  return parseManifest({ ...tinyTransformerJson(), numerics: "bitwise-v3", stateDigest: "sha256-v2" });
}

async function runWith(transformerKernels?: TransformerKernels, threads?: number): Promise<Run> {
  return createRun(v3Manifest(), { jobId: 32n, salt: offlineSalt(32n), ...(transformerKernels ? { transformerKernels } : {}), ...(threads ? { threads } : {}) });
}

/** h(1..STEPS) of `run` from its init state. */
function hashes(run: Run): string[] {
  let state = run.initState();
  const out: string[] = [];
  for (let t = 1; t <= STEPS; t++) {
    state = run.step(state, t).state;
    out.push(run.stateHashOf(state));
  }
  return out;
}

describe("numerics bitwise-v3 char-transformer (kernels/transformer-v3.ts)", function () {
  this.timeout(300_000);
  let reference: string[];
  before(async () => {
    reference = hashes(await runWith(jsTransformerKernelsV3));
  });

  it("quantizeOperandsV3 is reference-v3's quantizeV3 element by element (specials -> canonical NaN) and idempotent", () => {
    const edge = [0, -0, 1, -1, 1.00390625, 1.005859375, 2 ** -56, 2 ** -57, 1e-40, 2 ** 48, 2 ** 47 * 1.99, -(2 ** 48), Infinity, -Infinity, NaN, 3.4e38, 0.1, -0.3];
    const rand = Array.from({ length: 2000 }, (_, i) => Math.sin(i * 12.9898) * 10 ** ((i % 30) - 15));
    const x = Float32Array.from([...edge, ...rand]);
    const q = quantizeOperandsV3(x);
    const bits = new Uint32Array(q.buffer);
    for (let i = 0; i < x.length; i++) {
      const want = quantizeV3(x[i]!);
      if (want !== want) expect(bits[i], `element ${i} (${x[i]})`).to.equal(0x7fc00000);
      else expect(Object.is(q[i], Math.fround(want)), `element ${i} (${x[i]}): ${q[i]} vs ${want}`).to.equal(true);
    }
    expect(Array.from(new Uint32Array(quantizeOperandsV3(q).buffer))).to.deep.equal(Array.from(bits));
  });

  it("the default kernels are the wasm v3 matmul over the wasm softmax (no silent fallback here)", () => {
    const k = fastestTransformerKernelsV3();
    expect(k.name).to.equal("wasm-simd128");
    expect(k.numerics).to.equal("bitwise-v3");
  });

  it(`${STEPS} steps: the wasm kernels, 2 threads and the JS reference give the same state hashes`, async () => {
    const wasm = await runWith();
    expect(wasm.model.arch).to.equal("char-transformer");
    expect(hashes(wasm)).to.deep.equal(reference);
    const threaded = new ThreadedKernels(2, new WasmKernels(), { minMacs: 0 });
    try {
      const run = await runWith(fastestTransformerKernelsV3(threaded));
      expect(hashes(run)).to.deep.equal(reference);
      expect(threaded.dispatched).to.be.greaterThan(0);
    } finally {
      await threaded.close();
    }
  });

  it("differs from the same pass with bitwise-v2's matmul on the raw operands (so the hashes above pin the v3 matmul)", async () => {
    // NOTE: not quantizing is the swap: matmul32Ref of bf16 operands IS the v3 matmul (exact products, same k order)
    const swapped = { ...v3TransformerKernels("v2-matmul", matmul32Ref, jsTransformerKernelsV3), quantize: undefined } as TransformerKernels;
    const h = hashes(await runWith(swapped));
    expect(h[0]).to.not.equal(reference[0]);
  });

  it("the manifest value: pouw by default and only, char-transformer only", () => {
    const m = v3Manifest();
    expect(defaultBackend(m)).to.equal("pouw");
    expect(() => checkEngine(m, "cpu", "--engine")).to.throw('--engine cpu: manifest numerics "bitwise-v3" runs only on pouw');
    expect(() => parseManifest({ ...exampleJson("tiny.json"), numerics: "bitwise-v3" })).to.throw(/bitwise-v3 is defined for char-transformer only; mnist-mlp uses "bitwise"/);
  });

  it("refuses bitwise-v2 kernels for a bitwise-v3 manifest, naming both", async () => {
    let err: unknown;
    try {
      await runWith({ ...jsTransformerKernelsV3, numerics: "bitwise-v2", quantize: undefined } as TransformerKernels);
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/give numerics bitwise-v2, the manifest has bitwise-v3/);
  });

  describe("Freivalds step check of a v3 step (checks/stepwitness.ts)", () => {
    let run: Run;
    before(async () => {
      run = await runWith();
    });

    it("passes the honest witness of step 1 and reproduces h(1); every claim has quantized operands", () => {
      const before = run.initState();
      const witness = run.step(before, 1, { witness: true }).witness!;
      const r = verifyStepWitness(run, before, 1, witness, reference[0] as `0x${string}`);
      expect(r.ok, r.ok ? "" : r.failure.message).to.equal(true);
      expect(r.stateHash).to.equal(reference[0]);
      // the recorded operands are already bf16: the witness is Q(A), Q(B), C
      for (const p of witness.products) {
        const lo = new Uint32Array(p.a.data.buffer, p.a.data.byteOffset, p.a.data.length).some((v) => (v & 0xffff) !== 0);
        expect(lo, `product ${p.name}: operand A not quantized`).to.equal(false);
      }
    });

    it("catches one corrupted product entry", () => {
      const before = run.initState();
      const witness = run.step(before, 1, { witness: true }).witness!;
      const name = "l0.ff1.dW";
      const products = witness.products.map((p) => {
        if (p.name !== name) return p;
        const data = Float32Array.from(p.c.data);
        const scale = data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
        data[Math.floor(data.length / 3)] = data[Math.floor(data.length / 3)]! + 1e-2 * scale;
        return { ...p, c: { shape: p.c.shape, data } };
      });
      const r = verifyStepWitness(run, before, 1, { ...witness, products }, reference[0] as `0x${string}`);
      expect(r.ok ? "" : r.failure.message).to.contain(`product ${name} fails Freivalds`);
    });

    it("would reject the honest witness if the claims used the raw operands (why the pass quantizes them)", async () => {
      const raw = await runWith({ ...fastestTransformerKernelsV3(), quantize: undefined } as TransformerKernels);
      const before = raw.initState();
      const witness = raw.step(before, 1, { witness: true }).witness!;
      const r = verifyStepWitness(raw, before, 1, witness, reference[0] as `0x${string}`);
      expect(r.ok).to.equal(false);
      expect(r.ok ? "" : r.failure.message).to.match(/fails Freivalds/);
    });
  });

  it("the v3 matmul of the raw operands equals matmulV3Ref of the quantized ones (what the claims rely on)", () => {
    const a = Float32Array.from({ length: 6 * 5 }, (_, i) => Math.cos(i * 1.7) * 3);
    const b = Float32Array.from({ length: 5 * 4 }, (_, i) => Math.sin(i * 0.9) / 7);
    const k = fastestTransformerKernelsV3();
    expect(Array.from(k.matmul(a, b, 6, 5, 4, "nn", 1))).to.deep.equal(Array.from(matmulV3Ref(quantizeOperandsV3(a), quantizeOperandsV3(b), 6, 5, 4, "nn", 1)));
  });
});
