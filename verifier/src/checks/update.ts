/**
 * The optimizer update of ml/optimizer.ts, replayed in plain JavaScript for the Freivalds verifier,
 * bit for bit. The engine runs the update as tfjs CPU kernels: each elementwise kernel computes in
 * JavaScript (float64) and stores into a Float32Array, i.e. every op result is Math.fround(op(a, b)),
 * with the scalars made float32 by tf.scalar. Replaying the same op sequence with Math.fround gives
 * the same bits in one pass without tensor allocation (~30x cheaper than the kernels on a 100k-param
 * MLP), which matters because the update is O(params) and Freivalds made everything else cheap.
 *
 * IMPORTANT: this must track ml/optimizer.ts op for op; test/checks/update.test.ts checks bit equality
 * against Run.applyUpdate for SGD and Adam, and any divergence shows up as a verifier false alarm.
 */
import type { OptimizerConfig } from "../ml/manifest.ts";
import type { TrainState } from "../ml/run.ts";

const f = Math.fround;

export function replayUpdate(cfg: OptimizerConfig, state: TrainState, grads: readonly Float32Array[]): TrainState {
  const n = state.params.length;
  if (grads.length !== n) throw new RangeError(`replayUpdate: ${grads.length} gradients for ${n} parameters`);
  if (cfg.name === "sgd") {
    const lr = f(cfg.lr);
    const params = state.params.map((w, i) => {
      const g = grads[i]!;
      const out = new Float32Array(w.length);
      for (let j = 0; j < w.length; j++) out[j] = w[j]! - f(lr * g[j]!);
      return out;
    });
    return { step: state.step + 1, params, opt: [] };
  }
  const b1 = f(cfg.beta1);
  const b2 = f(cfg.beta2);
  const omb1 = f(1 - cfg.beta1);
  const omb2 = f(1 - cfg.beta2);
  const lr = f(cfg.lr);
  const eps = f(cfg.epsilon);
  const p1 = f(state.opt[2 * n]![0]! * b1);
  const p2 = f(state.opt[2 * n + 1]![0]! * b2);
  const c1 = f(1 - p1);
  const c2 = f(1 - p2);
  const params: Float32Array[] = [];
  const ms: Float32Array[] = [];
  const vs: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    const w = state.params[i]!;
    const g = grads[i]!;
    const m0 = state.opt[i]!;
    const v0 = state.opt[n + i]!;
    const len = w.length;
    const w1 = new Float32Array(len);
    const m1 = new Float32Array(len);
    const v1 = new Float32Array(len);
    for (let j = 0; j < len; j++) {
      const gj = g[j]!;
      const m = f(f(b1 * m0[j]!) + f(omb1 * gj));
      const v = f(f(b2 * v0[j]!) + f(omb2 * f(gj * gj)));
      const update = f(f(m / c1) / f(f(Math.sqrt(f(v / c2))) + eps));
      m1[j] = m;
      v1[j] = v;
      w1[j] = w[j]! - f(lr * update);
    }
    params.push(w1);
    ms.push(m1);
    vs.push(v1);
  }
  return { step: state.step + 1, params, opt: [...ms, ...vs, Float32Array.of(p1), Float32Array.of(p2)] };
}
