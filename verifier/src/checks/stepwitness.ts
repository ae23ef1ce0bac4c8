/**
 * Freivalds step verification for mnist-mlp: checks one training step t from a verified state t-1
 * and the provider's step witness, without recomputing any matrix product.
 *
 * Operands come from what the verifier already trusts: X and the labels from `run.batchFor(t)`
 * (a pure function of the manifest), W1, b1, W2, b2 and the optimizer state from state t-1 (whose
 * hash is the committed h(t-1)). From the witness only the five product OUTPUTS are taken
 * (P1, P2, dW2, da1, dW1); every other tensor is recomputed here from them:
 *
 *   fwd1   P1  = X . W1          (Freivalds)     z1 = P1 + b1,  a1 = relu(z1)
 *   fwd2   P2  = a1 . W2         (Freivalds)     z2 = P2 + b2,  p = softmax(z2)
 *                                                dz2 = (p - onehot(y)) / B,  db2 = colsum(dz2)
 *   bwdW2  dW2 = a1^T . dz2      (Freivalds)
 *   bwdA1  da1 = dz2 . W2^T      (Freivalds)     dz1 = da1 * [z1 > 0],  db1 = colsum(dz1)
 *   bwdW1  dW1 = X^T . dz1       (Freivalds)
 *   update state t = optimizer(state t-1, [dW1, db1, dW2, db2])  (update.ts: ml/optimizer.ts replayed
 *                    bit for bit in plain JavaScript, ~30x cheaper than the tfjs kernels)
 *   check  h(state t) == committed h(t)
 *
 * The elementwise ops replay the tfjs cpu kernels of models/mlp.ts bit for bit in plain JavaScript
 * (mlp-elementwise.ts), so an honest witness reproduces h(t) bit for bit. A product output off by more than the Freivalds rounding
 * bound (checks/freivalds.ts) is rejected; one inside the bound changes the update by at most that
 * bound and then must still hash to the committed h(t), so the provider gains nothing by it.
 *
 * Cost: O(B*784 + 784*H + B*H) per product and vector instead of O(B*784*H), plus the O(params)
 * update and state hash that recompute pays too (bench/stepwitness.ts measures the ratio).
 */
import { MNIST_CLASSES, MNIST_PIXELS } from "../ml/data/mnist.ts";
import type { Run, TrainState } from "../ml/run.ts";
import type { StepWitness, WitnessTensor } from "../ml/models/types.ts";
import type { Bytes32 } from "../trace/index.ts";
import { verifyProducts, type FreivaldsOptions, type Matrix, type ProductClaim, type ProductResult } from "./freivalds.ts";
import { failed, openFailed, passed, type CheckResult } from "./result.ts";
import { challengeProof, exactStep, nonFinite, openSegment, type AuditFailure, type AuditTarget } from "./segment.ts";
import { AuditInputError } from "./segment.ts";
import { replayUpdate } from "./update.ts";
import { mlpElementwise } from "./mlp-elementwise.ts";
import { verifyTransformerStepWitness } from "./transformer-witness.ts";

export const WITNESS_PRODUCTS = ["fwd1", "fwd2", "bwdW2", "bwdA1", "bwdW1"] as const;

/** Process CPU milliseconds per part (robust on a shared machine; single-threaded work). */
export type StepCheckTimings = { productsMs: number; elementwiseMs: number; updateMs: number; hashMs: number };

function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export type StepCheck =
  | { ok: true; state: TrainState; stateHash: Bytes32; products: readonly ProductResult[]; timings: StepCheckTimings }
  | { ok: false; failure: AuditFailure; stateHash?: Bytes32; products: readonly ProductResult[]; timings: StepCheckTimings };

/** Serves the witness of step t computed from state t-1 (the provider's side). */
export type WitnessSource = (before: TrainState, t: number) => StepWitness | Promise<StepWitness>;

/**
 * The honest provider's witness server: replays step t from the (verified) state t-1 with the
 * engine's step function. It is also a cheater's best reply: any other product output fails
 * Freivalds, and with these outputs the update reproduces the honest h(t), not a cheated one.
 */
export function replayWitnesses(run: Run): WitnessSource {
  return (before, t) => {
    const w = run.step(before, t, { witness: true }).witness;
    if (!w) throw new Error("internal: the engine returned no witness");
    return w;
  };
}

function productOutput(witness: StepWitness, name: string, rows: number, cols: number): Matrix | string {
  const p = witness.products.find((x) => x.name === name);
  if (!p) return `witness has no product ${name}`;
  const c: WitnessTensor = p.c;
  if (c.shape.length !== 2 || c.shape[0] !== rows || c.shape[1] !== cols || !(c.data instanceof Float32Array) || c.data.length !== rows * cols) {
    return `witness product ${name} has shape [${c.shape.join(",")}], expected [${rows},${cols}]`;
  }
  return { data: c.data, shape: [rows, cols] };
}

/**
 * Verifies step t of an mnist-mlp run, or of a bitwise-v2 char-transformer run (transformer-witness.ts):
 * `before` is state t-1 (already checked against h(t-1)), `committed` is the provider's h(t). Returns the
 * verified state t on success.
 */
export function verifyStepWitness(run: Run, before: TrainState, t: number, witness: StepWitness, committed: Bytes32, options: FreivaldsOptions = {}): StepCheck {
  if (run.model.arch === "char-transformer") return verifyTransformerStepWitness(run, before, t, witness, committed, options);
  const timings: StepCheckTimings = { productsMs: 0, elementwiseMs: 0, updateMs: 0, hashMs: 0 };
  const bad = (message: string, products: readonly ProductResult[] = []): StepCheck => ({ ok: false, failure: { kind: "witness-invalid", message: `step ${t}: ${message}` }, products, timings });
  if (run.model.arch !== "mnist-mlp") throw new AuditInputError(`Freivalds step verification exists for mnist-mlp and char-transformer only, not ${run.model.arch}`);
  if (before.step !== t - 1) throw new RangeError(`verifyStepWitness(step ${t}) needs state ${t - 1}, got ${before.step}`);
  if (witness.model !== "mnist-mlp") return bad(`witness is for model ${witness.model}`);
  const batch = run.batchFor(t);
  if (batch.kind !== "images") throw new Error("internal: mnist-mlp batch is not images");
  const B = batch.size;
  const H = run.model.paramSpecs[1]!.shape[0]!;
  const [W1, b1, W2, b2] = before.params as [Float32Array, Float32Array, Float32Array, Float32Array];
  const outputs: Record<string, Matrix> = {};
  const dims: Record<string, [number, number]> = { fwd1: [B, H], fwd2: [B, MNIST_CLASSES], bwdW2: [H, MNIST_CLASSES], bwdA1: [B, H], bwdW1: [MNIST_PIXELS, H] };
  for (const name of WITNESS_PRODUCTS) {
    const m = productOutput(witness, name, ...dims[name]!);
    if (typeof m === "string") return bad(m);
    outputs[name] = m;
  }
  const X: Matrix = { data: batch.x, shape: [B, MNIST_PIXELS] };

  // Elementwise ops from the product outputs, bit for bit as models/mlp.ts computes them with tfjs.
  let t0 = cpuNow();
  const ew = mlpElementwise(outputs.fwd1!.data, outputs.fwd2!.data, outputs.bwdA1!.data, b1, b2, batch.y, B, H, MNIST_CLASSES);
  timings.elementwiseMs += cpuNow() - t0;

  const claims: ProductClaim[] = [
    { name: "fwd1", A: X, B: { data: W1, shape: [MNIST_PIXELS, H] }, C: outputs.fwd1! },
    { name: "fwd2", A: { data: ew.a1, shape: [B, H] }, B: { data: W2, shape: [H, MNIST_CLASSES] }, C: outputs.fwd2! },
    { name: "bwdW2", A: { data: ew.a1, shape: [B, H] }, transposeA: true, B: { data: ew.dz2, shape: [B, MNIST_CLASSES] }, C: outputs.bwdW2! },
    { name: "bwdA1", A: { data: ew.dz2, shape: [B, MNIST_CLASSES] }, B: { data: W2, shape: [H, MNIST_CLASSES] }, transposeB: true, C: outputs.bwdA1! },
    { name: "bwdW1", A: X, transposeA: true, B: { data: ew.dz1, shape: [B, H] }, C: outputs.bwdW1! },
  ];
  t0 = cpuNow();
  const verification = verifyProducts(claims, options);
  timings.productsMs += cpuNow() - t0;
  if (!verification.ok) {
    const r = verification.products.find((x) => !x.ok)!;
    return bad(`product ${r.name} fails Freivalds${r.nonFinite ? " (non-finite value)" : ` at row ${r.badRow} (residual ${r.worstRatio.toExponential(3)} x threshold)`}`, verification.products);
  }

  t0 = cpuNow();
  const after = replayUpdate(run.manifest.optimizer, before, [outputs.bwdW1!.data, ew.db1, outputs.bwdW2!.data, ew.db2]);
  timings.updateMs += cpuNow() - t0;
  t0 = cpuNow();
  const h = run.stateHashOf(after);
  timings.hashMs += cpuNow() - t0;
  if (h !== committed) {
    return { ok: false, failure: { kind: "state-divergence", message: `step ${t}: the verified witness gives h(${t}) = ${h}, committed ${committed}` }, stateHash: h, products: verification.products, timings };
  }
  return { ok: true, state: after, stateHash: h, products: verification.products, timings };
}

/**
 * Freivalds audit of segment `segment`: verifies every step in order from the start checkpoint;
 * each verified state t is the trusted state t-1 of the next step, so only the segment's start
 * checkpoint and one witness per step are fetched. costMs counts the verifier's work only (the
 * witness is served by the provider).
 */
export async function freivaldsSegment(target: AuditTarget, segment: number, witnesses: WitnessSource = replayWitnesses(target.run), options: FreivaldsOptions = {}): Promise<CheckResult> {
  let verifierMs = 0;
  let t0 = performance.now();
  const opened = await openSegment(target, segment);
  verifierMs += performance.now() - t0;
  if (!opened.ok) return openFailed(segment, "freivalds", opened, verifierMs);
  const { leaves, start } = opened.value;
  let state = start;
  const totals: StepCheckTimings = { productsMs: 0, elementwiseMs: 0, updateMs: 0, hashMs: 0 };
  let exact = 0;
  for (let t = leaves.first + 1; t <= leaves.last; t++) {
    const witness = await witnesses(state, t);
    t0 = performance.now();
    let r = verifyStepWitness(target.run, state, t, witness, leaves.hashes[t - leaves.first]!, options);
    for (const k of Object.keys(totals) as (keyof StepCheckTimings)[]) totals[k] += r.timings[k];
    // INVARIANT: a non-finite value is a fault only where the rule does not produce it. Freivalds cannot check a
    // product with a NaN or an infinity in it (nor the elementwise ops one); a diverged trajectory has them honestly,
    // so the exact recompute of step t decides (segment.ts exactStep; one full step, only on such a step)
    if (!r.ok && (r.products?.some((p) => p.nonFinite) || nonFinite(target.run, state) !== null)) {
      const x = exactStep(target.run, state, t, leaves.hashes[t - leaves.first]!, `the witness failed on a non-finite value: ${r.failure.message}`);
      r = x.ok ? { ok: true, state: x.state, stateHash: leaves.hashes[t - leaves.first]!, products: r.products ?? [], timings: r.timings } : { ...r, failure: x.failure, stateHash: x.stateHash };
      exact++;
    }
    verifierMs += performance.now() - t0;
    if (!r.ok) {
      return failed(segment, "freivalds", r.failure, verifierMs, {
        firstBadStep: t,
        proof: challengeProof(leaves, t, r.stateHash),
        stepsChecked: t - leaves.first,
        details: { ...totals },
      });
    }
    state = r.state;
  }
  return passed(segment, "freivalds", leaves.last - leaves.first, verifierMs, { ...totals, ...(exact > 0 ? { exactSteps: exact } : {}) });
}
