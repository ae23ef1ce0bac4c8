/**
 * mnist-mlp: 784-H-10, ReLU, softmax cross-entropy. Forward and backward pass written out with
 * explicit tf ops (no autodiff), so every matrix product is available for the step witness and the
 * computation is exactly the one the witness describes:
 *
 *   fwd1:  P1 = X . W1          z1 = P1 + b1         a1 = relu(z1)
 *   fwd2:  P2 = a1 . W2         z2 = P2 + b2         p = softmax(z2)
 *          loss = mean_i( -logSoftmax(z2)[i, y_i] )
 *          dz2 = (p - onehot(y)) / B
 *   bwdW2: dW2 = a1^T . dz2     db2 = colsum(dz2)
 *   bwdA1: da1 = dz2 . W2^T     dz1 = da1 * step(z1)   (step(z) = 1 if z > 0 else 0)
 *   bwdW1: dW1 = X^T . dz1      db1 = colsum(dz1)
 *
 * Parameter order: W1 [784,H], b1 [H], W2 [H,10], b2 [10]. tabular-mlp is the same step with D = the data set's
 * feature columns and C = its classes (W1 [D,H], W2 [H,C]); it has no step witness (checks/stepwitness.ts knows
 * MNIST's widths), so it is audited by recompute. tabular-mlp with task "regression" has C = 1 output and the
 * mean-squared-error head instead of softmax cross-entropy (same products, same kernels, same order):
 *
 *          d = z2 - y          loss = mean_i(d * d)          dz2 = (d * 2) / B
 *
 * its batches carry float32 targets (Batch.targets) and it has no accuracy. Gradient bounds (mlp-bounds.ts: MNIST's
 * pixel layout and |p - onehot| <= sqrt 2) are mnist-mlp's only, so the magnitude check and the state screen's
 * gradient check do not apply to tabular-mlp of either task.
 *
 * With `kernels` (the "pouw" engine) lossAndGrads runs the same computation on the kernel layer
 * (kernels/mlp.ts), with the same bits, and so does evaluate; outputs (evaluate jobs, which pin the
 * cpu engine) stays on tfjs-cpu.
 */
import { scoped, tf } from "../backend.ts";
import { Rng } from "../prng.ts";
import { MNIST_CLASSES, MNIST_PIXELS } from "../data/mnist.ts";
import { mlpParamSpecs } from "../state-layout.ts";
import type { TensorSpec } from "../tensors.ts";
import { mlpEvalBatch, mlpSquaredErrorBatch, mlpStep, type Kernels } from "../kernels/index.ts";
import { heldOutImages } from "./held-out.ts";
import { mlpGradientNormBounds, MlpGradientBound } from "./mlp-bounds.ts";
import { mlpWitnessPass } from "./mlp-witness.ts";
import type { Batch, Dataset, Evaluation, ExampleOutputs, LossAndGrads, Model, ProductOracle, StepWitness, WitnessTensor } from "./types.ts";

/**
 * Widths of an MLP other than MNIST's (tabular-mlp: the data set's feature columns and label classes; for the
 * regression head `classes` is the output width, 1).
 */
export type MlpDims = { arch: "tabular-mlp"; inputs: number; classes: number; head?: "softmax-ce" | "mse" };

export class MnistMlp implements Model {
  readonly arch: "mnist-mlp" | "tabular-mlp";
  /** The witness verifiers (checks/stepwitness.ts) know MNIST's widths only. */
  readonly witnessed: boolean;
  readonly hidden: number;
  /** Input width D and class count C (784 and 10 for mnist-mlp). */
  readonly inputs: number;
  readonly classes: number;
  readonly paramSpecs: readonly TensorSpec[];
  /** Output layer: softmax cross-entropy over classes, or the mean squared error of float32 targets (regression). */
  readonly head: "softmax-ce" | "mse";
  /**
   * The SGD magnitude check's bound (mlp-bounds.ts): mnist-mlp only. mlp-bounds.ts reads MNIST's 784 pixels per row, and
   * the regression head has no |p - onehot| <= sqrt 2; a wrong bound would flag honest tabular steps.
   */
  readonly gradientNormBounds?: (params: readonly Float32Array[], batch: Batch) => number[];
  private readonly kernels: Kernels | undefined;

  constructor(hidden: number, kernels?: Kernels, dims?: MlpDims) {
    this.hidden = hidden;
    this.kernels = kernels;
    this.arch = dims?.arch ?? "mnist-mlp";
    this.witnessed = dims === undefined;
    this.inputs = dims?.inputs ?? MNIST_PIXELS;
    this.classes = dims?.classes ?? MNIST_CLASSES;
    this.paramSpecs = mlpParamSpecs(hidden, this.inputs, this.classes);
    this.head = dims?.head ?? "softmax-ce";
    if (this.arch === "mnist-mlp") this.gradientNormBounds = mlpGradientNormBounds;
  }

  private targetsOf(batch: Batch & { kind: "images" }): Float32Array {
    if (!batch.targets || batch.targets.length !== batch.size * this.classes) throw new TypeError(`${this.arch} regression needs ${batch.size * this.classes} float32 targets in the batch`);
    return batch.targets;
  }

  /** He-uniform for W1 (ReLU follows), Glorot-uniform for W2, zero biases. */
  init(seed: number): Float32Array[] {
    const h = this.hidden;
    return [
      new Rng(seed, "init", 0).uniform(this.inputs * h, Math.sqrt(6 / this.inputs)),
      new Float32Array(h),
      new Rng(seed, "init", 2).uniform(h * this.classes, Math.sqrt(6 / (h + this.classes))),
      new Float32Array(this.classes),
    ];
  }

  lossAndGrads(params: readonly Float32Array[], batch: Batch, options: { witness?: boolean } = {}): LossAndGrads {
    if (batch.kind !== "images") throw new TypeError(`${this.arch} needs a feature-row batch`);
    const B = batch.size;
    const H = this.hidden;
    const wantWitness = options.witness === true;
    if (this.head === "mse") return this.mseLossAndGrads(params, batch, this.targetsOf(batch));
    if (this.kernels) return mlpStep(this.kernels, params, batch.x, batch.y, { B, D: this.inputs, H, C: this.classes }, { witness: wantWitness });
    return scoped(() => {
      const X = tf.tensor2d(batch.x, [B, this.inputs]);
      const Y = tf.cast(tf.oneHot(tf.tensor1d(Int32Array.from(batch.y), "int32"), this.classes), "float32");
      const W1 = tf.tensor2d(params[0]!, [this.inputs, H]);
      const b1 = tf.tensor1d(params[1]!);
      const W2 = tf.tensor2d(params[2]!, [H, this.classes]);
      const b2 = tf.tensor1d(params[3]!);

      const P1 = tf.matMul(X, W1);
      const z1 = tf.add(P1, b1);
      const a1 = tf.relu(z1);
      const P2 = tf.matMul(a1, W2);
      const z2 = tf.add(P2, b2);
      const p = tf.softmax(z2);
      const loss = tf.neg(tf.mean(tf.sum(tf.mul(Y, tf.logSoftmax(z2)), 1)));
      const dz2 = tf.div(tf.sub(p, Y), tf.scalar(B));
      const a1T = tf.transpose(a1);
      const dW2 = tf.matMul(a1T, dz2);
      const db2 = tf.sum(dz2, 0);
      const W2T = tf.transpose(W2);
      const da1 = tf.matMul(dz2, W2T);
      const mask = tf.cast(tf.greater(z1, 0), "float32");
      const dz1 = tf.mul(da1, mask);
      const XT = tf.transpose(X);
      const dW1 = tf.matMul(XT, dz1);
      const db1 = tf.sum(dz1, 0);

      const grads = [dW1, db1, dW2, db2].map((g) => Float32Array.from(g.dataSync()));
      const result: LossAndGrads = { loss: loss.dataSync()[0]!, grads };
      if (wantWitness) {
        const w = (t: tf.Tensor): WitnessTensor => ({ shape: [...t.shape], data: Float32Array.from(t.dataSync()) });
        const witness: StepWitness = {
          model: this.arch,
          products: [
            { name: "fwd1", a: w(X), b: w(W1), c: w(P1) },
            { name: "fwd2", a: w(a1), b: w(W2), c: w(P2) },
            { name: "bwdW2", a: w(a1T), b: w(dz2), c: w(dW2) },
            { name: "bwdA1", a: w(dz2), b: w(W2T), c: w(da1) },
            { name: "bwdW1", a: w(XT), b: w(dz1), c: w(dW1) },
          ],
          tensors: {
            onehot: w(Y), b1: w(b1), b2: w(b2), z1: w(z1), a1: w(a1), z2: w(z2), p: w(p), loss: w(loss),
            dz2: w(dz2), dz1: w(dz1), db1: w(db1), db2: w(db2),
          },
        };
        result.witness = witness;
      }
      return result;
    });
  }

  /** The regression head's step (header): tfjs ops on the cpu backend, kernels/mlp.ts on the pouw engine, the same bits. */
  private mseLossAndGrads(params: readonly Float32Array[], batch: Batch & { kind: "images" }, targets: Float32Array): LossAndGrads {
    const B = batch.size;
    const H = this.hidden;
    const C = this.classes;
    if (this.kernels) return mlpStep(this.kernels, params, batch.x, batch.y, { B, D: this.inputs, H, C }, { targets });
    return scoped(() => {
      const X = tf.tensor2d(batch.x, [B, this.inputs]);
      const Y = tf.tensor2d(targets, [B, C]);
      const W1 = tf.tensor2d(params[0]!, [this.inputs, H]);
      const W2 = tf.tensor2d(params[2]!, [H, C]);
      const z1 = tf.add(tf.matMul(X, W1), tf.tensor1d(params[1]!));
      const a1 = tf.relu(z1);
      const z2 = tf.add(tf.matMul(a1, W2), tf.tensor1d(params[3]!));
      const d = tf.sub(z2, Y);
      const loss = tf.mean(tf.mul(d, d));
      const dz2 = tf.div(tf.mul(d, tf.scalar(2)), tf.scalar(B * C));
      const dW2 = tf.matMul(tf.transpose(a1), dz2);
      const db2 = tf.sum(dz2, 0);
      const dz1 = tf.mul(tf.matMul(dz2, tf.transpose(W2)), tf.cast(tf.greater(z1, 0), "float32"));
      const dW1 = tf.matMul(tf.transpose(X), dz1);
      const db1 = tf.sum(dz1, 0);
      return { loss: loss.dataSync()[0]!, grads: [dW1, db1, dW2, db2].map((g) => Float32Array.from(g.dataSync())) };
    });
  }

  evaluate(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation {
    if (this.head === "mse") return this.evaluateSquaredError(params, batches);
    let lossSum = 0;
    let correct = 0;
    let n = 0;
    for (const batch of batches) {
      if (batch.kind !== "images") throw new TypeError(`${this.arch} needs a feature-row batch`);
      if (this.kernels) {
        const r = mlpEvalBatch(this.kernels, params, batch.x, batch.y, { B: batch.size, D: this.inputs, H: this.hidden, C: this.classes });
        lossSum += r.lossSum;
        correct += r.correct;
        n += batch.size;
        continue;
      }
      const [l, c] = scoped(() => {
        const X = tf.tensor2d(batch.x, [batch.size, this.inputs]);
        const z1 = tf.add(tf.matMul(X, tf.tensor2d(params[0]!, [this.inputs, this.hidden])), tf.tensor1d(params[1]!));
        const z2 = tf.add(tf.matMul(tf.relu(z1), tf.tensor2d(params[2]!, [this.hidden, this.classes])), tf.tensor1d(params[3]!));
        const y = tf.tensor1d(Int32Array.from(batch.y), "int32");
        const Y = tf.cast(tf.oneHot(y, this.classes), "float32");
        const lossSumT = tf.neg(tf.sum(tf.mul(Y, tf.logSoftmax(z2))));
        const correctT = tf.sum(tf.cast(tf.equal(tf.argMax(z2, 1), y), "int32"));
        return [lossSumT.dataSync()[0]!, correctT.dataSync()[0]!];
      });
      lossSum += l;
      correct += c;
      n += batch.size;
    }
    return { loss: lossSum / n, accuracy: correct / n, examples: n };
  }

  /** Mean squared error over the examples (per output), no accuracy. */
  private evaluateSquaredError(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation {
    let sum = 0;
    let n = 0;
    for (const batch of batches) {
      if (batch.kind !== "images") throw new TypeError(`${this.arch} needs a feature-row batch`);
      const targets = this.targetsOf(batch);
      const dims = { B: batch.size, D: this.inputs, H: this.hidden, C: this.classes };
      sum += this.kernels
        ? mlpSquaredErrorBatch(this.kernels, params, batch.x, targets, dims)
        : scoped(() => {
          const X = tf.tensor2d(batch.x, [batch.size, this.inputs]);
          const z1 = tf.add(tf.matMul(X, tf.tensor2d(params[0]!, [this.inputs, this.hidden])), tf.tensor1d(params[1]!));
          const z2 = tf.add(tf.matMul(tf.relu(z1), tf.tensor2d(params[2]!, [this.hidden, this.classes])), tf.tensor1d(params[3]!));
          const d = tf.sub(z2, tf.tensor2d(targets, [batch.size, this.classes]));
          return tf.sum(tf.mul(d, d)).dataSync()[0]!;
        });
      n += batch.size;
    }
    return { loss: sum / (n * this.classes), examples: n };
  }

  outputs(params: readonly Float32Array[], batch: Batch): ExampleOutputs {
    if (batch.kind !== "images") throw new TypeError(`${this.arch} needs a feature-row batch`);
    if (this.head === "mse") throw new TypeError(`evaluate jobs over ${this.arch} regression are not built`);
    return scoped(() => {
      const X = tf.tensor2d(batch.x, [batch.size, this.inputs]);
      const z1 = tf.add(tf.matMul(X, tf.tensor2d(params[0]!, [this.inputs, this.hidden])), tf.tensor1d(params[1]!));
      const z2 = tf.add(tf.matMul(tf.relu(z1), tf.tensor2d(params[2]!, [this.hidden, this.classes])), tf.tensor1d(params[3]!));
      const Y = tf.cast(tf.oneHot(tf.tensor1d(Int32Array.from(batch.y), "int32"), this.classes), "float32");
      const losses = tf.neg(tf.sum(tf.mul(Y, tf.logSoftmax(z2)), 1));
      return { logits: Float32Array.from(z2.dataSync()), losses: Float32Array.from(losses.dataSync()), logitsPerExample: this.classes };
    });
  }

  flopsPerStep(batchSize: number): number {
    const macs = batchSize * (this.inputs * this.hidden + this.hidden * this.classes);
    return 2 * 3 * macs; // forward + two backward products per layer
  }

  /** The five products' outputs from the witness, everything else recomputed (mlp-witness.ts). */
  witnessPass(params: readonly Float32Array[], batch: Batch, oracle: ProductOracle): { grads: Float32Array[] } {
    return mlpWitnessPass(params, batch, this.hidden, oracle);
  }

  /**
   * The state screen's per-element bound: mnist-mlp only (MlpGradientBound reads MNIST's pixel layout; read on tabular
   * rows it bounds every gradient by 0, and the screen would fail honest states).
   */
  gradientBound(data: Dataset): MlpGradientBound | undefined {
    return data.kind === "images" && this.arch === "mnist-mlp" ? new MlpGradientBound(this.hidden, data) : undefined;
  }

  heldOutBatch(data: Dataset, auditorSeed: number, examples: number): Batch {
    return heldOutImages(data, auditorSeed, examples);
  }
}
