/**
 * The distillation loss head (numerics bitwise-v2): the student's logits z against the next tokens and against a
 * frozen teacher's logits u on the same positions, at temperature T with hard-label weight alpha (manifest `distill`).
 * Per position, with p = softmax(u / T) and q = softmax(z / T):
 *   loss = alpha * CE(label, softmax(z)) + (1 - alpha) * T^2 * CE(p, q)
 *   dz   = alpha * (softmax(z) - onehot) / N + (1 - alpha) * T * (q - p) / N      (N = positions; Hinton et al.'s T^2)
 * the batch loss being the float32 fold of the position losses over N. CE(p, q) is written log(sum exp(z/T - m)) + m
 * - sum_j p_j z_j / T, the same value for sum_j p_j = 1, so no log of a rounded probability is taken.
 *
 * INVARIANT: every operation is one float32 rounding (Math.fround) in a fixed order, exp and log are the kernels' own
 * exp32 and log32 (transformer-ref.ts), and the hard term is softmaxXentRef's arithmetic op for op, so the head's bits
 * are a pure function of (z, u, targets) on every machine; trainer and auditor run this one function.
 * NOTE: z / T is a float32 division (IEEE, correctly rounded: a float64 quotient of two float32s rounds to the same
 * float32), not a multiply by a rounded 1/T, so T = 1 leaves the logits unchanged.
 */
import { exp32, log32, rowExpSum } from "../kernels/transformer-ref.ts";
import type { LossHead } from "../kernels/transformer.ts";

const f = Math.fround;

/** The temperature and hard-label weight as the head reads them (float32). */
export type DistillLoss = { readonly temperature: number; readonly alpha: number };

/**
 * Softmax of row `o` of `x` divided by T into `out` (unnormalised exp32 terms) and returns [max, sum] of the scaled row.
 * The max skips nothing: a NaN logit makes the row's max NaN, as in softmaxXentRef.
 */
function scaledExp(x: Float32Array, o: number, V: number, T: number, scaledOut: Float32Array, out: Float32Array): [number, number] {
  let m = -Infinity;
  for (let j = 0; j < V; j++) {
    const v = f(x[o + j]! / T);
    scaledOut[j] = v;
    if (v > m || v !== v) m = v;
  }
  let s = 0;
  for (let j = 0; j < V; j++) {
    const e = exp32(f(scaledOut[j]! - m));
    out[j] = e;
    s = f(s + e);
  }
  return [m, s];
}

/**
 * The head for one batch: `teacher` is the teacher's logits [rows, V] on the batch's positions (its forward pass).
 * Throws RangeError when the shapes disagree.
 */
export function distillHead(teacher: Float32Array, loss: DistillLoss): LossHead {
  const T = f(loss.temperature);
  const a = f(loss.alpha);
  const gradSoft = f(f(1 - a) * T);
  const lossSoft = f(gradSoft * T);
  return (z, targets, rows, V, rowLoss) => {
    if (z.length !== rows * V || teacher.length !== rows * V || targets.length !== rows) {
      throw new RangeError(`distill: needs student and teacher logits [${rows},${V}] and ${rows} targets, got ${z.length}, ${teacher.length} and ${targets.length}`);
    }
    const dz = new Float32Array(rows * V);
    const fr = f(rows);
    const e = new Float32Array(V);
    const zt = new Float32Array(V), qe = new Float32Array(V);
    const ut = new Float32Array(V), pe = new Float32Array(V);
    let total = 0;
    let correct = 0;
    for (let r = 0; r < rows; r++) {
      const o = r * V;
      const y = targets[r]!;
      // the hard term: softmaxXentRef's row (rowExpSum: max with its argmax, exp32 terms, their float32 sum)
      const { m, arg, s } = rowExpSum(z, o, V, e, 0);
      if (arg === y) correct++;
      const [mq, sq] = scaledExp(z, o, V, T, zt, qe);
      const [, sp] = scaledExp(teacher, o, V, T, ut, pe);
      // sum_j p_j * (z_j / T), folded in j order
      let dot = 0;
      for (let j = 0; j < V; j++) dot = f(dot + f(f(pe[j]! / sp) * zt[j]!));
      const hard = f(f(log32(s) + m) - z[o + y]!);
      const soft = f(f(log32(sq) + mq) - dot);
      const lr = f(f(a * hard) + f(lossSoft * soft));
      if (rowLoss) rowLoss[r] = lr;
      total = f(total + lr);
      for (let j = 0; j < V; j++) {
        const dHard = f(a * f(f(f(e[j]! / s) - (j === y ? 1 : 0)) / fr));
        const dSoft = f(gradSoft * f(f(f(qe[j]! / sq) - f(pe[j]! / sp)) / fr));
        dz[o + j] = f(dHard + dSoft);
      }
    }
    return { loss: f(total / fr), dz, correct };
  };
}
