import { expect } from "chai";
import { createRun, dataOrderRng, offlineSalt, Rng, roundToHalf, useBackend, type Run } from "../../verifier/src/ml/index.ts";
import { BackendError } from "../../verifier/src/ml/errors.ts";
import { tf } from "../../verifier/src/ml/backend.ts";
import { tinyManifest } from "./helpers.ts";

/** float64 reference product of row-major a [m,n] and b [n,p]. */
function matmul64(a: Float32Array, b: Float32Array, m: number, n: number, p: number): Float64Array {
  const c = new Float64Array(m * p);
  for (let i = 0; i < m; i++) for (let k = 0; k < n; k++) for (let j = 0; j < p; j++) c[i * p + j]! += a[i * n + k]! * b[k * p + j]!;
  return c;
}

describe("ml/engine: step witness, PRNG, half rounding, backend pinning", () => {
  let run: Run;
  before(async () => {
    run = await createRun(tinyManifest(), { jobId: 1n, salt: offlineSalt(1n) });
  });

  it("returns a witness whose products are the step's products and whose gradients give the step", () => {
    const s0 = run.initState();
    const plain = run.step(s0, 1);
    const w = run.step(s0, 1, { witness: true });
    expect(run.stateHashOf(w.state)).to.equal(run.stateHashOf(plain.state));
    const witness = w.witness!;
    expect(witness.products.map((p) => p.name)).to.deep.equal(["fwd1", "fwd2", "bwdW2", "bwdA1", "bwdW1"]);
    for (const p of witness.products) {
      const [m, n] = p.a.shape as [number, number];
      const [n2, q] = p.b.shape as [number, number];
      expect(n2).to.equal(n);
      expect(p.c.shape).to.deep.equal([m, q]);
      const ref = matmul64(p.a.data, p.b.data, m, n, q);
      for (let i = 0; i < ref.length; i++) expect(p.c.data[i]!, `${p.name}[${i}]`).to.be.closeTo(ref[i]!, 1e-5 * (1 + Math.abs(ref[i]!)));
    }
    // the batch is the step's batch, and the witness gradients reproduce the committed update
    const batch = run.batchFor(1);
    expect(batch.kind === "images" && Buffer.from(witness.products[0]!.a.data.buffer).equals(Buffer.from(batch.x.buffer))).to.equal(true);
    const grads = [witness.products[4]!.c.data, witness.tensors.db1!.data, witness.products[2]!.c.data, witness.tensors.db2!.data];
    expect(run.stateHashOf(run.applyUpdate(s0, grads))).to.equal(run.stateHashOf(plain.state));
    expect(witness.tensors.loss!.data[0]).to.equal(Math.fround(w.loss));
    // elementwise relations hold exactly
    const { z1, a1 } = witness.tensors;
    for (let i = 0; i < z1!.data.length; i++) expect(a1!.data[i]).to.equal(Math.max(0, z1!.data[i]!));
  });

  it("disposes every tensor a step creates (no leak between steps)", () => {
    const before = tf.memory().numTensors;
    let s = run.initState();
    for (let t = 1; t <= 3; t++) s = run.step(s, t, { witness: t === 2 }).state;
    run.evaluate(s, 50);
    expect(tf.memory().numTensors).to.equal(before);
  });

  it("refuses to step from a state that is not the previous step's", () => {
    expect(() => run.step(run.initState(), 2)).to.throw(RangeError, /needs state 1/);
  });

  it("Rng and the salted data order: fixed outputs (guards cross-version drift) and true permutations", () => {
    const r = new Rng(1, "init", 0);
    expect([r.nextU32(), r.nextU32(), r.nextU32()]).to.deep.equal([401154401, 322219869, 3886608397]);
    expect(new Rng(7, "epoch", 3).permutation(10).join(",")).to.equal("9,2,3,5,0,8,4,1,6,7");
    expect(new Rng(2 ** 32 - 1, "windows", 2 ** 40).nextU32()).to.equal(4223908279);
    expect(new Rng(1, "init", 0).nextU32()).to.not.equal(new Rng(1, "init", 1).nextU32());
    expect(new Rng(1, "init", 0).nextU32()).to.not.equal(new Rng(2, "init", 0).nextU32());
    const p = new Rng(7, "epoch", 3).permutation(1000);
    expect([...p].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => i));
    // keyed streams (the data order, ml/salt.ts): the key is sfc32's whole state
    const k = Rng.fromKey(Uint8Array.from({ length: 16 }, (_, i) => i + 1));
    expect([k.nextU32(), k.nextU32(), k.nextU32()]).to.deep.equal([1631356013, 4175608885, 2041850999]);
    // the offline salt of job 0 is keccak256 of 96 zero bytes (chain 0, market 0x0, job 0)
    expect(offlineSalt(0n)).to.equal("0x46700b4d40ac5c35af2c22dda2787a91eb567b06c924a8fb8ae9a05b20c08c21");
    expect(dataOrderRng(offlineSalt(0n), 7, "epoch", 3).permutation(10).join(",")).to.equal("7,5,8,4,0,9,3,1,6,2");
    expect(dataOrderRng(offlineSalt(5n), 2 ** 32 - 1, "windows", 2 ** 40).nextU32()).to.equal(212164853);
    expect(dataOrderRng(offlineSalt(0n), 7, "epoch", 3).nextU32()).to.not.equal(dataOrderRng(offlineSalt(1n), 7, "epoch", 3).nextU32());
    expect(dataOrderRng(offlineSalt(0n), 7, "epoch", 3).nextU32()).to.not.equal(dataOrderRng(offlineSalt(0n), 8, "epoch", 3).nextU32());
    expect(dataOrderRng(offlineSalt(0n), 7, "epoch", 3).nextU32()).to.not.equal(dataOrderRng(offlineSalt(0n), 7, "epoch", 4).nextU32());
    expect(() => Rng.fromKey(new Uint8Array(15))).to.throw(RangeError);
    const u = new Rng(3, "u").uniform(10_000, 0.5);
    expect(Math.max(...u)).to.be.lessThan(0.5);
    expect(Math.min(...u)).to.be.at.least(-0.5);
  });

  it("roundToHalf rounds to the nearest half-precision value, ties to even", () => {
    expect(roundToHalf(1)).to.equal(1);
    expect(roundToHalf(1 + 2 ** -11)).to.equal(1); // tie, even
    expect(roundToHalf(1 + 3 * 2 ** -11)).to.equal(1 + 2 ** -9); // tie, rounds up to even
    expect(roundToHalf(1 + 2 ** -12)).to.equal(1);
    expect(roundToHalf(0.1)).to.equal(0.0999755859375);
    expect(roundToHalf(-0.1)).to.equal(-0.0999755859375);
    expect(roundToHalf(65504)).to.equal(65504);
    expect(roundToHalf(70000)).to.equal(Infinity);
    expect(roundToHalf(2 ** -24)).to.equal(2 ** -24); // smallest subnormal
    expect(roundToHalf(2 ** -26)).to.equal(0);
    expect(roundToHalf(3 * 2 ** -25)).to.equal(2 ** -23);
  });

  it("refuses to step when the active backend is not the pinned one", async () => {
    const s0 = run.initState();
    tf.registerBackend("impostor", () => tf.findBackend("cpu")!, 0);
    try {
      await tf.setBackend("impostor");
      expect(() => run.step(s0, 1)).to.throw(BackendError, /active backend is 'impostor'/);
    } finally {
      await useBackend("cpu");
      tf.removeBackend("impostor");
    }
    expect(run.step(s0, 1).state.step).to.equal(1);
  });

  it("refuses a bitwise manifest on the wasm backend", async () => {
    try {
      await createRun(tinyManifest(), { jobId: 1n, salt: offlineSalt(1n), backend: "wasm" });
      expect.fail("bitwise run accepted wasm");
    } catch (err) {
      expect((err as Error).message).to.match(/bitwise runs only on the cpu backend/);
    }
  });
});
