/**
 * The reference step of the circuit model class, bit-exact with circuits/step.circom:
 *
 *   E  = X·W - Y·2^F                 exact integers, scale 2^(2F)
 *   G  = Xᵀ·E                        exact integers, scale 2^(3F)
 *   W' = W - floor((lr·G + 2^(S-1)) / 2^S),  S = 3F + log2(B)
 *
 * i.e. W' = W - lr·Xᵀ(X·W - Y)/B computed exactly over the rationals and rounded once, to the nearest
 * multiple of 2^-F with ties toward +infinity (BigInt `>>` is floor division for negative values too).
 * This is the function a provider's trainer for this model class runs; the circuit proves the same.
 */
import { STEP_PARAMS, UPDATE_SHIFT, type Matrix, type StepInput } from "./params.ts";
import { checkSigned, checkStepInput } from "./fixed.ts";
import { FixedPointRangeError } from "./errors.ts";

const HALF = 1n << (UPDATE_SHIFT - 1n);

/** Residuals E[b][j] = (X·W)[b][j] - Y[b][j]·2^F (scale 2^(2F)). */
export function residuals(w: Matrix, x: Matrix, y: Matrix): bigint[][] {
  const { inputs, outputs, batch, fracBits } = STEP_PARAMS;
  const e: bigint[][] = [];
  for (let b = 0; b < batch; b++) {
    const row: bigint[] = [];
    for (let j = 0; j < outputs; j++) {
      let acc = 0n;
      for (let i = 0; i < inputs; i++) acc += x[b]![i]! * w[i]![j]!;
      row.push(acc - (y[b]![j]! << BigInt(fracBits)));
    }
    e.push(row);
  }
  return e;
}

/** Gradient numerator G = Xᵀ·E (scale 2^(3F)); the true gradient is G / (B · 2^(3F)). */
export function gradient(x: Matrix, e: Matrix): bigint[][] {
  const { inputs, outputs, batch } = STEP_PARAMS;
  const g: bigint[][] = [];
  for (let i = 0; i < inputs; i++) {
    const row: bigint[] = [];
    for (let j = 0; j < outputs; j++) {
      let acc = 0n;
      for (let b = 0; b < batch; b++) acc += x[b]![i]! * e[b]![j]!;
      row.push(acc);
    }
    g.push(row);
  }
  return g;
}

/** floor((lr·g + 2^(S-1)) / 2^S): the update in fixed point, rounded to nearest, ties toward +inf. */
export function roundedUpdate(lr: bigint, g: bigint): bigint {
  return (lr * g + HALF) >> UPDATE_SHIFT;
}

/**
 * One SGD step W' = W - lr·Xᵀ(X·W - Y)/B. Throws TileShapeError / FixedPointRangeError for inputs outside
 * the model class and FixedPointRangeError when an updated weight leaves the value range.
 *
 * @example
 *   const wNext = referenceStep({ w, x, y, lr: toFixed(0.05) });
 */
export function referenceStep(input: StepInput): bigint[][] {
  checkStepInput(input);
  const g = gradient(input.x, residuals(input.w, input.x, input.y));
  return input.w.map((row, i) =>
    row.map((wij, j) => {
      const next = wij - roundedUpdate(input.lr, g[i]![j]!);
      try {
        checkSigned(next, `W'[${i}][${j}]`);
      } catch (err) {
        throw new FixedPointRangeError(`the step overflows: W'[${i}][${j}] = ${next} is out of range`, {
          details: "lower the learning rate or the input scale; this step has no proof in the circuit model class",
          cause: err,
        });
      }
      return next;
    }),
  );
}
