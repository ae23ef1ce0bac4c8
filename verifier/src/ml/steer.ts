/**
 * steer:<dir> (strategies.ts): a tolerance-mode cheat that computes nothing. It serves a peer's
 * per-step weights, and in each served state t chooses the Adam moments so that the auditor's
 * reference step from that state lands on the peer's weights of step t+1:
 *
 *   v_t = 1e30 (then b2 * v_{t-1}, so v follows its own recurrence exactly): every gradient vanishes
 *         in b2*v + (1-b2)*g^2, and sqrt(v_hat) is huge;
 *   m_t = ((w_t - w_{t+1}) / lr) * (sqrt(v' / c2) + eps) * c1 / b1  (v' = b2*v_t, c_i = 1 - b_i^(t+1)),
 *         so b1*m_t absorbs the gradient too and the update is the peer's step.
 *
 * A distance over the weights alone sees the peer's honest step at every t (the tolerance check
 * before it covered the whole state); the served moments are no optimizer's.
 */
import { StrategyError } from "./errors.ts";
import type { Run, TrainState } from "./run.ts";

/** v of the first steered state; far above any honest v, so (1-b2)*g^2 rounds away against it. */
export const STEER_V = 1e30;

const f = Math.fround;

/** The cheater's states 0..T from the peer's states 0..T of the same manifest (state 0 is the shared initial state). */
export function steerStates(run: Run, peer: readonly TrainState[]): TrainState[] {
  const opt = run.manifest.optimizer;
  if (opt.name !== "adam") throw new StrategyError(`steer needs Adam moments to steer with; the manifest's optimizer is ${opt.name}`);
  const n = run.paramSpecs.length;
  const b1 = f(opt.beta1);
  const b2 = f(opt.beta2);
  const lr = f(opt.lr);
  const eps = f(opt.epsilon);
  const out: TrainState[] = [peer[0]!];
  let v: Float32Array[] | undefined;
  for (let t = 1; t < peer.length; t++) {
    const now = peer[t]!;
    const next = peer[t + 1];
    v = v === undefined ? now.params.map((w) => new Float32Array(w.length).fill(STEER_V)) : v.map((a) => a.map((x) => f(b2 * x)));
    const p1 = now.opt[2 * n]!;
    const p2 = now.opt[2 * n + 1]!;
    const c1 = f(1 - f(p1[0]! * b1));
    const c2 = f(1 - f(p2[0]! * b2));
    const m = now.params.map((w, i) => {
      const o = new Float32Array(w.length);
      if (!next) return o;
      const wn = next.params[i]!;
      const vi = v![i]!;
      for (let j = 0; j < w.length; j++) {
        const den = Math.sqrt(f(f(b2 * vi[j]!) / c2)) + eps;
        o[j] = f((((w[j]! - wn[j]!) / lr) * den * c1) / b1);
      }
      return o;
    });
    out.push({ step: t, params: now.params, opt: [...m, ...v, p1, p2] });
  }
  return out;
}
