/**
 * The verifier's side of an mnist-mlp step witness (MnistMlp.witnessPass, checked by checks/stepwitness.ts): the
 * step's pass with the five product outputs taken from the witness and every other tensor recomputed from them:
 *
 *   fwd1   P1  = X . W1          z1 = P1 + b1,  a1 = relu(z1)
 *   fwd2   P2  = a1 . W2         z2 = P2 + b2,  p = softmax(z2),  dz2 = (p - onehot(y)) / B,  db2 = colsum(dz2)
 *   bwdW2  dW2 = a1^T . dz2
 *   bwdA1  da1 = dz2 . W2^T      dz1 = da1 * [z1 > 0],  db1 = colsum(dz1)
 *   bwdW1  dW1 = X^T . dz1
 *
 * The elementwise part of the step (models/mlp.ts), in plain JavaScript, bit for bit
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
 * few hundred microseconds. test/ml/mlp-witness.test.ts pins it to the tfjs ops on real and adversarial
 * inputs (NaN, -0, huge logits), and every honest step verified by stepwitness.ts must reproduce the
 * committed h(t), which depends on db1 and db2 bit for bit.
 */

import { MNIST_CLASSES } from "../data/mnist.ts";
import { biasRelu, columnSums, reluGrad, softmaxCrossEntropy } from "../kernels/elementwise.ts";
import type { Batch, ProductOracle } from "./types.ts";

/** The products of an mnist-mlp step witness, in the order of the pass. */
export const MLP_WITNESS_PRODUCTS = ["fwd1", "fwd2", "bwdW2", "bwdA1", "bwdW1"] as const;

export type MlpElementwise = { a1: Float32Array; dz2: Float32Array; db2: Float32Array; dz1: Float32Array; db1: Float32Array };

/**
 * The step's pass from the weights on examples `x` with `labels` (out-of-range labels one-hot to all zeros, as
 * tf.oneHot) and every product from `oracle` (operands as computed here): the gradients in parameter order
 * [dW1, db1, dW2, db2] and the elementwise intermediates.
 */
function mlpPass(x: Float32Array, labels: ArrayLike<number>, params: readonly Float32Array[], B: number, H: number, C: number, oracle: ProductOracle): MlpElementwise & { grads: Float32Array[] } {
  const [W1, b1, W2, b2] = params as [Float32Array, Float32Array, Float32Array, Float32Array];
  const D = x.length / B;
  // the engine's own kernels (ml/kernels/elementwise.ts): the witness check and the training step round alike
  const P1 = oracle("fwd1", x, W1, B, D, H, "nn", 1);
  const { z: z1, a: a1 } = biasRelu(P1, b1, B, H);
  const P2 = oracle("fwd2", a1, W2, B, H, C, "nn", 1);
  const { dz2 } = softmaxCrossEntropy(P2, b2, labels, B, C);
  const dW2 = oracle("bwdW2", a1, dz2, H, B, C, "tn", 1);
  const da1 = oracle("bwdA1", dz2, W2, B, C, H, "nt", 1);
  const dz1 = reluGrad(da1, z1);
  const dW1 = oracle("bwdW1", x, dz1, D, B, H, "tn", 1);
  const db1 = columnSums(dz1, B, H);
  const db2 = columnSums(dz2, B, C);
  return { a1, dz2, db2, dz1, db1, grads: [dW1, db1, dW2, db2] };
}

/**
 * The verifier's pass of one step (MnistMlp.witnessPass): from `params` (state t-1) on `batch` with every product
 * from `oracle`, the gradients an honest step computes, bit for bit.
 */
export function mlpWitnessPass(params: readonly Float32Array[], batch: Batch, hidden: number, oracle: ProductOracle): { grads: Float32Array[] } {
  if (batch.kind !== "images") throw new TypeError("mnist-mlp needs an image batch");
  return { grads: mlpPass(batch.x, batch.y, params, batch.size, hidden, MNIST_CLASSES, oracle).grads };
}

/**
 * The elementwise tensors of the pass given the three product outputs they depend on: `P1` [B,H] = X.W1, `P2` [B,C]
 * = a1.W2 and `da1` [B,H] = dz2.W2^T; `labels` the batch's class indices.
 */
export function mlpElementwise(
  P1: Float32Array, P2: Float32Array, da1: Float32Array,
  b1: Float32Array, b2: Float32Array, labels: ArrayLike<number>,
  B: number, H: number, C: number,
): MlpElementwise {
  const given: Record<string, Float32Array> = { fwd1: P1, fwd2: P2, bwdA1: da1 };
  const none = new Float32Array(0);
  const { a1, dz2, db2, dz1, db1 } = mlpPass(none, labels, [none, b1, none, b2], B, H, C, (name) => given[name] ?? none);
  return { a1, dz2, db2, dz1, db1 };
}
