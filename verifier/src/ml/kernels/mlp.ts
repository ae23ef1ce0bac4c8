/**
 * One mnist-mlp loss-and-gradient pass on the kernel layer: the same computation as models/mlp.ts's
 * tf ops (see its header for the relations), product by product and op by op, so the gradients, the
 * loss and every witness tensor have the bits tfjs-cpu gives (test/ml/kernels.test.ts compares them
 * over full training runs). The products read transposed operands in place (layouts "tn", "nt"),
 * which does not change their summation order; the witness materialises the transposes, as the tf
 * path does.
 */
import type { StepWitness, WitnessTensor } from "../models/types.ts";
import { biasRelu, columnSums, crossEntropySumAndCorrect, meanSquaredError, reluGrad, softmaxCrossEntropy, squaredErrorSum, transpose } from "./elementwise.ts";
import type { Kernels } from "./types.ts";

export type MlpStepResult = { loss: number; grads: Float32Array[]; witness?: StepWitness };

/**
 * params = [W1 [D,H], b1 [H], W2 [H,C], b2 [C]]; x [B,D]; labels [B]. With `targets` [B,C] (tabular-mlp regression)
 * the output layer is the mean-squared-error head (elementwise.ts meanSquaredError) instead of softmax cross-entropy;
 * the products and every other op are the same, in the same order. The witness is the classifier's only.
 */
export function mlpStep(
  k: Kernels, params: readonly Float32Array[], x: Float32Array, labels: ArrayLike<number>,
  dims: { B: number; D: number; H: number; C: number }, options: { witness?: boolean; targets?: Float32Array } = {},
): MlpStepResult {
  const { B, D, H, C } = dims;
  const [W1, b1, W2, b2] = params as [Float32Array, Float32Array, Float32Array, Float32Array];
  const P1 = k.matmul(x, W1, B, D, H, "nn");
  const { z: z1, a: a1 } = biasRelu(P1, b1, B, H);
  const P2 = k.matmul(a1, W2, B, H, C, "nn");
  if (options.targets) {
    if (options.witness) throw new TypeError("the regression head has no step witness");
    const mse = meanSquaredError(P2, b2, options.targets, B, C);
    const dW2 = k.matmul(a1, mse.dz2, H, B, C, "tn");
    const db2 = columnSums(mse.dz2, B, C);
    const dz1 = reluGrad(k.matmul(mse.dz2, W2, B, C, H, "nt"), z1);
    return { loss: mse.loss, grads: [k.matmul(x, dz1, D, B, H, "tn"), columnSums(dz1, B, H), dW2, db2] };
  }
  const out = softmaxCrossEntropy(P2, b2, labels, B, C);
  const dW2 = k.matmul(a1, out.dz2, H, B, C, "tn");
  const db2 = columnSums(out.dz2, B, C);
  const da1 = k.matmul(out.dz2, W2, B, C, H, "nt");
  const dz1 = reluGrad(da1, z1);
  const dW1 = k.matmul(x, dz1, D, B, H, "tn");
  const db1 = columnSums(dz1, B, H);
  const result: MlpStepResult = { loss: out.loss, grads: [dW1, db1, dW2, db2] };
  if (options.witness) {
    const w = (shape: number[], data: Float32Array): WitnessTensor => ({ shape, data: Float32Array.from(data) });
    result.witness = {
      model: "mnist-mlp",
      products: [
        { name: "fwd1", a: w([B, D], x), b: w([D, H], W1), c: w([B, H], P1) },
        { name: "fwd2", a: w([B, H], a1), b: w([H, C], W2), c: w([B, C], P2) },
        { name: "bwdW2", a: w([H, B], transpose(a1, B, H)), b: w([B, C], out.dz2), c: w([H, C], dW2) },
        { name: "bwdA1", a: w([B, C], out.dz2), b: w([C, H], transpose(W2, H, C)), c: w([B, H], da1) },
        { name: "bwdW1", a: w([D, B], transpose(x, B, D)), b: w([B, H], dz1), c: w([D, H], dW1) },
      ],
      tensors: {
        onehot: w([B, C], out.onehot), b1: w([H], b1), b2: w([C], b2), z1: w([B, H], z1), a1: w([B, H], a1),
        z2: w([B, C], out.z2), p: w([B, C], out.p), loss: w([], Float32Array.of(out.loss)),
        dz2: w([B, C], out.dz2), dz1: w([B, H], dz1), db1: w([H], db1), db2: w([C], db2),
      },
    };
  }
  return result;
}

/** One evaluation batch of models/mlp.ts `evaluate` on the kernel layer: the loss sum and correct count. */
export function mlpEvalBatch(
  k: Kernels, params: readonly Float32Array[], x: Float32Array, labels: ArrayLike<number>,
  dims: { B: number; D: number; H: number; C: number },
): { lossSum: number; correct: number } {
  const { B, D, H, C } = dims;
  const [W1, b1, W2, b2] = params as [Float32Array, Float32Array, Float32Array, Float32Array];
  const { a: a1 } = biasRelu(k.matmul(x, W1, B, D, H, "nn"), b1, B, H);
  return crossEntropySumAndCorrect(k.matmul(a1, W2, B, H, C, "nn"), b2, labels, B, C);
}

/** One evaluation batch of the regression head (tabular-mlp regression): the squared-error sum over the batch. */
export function mlpSquaredErrorBatch(
  k: Kernels, params: readonly Float32Array[], x: Float32Array, targets: Float32Array,
  dims: { B: number; D: number; H: number; C: number },
): number {
  const { B, D, H, C } = dims;
  const [W1, b1, W2, b2] = params as [Float32Array, Float32Array, Float32Array, Float32Array];
  const { a: a1 } = biasRelu(k.matmul(x, W1, B, D, H, "nn"), b1, B, H);
  return squaredErrorSum(k.matmul(a1, W2, B, H, C, "nn"), b2, targets, B, C);
}
