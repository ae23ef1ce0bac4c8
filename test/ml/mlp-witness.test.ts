import { expect } from "chai";
import { mlpElementwise, type MlpElementwise } from "../../verifier/src/ml/models/mlp-witness.ts";
import { scoped, tf, useBackend } from "../../verifier/src/ml/backend.ts";
import { createRun, offlineSalt, parseManifest } from "../../verifier/src/ml/index.ts";
import { exampleJson } from "./helpers.ts";

const C = 10;

// The reference: the tfjs ops of models/mlp.ts, in its order.
function viaTfjs(P1: Float32Array, P2: Float32Array, da1: Float32Array, b1: Float32Array, b2: Float32Array, y: Uint8Array, B: number, H: number): MlpElementwise {
  return scoped(() => {
    const Y = tf.cast(tf.oneHot(tf.tensor1d(Int32Array.from(y), "int32"), C), "float32");
    const z1 = tf.add(tf.tensor2d(P1, [B, H]), tf.tensor1d(b1));
    const a1 = tf.relu(z1);
    const z2 = tf.add(tf.tensor2d(P2, [B, C]), tf.tensor1d(b2));
    const dz2 = tf.div(tf.sub(tf.softmax(z2), Y), tf.scalar(B));
    const dz1 = tf.mul(tf.tensor2d(da1, [B, H]), tf.cast(tf.greater(z1, 0), "float32"));
    const data = (x: tf.Tensor) => Float32Array.from(x.dataSync());
    return { a1: data(a1), dz2: data(dz2), db2: data(tf.sum(dz2, 0)), dz1: data(dz1), db1: data(tf.sum(dz1, 0)) };
  });
}

function expectSameBits(got: MlpElementwise, want: MlpElementwise, what: string): void {
  for (const k of ["a1", "dz2", "db2", "dz1", "db1"] as const) {
    const g = new Uint32Array(got[k].buffer), w = new Uint32Array(want[k].buffer);
    expect(g.length, `${what}: ${k} length`).to.equal(w.length);
    for (let i = 0; i < g.length; i++) {
      if (g[i] !== w[i] && !(Number.isNaN(got[k][i]) && Number.isNaN(want[k][i]))) {
        expect.fail(`${what}: ${k}[${i}] is ${got[k][i]} (0x${g[i]!.toString(16)}), tfjs gives ${want[k][i]} (0x${w[i]!.toString(16)})`);
      }
    }
  }
}

// xorshift32 floats, so a failure reproduces
function floats(n: number, seed: number, scale: number): Float32Array {
  const out = new Float32Array(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    out[i] = ((x >>> 0) / 2 ** 32 - 0.5) * scale;
  }
  return out;
}

describe("ml/models/mlp-witness: the step's elementwise ops in plain JavaScript are bit-identical to tfjs", () => {
  before(async () => { await useBackend("cpu"); });

  it("on the engine's own witnesses of 4 mnist-mlp steps (batch 32)", async () => {
    const run = await createRun(parseManifest({ ...exampleJson("tiny.json") }), { jobId: 3n, salt: offlineSalt(3n) });
    if (run.model.arch !== "mnist-mlp") throw new Error("tiny.json is not mnist-mlp");
    let state = run.initState();
    for (let t = 1; t <= 4; t++) {
      const { witness, state: next } = run.step(state, t, { witness: true });
      const batch = run.batchFor(t);
      if (batch.kind !== "images") throw new Error("not images");
      const out = (n: string) => witness!.products.find((p) => p.name === n)!.c.data as Float32Array;
      const H = run.model.paramSpecs[1]!.shape[0]!;
      const [, b1, , b2] = state.params as Float32Array[];
      const [P1, P2, da1] = [out("fwd1"), out("fwd2"), out("bwdA1")];
      expectSameBits(mlpElementwise(P1, P2, da1, b1!, b2!, batch.y, batch.size, H, C), viaTfjs(P1, P2, da1, b1!, b2!, batch.y, batch.size, H), `step ${t}`);
      state = next;
    }
  });

  const cases: { name: string; scale: number; poke?: (P1: Float32Array, P2: Float32Array, da1: Float32Array, y: Uint8Array) => void }[] = [
    { name: "ordinary magnitudes", scale: 8 },
    { name: "huge logits (exp underflows to 0 for all but the max)", scale: 2e4 },
    { name: "tiny values near the float32 subnormal range", scale: 1e-38 },
    {
      name: "NaN, -0, +-Infinity, tied maxima and out-of-range labels",
      scale: 4,
      poke: (P1, P2, da1, y) => {
        P1[0] = -0; P1[1] = Number.NaN; P1[2] = Number.POSITIVE_INFINITY; P1[3] = Number.NEGATIVE_INFINITY;
        da1[0] = -1; da1[1] = 2; da1[5] = Number.NaN; da1[6] = -0;
        P2[3] = Number.NaN; // row 0: NaN is the max, as tfjs's maxImpl
        for (let c = 0; c < C; c++) P2[C + c] = 1.5; // row 1: all tied
        P2[2 * C] = Number.POSITIVE_INFINITY; // row 2: inf - inf = NaN
        P2[3 * C] = Number.NEGATIVE_INFINITY;
        y[4] = 10; y[5] = 255; // tf.oneHot gives all zeros
      },
    },
  ];
  for (const [i, c] of cases.entries()) {
    it(c.name, () => {
      const B = 7, H = 13;
      const P1 = floats(B * H, 11 + i, c.scale), P2 = floats(B * C, 23 + i, c.scale), da1 = floats(B * H, 37 + i, c.scale);
      const b1 = floats(H, 41 + i, c.scale), b2 = floats(C, 53 + i, c.scale);
      const y = Uint8Array.from({ length: B }, (_, k) => (k * 3) % C);
      c.poke?.(P1, P2, da1, y);
      expectSameBits(mlpElementwise(P1, P2, da1, b1, b2, y, B, H, C), viaTfjs(P1, P2, da1, b1, b2, y, B, H), c.name);
    });
  }

  it("fails when one column sum differs in its last bit (the comparison can fail)", () => {
    const B = 5, H = 6;
    const P1 = floats(B * H, 1, 8), P2 = floats(B * C, 2, 8), da1 = floats(B * H, 3, 8), b1 = floats(H, 4, 8), b2 = floats(C, 5, 8);
    const y = Uint8Array.from([1, 2, 3, 4, 5]);
    const good = mlpElementwise(P1, P2, da1, b1, b2, y, B, H, C);
    // one unit in the last place of one column sum: the smallest difference the hash would see
    const db1 = Float32Array.from(good.db1);
    const bits = new Uint32Array(db1.buffer);
    bits[2] = bits[2]! ^ 1;
    const bad: MlpElementwise = { ...good, db1 };
    expect(() => expectSameBits(bad, viaTfjs(P1, P2, da1, b1, b2, y, B, H), "perturbed")).to.throw(/db1/);
  });
});
