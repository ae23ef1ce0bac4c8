/**
 * Freivalds step verification: checks one training step t from a verified state t-1 and the provider's step
 * witness, without recomputing any matrix product. The model owns the pass (Model.witnessPass: mnist-mlp,
 * ml/models/mlp-witness.ts; a bitwise-v2 char-transformer, the trainer's own kernel pass); this file owns the
 * rules, which hold for every model:
 *
 * The verifier runs the model's pass with a ProductOracle that, instead of multiplying, takes each product's output
 * C from the witness (by name, shape checked) and records the claim C = op(A) . op(B) with A and B as the VERIFIER
 * computed them: the batch from `run.batchFor(t)` (a pure function of the manifest), the weights from state t-1
 * (whose hash is the committed h(t-1)), every activation and gradient from the model's elementwise kernels applied
 * to earlier (claimed) outputs. The witness's own copies of A and B are never read. Then:
 *
 *   every claim   Freivalds (checks/freivalds.ts; its rounding bound holds for any summation order)
 *   update        state t = optimizer(state t-1, gradients of the pass): the engine's update when the run has the
 *                 kernel layer (pouw: wasm, bits of kernels/reference.ts), else update.ts's plain-JS replay of the
 *                 tfjs kernels (the same bits, ~30x cheaper than tfjs)
 *   check         h(state t) == committed h(t)
 *
 * An honest witness reproduces h(t) bit for bit: with the engine's exact outputs the elementwise kernels round
 * alike. A product output off by more than the Freivalds bound is rejected; one inside it changes the update by at
 * most that bound and then must still hash to the committed h(t), so the provider gains nothing by it.
 *
 * Cost (mnist-mlp): O(B*784 + 784*H + B*H) per product and vector instead of O(B*784*H), plus the O(params) update
 * and state hash that recompute pays too (bench/stepwitness.ts measures the ratio).
 */
import { MLP_WITNESS_PRODUCTS } from "../ml/models/mlp-witness.ts";
import type { Run, TrainState } from "../ml/run.ts";
import type { ProductOracle, StepWitness } from "../ml/models/types.ts";
import type { Bytes32 } from "../trace/index.ts";
import { verifyProducts, type FreivaldsOptions, type ProductClaim, type ProductResult } from "./freivalds.ts";
import { failed, openFailed, passed, type CheckResult } from "./result.ts";
import { challengeProof, exactStep, nonFinite, openSegment, type AuditFailure, type AuditTarget } from "./segment.ts";
import { AuditInputError } from "./segment.ts";
import { replayUpdate } from "./update.ts";

/** The products of an mnist-mlp step witness, in the order the check verifies them. */
export const WITNESS_PRODUCTS = MLP_WITNESS_PRODUCTS;

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

/**
 * An oracle that answers each product from `witness` (shape checked against the verifier's dimensions) and records
 * the claim with the verifier's operands; the first problem (a missing or misshapen product) is kept, and the pass
 * goes on with zeros.
 */
function witnessOracle(witness: StepWitness): { oracle: ProductOracle; claims: ProductClaim[]; problem: () => string | null } {
  const byName = new Map(witness.products.map((p) => [p.name, p]));
  const claims: ProductClaim[] = [];
  let problem: string | null = null;
  const oracle: ProductOracle = (name, a, b, M, K, N, layout, count) => {
    const out = new Float32Array(count * M * N);
    for (let q = 0; q < count; q++) {
      const label = count === 1 ? name : `${name}.${q}`;
      const p = byName.get(label);
      if (!p) {
        problem ??= `witness has no product ${label}`;
        continue;
      }
      const c = p.c;
      if (c.shape.length !== 2 || c.shape[0] !== M || c.shape[1] !== N || !(c.data instanceof Float32Array) || c.data.length !== M * N) {
        problem ??= `witness product ${label} has shape [${c.shape.join(",")}], expected [${M},${N}]`;
        continue;
      }
      out.set(c.data, q * M * N);
      claims.push({
        name: label,
        A: { data: a.subarray(q * M * K, (q + 1) * M * K), shape: layout === "tn" ? [K, M] : [M, K] },
        B: { data: b.subarray(q * K * N, (q + 1) * K * N), shape: layout === "nt" ? [N, K] : [K, N] },
        C: { data: c.data, shape: [M, N] },
        transposeA: layout === "tn",
        transposeB: layout === "nt",
      });
    }
    return out;
  };
  return { oracle, claims, problem: () => problem };
}

/**
 * Verifies step t of a run whose model has a step witness (Model.witnessed): `before` is state t-1 (already checked
 * against h(t-1)), `committed` is the provider's h(t). Returns the verified state t on success.
 */
export function verifyStepWitness(run: Run, before: TrainState, t: number, witness: StepWitness, committed: Bytes32, options: FreivaldsOptions = {}): StepCheck {
  const timings: StepCheckTimings = { productsMs: 0, elementwiseMs: 0, updateMs: 0, hashMs: 0 };
  const model = run.model;
  if (!model.witnessed || !model.witnessPass) {
    throw new AuditInputError(`Freivalds step verification of ${model.arch} ${model.witnessRequirement ?? "does not exist (its step has no witness)"}; this run has numerics ${run.manifest.numerics}`);
  }
  if (before.step !== t - 1) throw new RangeError(`verifyStepWitness(step ${t}) needs state ${t - 1}, got ${before.step}`);
  const bad = (message: string, products: readonly ProductResult[] = []): StepCheck => ({ ok: false, failure: { kind: "witness-invalid", message: `step ${t}: ${message}` }, products, timings });
  if (witness.model !== model.arch) return bad(`witness is for model ${witness.model}`);
  const batch = run.batchFor(t);

  const { oracle, claims, problem } = witnessOracle(witness);
  let t0 = cpuNow();
  const pass = model.witnessPass(before.params, batch, oracle);
  timings.elementwiseMs += cpuNow() - t0;
  const missing = problem();
  if (missing !== null) return bad(missing);

  t0 = cpuNow();
  const verification = verifyProducts(claims, options);
  timings.productsMs += cpuNow() - t0;
  if (!verification.ok) {
    const r = verification.products.find((x) => !x.ok)!;
    return bad(`product ${r.name} fails Freivalds${r.nonFinite ? " (non-finite value)" : ` at row ${r.badRow} (residual ${r.worstRatio.toExponential(3)} x threshold)`}`, verification.products);
  }

  t0 = cpuNow();
  const after = run.kernels ? run.applyUpdate(before, pass.grads) : replayUpdate(run.manifest.optimizer, before, pass.grads);
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
