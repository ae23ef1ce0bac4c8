import { expect } from "chai";
import { rm } from "node:fs/promises";
import { freivaldsSegment, openTraceDir, replayWitnesses, verifyStepWitness } from "../../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Run, type StepWitness, type TraceFile } from "../../verifier/src/ml/index.ts";
import { tempDir, tinyTransformerJson } from "../ml/helpers.ts";

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

describe("checks/stepwitness: Freivalds verification of a bitwise-v2 char-transformer step", function () {
  this.timeout(120_000);
  let dir = "";
  let run: Run;
  let honest: { dir: string; trace: TraceFile };
  before(async () => {
    dir = await tempDir("tw");
    // 1 layer, d 16, 2 heads, context 16, batch 2, Adam; 4 steps in 2 segments
    run = await createRun(parseManifest({ ...tinyTransformerJson(), numerics: "bitwise-v2", stateDigest: "sha256-v1" }), { jobId: 9n, salt: offlineSalt(9n) });
    honest = { dir: `${dir}/honest`, trace: (await train(run, { outDir: `${dir}/honest`, strategy: parseStrategy("honest"), evaluate: false })).trace };
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("passes an honest step, checks every product and reproduces the committed h(t)", () => {
    const before = run.initState();
    const witness = run.step(before, 1, { witness: true }).witness!;
    const r = verifyStepWitness(run, before, 1, witness, honest.trace.stateHashes[1] as `0x${string}`);
    expect(r.ok, r.ok ? "" : r.failure.message).to.equal(true);
    expect(r.stateHash).to.equal(honest.trace.stateHashes[1]);
    expect(r.products.map((p) => p.name).sort()).to.deep.equal(witness.products.map((p) => p.name).sort());
  });

  for (const name of ["l0.q", "l0.scores.2", "l0.pv.1", "l0.ff1.dW", "l0.scores.dB.3", "head.dX"]) {
    it(`catches one corrupted entry of product ${name}`, () => {
      const before = run.initState();
      const witness = run.step(before, 1, { witness: true }).witness!;
      const c = witness.products.find((p) => p.name === name)!.c;
      const scale = c.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      const r = verifyStepWitness(run, before, 1, corrupt(witness, name, Math.floor(c.data.length / 3), 1e-2 * scale), honest.trace.stateHashes[1] as `0x${string}`);
      expect(r.ok).to.equal(false);
      if (r.ok) return;
      expect(r.failure.kind).to.equal("witness-invalid");
      expect(r.failure.message).to.contain(`product ${name} fails Freivalds`);
    });
  }

  it("rejects a witness that lacks a product or has a wrong shape", () => {
    const before = run.initState();
    const witness = run.step(before, 1, { witness: true }).witness!;
    const missing = { ...witness, products: witness.products.filter((p) => p.name !== "l0.pv.dA.0") };
    const r1 = verifyStepWitness(run, before, 1, missing, honest.trace.stateHashes[1] as `0x${string}`);
    expect(r1.ok ? "" : r1.failure.message).to.contain("witness has no product l0.pv.dA.0");
    const reshaped = { ...witness, products: witness.products.map((p) => (p.name === "head" ? { ...p, c: { shape: [1, p.c.data.length], data: p.c.data } } : p)) };
    const r2 = verifyStepWitness(run, before, 1, reshaped, honest.trace.stateHashes[1] as `0x${string}`);
    expect(r2.ok ? "" : r2.failure.message).to.contain("witness product head has shape [1,");
  });

  it("freivaldsSegment passes the honest segments and finds the first step of a stale-gradient cheat", async () => {
    const target = await openTraceDir(run, honest.dir);
    for (const seg of [0, 1]) expect((await freivaldsSegment(target, seg)).ok, `segment ${seg}`).to.equal(true);
    const staleDir = `${dir}/stale`;
    await train(run, { outDir: staleDir, strategy: parseStrategy("stale:2"), evaluate: false });
    const r = await freivaldsSegment(await openTraceDir(run, staleDir), 0, replayWitnesses(run));
    expect(r.ok).to.equal(false);
    expect(r.failure!.kind).to.equal("state-divergence");
    expect(r.firstBadStep).to.equal(2);
  });

  it("refuses a char-transformer run of numerics bitwise (tfjs autodiff, no explicit backward) by name", async () => {
    const v1 = await createRun(parseManifest(tinyTransformerJson()), { jobId: 9n, salt: offlineSalt(9n) });
    const s0 = v1.initState();
    const w = run.step(run.initState(), 1, { witness: true }).witness!;
    expect(() => verifyStepWitness(v1, s0, 1, w, honest.trace.stateHashes[1] as `0x${string}`)).to.throw(/needs numerics bitwise-v2/);
  });
});
