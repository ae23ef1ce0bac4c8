import { expect } from "chai";
import { readFileSync } from "node:fs";
import { scoped, tf, useBackend } from "../../verifier/src/ml/backend.ts";
import { createRun, defaultBackend, offlineSalt, parseManifest, type Manifest, type TrainState } from "../../verifier/src/ml/index.ts";
import {
  adamPowers, adamRef, adamScalars, fastestKernels, jsKernels, KERNELS_WASM_URL, matmulRef, mlpStep, sgdRef,
  selectKernels, WasmKernels, wasmKernelsUnavailable, type MatmulLayout,
} from "../../verifier/src/ml/kernels/index.ts";
import { MnistMlp } from "../../verifier/src/ml/models/mlp.ts";
import { createOptimizer } from "../../verifier/src/ml/optimizer.ts";
import { buildKernels, loadWabt } from "../../scripts/build-kernels.ts";
import { exampleJson } from "./helpers.ts";

// The oracle is tfjs-cpu (4.22.0): the JS reference kernels must give its bits, and the wasm kernels the
// reference's. Bits are compared as uint32, so -0 vs +0 counts; a NaN must meet a NaN, but its sign and
// payload are not compared: JavaScript itself does not fix them (ECMAScript leaves the bits of a NaN stored
// into a Float32Array to the implementation, and V8 gives 0x7fc00000 or 0xffc00000 for the same tfjs op
// depending on the code path), so the reference cannot define them either (docs/engine.md "Kernel layer").
function expectSameBits(got: Float32Array, want: Float32Array, what: string): void {
  expect(got.length, `${what}: length`).to.equal(want.length);
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const w = new Uint32Array(want.buffer, want.byteOffset, want.length);
  for (let i = 0; i < g.length; i++) {
    if (g[i] !== w[i] && !(Number.isNaN(got[i]) && Number.isNaN(want[i]))) expect.fail(`${what}: [${i}] is ${got[i]} (0x${g[i]!.toString(16)}), expected ${want[i]} (0x${w[i]!.toString(16)})`);
  }
}

// xorshift32, so a failure reproduces; `special` mixes in values that exercise rounding and IEEE corners
function floats(n: number, seed: number, scale = 1, special = false): Float32Array {
  const out = new Float32Array(n);
  let x = seed | 1;
  const next = () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const corners = [0, -0, 1e-42, -3e-39, 3.4e38, -3.4e38, 1e-7, 16777217, 0.1, -1, Infinity, -Infinity, NaN];
  for (let i = 0; i < n; i++) {
    const u = next();
    if (special && u < 0.08) out[i] = corners[Math.floor(next() * corners.length)]!;
    // wide exponent range: products of very different magnitudes make the block sums round
    else out[i] = (next() * 2 - 1) * scale * 2 ** Math.floor(next() * 24 - 12);
  }
  return out;
}

function tfMatmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: MatmulLayout): Float32Array {
  return scoped(() => {
    const A = layout === "tn" ? tf.transpose(tf.tensor2d(a, [K, M])) : tf.tensor2d(a, [M, K]);
    const B = layout === "nt" ? tf.transpose(tf.tensor2d(b, [N, K])) : tf.tensor2d(b, [K, N]);
    return Float32Array.from(tf.matMul(A, B).dataSync());
  });
}

const SIZES = [1, 2, 3, 7, 8, 9, 10, 16, 47, 48, 49, 97, 127, 129];
const LAYOUTS: MatmulLayout[] = ["nn", "tn", "nt"];

describe("ml/kernels: wasm == JS reference == tfjs-cpu, bit for bit", () => {
  let wasm: WasmKernels;
  before(async () => {
    await useBackend("cpu");
    expect(wasmKernelsUnavailable(), "wasm SIMD128 must be available on the test machine").to.equal(null);
    wasm = new WasmKernels();
  });

  describe("matmul", () => {
    it("agrees on random shapes with odd sizes (1, 3, 7, 127, 129, block edges 47/48/49) in all three layouts", () => {
      let seed = 1;
      let cases = 0;
      for (let r = 0; r < 40; r++) {
        const pick = () => SIZES[(seed = (seed * 1103515245 + 12345) >>> 0) % SIZES.length]!;
        const [M, K, N] = [pick(), r % 5 === 0 ? 784 : pick(), pick()];
        for (const layout of LAYOUTS) {
          const a = floats(M * K, 17 * r + 1);
          const b = floats(K * N, 31 * r + 7);
          const what = `${layout} M=${M} K=${K} N=${N}`;
          const ref = matmulRef(a, b, M, K, N, layout);
          expectSameBits(ref, tfMatmul(a, b, M, K, N, layout), `reference vs tfjs-cpu, ${what}`);
          expectSameBits(wasm.matmul(a, b, M, K, N, layout), ref, `wasm vs reference, ${what}`);
          cases++;
        }
      }
      expect(cases).to.equal(120);
    });

    it("agrees on the mnist-mlp step's shapes (batch 64, hidden 128) and on IEEE corner values (-0, subnormals, inf, NaN)", () => {
      const shapes: [number, number, number, MatmulLayout][] = [
        [64, 784, 128, "nn"], [64, 128, 10, "nn"], [128, 64, 10, "tn"], [64, 10, 128, "nt"], [784, 64, 128, "tn"],
        [5, 50, 3, "nn"], [3, 97, 5, "tn"], [9, 130, 7, "nt"],
      ];
      for (const [i, [M, K, N, layout]] of shapes.entries()) {
        for (const special of [false, true]) {
          const a = floats(M * K, 101 + i, 1, special);
          const b = floats(K * N, 202 + i, 1, special);
          const what = `${layout} ${M}x${K}x${N}${special ? " with corner values" : ""}`;
          const ref = matmulRef(a, b, M, K, N, layout);
          expectSameBits(ref, tfMatmul(a, b, M, K, N, layout), `reference vs tfjs-cpu, ${what}`);
          expectSameBits(wasm.matmul(a, b, M, K, N, layout), ref, `wasm vs reference, ${what}`);
        }
      }
    });

    it("the sparse path (A mostly +-0, B finite) gives the dense path's bits; a non-finite B or a dense A takes the dense path", () => {
      let seed = 9;
      const pick = () => SIZES[(seed = (seed * 1103515245 + 12345) >>> 0) % SIZES.length]!;
      const before = wasm.sparseCalls;
      let sparseWanted = 0;
      for (let r = 0; r < 60; r++) {
        const [M, K, N]: readonly [number, number, number] = r < 3 ? ([[64, 784, 128], [784, 64, 128], [64, 128, 10]] as const)[r]! : [pick(), r % 4 === 0 ? 784 : pick(), pick()];
        const layout = LAYOUTS[r % 3]!;
        const a = floats(M * K, 7 * r + 3, 1, r % 2 === 0);
        // 60-100% of A set to +0 or -0 (whole rows and blocks empty at 100%)
        const zero = [0.6, 0.8, 0.95, 1][r % 4]!;
        for (let i = 0; i < a.length; i++) if (((i * 2654435761) >>> 0) / 2 ** 32 < zero) a[i] = i % 2 ? -0 : 0;
        const b = floats(K * N, 13 * r + 5);
        // every 5th case: one non-finite B value, so 0 * Inf = NaN must appear where A is zero (dense path)
        if (r % 5 === 4 && b.length > 0) b[b.length >> 1] = r % 10 === 4 ? Infinity : NaN;
        let nz = 0;
        for (const v of a) if (v !== 0) nz++;
        if (K > 0 && M > 0 && N > 0 && 2 * nz < M * K && b.every(Number.isFinite)) sparseWanted++;
        expectSameBits(wasm.matmul(a, b, M, K, N, layout), matmulRef(a, b, M, K, N, layout), `sparse-A ${layout} M=${M} K=${K} N=${N} zeros ${zero}`);
      }
      expect(sparseWanted).to.be.greaterThan(30);
      expect(wasm.sparseCalls - before, "matmuls that took the sparse path").to.equal(sparseWanted);
    });

    it("keeps tfjs's +0 start: a -0 block sum gives +0, not -0", () => {
      const a = Float32Array.of(-0, -0, -0);
      const b = Float32Array.of(1, 1, 1);
      for (const k of [jsKernels, wasm]) expectSameBits(k.matmul(a, b, 1, 3, 1), Float32Array.of(0), `${k.name} -0 sum`);
      expectSameBits(tfMatmul(a, b, 1, 3, 1, "nn"), Float32Array.of(0), "tfjs -0 sum");
    });

    it("a block whose sum rounds to -0 followed by an all-zero block gives the reference's +0 on the sparse and the dense path", () => {
      // block 0 (k 0..47): one product -1e-30 * 1e-30 = -1e-60 in float64, which rounds to -0 in float32, so C = -0;
      // block 1 (k 48..95): A all +-0, so its sum is +0 and the reference gives C = f32(-0 + +0) = +0
      const K = 96;
      const a = new Float32Array(K);
      a[0] = -1e-30;
      for (let k = 1; k < K; k++) a[k] = k % 2 ? -0 : 0;
      const col = new Float32Array(K).fill(1);
      col[0] = 1e-30;
      const want = matmulRef(a, col, 1, K, 1);
      expectSameBits(want, Float32Array.of(0), "reference");
      expectSameBits(tfMatmul(a, col, 1, K, 1, "nn"), want, "tfjs-cpu");
      // sparse path: A is 1/96 nonzero and B finite
      const sparseBefore = wasm.sparseCalls;
      expectSameBits(wasm.matmul(a, col, 1, K, 1), want, "wasm sparse path");
      expect(wasm.sparseCalls - sparseBefore, "took the sparse path").to.equal(1);
      // dense path: the same column next to one holding an infinity (B not finite)
      const b2 = new Float32Array(2 * K);
      for (let k = 0; k < K; k++) {
        b2[2 * k] = col[k]!;
        b2[2 * k + 1] = k === K - 1 ? Infinity : 1;
      }
      const dense = wasm.matmul(a, b2, 1, K, 2);
      expect(wasm.sparseCalls - sparseBefore, "took the dense path").to.equal(1);
      expectSameBits(dense, matmulRef(a, b2, 1, K, 2), "wasm dense path");
      expectSameBits(dense.subarray(0, 1), want, "dense column 0");
      expectSameBits(jsKernels.matmul(a, col, 1, K, 1), want, "JS kernels");
    });

    it("rejects operands whose lengths do not match the shape", () => {
      for (const k of [jsKernels, wasm]) expect(() => k.matmul(new Float32Array(6), new Float32Array(6), 2, 3, 3)).to.throw(RangeError, /b has 6 elements, \[K=3, N=3\] needs 9/);
    });
  });

  describe("Adam and SGD updates", () => {
    it("equal optimizer.ts's tf ops on tfjs-cpu for odd tensor lengths, random moments and bias-correction powers", () => {
      const lengths = [1, 3, 4, 7, 129, 1000];
      for (const [r, hyper] of [
        { lr: 0.002, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 },
        { lr: 0.01, beta1: 0.8, beta2: 0.99, epsilon: 1e-6 },
        { lr: 0.3, beta1: 0.5, beta2: 0.9, epsilon: 1e-3 },
      ].entries()) {
        const specs = lengths.map((n, i) => ({ name: `t${i}`, shape: [n] }));
        const params = lengths.map((n, i) => floats(n, 10 * r + i + 1, 1, true));
        const grads = lengths.map((n, i) => floats(n, 10 * r + i + 50, 1e-2, true));
        const m = lengths.map((n, i) => floats(n, 10 * r + i + 90, 1e-2));
        const v = lengths.map((n, i) => floats(n, 10 * r + i + 130, 1e-4).map(Math.abs));
        const opt = [...m, ...v, Float32Array.of(0.9 ** (r + 3)), Float32Array.of(0.999 ** (r + 3))];
        const viaTf = createOptimizer({ name: "adam", ...hyper }).apply(params, opt, grads);
        for (const k of [jsKernels, wasm]) {
          const viaKernels = createOptimizer({ name: "adam", ...hyper }, k).apply(params, opt, grads);
          expect(viaKernels.opt.length).to.equal(viaTf.opt.length);
          viaTf.params.forEach((p, i) => expectSameBits(viaKernels.params[i]!, p, `${k.name} adam ${JSON.stringify(hyper)} w of ${specs[i]!.shape}`));
          viaTf.opt.forEach((o, i) => expectSameBits(viaKernels.opt[i]!, o, `${k.name} adam opt[${i}]`));
        }
        // the primitive itself, against the reference with the same scalars
        const s = adamScalars(hyper);
        const { c1, c2 } = adamPowers(s, 0.9, 0.999);
        const n = 131;
        const [w0, m0, v0, g0] = [floats(n, 7, 1, true), floats(n, 8, 0.1), floats(n, 9, 0.01).map(Math.abs), floats(n, 10, 0.1, true)];
        const out = [0, 1, 2, 3, 4, 5].map(() => new Float32Array(n));
        adamRef(s, c1, c2, w0, m0, v0, g0, out[0]!, out[1]!, out[2]!);
        wasm.adam(s, c1, c2, w0, m0, v0, g0, out[3]!, out[4]!, out[5]!);
        for (let i = 0; i < 3; i++) expectSameBits(out[i + 3]!, out[i]!, `wasm adam output ${i}`);
      }
    });

    it("wasm Adam equals the reference across its chunk boundaries (tensors longer than one chunk, odd tails)", () => {
      const s = adamScalars({ lr: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 });
      const { c1, c2 } = adamPowers(s, 0.9 ** 4, 0.999 ** 4);
      for (const n of [16383, 16384, 16385, 2 * 16384 + 7, 5 * 16384 + 3]) {
        const [w0, m0, v0, g0] = [floats(n, 11, 1, true), floats(n, 12, 0.1), floats(n, 13, 0.01).map(Math.abs), floats(n, 14, 0.1, true)];
        const out = [0, 1, 2, 3, 4, 5].map(() => new Float32Array(n));
        adamRef(s, c1, c2, w0, m0, v0, g0, out[0]!, out[1]!, out[2]!);
        wasm.adam(s, c1, c2, w0, m0, v0, g0, out[3]!, out[4]!, out[5]!);
        for (let i = 0; i < 3; i++) expectSameBits(out[i + 3]!, out[i]!, `wasm adam (n = ${n}) output ${i}`);
      }
    });

    it("Adam never writes into, or returns, an array the caller keeps: a state survives the next two steps", () => {
      // INVARIANT: a trainer keeps earlier states (segment checkpoints, the hash worker's copy, strategies that share
      // a state between steps), so an update in place, or into buffers recycled from an earlier result (a double
      // buffer writes state t+1 into state t-1's memory), must not touch them. Three steps in a row: every input and
      // every earlier result keeps its bits, and no result shares memory with any of them.
      const lengths = [5, 129, 40000];
      const hyper = { lr: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };
      const params = lengths.map((n, i) => floats(n, i + 201, 1, true));
      const grads = [0, 1, 2].map((step) => lengths.map((n, i) => floats(n, 10 * step + i + 211, 1e-2, true)));
      type State = { params: readonly Float32Array[]; opt: readonly Float32Array[] };
      const arrays = (s: State) => [...s.params, ...s.opt];
      for (const k of [undefined, jsKernels, wasm]) {
        const who = k?.name ?? "tfjs";
        const opt = createOptimizer({ name: "adam", ...hyper }, k);
        const states: State[] = [{ params, opt: opt.initState(lengths.map((n, i) => ({ name: `t${i}`, shape: [n] }))) }];
        const kept: Float32Array[][] = [arrays(states[0]!).map((a) => a.slice())];
        const keptGrads = grads.map((g) => g.map((a) => a.slice()));
        for (let t = 1; t <= 3; t++) {
          const next = opt.apply(states[t - 1]!.params, states[t - 1]!.opt, grads[t - 1]!);
          const earlier = [...states.flatMap(arrays), ...grads.flat()];
          for (const out of arrays(next)) {
            for (const a of earlier) expect(out.buffer === a.buffer && out.byteOffset < a.byteOffset + a.byteLength && a.byteOffset < out.byteOffset + out.byteLength, `${who}: a state-${t} array overlaps an earlier state or gradient`).to.equal(false);
          }
          states.forEach((s, i) => arrays(s).forEach((a, j) => expectSameBits(a, kept[i]![j]!, `${who}: state ${i} array ${j} after step ${t}`)));
          grads.forEach((g, i) => g.forEach((a, j) => expectSameBits(a, keptGrads[i]![j]!, `${who}: gradients ${i} array ${j} after step ${t}`)));
          states.push(next);
          kept.push(arrays(next).map((a) => a.slice()));
        }
      }
    });

    it("SGD on the kernel layer equals tf's w - lr*g", () => {
      const params = [floats(7, 1, 1, true), floats(129, 2)];
      const grads = [floats(7, 3, 1, true), floats(129, 4)];
      const viaTf = createOptimizer({ name: "sgd", lr: 0.05 }).apply(params, [], grads);
      const viaKernels = createOptimizer({ name: "sgd", lr: 0.05 }, wasm).apply(params, [], grads);
      viaTf.params.forEach((p, i) => expectSameBits(viaKernels.params[i]!, p, `sgd w${i}`));
      const out = new Float32Array(7);
      sgdRef(Math.fround(0.05), params[0]!, grads[0]!, out);
      expectSameBits(out, viaTf.params[0]!, "sgdRef");
    });
  });

  describe("the mnist-mlp loss-and-gradient pass", () => {
    it("gives tfjs-cpu's loss, gradients and every witness tensor (random weights, odd batch and hidden sizes)", () => {
      for (const [B, H, special] of [[1, 3, false], [7, 16, false], [64, 128, false], [9, 5, true]] as const) {
        const model = new MnistMlp(H);
        const params = model.init(B * 31 + H);
        if (special) params.forEach((p, i) => p.set(floats(p.length, 40 + i, 0.5, true)));
        else params[1]!.set(floats(H, 5, 0.1)), params[3]!.set(floats(10, 6, 0.1));
        const x = floats(B * 784, B + 3).map(Math.abs);
        const y = Uint8Array.from({ length: B }, (_, i) => (i * 7 + B) % 10);
        const want = model.lossAndGrads(params, { kind: "images", size: B, x, y }, { witness: true });
        for (const k of [jsKernels, wasm]) {
          const got = mlpStep(k, params, x, y, { B, D: 784, H, C: 10 }, { witness: true });
          const what = `${k.name} B=${B} H=${H}${special ? " corner values" : ""}`;
          expectSameBits(Float32Array.of(got.loss), Float32Array.of(want.loss), `${what} loss`);
          want.grads.forEach((g, i) => expectSameBits(got.grads[i]!, g, `${what} grad ${i}`));
          const wp = want.witness!.products;
          got.witness!.products.forEach((p, i) => {
            expect(p.name).to.equal(wp[i]!.name);
            for (const part of ["a", "b", "c"] as const) {
              expect(p[part].shape, `${what} ${p.name}.${part} shape`).to.deep.equal(wp[i]![part].shape);
              expectSameBits(p[part].data, wp[i]![part].data, `${what} ${p.name}.${part}`);
            }
          });
          const wt = want.witness!.tensors;
          expect(Object.keys(got.witness!.tensors)).to.have.members(Object.keys(wt));
          for (const [name, t] of Object.entries(got.witness!.tensors)) {
            expect(t.shape, `${what} ${name} shape`).to.deep.equal(wt[name]!.shape);
            expectSameBits(t.data, wt[name]!.data, `${what} tensor ${name}`);
          }
        }
      }
    });
  });

  describe("the mnist-mlp evaluation", () => {
    it("gives tfjs-cpu's held-out loss sum and correct count (random weights, ties, corner values)", () => {
      for (const [B, H, special] of [[1, 3, false], [33, 16, false], [256, 128, false], [9, 5, true]] as const) {
        const params = new MnistMlp(H).init(B + H);
        if (special) params.forEach((p, i) => p.set(floats(p.length, 60 + i, 0.5, true)));
        else params[3]!.set(Float32Array.of(0.5, 0.5, 0.5, 0, 0, 0, 0, 0, 0, 0)); // ties for argMax on all-zero images
        const x = floats(B * 784, B + 9).map((v, i) => (i % 5 === 0 ? 0 : Math.abs(v)));
        x.fill(0, 0, 784); // one all-zero image: logits = b2
        const y = Uint8Array.from({ length: B }, (_, i) => (i * 3 + 1) % 10);
        const batches = [{ kind: "images" as const, size: B, x, y }];
        const want = new MnistMlp(H).evaluate(params, batches);
        for (const k of [jsKernels, wasm]) {
          const got = new MnistMlp(H, k).evaluate(params, batches);
          expect(got, `${k.name} B=${B} H=${H}${special ? " corner values" : ""}`).to.deep.equal(want);
        }
      }
    });
  });

  describe("full training runs: the pouw engine's state hashes are tfjs-cpu's", () => {
    async function compareRuns(manifest: Manifest, steps: number, kernels?: typeof jsKernels): Promise<void> {
      const salt = offlineSalt(5n);
      const cpu = await createRun(manifest, { jobId: 5n, salt, backend: "cpu" });
      const pouw = await createRun(manifest, { jobId: 5n, salt, backend: "pouw", kernels });
      expect(pouw.kernels!.name).to.equal(kernels ? kernels.name : "wasm-simd128");
      let a: TrainState = cpu.initState();
      let b: TrainState = pouw.initState();
      expect(pouw.stateHashOf(b)).to.equal(cpu.stateHashOf(a));
      for (let t = 1; t <= steps; t++) {
        const ra = cpu.step(a, t);
        const rb = pouw.step(b, t);
        a = ra.state;
        b = rb.state;
        expect(rb.loss, `loss of step ${t}`).to.equal(ra.loss);
        expect(pouw.stateHashOf(b), `h(${t})`).to.equal(cpu.stateHashOf(a));
      }
      expect(pouw.evaluate(b), "held-out evaluation of the final state").to.deep.equal(cpu.evaluate(a));
    }

    it("is the default engine for mnist-mlp only", async () => {
      expect(defaultBackend(parseManifest(exampleJson("tiny.json")))).to.equal("pouw");
      expect(defaultBackend(parseManifest(exampleJson("sotu.json")))).to.equal("cpu");
      const run = await createRun(parseManifest(exampleJson("tiny.json")), { jobId: 1n, salt: offlineSalt(1n) });
      expect(run.backend).to.equal("pouw");
      expect(run.kernels!.name).to.equal("wasm-simd128");
    });

    it("examples/tiny.json: all 12 steps, wasm kernels and the JS reference kernels", async () => {
      const m = parseManifest(exampleJson("tiny.json"));
      await compareRuns(m, m.training.steps);
      await compareRuns(m, m.training.steps, jsKernels);
    });

    it("examples/tiny.json with SGD: all 12 steps", async () => {
      await compareRuns(parseManifest({ ...exampleJson("tiny.json"), optimizer: { name: "sgd", lr: 0.1 } }), 12);
    });

    it("examples/demo-mnist.json (784-32-10, batch 32): 30 steps", async function () {
      this.timeout(120_000);
      await compareRuns(parseManifest(exampleJson("demo-mnist.json")), 30);
    });

    it("examples/mnist.json (784-128-10, batch 64): 30 steps", async function () {
      this.timeout(300_000);
      await compareRuns(parseManifest(exampleJson("mnist.json")), 30);
    });
  });

  describe("build and availability", () => {
    it("kernels.wasm is what wat2wasm builds from kernels.wat", async function () {
      const wabt = await loadWabt();
      // wabt is a devDependency: absent only where `npm install` has not run since it was added
      if (!wabt) this.skip();
      const rebuilt = buildKernels(wabt);
      expect(Buffer.from(rebuilt).equals(readFileSync(KERNELS_WASM_URL)), "kernels.wasm differs from a rebuild: run node scripts/build-kernels.ts").to.equal(true);
    });

    it("names why when wasm SIMD cannot run, and the engine falls back to the JS reference", () => {
      const bytes = new Uint8Array(readFileSync(KERNELS_WASM_URL));
      bytes[bytes.length - 3] = 0xfd; // clobber the last function's body
      expect(wasmKernelsUnavailable(bytes)).to.match(/does not support WebAssembly SIMD128/);
      const chosen = selectKernels(bytes);
      expect(chosen.kernels).to.equal(jsKernels);
      expect(chosen.fallbackReason).to.match(/SIMD128/);
      expect(selectKernels().kernels.name).to.equal("wasm-simd128");
      expect(fastestKernels().name).to.equal("wasm-simd128");
    });
  });
});
