/**
 * Freivalds step verification for a bitwise-v2 char-transformer: checks step t from a verified state
 * t-1 and the provider's step witness without recomputing any matrix product.
 *
 * The verifier runs the SAME pass as the trainer (ml/kernels/transformer.ts `transformerPass`) with a
 * ProductOracle that, instead of multiplying, takes each product's output C from the witness (by name,
 * shape checked) and records the claim C = op(A) . op(B) with A and B as the VERIFIER computed them:
 * the token batch from `run.batchFor(t)`, the weights from state t-1, every activation and gradient
 * from the elementwise kernels applied to earlier (claimed) outputs. The witness's own copies of A and
 * B are never read. Then:
 *
 *   every claim                  Freivalds (checks/freivalds.ts; its rounding bound holds for any
 *                                summation order, so the float32 folds of bitwise-v2 included)
 *   update                       state t = run.applyUpdate(state t-1, gradients of the pass)
 *   check                        h(state t) == committed h(t)
 *
 * An honest witness reproduces h(t) bit for bit: with the engine's exact outputs the elementwise kernels
 * round alike. A product output off by more than the Freivalds bound is rejected; one inside it still
 * has to hash to the committed h(t). Cost: the elementwise part of a step (layer norms, softmaxes,
 * residuals) plus O(mn + np + mp) per product and vector instead of O(mnp).
 */
import type { Run, TrainState } from "../ml/run.ts";
import type { StepWitness } from "../ml/models/types.ts";
import { CharTransformer } from "../ml/models/transformer.ts";
import { transformerPass, type ProductOracle } from "../ml/kernels/transformer.ts";
import type { Bytes32 } from "../trace/index.ts";
import { verifyProducts, type FreivaldsOptions, type ProductClaim } from "./freivalds.ts";
import { AuditInputError } from "./segment.ts";
import type { StepCheck, StepCheckTimings } from "./stepwitness.ts";

function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Verifies step t of a bitwise-v2 char-transformer run (see the module comment). */
export function verifyTransformerStepWitness(run: Run, before: TrainState, t: number, witness: StepWitness, committed: Bytes32, options: FreivaldsOptions = {}): StepCheck {
  const timings: StepCheckTimings = { productsMs: 0, elementwiseMs: 0, updateMs: 0, hashMs: 0 };
  const model = run.model;
  if (!(model instanceof CharTransformer) || !model.kernels) {
    throw new AuditInputError(`Freivalds step verification of char-transformer needs numerics bitwise-v2 (the explicit backward pass); this run has numerics ${run.manifest.numerics}`);
  }
  if (before.step !== t - 1) throw new RangeError(`verifyStepWitness(step ${t}) needs state ${t - 1}, got ${before.step}`);
  const bad = (message: string, products: StepCheck["products"] = []): StepCheck => ({ ok: false, failure: { kind: "witness-invalid", message: `step ${t}: ${message}` }, products, timings });
  if (witness.model !== "char-transformer") return bad(`witness is for model ${witness.model}`);
  const batch = run.batchFor(t);
  if (batch.kind !== "tokens") throw new Error("internal: char-transformer batch is not tokens");

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
  let t0 = cpuNow();
  const pass = transformerPass(model.kernels, oracle, before.params, batch.tokens, model.dimsFor(batch.size), { grads: true });
  timings.elementwiseMs += cpuNow() - t0;
  if (problem !== null) return bad(problem);

  t0 = cpuNow();
  const verification = verifyProducts(claims, options);
  timings.productsMs += cpuNow() - t0;
  if (!verification.ok) {
    const r = verification.products.find((x) => !x.ok)!;
    return bad(`product ${r.name} fails Freivalds${r.nonFinite ? " (non-finite value)" : ` at row ${r.badRow} (residual ${r.worstRatio.toExponential(3)} x threshold)`}`, verification.products);
  }
  t0 = cpuNow();
  // the engine's own optimizer (the pouw run's wasm Adam kernel, bits of kernels/reference.ts adamRef, which
  // checks/update.ts replays too): ~10x cheaper than the plain-JS replay for a 116k-parameter transformer
  const after = run.applyUpdate(before, pass.grads!);
  timings.updateMs += cpuNow() - t0;
  t0 = cpuNow();
  const h = run.stateHashOf(after);
  timings.hashMs += cpuNow() - t0;
  if (h !== committed) {
    return { ok: false, failure: { kind: "state-divergence", message: `step ${t}: the verified witness gives h(${t}) = ${h}, committed ${committed}` }, stateHash: h, products: verification.products, timings };
  }
  return { ok: true, state: after, stateHash: h, products: verification.products, timings };
}
