/**
 * Magnitude check: every step's update against the largest update the manifest's optimizer can
 * produce, from the per-step states the provider serves (step-states.ts). No forward or backward
 * pass: O(params) per step. It catches planted weights (an update no optimizer step can make).
 *
 * Adam (per coordinate, any gradients): with m, v starting at 0 (every job, fine-tuning included: its h(0) has a
 * fresh optimizer state, Run.initFromStore), Cauchy-Schwarz gives
 *   |m_hat| / sqrt(v_hat) <= (1 - b1) / (1 - b1^t) * sqrt(S * (1 - b2^t) / (1 - b2)),
 *   S = sum_{j<t} (b1^2 / b2)^j  (<= 1 / (1 - b1^2/b2) when b1^2 < b2),
 * and eps only shrinks the update, so |w(t) - w(t-1)| <= lr * that ratio (1 at t = 1; 7.27 for the
 * default betas as t grows). b1^t and b2^t are read from the verified optimizer state of step t.
 *
 * SGD: ||dW|| = lr * ||g|| exactly; the check takes a bound on ||g|| per tensor from the model without a forward
 * pass (Model.gradientNormBounds; mnist-mlp, ml/models/mlp-bounds.ts, from |p - onehot(y)| <= sqrt(2) per example
 * and ||relu(z)|| <= ||z||: loose but rigorous, so a plant smaller than its slack passes the SGD check). A model
 * without such bounds has no SGD magnitude check (AuditInputError).
 *
 * Adam's step counter: the bias-correction powers in the state must advance by exactly one float32
 * multiplication per step (b1^t = fl(b1^(t-1) * fl(b1))); a step that left them unchanged (a skipped
 * or faked step) is reported as optimizer-state-invalid.
 *
 * Rounding: the bound gets a relative slack of 2^-10 (float32 Adam arithmetic) plus one float32
 * ulp of the weight, so an honest step never trips it.
 *
 * The optimizer state is checked as well as the weights: the state screen (state-screen.ts) runs on
 * the segment's start state and on every step's state with the step before as its baseline (finite
 * values; exact bias-correction powers; m^2 <= C_t v; |m_t - b1 m_{t-1}| <= (1-b1) G and
 * b2 v_{t-1} <= v_t <= b2 v_{t-1} + (1-b2) G^2 for the step's gradient bound G), so a step that
 * writes moments no gradient can produce (state-poison) fails at that step.
 */
import type { Run, TrainState } from "../ml/run.ts";
import { adamRatioBound } from "./adam-bound.ts";
import { failed, openFailed, passed, type CheckResult } from "./result.ts";
import { challengeProof, exactStep, nonFinite, openSegment, type AuditTarget } from "./segment.ts";
import { screenConfigOf, screenState } from "./state-screen.ts";
import { segmentStates, type StepStateSource } from "./step-states.ts";
import { AuditInputError } from "./segment.ts";

export { adamRatioBound };

const REL_SLACK = 2 ** -10;
const ULP = 2 ** -23;

export type MagnitudeStep = { step: number; worstRatio: number; tensor: string };

/** max over coordinates/tensors of |update| / bound for step before -> after (> 1 is a violation). */
export function updateRatio(run: Run, before: TrainState, after: TrainState): { ratio: number; tensor: string; counterOk: boolean } {
  const opt = run.manifest.optimizer;
  const names = run.paramSpecs.map((s) => s.name);
  let worst = 0;
  let tensor = "";
  if (opt.name === "adam") {
    const n = run.paramSpecs.length;
    const p1 = after.opt[2 * n]![0]!;
    const p2 = after.opt[2 * n + 1]![0]!;
    const counterOk = p1 === Math.fround(before.opt[2 * n]![0]! * Math.fround(opt.beta1)) && p2 === Math.fround(before.opt[2 * n + 1]![0]! * Math.fround(opt.beta2));
    const limit = opt.lr * adamRatioBound(opt.beta1, opt.beta2, p1, p2, after.step) * (1 + REL_SLACK);
    before.params.forEach((w0, i) => {
      const w1 = after.params[i]!;
      for (let j = 0; j < w0.length; j++) {
        const d = Math.abs(w1[j]! - w0[j]!);
        const r = d / (limit + ULP * Math.max(Math.abs(w0[j]!), Math.abs(w1[j]!)));
        if (r > worst) {
          worst = r;
          tensor = names[i]!;
        }
      }
    });
    return { ratio: worst, tensor, counterOk };
  }
  // the model bounds its batch gradient's norms (Model.gradientNormBounds; mnist-mlp: ml/models/mlp-bounds.ts)
  if (!run.model.gradientNormBounds) throw new AuditInputError(`the SGD magnitude bound needs the model's gradient norm bounds; ${run.model.arch} has none`);
  const gBounds = run.model.gradientNormBounds(before.params, run.batchFor(after.step));
  before.params.forEach((w0, i) => {
    const w1 = after.params[i]!;
    let d2 = 0;
    let w2 = 0;
    for (let j = 0; j < w0.length; j++) {
      d2 += (w1[j]! - w0[j]!) ** 2;
      w2 += w1[j]! * w1[j]!;
    }
    const r = Math.sqrt(d2) / (opt.lr * gBounds[i]! * (1 + REL_SLACK) + ULP * Math.sqrt(w2));
    if (r > worst) {
      worst = r;
      tensor = names[i]!;
    }
  });
  return { ratio: worst, tensor, counterOk: true };
}

export async function magnitudeSegment(target: AuditTarget, segment: number, source: StepStateSource): Promise<CheckResult> {
  const config = screenConfigOf(target.run);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const opened = await openSegment(target, segment);
  if (!opened.ok) return openFailed(segment, "magnitude", opened, elapsed());
  const { leaves, start } = opened.value;
  // a start state no honest run reaches is not this segment's fault, but nothing after it can be trusted; a non-finite
  // start is no such state (a diverged trajectory is the rule's): its steps are decided exactly below
  const startScreen = screenState(config, start);
  if (!startScreen.ok && startScreen.failure.kind !== "state-non-finite") return failed(segment, "magnitude", startScreen.failure, elapsed(), { details: { screen: startScreen.details } });
  const states = await segmentStates(target, source, leaves, start);
  if (!states.ok) return failed(segment, "magnitude", states.failure, elapsed());
  let worst = 0;
  let exact = 0;
  for (let j = 1; j < states.value.length; j++) {
    const t = leaves.first + j;
    // INVARIANT: a non-finite state is a fault only where the rule does not produce it. The bound cannot say (NaN
    // compares false, an overflow may be the rule's), so the exact recompute of step t decides (segment.ts exactStep)
    if (nonFinite(target.run, states.value[j - 1]!) !== null || nonFinite(target.run, states.value[j]!) !== null) {
      const r = exactStep(target.run, states.value[j - 1]!, t, leaves.hashes[j]!, "a non-finite state");
      if (!r.ok) return failed(segment, "magnitude", r.failure, elapsed(), { firstBadStep: t, proof: challengeProof(leaves, t, r.stateHash), stepsChecked: j });
      exact++;
      continue;
    }
    const screen = screenState(config, states.value[j]!, states.value[j - 1]!);
    if (!screen.ok) {
      return failed(segment, "magnitude", screen.failure, elapsed(), { firstBadStep: t, proof: challengeProof(leaves, t), stepsChecked: j, details: { screen: screen.details, tensor: screen.tensor, index: screen.index } });
    }
    const { ratio, tensor, counterOk } = updateRatio(target.run, states.value[j - 1]!, states.value[j]!);
    worst = Math.max(worst, ratio);
    if (!counterOk) {
      return failed(segment, "magnitude", { kind: "optimizer-state-invalid", message: `step ${t}: Adam's bias-correction powers did not advance by one step` }, elapsed(), {
        firstBadStep: t,
        proof: challengeProof(leaves, t),
        stepsChecked: j,
      });
    }
    if (!(ratio <= 1)) {
      return failed(segment, "magnitude", { kind: "magnitude-exceeded", message: `step ${t}: tensor ${tensor} moved ${ratio.toFixed(2)} x the optimizer's largest update` }, elapsed(), {
        firstBadStep: t,
        proof: challengeProof(leaves, t),
        stepsChecked: j,
        details: { worstRatio: ratio, tensor },
      });
    }
  }
  return passed(segment, "magnitude", leaves.last - leaves.first, elapsed(), { worstRatio: worst, ...(exact > 0 ? { exactSteps: exact } : {}) });
}
