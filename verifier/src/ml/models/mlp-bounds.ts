/**
 * What mnist-mlp's analysis bounds without a forward pass, for the checks that read states only (docs/checks.md
 * derives both): |p - onehot(y)| <= sqrt 2 per example (softmax cross-entropy) and ||relu(z)|| <= ||z||.
 *
 * - Norms of the batch gradient (the SGD magnitude check, checks/magnitude.ts), X the batch's largest image norm:
 *     ||dW1|| <= sqrt2 ||W2||_F X,  ||db1|| <= sqrt2 ||W2||_F,  ||dW2|| <= sqrt2 (X ||W1||_F + ||b1||),  ||db2|| <= sqrt2
 * - Per element over every batch of the training split (the state screen's check 4, checks/state-screen.ts), X the
 *   largest training image norm and xmax_p the largest value of pixel p:
 *     |dW1[p,h]| <= xmax_p sqrt2 ||W2[h,:]||,  |db1[h]| <= sqrt2 ||W2[h,:]||,  |dW2[h,k]| <= X ||W1[:,h]|| + |b1[h]|,
 *     |db2[k]| <= 1
 *   with the weight norms bounded over the window from its end states and the weights' largest drift.
 */
import { MNIST_CLASSES, MNIST_PIXELS } from "../data/mnist.ts";
import type { Batch, Dataset, FactoredBound, ModelGradientBound, WindowEnd } from "./types.ts";

const norm = (a: Float32Array): number => Math.sqrt(a.reduce((s, x) => s + x * x, 0));

/** Per tensor [W1, b1, W2, b2], a bound on the norm of the batch gradient at `params` (loose but rigorous). */
export function mlpGradientNormBounds(params: readonly Float32Array[], batch: Batch): number[] {
  if (batch.kind !== "images") throw new TypeError("mnist-mlp needs an image batch");
  let maxX = 0;
  for (let i = 0; i < batch.size; i++) {
    let s = 0;
    for (let j = i * MNIST_PIXELS; j < (i + 1) * MNIST_PIXELS; j++) s += batch.x[j]! * batch.x[j]!;
    maxX = Math.max(maxX, Math.sqrt(s));
  }
  const [W1, b1, W2] = params as [Float32Array, Float32Array, Float32Array];
  return [Math.SQRT2 * norm(W2) * maxX, Math.SQRT2 * norm(W2), Math.SQRT2 * (maxX * norm(W1) + norm(b1)), Math.SQRT2];
}

const norm2 = (a: ArrayLike<number>, start: number, count: number, stride: number): number => {
  let s = 0;
  for (let i = 0, j = start; i < count; i++, j += stride) s += a[j]! * a[j]!;
  return Math.sqrt(s);
};

/** The training split's largest image norm and per-pixel maxima: a pure function of the split, cached per split. */
const splitBounds = new WeakMap<Float32Array, { maxInputNorm: number; pixelMax: Float32Array }>();

/** The per-element gradient bound of an mnist-mlp with `hidden` units on `data`'s training split. */
export class MlpGradientBound implements ModelGradientBound {
  readonly kind = "mnist-mlp";
  readonly hidden: number;
  /** Largest training image norm (with a relative 2^-40 for its float64 rounding). */
  readonly maxInputNorm: number;
  /** Largest training value of each pixel (0 for a pixel blank in every training image: its W1 row gets no gradient). */
  readonly pixelMax: Float32Array;

  constructor(hidden: number, data: Dataset) {
    if (data.kind !== "images") throw new TypeError(`the mnist-mlp gradient bound needs image data, not ${data.kind}`);
    this.hidden = hidden;
    const images = data.train.images;
    let b = splitBounds.get(images);
    if (!b) {
      const pixelMax = new Float32Array(MNIST_PIXELS);
      let maxNorm = 0;
      for (let i = 0; i < data.train.count; i++) {
        let s = 0;
        for (let p = 0, k = i * MNIST_PIXELS; p < MNIST_PIXELS; p++, k++) {
          const x = images[k]!;
          s += x * x;
          if (x > pixelMax[p]!) pixelMax[p] = x;
        }
        if (s > maxNorm) maxNorm = s;
      }
      // the norm is computed in float64 from float32 pixels: a relative 2^-40 covers its rounding
      b = { maxInputNorm: Math.sqrt(maxNorm) * (1 + 2 ** -40), pixelMax };
      splitBounds.set(images, b);
    }
    this.maxInputNorm = b.maxInputNorm;
    this.pixelMax = b.pixelMax;
  }

  perElement(ends: readonly WindowEnd[], growth: number, slack: number): FactoredBound[] {
    const H = this.hidden;
    const colW1 = new Float64Array(H).fill(Infinity);
    const absB1 = new Float64Array(H).fill(Infinity);
    const rowW2 = new Float64Array(H).fill(Infinity);
    for (const e of ends) {
      const [W1, b1, W2] = e.params as [Float32Array, Float32Array, Float32Array];
      for (let h = 0; h < H; h++) {
        colW1[h] = Math.min(colW1[h]!, (norm2(W1, h, MNIST_PIXELS, H) + Math.sqrt(MNIST_PIXELS) * e.drift) * growth);
        absB1[h] = Math.min(absB1[h]!, (Math.abs(b1[h]!) + e.drift) * growth);
        rowW2[h] = Math.min(rowW2[h]!, (norm2(W2, h * MNIST_CLASSES, MNIST_CLASSES, 1) + Math.sqrt(MNIST_CLASSES) * e.drift) * growth);
      }
    }
    const hidden = new Float64Array(H);
    for (let h = 0; h < H; h++) hidden[h] = Math.SQRT2 * rowW2[h]! * slack;
    const outRow = new Float64Array(H);
    for (let h = 0; h < H; h++) outRow[h] = (this.maxInputNorm * colW1[h]! + absB1[h]!) * slack;
    return [
      { row: this.pixelMax, col: hidden, cols: H }, // dW1[p, h]
      { row: [1], col: hidden, cols: H }, // db1[h]
      { row: outRow, col: new Float64Array(MNIST_CLASSES).fill(1), cols: MNIST_CLASSES }, // dW2[h, k]
      { row: [slack], col: new Float64Array(MNIST_CLASSES).fill(1), cols: MNIST_CLASSES }, // db2[k]
    ];
  }
}
