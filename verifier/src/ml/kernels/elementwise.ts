/**
 * The elementwise ops and reductions of an mnist-mlp step in plain JavaScript, bit for bit what the
 * tfjs-cpu kernels compute (tfjs pinned to 4.22.0). Every intermediate is stored in a Float32Array
 * where the tf op stores its output, so each rounding happens where tfjs rounds:
 *
 *   Add / Sub / Mul / RealDiv   fround(a op b), broadcasting by index only
 *   Relu                        fround(Math.max(0, x))            (NaN stays NaN, -0 becomes +0)
 *   Max (row)                   first element, then any NaN or larger value wins (maxImpl)
 *   Exp / Log                   fround(Math.exp(x)) / fround(Math.log(x))  (V8's fdlibm port)
 *   Sum                         float64 accumulation in index order from 0, rounded once
 *   Mean                        Sum of fround(x / n)  (tfjs-cpu's Mean divides first)
 *   Softmax                     e = Exp(Sub(z, Max)), p = RealDiv(e, Sum(e))
 *   logSoftmax (tfjs-core op)   Sub(Sub(z, Max), Log(Sum(Exp(Sub(z, Max)))))
 *
 * ml/models/mlp-witness.ts composes them for the step-witness check.
 */

/** z = P + b (row broadcast), a = relu(z); P [rows, cols], b [cols]. */
export function biasRelu(P: Float32Array, b: Float32Array, rows: number, cols: number): { z: Float32Array; a: Float32Array } {
  const z = new Float32Array(rows * cols);
  const a = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const o = i * cols;
    for (let j = 0; j < cols; j++) {
      z[o + j] = P[o + j]! + b[j]!;
      a[o + j] = Math.max(0, z[o + j]!);
    }
  }
  return { z, a };
}

export type SoftmaxCrossEntropy = {
  onehot: Float32Array; z2: Float32Array; p: Float32Array; dz2: Float32Array;
  /** loss = -mean_i(sum_c(onehot * logSoftmax(z2))[i]) as the float32 tfjs returns. */
  loss: number;
};

/**
 * The output layer of models/mlp.ts: z2 = P2 + b2, p = softmax(z2), the mean cross-entropy through
 * logSoftmax, dz2 = (p - onehot) / B. `labels` outside 0..C-1 one-hot to all zeros, as tf.oneHot.
 */
export function softmaxCrossEntropy(P2: Float32Array, b2: Float32Array, labels: ArrayLike<number>, B: number, C: number): SoftmaxCrossEntropy {
  const onehot = new Float32Array(B * C);
  const z2 = new Float32Array(B * C);
  const p = new Float32Array(B * C);
  const dz2 = new Float32Array(B * C);
  const shifted = new Float32Array(C);
  const e = new Float32Array(C);
  const r = new Float32Array(4); // [sum e, log(sum e), row loss sum, row loss / B]
  const tmp = new Float32Array(1);
  const perRow = new Float32Array(B);
  const B32 = Math.fround(B);
  for (let i = 0; i < B; i++) {
    const o = i * C;
    const y = labels[i]!;
    for (let c = 0; c < C; c++) {
      z2[o + c] = P2[o + c]! + b2[c]!;
      onehot[o + c] = y === c ? 1 : 0;
    }
    let max = z2[o]!;
    for (let c = 0; c < C; c++) {
      const v = z2[o + c]!;
      if (Number.isNaN(v) || v > max) max = v;
    }
    let s = 0;
    for (let c = 0; c < C; c++) {
      shifted[c] = z2[o + c]! - max;
      e[c] = Math.exp(shifted[c]!);
      s += e[c]!;
    }
    r[0] = s;
    r[1] = Math.log(r[0]!);
    let rowSum = 0;
    for (let c = 0; c < C; c++) {
      p[o + c] = e[c]! / r[0]!;
      tmp[0] = p[o + c]! - onehot[o + c]!;
      dz2[o + c] = tmp[0]! / B32;
      tmp[0] = shifted[c]! - r[1]!; // logSoftmax
      tmp[0] = onehot[o + c]! * tmp[0]!;
      rowSum += tmp[0]!;
    }
    r[2] = rowSum;
    perRow[i] = r[2]! / B32;
  }
  let total = 0;
  for (let i = 0; i < B; i++) total += perRow[i]!;
  r[3] = total;
  return { onehot, z2, p, dz2, loss: -r[3]! };
}

/**
 * models/mlp.ts evaluate's per-batch numbers: lossSum = -Sum(onehot * logSoftmax(z2)) over all B*C
 * elements in row-major order (one float64 sum, rounded once), and the number of rows whose argMax
 * (first index of the largest value; NaN never wins, as tfjs-cpu's argMax) equals the label.
 */
export function crossEntropySumAndCorrect(P2: Float32Array, b2: Float32Array, labels: ArrayLike<number>, B: number, C: number): { lossSum: number; correct: number } {
  const z = new Float32Array(C);
  const shifted = new Float32Array(C);
  const e = new Float32Array(C);
  const r = new Float32Array(3); // [sum e, log(sum e), total]
  const tmp = new Float32Array(1);
  let total = 0;
  let correct = 0;
  for (let i = 0; i < B; i++) {
    const o = i * C;
    const y = labels[i]!;
    for (let c = 0; c < C; c++) z[c] = P2[o + c]! + b2[c]!;
    let max = z[0]!;
    let argMax = 0;
    let argMaxValue = z[0]!;
    for (let c = 0; c < C; c++) {
      const v = z[c]!;
      if (Number.isNaN(v) || v > max) max = v;
      if (v > argMaxValue) {
        argMaxValue = v;
        argMax = c;
      }
    }
    if (argMax === y) correct++;
    let s = 0;
    for (let c = 0; c < C; c++) {
      shifted[c] = z[c]! - max;
      e[c] = Math.exp(shifted[c]!);
      s += e[c]!;
    }
    r[0] = s;
    r[1] = Math.log(r[0]!);
    for (let c = 0; c < C; c++) {
      tmp[0] = shifted[c]! - r[1]!;
      tmp[0] = (y === c ? 1 : 0) * tmp[0]!;
      total += tmp[0]!;
    }
  }
  r[2] = total;
  return { lossSum: -r[2]!, correct };
}

/** dz = da * [z > 0] (Greater, cast to float32, Multiply). */
export function reluGrad(da: Float32Array, z: Float32Array): Float32Array {
  const out = new Float32Array(da.length);
  for (let k = 0; k < da.length; k++) out[k] = da[k]! * (z[k]! > 0 ? 1 : 0);
  return out;
}

/** tf.sum(x, 0) of a [rows, cols] matrix: per column a float64 sum over rows in order, rounded once. */
export function columnSums(x: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(cols);
  for (let j = 0; j < cols; j++) {
    let s = 0;
    for (let i = 0; i < rows; i++) s += x[i * cols + j]!;
    out[j] = s;
  }
  return out;
}

/** Row-major transpose of [rows, cols] (a copy; no arithmetic). */
export function transpose(x: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = x[i * cols + j]!;
  return out;
}

export type MeanSquaredError = { z2: Float32Array; dz2: Float32Array; /** mean_i sum_c (z2 - y)^2 / C as the float32 tfjs returns */ loss: number };

/**
 * The regression head of models/mlp.ts (tabular-mlp, task regression), in the ops of the header's table:
 *   z2 = Add(P2, b2), d = Sub(z2, y), loss = Mean(Mul(d, d)) over all B*C elements, dz2 = RealDiv(Mul(d, 2), B*C).
 * Every product is rounded to float32 before it is added (Mul then Mean, never a fused a*b+c); Mean divides each
 * element by n first and sums in float64 in index order, rounded once, as tfjs-cpu's Mean. `targets` [B, C].
 */
export function meanSquaredError(P2: Float32Array, b2: Float32Array, targets: Float32Array, B: number, C: number): MeanSquaredError {
  const n = B * C;
  const n32 = Math.fround(n);
  const z2 = new Float32Array(n);
  const d = new Float32Array(n);
  const sq = new Float32Array(n);
  const dz2 = new Float32Array(n);
  for (let i = 0; i < B; i++) {
    for (let c = 0; c < C; c++) {
      const o = i * C + c;
      z2[o] = P2[o]! + b2[c]!;
      d[o] = z2[o]! - targets[o]!;
      sq[o] = d[o]! * d[o]!;
      dz2[o] = d[o]! * 2;
      dz2[o] = dz2[o]! / n32;
    }
  }
  const perElement = new Float32Array(n);
  let total = 0;
  for (let o = 0; o < n; o++) {
    perElement[o] = sq[o]! / n32;
    total += perElement[o]!;
  }
  return { z2, dz2, loss: Math.fround(total) };
}

/**
 * models/mlp.ts evaluate's per-batch number for the regression head: sumSq = Sum(Mul(d, d)) over all B*C elements with
 * d = Sub(Add(P2, b2), y), one float64 sum in index order, rounded once.
 */
export function squaredErrorSum(P2: Float32Array, b2: Float32Array, targets: Float32Array, B: number, C: number): number {
  const d = new Float32Array(1);
  const sq = new Float32Array(1);
  let total = 0;
  for (let i = 0; i < B; i++) {
    for (let c = 0; c < C; c++) {
      const o = i * C + c;
      d[0] = Math.fround(P2[o]! + b2[c]!) - targets[o]!;
      sq[0] = d[0]! * d[0]!;
      total += sq[0]!;
    }
  }
  return Math.fround(total);
}
