import { expect } from "chai";
import { readFileSync } from "node:fs";
import { buildKernels, loadWabt, watPath } from "../../scripts/build-kernels.ts";
import { matmulV3Ref, quantizeV3Bits, CANONICAL_NAN_BITS } from "../../verifier/src/ml/kernels/reference-v3.ts";
import type { Layout } from "../../verifier/src/ml/kernels/transformer-ref.ts";
import { MATMUL_V3_WASM_URL, ThreadedKernels, WasmKernels, WasmMatmulV3, jsKernels } from "../../verifier/src/ml/kernels/index.ts";
import { CLAIM, GATE, GATE_CLOSED, GATE_SHIFT, joinV3Call, LEFT, RefUnits, unitRowsFor, type TileJob } from "../../verifier/src/ml/kernels/threads.ts";

// The numerics bitwise-v3 dense matmul in wasm SIMD128 (kernels/wasm/matmul-v3.wat) against the reference that
// defines its bits (reference-v3.ts matmulV3Ref), and split over threads (kernels/threads.ts matmulV3).

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const fromBits = (b: number) => ((u32[0] = b >>> 0), f32[0]!);
const bitsOf = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const LAYOUTS: Layout[] = ["nn", "tn", "nt"];
const SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 17, 33];

/** A value of wide range: random sign and significand, exponent in [-20, 20). */
const wide = (rand: () => number) => (rand() < 0.5 ? -1 : 1) * (1 + rand()) * 2 ** Math.floor(rand() * 40 - 20);

/**
 * The edge operands of the definition: +-0, subnormals, values at and around the 2^-56 flush threshold and the 2^48
 * special threshold (before and after bf16 rounding), exact ties of the bf16 rounding (low half 0x8000, both parities
 * of the kept bit), +-Inf and NaN (quiet, signalling, with payloads).
 */
const EDGE_BITS = [
  0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00400000, 0x00800000, // zeros, subnormals, the smallest normal
  (71 << 23) - 1, 71 << 23, 70 << 23, (0x80000000 | (70 << 23) | 0x550000) >>> 0, // [2^-57, 2^-56): flushed
  (71 << 23) | 0x8000, (71 << 23) | 0x7fff, ((70 << 23) | 0x7fffff) >>> 0, // just below / at 2^-56
  0x80000000 | (71 << 23), (0x80000000 | ((70 << 23) | 0x7fff80)) >>> 0, // -2^-56 and a value that rounds up to it
  (175 << 23) - 1, 175 << 23, ((174 << 23) | 0x7f8000) >>> 0, ((174 << 23) | 0x7f7fff) >>> 0, // around 2^48: rounds up to it / stays below
  (0x80000000 | (175 << 23)) >>> 0, (0x80000000 | ((174 << 23) | 0x7f0000)) >>> 0, // -2^48 and the largest magnitude below it
  0x3f808000, 0x3f818000, 0xbf808000, 0xbf818000, 0x3f80_7fff, 0x3f80_8001, // ties to even (kept lsb 0 and 1), neighbours
  0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000, 0xff812345, // Inf, NaNs
  0x7fff8000, 0x7fffffff, 0xffffffff, // NaNs whose bf16 rounding carries out of the exponent (and past 2^32)
  0x3f800000, 0xbf800000, 0x40490fdb, 0x7f7fffff, 0xff7fffff,
].map((b) => b >>> 0);

function randomOperand(n: number, rand: () => number, edgeRate: number): Float32Array {
  return Float32Array.from({ length: n }, () => (rand() < edgeRate ? fromBits(EDGE_BITS[Math.floor(rand() * EDGE_BITS.length)]!) : wide(rand)));
}

function expectSame(got: Float32Array, want: Float32Array, what: string): void {
  expect(got.length, `${what}: length`).to.equal(want.length);
  if (bitsOf(got).equals(bitsOf(want))) return;
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length), w = new Uint32Array(want.buffer, want.byteOffset, want.length);
  const i = g.findIndex((x, j) => x !== w[j]);
  expect.fail(`${what}: element ${i} is 0x${g[i]!.toString(16)}, the reference 0x${w[i]!.toString(16)}`);
}

describe("ml/kernels/matmul-v3: the wasm SIMD128 bitwise-v3 matmul equals matmulV3Ref bit for bit", () => {
  const wasm = new WasmMatmulV3();

  it("random shapes (1, odd sizes, tile edges) in every layout and batch count, with wide-range values", () => {
    const rand = rng(1);
    for (let trial = 0; trial < 90; trial++) {
      const [M, K, N] = [0, 1, 2].map(() => SIZES[Math.floor(rand() * SIZES.length)]!) as [number, number, number];
      const layout = LAYOUTS[trial % 3]!;
      const count = 1 + (trial % 4 === 3 ? 2 : 0);
      const a = randomOperand(count * M * K, rand, 0), b = randomOperand(count * K * N, rand, 0);
      expectSame(wasm.matmul(a, b, M, K, N, layout, count), matmulV3Ref(a, b, M, K, N, layout, count), `${count} x ${M}x${K}x${N} ${layout}`);
    }
  });

  it("larger products past the K and N cache blocks (K up to 1100, N up to 600)", () => {
    const rand = rng(2);
    for (const [M, K, N, layout] of [[37, 1100, 45, "nn"], [9, 513, 600, "tn"], [70, 700, 19, "nt"], [128, 256, 128, "nn"]] as const) {
      const a = randomOperand(M * K, rand, 0), b = randomOperand(K * N, rand, 0);
      expectSame(wasm.matmul(a, b, M, K, N, layout), matmulV3Ref(a, b, M, K, N, layout), `${M}x${K}x${N} ${layout}`);
    }
  });

  it("empty products: K = 0 gives +0 everywhere, M = 0 or N = 0 or count = 0 an empty result", () => {
    for (const [M, K, N, count] of [[3, 0, 5, 1], [3, 0, 5, 2], [0, 4, 5, 1], [3, 4, 0, 2], [2, 2, 2, 0], [0, 0, 0, 1]] as const) {
      const a = new Float32Array(count * M * K).fill(NaN), b = new Float32Array(count * K * N).fill(-1);
      const got = wasm.matmul(a, b, M, K, N, "nn", count);
      expectSame(got, matmulV3Ref(a, b, M, K, N, "nn", count), `${count} x ${M}x${K}x${N}`);
      expect(Array.from(new Uint32Array(got.buffer)).every((x) => x === 0), "every element +0").to.equal(true);
    }
  });

  it("edge operands: -0, subnormals, the 2^-56 and 2^48 thresholds, bf16 ties, Inf and NaN (rows and columns made special)", () => {
    const rand = rng(3);
    for (let trial = 0; trial < 60; trial++) {
      const [M, K, N] = [0, 1, 2].map(() => SIZES[Math.floor(rand() * SIZES.length)]!) as [number, number, number];
      const layout = LAYOUTS[trial % 3]!;
      const count = trial % 5 === 0 ? 2 : 1;
      // a low edge rate keeps most rows and columns finite, so the finite arithmetic around edges is checked too
      const rate = [0.02, 0.1, 0.5][trial % 3]!;
      const a = randomOperand(count * M * K, rand, rate), b = randomOperand(count * K * N, rand, rate);
      expectSame(wasm.matmul(a, b, M, K, N, layout, count), matmulV3Ref(a, b, M, K, N, layout, count), `${count} x ${M}x${K}x${N} ${layout} edge rate ${rate}`);
    }
  });

  it("each edge operand alone, in a product with exact expected bits (quantize, flush, special row, special column)", () => {
    for (const x of EDGE_BITS) {
      const q = quantizeV3Bits(x);
      // A = [x, 1] (1x2), B = [[1, 2], [0.5, 3]]: C = [q*1 + 0.5, q*2 + 3], or NaN for a special x
      const c = wasm.matmul(Float32Array.of(fromBits(x), 1), Float32Array.of(1, 2, 0.5, 3), 1, 2, 2);
      const want = q === null ? [CANONICAL_NAN_BITS, CANONICAL_NAN_BITS] : [Math.fround(Math.fround(0 + fromBits(q)) + 0.5), Math.fround(Math.fround(0 + 2 * fromBits(q)) + 3)].map((v) => ((f32[0] = v), u32[0]!));
      expect(Array.from(new Uint32Array(c.buffer)), `x = 0x${x.toString(16)}`).to.deep.equal(want);
      // x in B: only its column becomes NaN
      const d = wasm.matmul(Float32Array.of(1), Float32Array.of(fromBits(x), 2), 1, 1, 2);
      expect(new Uint32Array(d.buffer)[1], `column of 2 with x = 0x${x.toString(16)} beside it`).to.equal(0x40000000);
      expect(new Uint32Array(d.buffer)[0], `column of x = 0x${x.toString(16)}`).to.equal(q === null ? CANONICAL_NAN_BITS : (f32[0] = fromBits(q), u32[0]!));
    }
  });

  it("never makes -0: a sum of products that cancel, and products of -0, are +0", () => {
    const a = Float32Array.of(-0, 1, -1, -0), b = Float32Array.of(-0, 1, 5, -0);
    // [-0, 1; -1, -0] . [-0, 1; 5, -0]: 0*0 + 1*5 = 5 .. (-0)(1) + (1)(-0) = +0 from +0
    const c = wasm.matmul(a, b, 2, 2, 2);
    expectSame(c, matmulV3Ref(a, b, 2, 2, 2), "2x2 with -0");
    expect(new Uint32Array(c.buffer)[1]).to.equal(0);
    const e = wasm.matmul(Float32Array.of(1, -1), Float32Array.of(3, 3), 1, 2, 1);
    expect(new Uint32Array(e.buffer)[0], "3 - 3").to.equal(0);
  });

  it("adds in ascending k from +0: inputs on which every other order tried gives other bits still match", () => {
    // big, small, -big: ascending k loses the small terms ((2^24 + 1) rounds to 2^24); any other order keeps some
    const M = 5, N = 11, K = 96;
    const rand = rng(4);
    const a = new Float32Array(M * K), b = new Float32Array(K * N);
    for (let i = 0; i < M * K; i++) a[i] = [2 ** 24, 1, -(2 ** 24), 0.75][i % 4]! * (1 + Math.floor(rand() * 3) / 4);
    for (let i = 0; i < K * N; i++) b[i] = 1 + Math.floor(rand() * 8) / 8;
    const want = matmulV3Ref(a, b, M, K, N);
    // other orders (the reference's products, summed differently): reversed k, two halves (split-K), pairs (tree)
    const qa = a.map((x) => fromBits(quantizeV3Bits(((f32[0] = x), u32[0]!))!)), qb = b.map((x) => fromBits(quantizeV3Bits(((f32[0] = x), u32[0]!))!));
    const order = (ks: number[][]) => {
      const c = new Float32Array(M * N);
      for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
        let total = 0;
        for (const part of ks) {
          let acc = 0;
          for (const k of part) acc = Math.fround(acc + qa[i * K + k]! * qb[k * N + j]!);
          total = Math.fround(total + acc);
        }
        c[i * N + j] = total;
      }
      return c;
    };
    const ks = Array.from({ length: K }, (_, k) => k);
    const others = {
      reversed: order([[...ks].reverse()]),
      splitK: order([ks.slice(0, K / 2), ks.slice(K / 2)]),
      blocks8: order(Array.from({ length: K / 8 }, (_, t) => ks.slice(8 * t, 8 * t + 8))),
    };
    for (const [name, c] of Object.entries(others)) expect(bitsOf(c).equals(bitsOf(want)), `${name} must differ from ascending k on these inputs`).to.equal(false);
    expectSame(wasm.matmul(a, b, M, K, N), want, "ascending k");
  });

  it("refuses a bad shape or layout with an error naming the value", () => {
    expect(() => wasm.matmul(new Float32Array(5), new Float32Array(6), 2, 3, 2)).to.throw(RangeError, /a has 5 elements/);
    expect(() => wasm.matmul(new Float32Array(6), new Float32Array(6), 2, 3, 2.5)).to.throw(RangeError, /N = 2.5/);
    expect(() => wasm.matmul(new Float32Array(6), new Float32Array(6), 2, 3, 2, "tt" as Layout)).to.throw(RangeError, /layout must be nn, tn or nt, got tt/);
  });

  it("the committed matmul-v3.wasm is what matmul-v3.wat builds to", async function () {
    const wabt = await loadWabt();
    if (!wabt) this.skip();
    const rebuilt = buildKernels(wabt, readFileSync(watPath("matmul-v3"), "utf8"), "matmul-v3.wat");
    expect(Buffer.from(rebuilt).equals(readFileSync(MATMUL_V3_WASM_URL)), "matmul-v3.wasm differs from a rebuild: run node scripts/build-kernels.ts").to.equal(true);
  });
});

describe("ml/kernels/threads: the bitwise-v3 matmul split by output rows gives the same bits at 1, 2 and 3 threads", () => {
  const pools: ThreadedKernels[] = [];
  after(async () => Promise.all(pools.map((p) => p.close())));
  const pool = (threads: number, base: "wasm" | "js" = "wasm") => {
    const p = new ThreadedKernels(threads, base === "js" ? jsKernels : new WasmKernels(), { minMacs: 0 });
    pools.push(p);
    return p;
  };

  it("1, 2 and 3 threads (wasm) equal the reference on random shapes, layouts, batches and edge operands", () => {
    const ks = [pool(1), pool(2), pool(3)];
    const rand = rng(5);
    for (let trial = 0; trial < 36; trial++) {
      const [M, K, N] = [0, 1, 2].map(() => SIZES[Math.floor(rand() * SIZES.length)]!) as [number, number, number];
      const layout = LAYOUTS[trial % 3]!;
      const count = 1 + (trial % 3);
      const a = randomOperand(count * M * K, rand, trial % 2 ? 0.05 : 0), b = randomOperand(count * K * N, rand, trial % 4 === 1 ? 0.05 : 0);
      const want = matmulV3Ref(a, b, M, K, N, layout, count);
      for (const k of ks) expectSame(k.matmulV3(a, b, M, K, N, layout, count), want, `${k.threads} threads, ${count} x ${M}x${K}x${N} ${layout}`);
    }
    // the products with M >= 2 went to the workers
    expect(ks[1]!.dispatched).to.be.greaterThan(20);
    expect(ks[2]!.dispatched).to.be.greaterThan(20);
  });

  it("a larger product (250x700x130 tn, 2 batches) is the same on 1, 2 and 3 threads and on js-base workers", () => {
    const rand = rng(6);
    const [M, K, N, count] = [250, 700, 130, 2];
    const a = randomOperand(count * M * K, rand, 0.0005), b = randomOperand(count * K * N, rand, 0.0005);
    const want = matmulV3Ref(a, b, M, K, N, "tn", count);
    for (const k of [pool(1), pool(2), pool(3), pool(2, "js")]) expectSame(k.matmulV3(a, b, M, K, N, "tn", count), want, `${k.name}`);
  });

  it("units claimed in any order and split between kernels (wasm, reference) give the reference's bits", () => {
    const rand = rng(7);
    const wasm = new WasmMatmulV3(), ref = new RefUnits();
    for (let trial = 0; trial < 18; trial++) {
      const layout = LAYOUTS[trial % 3]!;
      const count = trial % 2 ? 1 : 3;
      const [M, K, N] = [17 + Math.floor(rand() * 60), 1 + Math.floor(rand() * 40), 1 + Math.floor(rand() * 20)];
      const a = randomOperand(count * M * K, rand, 0.03), b = randomOperand(count * K * N, rand, 0.03);
      const unitRows = count > 1 ? M : 4 + 4 * Math.floor(rand() * 4);
      const units = count > 1 ? count : Math.ceil(M / unitRows);
      // a random order of the units; the first kernel takes every other claim's unit, the second the rest
      const order = Array.from({ length: units }, (_, i) => i).sort(() => rand() - 0.5);
      const first = order.filter((_, i) => i % 2 === 0), second = order.filter((_, i) => i % 2 === 1);
      const out = new Uint32Array(count * M * N).fill(0xdeadbeef);
      const [k1, k2] = trial % 4 < 2 ? [wasm, ref] : [ref, wasm];
      const took1 = k1.matmulUnits(a, b, M, K, N, layout, count, out, unitRows, () => first.shift() ?? units);
      const took2 = k2.matmulUnits(a, b, M, K, N, layout, count, out, unitRows, () => second.shift() ?? units);
      expect([...took1, ...took2].sort((p, q) => p - q)).to.deep.equal(Array.from({ length: units }, (_, i) => i));
      expectSame(new Float32Array(out.buffer), matmulV3Ref(a, b, M, K, N, layout, count), `units of ${unitRows} rows, ${count} x ${M}x${K}x${N} ${layout}`);
    }
  });

  it("a worker joins only an open call of its own number, and leaves the gate counted", () => {
    const gate = new Int32Array(new SharedArrayBuffer(16));
    const [M, K, N] = [40, 8, 6];
    const rand = rng(8);
    const a = randomOperand(M * K, rand, 0), b = randomOperand(K * N, rand, 0);
    const heap = new Float32Array(M * K + K * N + M * N).fill(-1);
    heap.set(a, 0);
    heap.set(b, M * K);
    const job: TileJob = { seq: 1, op: "v3", call: 5, count: 1, M, K, N, layout: "nn", aOff: 0, bOff: M * K, cOff: M * K + K * N, unitRows: 8 };
    const untouched = heap.slice();
    gate[GATE] = (5 << GATE_SHIFT) | GATE_CLOSED; // closed: the caller has finished call 5
    expect(joinV3Call(gate, 5, new WasmMatmulV3(), heap, job)).to.deep.equal([]);
    gate[GATE] = 6 << GATE_SHIFT; // open, but for the next call
    expect(joinV3Call(gate, 5, new WasmMatmulV3(), heap, job)).to.deep.equal([]);
    expect(bitsOf(heap).equals(bitsOf(untouched)), "a worker that did not join wrote nothing").to.equal(true);
    gate[GATE] = 5 << GATE_SHIFT;
    gate[CLAIM] = 0;
    expect(joinV3Call(gate, 5, new WasmMatmulV3(), heap, job)).to.deep.equal([0, 1, 2, 3, 4]);
    expect([gate[GATE]! & 0x7f, gate[LEFT]]).to.deep.equal([1, 1]);
    expectSame(heap.subarray(M * K + K * N), matmulV3Ref(a, b, M, K, N), "the joined worker's C");
  });

  it("cuts one product into whole 4-row panels, about four per thread, never below 16 rows", () => {
    expect([unitRowsFor(1024, 1), unitRowsFor(1024, 2), unitRowsFor(1024, 4), unitRowsFor(100, 2), unitRowsFor(0, 2)]).to.deep.equal([1024, 128, 64, 16, 16]);
  });
});
