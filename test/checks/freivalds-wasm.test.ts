import { expect } from "chai";
import { readFileSync } from "node:fs";
import { buildKernels, loadWabt } from "../../scripts/build-kernels.ts";
import { checkProductWith, colDots, drawVectors, rowBounds, rowDots, type Matrix, type ProductClaim } from "../../verifier/src/checks/freivalds.ts";
import { FREIVALDS_WASM_URL, FreivaldsWasm, freivaldsWasm } from "../../verifier/src/checks/freivalds-wasm.ts";

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

const CORNERS = [0, -0, 1e-45, -1e-45, 1.17549435e-38, 3.4e38, -3.4e38, 1, -1];

function randF32(n: number, rand: () => number, corners = false): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = corners && rand() < 0.1 ? CORNERS[Math.floor(rand() * CORNERS.length)]! : (rand() * 2 - 1) * 2 ** Math.floor(rand() * 20 - 10);
  return out;
}

function randF64(n: number, rand: () => number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = (rand() * 2 - 1) * 2 ** 21;
  return out;
}

/** Bit equality of float64 arrays, NaN == NaN whatever its payload (NaN bits are not defined by either side). */
function sameBits(a: Float64Array, b: Float64Array): string | null {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) && Number.isNaN(b[i])) continue;
    if (!Object.is(a[i], b[i])) return `index ${i}: ${a[i]} vs ${b[i]}`;
  }
  return null;
}

const SIZES = [1, 2, 3, 5, 8, 17, 64, 129];

describe("checks/freivalds-wasm: the wasm loops equal the JS loops bit for bit", () => {
  const wasm = freivaldsWasm();
  before(function () {
    // the module needs SIMD128, which every Node 22 has; a runtime without it uses the JS loops
    if (!wasm) this.skip();
  });

  for (const [name, js, w] of [["rowDots", rowDots, "rowDots"], ["colDots", colDots, "colDots"]] as const) {
    it(`${name}: random shapes with odd sizes, 1..5 vectors, with and without weights, IEEE corner values`, () => {
      const rand = rng(name.length);
      for (let trial = 0; trial < 60; trial++) {
        const rows = SIZES[Math.floor(rand() * SIZES.length)]!;
        const cols = SIZES[Math.floor(rand() * SIZES.length)]!;
        const k = 1 + Math.floor(rand() * 5);
        const m = randF32(rows * cols, rand, trial % 3 === 0);
        // rowDots: v has cols*k entries and out rows*k; colDots (transpose): v has rows*k and out cols*k
        const [vLen, outLen, wLen] = name === "rowDots" ? [cols * k, rows * k, cols] : [rows * k, cols * k, rows];
        const v = randF64(vLen, rand);
        const weights = trial % 2 === 0 ? null : randF64(wLen, rand).map(Math.abs);
        const [o1, a1, o2, a2] = [new Float64Array(outLen), new Float64Array(outLen / k), new Float64Array(outLen), new Float64Array(outLen / k)];
        js(m, rows, cols, v, k, weights, o1, a1);
        wasm![w](m, rows, cols, v, k, weights, o2, a2);
        const where = `${name} ${rows}x${cols} k=${k} trial ${trial}`;
        expect(sameBits(o1, o2), `${where}: out`).to.equal(null);
        expect(sameBits(a1, a2), `${where}: abs`).to.equal(null);
      }
    });
  }

  it("sums in the JS order, not a reassociated one: a cancelling row gives the JS value, not the exact one", () => {
    // (2^53 + 1 - 2^53) in float64 ascending is 0 (1 is lost against 2^53); a pairwise or lane-split sum gives 1
    const m = Float32Array.of(2 ** 26, 1, -(2 ** 26), 0);
    const v = Float64Array.of(2 ** 27, 1, 2 ** 27, 1);
    const [o, a] = [new Float64Array(1), new Float64Array(1)];
    wasm!.rowDots(m, 1, 4, v, 1, null, o, a);
    expect(o[0]).to.equal(0);
    const [oj, aj] = [new Float64Array(1), new Float64Array(1)];
    rowDots(m, 1, 4, v, 1, null, oj, aj);
    expect(o[0]).to.equal(oj[0]);
    expect(a[0]).to.equal(2 ** 27 + 1);
  });

  it("checkProduct gives the same result on both loops: honest, corrupted, transposed and non-finite claims", () => {
    const rand = rng(7);
    for (let trial = 0; trial < 40; trial++) {
      const [m, n, p] = [SIZES[trial % 8]!, SIZES[(trial * 3) % 8]!, SIZES[(trial * 5) % 8]!];
      const tA = trial % 4 === 1, tB = trial % 4 === 2;
      const A: Matrix = { data: randF32(m * n, rand), shape: tA ? [n, m] : [m, n] };
      const B: Matrix = { data: randF32(n * p, rand), shape: tB ? [p, n] : [n, p] };
      const C: Matrix = { data: randF32(m * p, rand), shape: [m, p] };
      if (trial % 5 === 3) C.data[0] = NaN;
      if (trial % 7 === 4) A.data[A.data.length - 1] = Infinity;
      const claim: ProductClaim = { name: `t${trial}`, A, B, C, transposeA: tA, transposeB: tB };
      const k = 1 + (trial % 4);
      const r = drawVectors(p, k, 21);
      const js = checkProductWith(claim, r, { vectors: k, loops: "js" });
      const wa = checkProductWith(claim, r, { vectors: k, loops: "wasm" });
      expect(wa, `trial ${trial}`).to.deep.equal(js);
      expect(sameBits(rowBounds(claim, { loops: "wasm" }), rowBounds(claim, { loops: "js" }))).to.equal(null);
    }
  });

  it("rejects a matrix whose length does not match its shape", () => {
    const [o, a] = [new Float64Array(2), new Float64Array(2)];
    expect(() => wasm!.rowDots(new Float32Array(3), 2, 2, new Float64Array(2), 1, null, o, a)).to.throw(RangeError, /2 x 2 needs 4/);
  });

  it("freivalds.wasm is what wat2wasm builds from freivalds.wat", async function () {
    const wabt = await loadWabt();
    if (!wabt) this.skip();
    const wat = readFileSync(new URL("../../verifier/src/ml/kernels/wasm/freivalds.wat", import.meta.url), "utf8");
    const rebuilt = buildKernels(wabt, wat, "freivalds.wat");
    expect(Buffer.from(rebuilt).equals(readFileSync(FREIVALDS_WASM_URL)), "freivalds.wasm differs from a rebuild: run node scripts/build-kernels.ts").to.equal(true);
    expect(() => new FreivaldsWasm(new Uint8Array(rebuilt))).not.to.throw();
  });
});
