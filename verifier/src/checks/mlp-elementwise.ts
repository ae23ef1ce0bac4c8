/**
 * The elementwise part of an mnist-mlp training step (models/mlp.ts), in plain JavaScript, bit for bit
 * what the tfjs cpu kernels compute (tfjs is pinned to 4.22.0; docs/determinism.md):
 *
 *   z1 = P1 + b1              Add:      fround(a + b)
 *   a1 = relu(z1)             Relu:     fround(Math.max(0, x))
 *   z2 = P2 + b2              Add
 *   p  = softmax(z2)          Softmax:  m = row max (NaN wins, as maxImpl), e = fround(exp(fround(z - m))),
 *                                       s = fround(float64 sum of e in column order), p = fround(e / s)
 *   dz2 = (p - onehot(y)) / B Sub, RealDiv by the float32 scalar B
 *   db2 = colsum(dz2)         Sum over axis 0: float64 accumulation over rows 0..B-1, then fround
 *   dz1 = da1 * [z1 > 0]      Greater -> cast to float32 -> Multiply
 *   db1 = colsum(dz1)         Sum
 *
 * Every intermediate is stored in a Float32Array exactly where the kernel stores its output, so each
 * rounding happens where tfjs rounds. These are the engine's own elementwise kernels
 * (ml/kernels/elementwise.ts), composed for the witness check. The tfjs path costs ~4 ms per batch-128
 * step, mostly kernel dispatch and the per-element index arithmetic of broadcasting adds; this costs a
 * few hundred microseconds. test/checks/mlp-elementwise.test.ts pins it to the tfjs ops on real and adversarial
 * inputs (NaN, -0, huge logits), and every honest step verified by stepwitness.ts must reproduce the
 * committed h(t), which depends on db1 and db2 bit for bit.
 */

import { biasRelu, columnSums, reluGrad, softmaxCrossEntropy } from "../ml/kernels/elementwise.ts";

export type MlpElementwise = { a1: Float32Array; dz2: Float32Array; db2: Float32Array; dz1: Float32Array; db1: Float32Array };

/**
 * `P1` [B,H] = X.W1, `P2` [B,C] = a1.W2 and `da1` [B,H] = dz2.W2^T are the product outputs; `labels`
 * the batch's class indices (out-of-range labels one-hot to all zeros, as tf.oneHot).
 */
export function mlpElementwise(
  P1: Float32Array, P2: Float32Array, da1: Float32Array,
  b1: Float32Array, b2: Float32Array, labels: ArrayLike<number>,
  B: number, H: number, C: number,
): MlpElementwise {
  // the engine's own kernels (ml/kernels/elementwise.ts): the witness check and the training step round alike
  const { z: z1, a: a1 } = biasRelu(P1, b1, B, H);
  const { dz2 } = softmaxCrossEntropy(P2, b2, labels, B, C);
  const dz1 = reluGrad(da1, z1);
  return { a1, dz2, db2: columnSums(dz2, B, C), dz1, db1: columnSums(dz1, B, H) };
}
