import { expect } from "chai";
import { freivaldsSegment, openTraceDir, replayWitnesses, verifyStepWitness, WITNESS_PRODUCTS } from "../../verifier/src/checks/index.ts";
import type { StepWitness } from "../../verifier/src/ml/index.ts";
import { Fixture } from "./fixture.ts";

/** A copy of the witness with entry `index` of product `name`'s output moved by `delta`. */
function corrupt(w: StepWitness, name: string, index: number, delta: number): StepWitness {
  return {
    ...w,
    products: w.products.map((p) => {
      if (p.name !== name) return p;
      const data = Float32Array.from(p.c.data);
      data[index] = data[index]! + delta;
      return { ...p, c: { shape: p.c.shape, data } };
    }),
  };
}

describe("checks/stepwitness: Freivalds verification of an mnist-mlp step", () => {
  const fx = new Fixture();
  before(async () => fx.setup());
  after(async () => fx.teardown());

  it("passes an honest step and reproduces the committed h(t) bit for bit", async () => {
    const { trace } = await fx.trace("honest");
    const before = fx.run.initState();
    const witness = fx.run.step(before, 1, { witness: true }).witness!;
    const r = verifyStepWitness(fx.run, before, 1, witness, trace.stateHashes[1] as `0x${string}`);
    expect(r.ok, r.ok ? "" : r.failure.message).to.equal(true);
    expect(r.stateHash).to.equal(trace.stateHashes[1]);
    expect(r.products.map((p) => p.name)).to.deep.equal([...WITNESS_PRODUCTS]);
  });

  for (const name of WITNESS_PRODUCTS) {
    it(`catches one corrupted entry of product ${name}`, async () => {
      const { trace } = await fx.trace("honest");
      const before = fx.run.initState();
      const witness = fx.run.step(before, 1, { witness: true }).witness!;
      const c = witness.products.find((p) => p.name === name)!.c;
      const index = Math.floor(c.data.length / 3);
      // 1% of the product's largest entry: above the rigorous rounding bound of every row here
      const scale = c.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      const r = verifyStepWitness(fx.run, before, 1, corrupt(witness, name, index, 1e-2 * scale), trace.stateHashes[1] as `0x${string}`);
      expect(r.ok).to.equal(false);
      if (r.ok) return;
      expect(r.failure.kind).to.equal("witness-invalid");
      expect(r.failure.message).to.contain(`product ${name}`);
    });
  }

  it("rejects a witness that lacks a product or has a wrong shape", async () => {
    const { trace } = await fx.trace("honest");
    const before = fx.run.initState();
    const witness = fx.run.step(before, 1, { witness: true }).witness!;
    const missing = { ...witness, products: witness.products.filter((p) => p.name !== "bwdA1") };
    const r1 = verifyStepWitness(fx.run, before, 1, missing, trace.stateHashes[1] as `0x${string}`);
    expect(r1.ok ? "" : r1.failure.kind).to.equal("witness-invalid");
    const reshaped = { ...witness, products: witness.products.map((p) => (p.name === "fwd1" ? { ...p, c: { shape: [1, p.c.data.length], data: p.c.data } } : p)) };
    const r2 = verifyStepWitness(fx.run, before, 1, reshaped, trace.stateHashes[1] as `0x${string}`);
    expect(r2.ok ? "" : r2.failure.message).to.contain("fwd1");
  });

  it("freivaldsSegment: passes honest segments, finds the first cheated step of a cheat with a proof", async () => {
    const honest = await openTraceDir(fx.run, (await fx.trace("honest")).dir);
    for (const seg of [0, 2]) {
      const r = await freivaldsSegment(honest, seg);
      expect(r.ok, `segment ${seg}`).to.equal(true);
      expect(r.stepsChecked).to.equal(4);
    }
    const stale = await openTraceDir(fx.run, (await fx.trace("stale:3")).dir);
    const r = await freivaldsSegment(stale, 1, replayWitnesses(fx.run));
    expect(r.ok).to.equal(false);
    expect(r.failure!.kind).to.equal("state-divergence");
    expect(r.firstBadStep).to.equal(5); // fresh gradients at 1, 4, 7, 10: step 5 reuses step 4's
    expect(r.proof!.step).to.equal(5);
  });
});
