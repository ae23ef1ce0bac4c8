import { expect } from "chai";
import { readFileSync } from "node:fs";
import {
  causalSoftmaxBackRef, causalSoftmaxRef, exp32, jsTransformerKernels, kernelOracle, log32, matmul32Ref, TRANSFORMER_WASM_URL,
  transformerPass, transformerWasmUnavailable, WasmTransformerKernels, type TransformerDims,
} from "../../verifier/src/ml/kernels/index.ts";
import { createRun, defaultBackend, enginesAllowed, offlineSalt, parseEngine, parseManifest } from "../../verifier/src/ml/index.ts";
import { CharTransformer } from "../../verifier/src/ml/models/transformer.ts";
import { buildKernels, loadWabt, watPath } from "../../scripts/build-kernels.ts";
import { exampleJson, tinyTransformerJson } from "./helpers.ts";

// numerics "bitwise-v2": the JS reference (kernels/transformer-ref.ts) defines the bits, the wasm module
// (kernels/wasm/transformer.wat) must equal it. Bits compared as uint32 (-0 vs +0 counts; NaN meets NaN).
function expectSameBits(got: Float32Array, want: Float32Array, what: string): void {
  expect(got.length, `${what}: length`).to.equal(want.length);
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const w = new Uint32Array(want.buffer, want.byteOffset, want.length);
  for (let i = 0; i < g.length; i++) {
    if (g[i] !== w[i] && !(Number.isNaN(got[i]) && Number.isNaN(want[i]))) expect.fail(`${what}: [${i}] is ${got[i]} (0x${g[i]!.toString(16)}), expected ${want[i]} (0x${w[i]!.toString(16)})`);
  }
}

function rng(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function floats(n: number, seed: number, scale = 1, special = false): Float32Array {
  const next = rng(seed);
  const corners = [0, -0, 1e-42, -3e-39, 3.4e38, -3.4e38, 1e-7, 16777217, 0.1, -1, Infinity, -Infinity, NaN];
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (special && next() < 0.08) out[i] = corners[Math.floor(next() * corners.length)]!;
    else out[i] = (next() * 2 - 1) * scale * 2 ** Math.floor(next() * 16 - 8);
  }
  return out;
}

const ULP = 2 ** -24;
const v2Json = () => ({ ...tinyTransformerJson(), numerics: "bitwise-v2", stateDigest: "sha256-v1" });

describe("ml/kernels bitwise-v2 (char-transformer): wasm == JS reference, bit for bit", () => {
  let wasm: WasmTransformerKernels;
  before(() => {
    expect(transformerWasmUnavailable(), "wasm SIMD128 must be available on the test machine").to.equal(null);
    wasm = new WasmTransformerKernels();
  });

  describe("matmul32", () => {
    it("agrees on random shapes with odd sizes, all three layouts and batched blocks", () => {
      const sizes = [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 17, 31, 33, 64, 65];
      const next = rng(5);
      let cases = 0;
      for (let r = 0; r < 40; r++) {
        const pick = () => sizes[Math.floor(next() * sizes.length)]!;
        const [M, K, N, count] = [pick(), pick(), pick(), 1 + Math.floor(next() * 3)];
        for (const layout of ["nn", "tn", "nt"] as const) {
          const a = floats(count * M * K, 17 * r + 1), b = floats(count * K * N, 31 * r + 7);
          expectSameBits(wasm.matmul(a, b, M, K, N, layout, count), matmul32Ref(a, b, M, K, N, layout, count), `${layout} ${count}x ${M}x${K}x${N}`);
          cases++;
        }
      }
      expect(cases).to.equal(120);
    });

    it("agrees on the transformer's shapes and on IEEE corner values (-0, subnormals, inf, NaN)", () => {
      for (const [i, [M, K, N, layout, count]] of ([[512, 64, 64, "nn", 1], [64, 512, 256, "tn", 1], [512, 96, 64, "nt", 1], [64, 32, 64, "nt", 16], [64, 64, 32, "tn", 16], [9, 130, 7, "nn", 2]] as const).entries()) {
        for (const special of [false, true]) {
          const a = floats(count * M * K, 101 + i, 1, special), b = floats(count * K * N, 202 + i, 1, special);
          expectSameBits(wasm.matmul(a, b, M, K, N, layout, count), matmul32Ref(a, b, M, K, N, layout, count), `${layout} ${count}x ${M}x${K}x${N}${special ? " corners" : ""}`);
        }
      }
    });

    it("is a float32 left fold in k order, not a float64 sum (a hand-computed case)", () => {
      // (0 + 1e8) + 1 rounds back to 1e8 in float32, then - 1e8 gives 0; float64 (or another order) gives 1
      const a = Float32Array.of(1e8, 1, -1e8), b = Float32Array.of(1, 1, 1);
      for (const k of [jsTransformerKernels, wasm]) expectSameBits(k.matmul(a, b, 1, 3, 1, "nn", 1), Float32Array.of(0), `${k.name} fold order`);
      const reordered = Float32Array.of(1e8, -1e8, 1);
      for (const k of [jsTransformerKernels, wasm]) expectSameBits(k.matmul(reordered, b, 1, 3, 1, "nn", 1), Float32Array.of(1), `${k.name} other order`);
    });

    it("rejects operands whose lengths do not match the shape", () => {
      for (const k of [jsTransformerKernels, wasm]) expect(() => k.matmul(new Float32Array(6), new Float32Array(6), 2, 3, 3, "nn", 1)).to.throw(RangeError, /b has 6 elements, 1 x \[3,3\] needs 9/);
    });
  });

  describe("exp32 and log32 (our own algorithms)", () => {
    it("wasm exp equals the reference on a dense grid, random values and corners", () => {
      const next = rng(9);
      const xs = new Float32Array(20000 + 16);
      for (let i = 0; i < 20000; i++) xs[i] = i < 10000 ? -100 + i * 0.0195 : (next() * 2 - 1) * 2 ** Math.floor(next() * 30 - 20);
      xs.set([0, -0, NaN, Infinity, -Infinity, 88, 88.00001, -87, -87.00001, 1e-45, -1e-45, 3.4e38, -3.4e38, 0.5, -0.5, 0.34657359], 20000);
      expectSameBits(wasm.exp(xs), xs.map(exp32), "exp");
    });

    it("exp32 is within 2 ulp of exp on [-87, 88], +0 below and +Inf above", () => {
      let worst = 0;
      for (let x = -87; x <= 88; x += 0.00731) {
        const xf = Math.fround(x);
        const t = Math.exp(xf);
        worst = Math.max(worst, Math.abs(exp32(xf) - t) / t);
      }
      expect(worst / ULP).to.be.below(2);
      expect(exp32(-87.5)).to.equal(0);
      expect(exp32(88.5)).to.equal(Infinity);
      expect(exp32(0)).to.equal(1);
      expect(exp32(NaN)).to.be.NaN;
    });

    it("log32 is within 2 ulp of log on positives (subnormals included), and handles 0, negatives and Inf", () => {
      const next = rng(3);
      let worst = 0;
      for (let i = 0; i < 20000; i++) {
        const x = Math.fround(next() * 2 ** Math.floor(next() * 280 - 149));
        if (x === 0 || x === Infinity) continue;
        const t = Math.log(x);
        if (Math.abs(t) < 1e-3) continue; // near 1 the relative error of any float32 log is larger
        worst = Math.max(worst, Math.abs(log32(x) - t) / Math.abs(t));
      }
      expect(worst / ULP).to.be.below(2);
      expect(log32(1)).to.equal(0);
      expect(log32(0)).to.equal(-Infinity);
      expect(log32(-1)).to.be.NaN;
      expect(log32(Infinity)).to.equal(Infinity);
    });
  });

  describe("causal softmax", () => {
    it("forward and backward agree for odd T and several blocks; masked entries are +0 and rows sum to 1", () => {
      for (const T of [1, 2, 3, 5, 8, 13, 64]) {
        const s = floats(3 * T * T, T, 4), dp = floats(3 * T * T, 7 * T);
        const p = causalSoftmaxRef(s, T, 3);
        expectSameBits(wasm.causalSoftmax(s, T, 3), p, `softmax T=${T}`);
        expectSameBits(wasm.causalSoftmaxBack(p, dp, T, 3), causalSoftmaxBackRef(p, dp, T, 3), `softmax back T=${T}`);
        for (let i = 0; i < T; i++) {
          let sum = 0;
          for (let j = 0; j < T; j++) {
            if (j > i) expect(Object.is(p[i * T + j], 0), `T=${T} p[${i},${j}] masked`).to.equal(true);
            sum += p[i * T + j]!;
          }
          expect(Math.abs(sum - 1)).to.be.below(1e-5);
        }
      }
    });

    it("agrees on corner scores (huge, -inf, NaN)", () => {
      const T = 7;
      const s = floats(2 * T * T, 77, 1, true);
      const p = causalSoftmaxRef(s, T, 2);
      expectSameBits(wasm.causalSoftmax(s, T, 2), p, "softmax corners");
      const dp = floats(2 * T * T, 78, 1, true);
      expectSameBits(wasm.causalSoftmaxBack(p, dp, T, 2), causalSoftmaxBackRef(p, dp, T, 2), "softmax back corners");
    });
  });

  describe("the whole step", () => {
    it("the explicit backward pass matches float64 finite differences of an independent float64 model (2 layers, 2 heads)", () => {
      const dims: TransformerDims = { B: 2, T: 5, d: 8, H: 2, F: 12, V: 96, L: 2 };
      const model = new CharTransformer({ layers: dims.L, dModel: dims.d, heads: dims.H, context: dims.T, ffHidden: dims.F }, jsTransformerKernels);
      const next = rng(21);
      // random (not init) parameters so the LayerNorm gains and every bias get a non-trivial gradient
      const params = model.paramSpecs.map((s) => Float32Array.from({ length: s.shape.reduce((a, b) => a * b, 1) }, () => (next() * 2 - 1) * (s.name.endsWith(".g") ? 1.5 : 0.5)));
      const tokens = Uint8Array.from({ length: dims.B * (dims.T + 1) }, () => Math.floor(next() * dims.V));
      const pass = transformerPass(jsTransformerKernels, kernelOracle(jsTransformerKernels), params, tokens, dims, { grads: true });
      const p64 = params.map((p) => Float64Array.from(p));
      expect(Math.abs(pass.loss - loss64(p64, tokens, dims))).to.be.below(1e-4);
      const h = 1e-4;
      for (const [ti, spec] of model.paramSpecs.entries()) {
        const n = p64[ti]!.length;
        let num = 0, den = 0;
        for (let s = 0; s < Math.min(n, 6); s++) {
          const idx = Math.floor((s * n) / Math.min(n, 6));
          const orig = p64[ti]![idx]!;
          p64[ti]![idx] = orig + h;
          const up = loss64(p64, tokens, dims);
          p64[ti]![idx] = orig - h;
          const down = loss64(p64, tokens, dims);
          p64[ti]![idx] = orig;
          const fd = (up - down) / (2 * h);
          num += (pass.grads![ti]![idx]! - fd) ** 2;
          den += fd ** 2;
        }
        expect(Math.sqrt(num / Math.max(den, 1e-12)), `${spec.name}: relative gradient error`).to.be.below(2e-3);
      }
    });

    it("a bitwise-v2 run trains the same state hashes on the wasm and the JS kernels", async function () {
      this.timeout(60_000);
      const manifest = parseManifest(v2Json());
      const runs = await Promise.all([wasm, jsTransformerKernels].map((k) => createRun(manifest, { jobId: 3n, salt: offlineSalt(3n), transformerKernels: k })));
      expect(runs.map((r) => r.backend)).to.deep.equal(["pouw", "pouw"]);
      const hashes = runs.map((run) => {
        let s = run.initState();
        const out: string[] = [];
        for (let t = 1; t <= 3; t++) {
          const r = run.step(s, t);
          s = r.state;
          out.push(`${run.stateHashOf(s)} ${r.loss}`);
        }
        return out;
      });
      expect(hashes[0]).to.deep.equal(hashes[1]);
      expect(new Set(hashes[0]).size).to.equal(3);
    });

    it("the step witness lists every product with c = a . b as computed", async () => {
      const run = await createRun(parseManifest(v2Json()), { jobId: 3n, salt: offlineSalt(3n), transformerKernels: wasm });
      const { witness } = run.step(run.initState(), 1, { witness: true });
      const names = witness!.products.map((p) => p.name);
      expect(names).to.include.members(["l0.q", "l0.scores.0", "l0.scores.3", "l0.pv.dB.1", "head", "head.dW", "head.dX", "l0.ff2.dX"]);
      // 1 layer, B=2, H=2: 6 dense + 12 dense backward + 6 x 4 per-head + 3 head products
      expect(names.length).to.equal(6 + 12 + 6 * 4 + 3);
      for (const p of witness!.products) {
        const [M, K] = p.a.shape as [number, number];
        const N = p.b.shape[1]!;
        expectSameBits(p.c.data, matmul32Ref(p.a.data, p.b.data, M, K, N, "nn", 1), `witness ${p.name}`);
      }
    });
  });

  describe("numerics versioning", () => {
    it("bitwise-v2 runs on pouw only (the default); bitwise char-transformer manifests keep tfjs-cpu", async () => {
      const v2 = parseManifest(v2Json());
      expect(defaultBackend(v2)).to.equal("pouw");
      expect(enginesAllowed("bitwise-v2")).to.deep.equal(["pouw"]);
      expect(() => parseEngine("cpu", v2)).to.throw(/--engine cpu: manifest numerics "bitwise-v2" runs only on pouw \(the pouw kernels define bitwise-v2's bits/);
      try {
        await createRun(v2, { jobId: 1n, salt: offlineSalt(1n), backend: "cpu" });
        expect.fail("bitwise-v2 accepted cpu");
      } catch (err) {
        expect((err as Error).message).to.match(/bitwise-v2 runs only on the pouw engine/);
      }
      expect(defaultBackend(parseManifest(exampleJson("sotu.json")))).to.equal("cpu");
      const v1 = await createRun(parseManifest(tinyTransformerJson()), { jobId: 1n, salt: offlineSalt(1n) });
      expect(v1.backend).to.equal("cpu");
      expect(v1.model.witnessed).to.equal(false);
      expect(() => v1.step(v1.initState(), 1, { witness: true })).to.throw(/not for this char-transformer run \(numerics bitwise\)/);
    });

    it("refuses bitwise-v2 for mnist-mlp with a message naming what to use", () => {
      expect(() => parseManifest({ ...exampleJson("tiny.json"), numerics: "bitwise-v2" })).to.throw(/numerics: bitwise-v2 is defined for char-transformer only; mnist-mlp uses "bitwise"/);
    });

    it("the example manifests parse: sotu-v2.json (bitwise-v2) and gpt-sotu.json (>= 10M parameters)", () => {
      const gpt = parseManifest(exampleJson("gpt-sotu.json"));
      expect(gpt.numerics).to.equal("bitwise-v2");
      const m = gpt.model;
      if (m.arch !== "char-transformer") expect.fail("gpt-sotu.json is not a char-transformer");
      expect([m.layers, m.dModel, m.context]).to.deep.equal([6, 384, 256]);
      const params = new CharTransformer({ layers: m.layers, dModel: m.dModel, heads: m.heads, context: m.context, ffHidden: m.ffHidden ?? 4 * m.dModel }).paramSpecs
        .reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
      expect(params).to.be.at.least(10_000_000);
      expect(parseManifest(exampleJson("sotu-v2.json")).numerics).to.equal("bitwise-v2");
    });
  });

  describe("build", () => {
    it("the committed transformer.wasm is what transformer.wat builds to", async function () {
      const wabt = await loadWabt();
      if (!wabt) this.skip();
      const rebuilt = buildKernels(wabt, readFileSync(watPath("transformer"), "utf8"), "transformer.wat");
      expect(Buffer.from(rebuilt).equals(readFileSync(TRANSFORMER_WASM_URL)), "transformer.wasm differs from a rebuild: run node scripts/build-kernels.ts").to.equal(true);
    });
  });
});

/** The model of kernels/transformer.ts in float64 with Math.exp/log: an independent reference for the gradient check. */
function loss64(p: Float64Array[], tokens: Uint8Array, dims: TransformerDims): number {
  const { B, T, d, H, F, V, L } = dims;
  const dh = d / H;
  const ln = (x: Float64Array, g: Float64Array, b: Float64Array) => {
    const y = new Float64Array(x.length);
    for (let r = 0; r < x.length / d; r++) {
      let mean = 0, v = 0;
      for (let j = 0; j < d; j++) mean += x[r * d + j]! / d;
      for (let j = 0; j < d; j++) v += (x[r * d + j]! - mean) ** 2 / d;
      for (let j = 0; j < d; j++) y[r * d + j] = ((x[r * d + j]! - mean) / Math.sqrt(v + 1e-5)) * g[j]! + b[j]!;
    }
    return y;
  };
  const mm = (a: Float64Array, w: Float64Array, rows: number, k: number, n: number) => {
    const c = new Float64Array(rows * n);
    for (let i = 0; i < rows; i++) for (let j = 0; j < n; j++) {
      let s = 0;
      for (let q = 0; q < k; q++) s += a[i * k + q]! * w[q * n + j]!;
      c[i * n + j] = s;
    }
    return c;
  };
  const BT = B * T;
  let x = new Float64Array(BT * d);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) for (let j = 0; j < d; j++) x[(b * T + t) * d + j] = p[0]![tokens[b * (T + 1) + t]! * d + j]! + p[1]![t * d + j]!;
  for (let l = 0; l < L; l++) {
    const P = (i: number) => p[2 + 12 * l + i]!;
    const y1 = ln(x, P(0), P(1));
    const q = mm(y1, P(2), BT, d, d), k = mm(y1, P(3), BT, d, d), v = mm(y1, P(4), BT, d, d);
    const o = new Float64Array(BT * d);
    for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let i = 0; i < T; i++) {
      const s: number[] = [];
      for (let j = 0; j <= i; j++) {
        let dot = 0;
        for (let e = 0; e < dh; e++) dot += q[(b * T + i) * d + h * dh + e]! * k[(b * T + j) * d + h * dh + e]!;
        s.push(dot / Math.sqrt(dh));
      }
      const m = Math.max(...s);
      const ex = s.map((z) => Math.exp(z - m));
      const sum = ex.reduce((a, c) => a + c, 0);
      for (let e = 0; e < dh; e++) {
        let acc = 0;
        for (let j = 0; j <= i; j++) acc += (ex[j]! / sum) * v[(b * T + j) * d + h * dh + e]!;
        o[(b * T + i) * d + h * dh + e] = acc;
      }
    }
    const x1 = mm(o, P(5), BT, d, d).map((z, i) => z + x[i]!);
    const u = mm(ln(x1, P(6), P(7)), P(8), BT, d, F).map((z, i) => Math.max(0, z + P(9)[i % F]!));
    x = mm(u, P(10), BT, F, d).map((z, i) => z + P(11)[i % d]! + x1[i]!);
  }
  const base = 2 + 12 * L;
  const logits = mm(ln(x, p[base]!, p[base + 1]!), p[base + 2]!, BT, d, V).map((z, i) => z + p[base + 3]![i % V]!);
  let loss = 0;
  for (let r = 0; r < BT; r++) {
    const row = logits.subarray(r * V, (r + 1) * V);
    const m = Math.max(...row);
    const lse = Math.log(row.reduce((a, z) => a + Math.exp(z - m), 0)) + m;
    const b = Math.floor(r / T), t = r % T;
    loss += (lse - row[tokens[b * (T + 1) + t + 1]!]!) / BT;
  }
  return loss;
}
