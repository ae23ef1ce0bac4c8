import { expect } from "chai";
import * as tf from "@tensorflow/tfjs";
import {
  checkProduct,
  checkProductWith,
  drawVectors,
  FreivaldsOptionsError,
  FreivaldsShapeError,
  generalDetectionFactor,
  rowBounds,
  verifyProducts,
  type Matrix,
  type ProductClaim,
} from "../../verifier/src/checks/freivalds.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

// Deterministic PRNG for test data (mulberry32); the check's own vectors come from node:crypto.
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

function randMatrix(rows: number, cols: number, rand: () => number, scale = 1): Matrix {
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = (rand() * 2 - 1) * scale;
  return { data, shape: [rows, cols] };
}

function get(M: Matrix, i: number, j: number, transpose: boolean): number {
  return transpose ? M.data[j * M.shape[1] + i]! : M.data[i * M.shape[1] + j]!;
}

type Order = "forward" | "reverse" | "pairwise";

/** float32 product with every operation rounded to float32 (Math.fround), in the given summation order. */
function matmulF32(A: Matrix, B: Matrix, ta: boolean, tb: boolean, order: Order): Matrix {
  const m = ta ? A.shape[1] : A.shape[0];
  const n = ta ? A.shape[0] : A.shape[1];
  const p = tb ? B.shape[0] : B.shape[1];
  const out = new Float32Array(m * p);
  const terms = new Float32Array(n);
  const pairwise = (lo: number, hi: number): number =>
    hi - lo === 1 ? terms[lo]! : Math.fround(pairwise(lo, (lo + hi) >> 1) + pairwise((lo + hi) >> 1, hi));
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < p; j++) {
      for (let l = 0; l < n; l++) terms[l] = Math.fround(get(A, i, l, ta) * get(B, l, j, tb));
      let s = 0;
      if (order === "forward") for (let l = 0; l < n; l++) s = Math.fround(s + terms[l]!);
      else if (order === "reverse") for (let l = n - 1; l >= 0; l--) s = Math.fround(s + terms[l]!);
      else s = pairwise(0, n);
      out[i * p + j] = s;
    }
  }
  return { data: out, shape: [m, p] };
}

function matmulTf(A: Matrix, B: Matrix, ta: boolean, tb: boolean): Matrix {
  return tf.tidy(() => {
    const c = tf.matMul(tf.tensor2d(A.data, [...A.shape]), tf.tensor2d(B.data, [...B.shape]), ta, tb);
    return { data: c.dataSync() as Float32Array, shape: c.shape as [number, number] };
  });
}

function withEntry(C: Matrix, idx: number, value: number): Matrix {
  const data = C.data.slice();
  data[idx] = value;
  return { data, shape: C.shape };
}

describe("checks/freivalds: float32 matrix products with a rigorous rounding bound", function () {
  before(async () => {
    await tf.setBackend("cpu");
    await tf.ready();
  });

  it("accepts tf.matMul (cpu backend) products in all four transpose cases, no false alarm", () => {
    const rand = rng(1);
    for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]] as const) {
      for (const [m, n, p] of [[37, 129, 23], [128, 200, 64], [1, 300, 1], [70, 1, 50]] as const) {
        const A = ta ? randMatrix(n, m, rand, 3) : randMatrix(m, n, rand, 3);
        const B = tb ? randMatrix(p, n, rand, 0.5) : randMatrix(n, p, rand, 0.5);
        const C = matmulTf(A, B, ta, tb);
        for (const vectors of [1, 2, 3, 4, 5, 8]) {
          const res = checkProduct({ name: "tf", A, B, C, transposeA: ta, transposeB: tb }, { vectors });
          expect(res.ok, `ta=${ta} tb=${tb} ${m}x${n}x${p} k=${vectors}`).to.equal(true);
          expect(res.worstRatio).to.be.lessThan(1);
        }
      }
    }
  });

  it("accepts float32 products in forward, reverse and pairwise summation order", () => {
    const rand = rng(2);
    for (const order of ["forward", "reverse", "pairwise"] as const) {
      const A = randMatrix(40, 257, rand, 100);
      const B = randMatrix(257, 31, rand, 1e-3);
      const C = matmulF32(A, B, false, false, order);
      const res = checkProduct({ name: order, A, B, C });
      expect(res.ok, order).to.equal(true);
    }
  });

  it("accepts an adversarial but honest-bounded C (every entry moved 90% of the way to its rounding bound)", () => {
    const rand = rng(3);
    const A = randMatrix(20, 64, rand);
    const B = randMatrix(64, 16, rand);
    const n = 64;
    const g32 = (n * 2 ** -24 + 2 * n * 2 ** -53) / (1 - n * 2 ** -24 - 2 * n * 2 ** -53);
    const data = new Float32Array(20 * 16);
    for (let i = 0; i < 20; i++) {
      for (let j = 0; j < 16; j++) {
        let exact = 0, abs = 0;
        for (let l = 0; l < n; l++) {
          exact += A.data[i * n + l]! * B.data[l * 16 + j]!;
          abs += Math.abs(A.data[i * n + l]! * B.data[l * 16 + j]!);
        }
        // alternate signs per column so the row residual is as large as the bound allows for some r
        data[i * 16 + j] = exact + (j % 2 === 0 ? 0.9 : -0.9) * g32 * abs;
      }
    }
    for (let trial = 0; trial < 20; trial++) {
      expect(checkProduct({ name: "edge", A, B, C: { data, shape: [20, 16] } }).ok).to.equal(true);
    }
  });

  it("always catches ONE entry corrupted by more than its row bound (every row, both signs, many draws)", () => {
    const rand = rng(4);
    const cases: ProductClaim[] = [];
    {
      const A = randMatrix(24, 96, rand);
      const B = randMatrix(96, 40, rand);
      cases.push({ name: "plain", A, B, C: matmulTf(A, B, false, false) });
    }
    {
      const A = randMatrix(96, 24, rand, 10);
      const B = randMatrix(40, 96, rand, 0.01);
      cases.push({ name: "tt", A, B, C: matmulTf(A, B, true, true), transposeA: true, transposeB: true });
    }
    for (const claim of cases) {
      const beta = rowBounds(claim);
      const [m, p] = claim.C.shape;
      for (let i = 0; i < m; i++) {
        const j = Math.floor(rand() * p);
        const idx = i * p + j;
        for (const sign of [1, -1]) {
          const bad = withEntry(claim.C, idx, claim.C.data[idx]! + sign * beta[i]! * 1.01);
          // Math.fround may round the corruption down; make sure it is still above the bound
          expect(Math.abs(bad.data[idx]! - claim.C.data[idx]!)).to.be.greaterThan(beta[i]!);
          for (let draw = 0; draw < 5; draw++) {
            const res = checkProduct({ ...claim, C: bad }, { vectors: 1 });
            expect(res.ok, `${claim.name} row ${i} sign ${sign}`).to.equal(false);
            expect(res.badRow).to.equal(i);
          }
        }
      }
    }
  });

  it("catches a single corruption even with the worst-case vectors (all entries at the ends of the range)", () => {
    const rand = rng(5);
    const A = randMatrix(8, 50, rand);
    const B = randMatrix(50, 12, rand);
    const C = matmulTf(A, B, false, false);
    const beta = rowBounds({ name: "x", A, B, C });
    const bits = 21;
    const bad = withEntry(C, 3 * 12 + 5, C.data[3 * 12 + 5]! + beta[3]! * 1.01);
    // r_j* at the bottom of the range, every other entry at the top: the hardest vector for the check
    const r = new Float64Array(12).fill(2 ** 22 - 1);
    r[5] = 2 ** 21;
    expect(checkProductWith({ name: "x", A, B, C: bad }, r, { vectors: 1, bits }).ok).to.equal(false);
    expect(checkProductWith({ name: "x", A, B, C }, r, { vectors: 1, bits }).ok).to.equal(true);
  });

  it("catches two cancelling corruptions in one row with high probability (general soundness)", () => {
    const rand = rng(6);
    const A = randMatrix(10, 64, rand);
    const B = randMatrix(64, 32, rand);
    const C = matmulTf(A, B, false, false);
    const beta = rowBounds({ name: "x", A, B, C });
    const big = beta[0]! * generalDetectionFactor(2, 21);
    const data = C.data.slice();
    data[1] = data[1]! + big;
    data[2] = data[2]! - big;
    for (let t = 0; t < 20; t++) expect(checkProduct({ name: "x", A, B, C: { data, shape: C.shape } }).ok).to.equal(false);
    expect(generalDetectionFactor(2, 21)).to.equal(2 ** 22);
    expect(generalDetectionFactor(2, 20)).to.equal(Infinity);
  });

  it("reports a non-finite value as a fault, not a crash", () => {
    const rand = rng(7);
    const A = randMatrix(4, 5, rand);
    const B = randMatrix(5, 3, rand);
    const C = withEntry(matmulTf(A, B, false, false), 2, NaN);
    const res = checkProduct({ name: "nan", A, B, C });
    expect(res.ok).to.equal(false);
    expect(res.nonFinite).to.equal(true);
  });

  it("rejects bad shapes and options with typed errors", () => {
    const rand = rng(8);
    const A = randMatrix(4, 5, rand);
    const B = randMatrix(5, 3, rand);
    const C = matmulTf(A, B, false, false);
    const bad: [string, ProductClaim][] = [
      ["inner", { name: "inner", A, B: randMatrix(6, 3, rand), C }],
      ["C shape", { name: "c", A, B, C: randMatrix(3, 4, rand) }],
      ["length", { name: "len", A: { data: new Float32Array(19), shape: [4, 5] }, B, C }],
      ["zero dim", { name: "zero", A: { data: new Float32Array(0), shape: [0, 5] }, B, C }],
      ["transpose", { name: "t", A, B, C, transposeA: true }],
      ["not f32", { name: "f64", A: { data: new Float64Array(20) as unknown as Float32Array, shape: [4, 5] }, B, C }],
    ];
    for (const [label, claim] of bad) {
      expect(() => checkProduct(claim), label).to.throw(FreivaldsShapeError);
    }
    expect(() => checkProduct({ name: "ok", A, B, C }, { vectors: 0 })).to.throw(FreivaldsOptionsError);
    expect(() => checkProduct({ name: "ok", A, B, C }, { bits: 40 })).to.throw(FreivaldsOptionsError);
    expect(() => checkProductWith({ name: "ok", A, B, C }, new Float64Array(6).fill(1), { bits: 21 })).to.throw(FreivaldsOptionsError);
    expect(() => checkProductWith({ name: "ok", A, B, C }, drawVectors(3, 1, 21), {})).to.throw(FreivaldsShapeError);
    try {
      checkProduct(bad[0]![1]);
    } catch (err) {
      expect(err).to.be.instanceOf(InputError);
      expect((err as FreivaldsShapeError).code).to.equal("FREIVALDS_SHAPE");
    }
  });

  it("verifyProducts checks a step's products (forward and backward shapes) and names the corrupted one", () => {
    const rand = rng(9);
    const X = randMatrix(32, 20, rand);
    const W = randMatrix(20, 10, rand);
    const dY = randMatrix(32, 10, rand);
    const claims: ProductClaim[] = [
      { name: "forward", A: X, B: W, C: matmulTf(X, W, false, false) },
      { name: "dW", A: X, B: dY, C: matmulTf(X, dY, true, false), transposeA: true },
      { name: "dX", A: dY, B: W, C: matmulTf(dY, W, false, true), transposeB: true },
    ];
    const okStep = verifyProducts(claims);
    expect(okStep.ok).to.equal(true);
    expect(okStep.products.map((p) => p.name)).to.deep.equal(["forward", "dW", "dX"]);
    const beta = rowBounds(claims[1]!);
    const corrupted = claims.map((c) => (c.name === "dW" ? { ...c, C: withEntry(c.C, 7, c.C.data[7]! - 2 * beta[0]!) } : c));
    const badStep = verifyProducts(corrupted);
    expect(badStep.ok).to.equal(false);
    expect(badStep.failed).to.deep.equal(["dW"]);
    expect(() => verifyProducts([claims[0]!, claims[0]!])).to.throw(FreivaldsShapeError);
  });
});
