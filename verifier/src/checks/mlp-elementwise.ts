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
 * rounding happens where tfjs rounds. The tfjs path costs ~4 ms per batch-128 step, mostly kernel
 * dispatch and the per-element index arithmetic of broadcasting adds; this costs a few hundred
 * microseconds. test/checks/mlp-elementwise.test.ts pins it to the tfjs ops on real and adversarial
 * inputs (NaN, -0, huge logits), and every honest step verified by stepwitness.ts must reproduce the
 * committed h(t), which depends on db1 and db2 bit for bit.
 */

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
  const z1 = new Float32Array(B * H);
  const a1 = new Float32Array(B * H);
  for (let i = 0; i < B; i++) {
    for (let j = 0; j < H; j++) {
      const k = i * H + j;
      z1[k] = P1[k]! + b1[j]!;
      a1[k] = Math.max(0, z1[k]!);
    }
  }

  const z2 = new Float32Array(B * C);
  const shifted = new Float32Array(C);
  const e = new Float32Array(C);
  const rowSum = new Float32Array(1);
  const p = new Float32Array(B * C);
  const diff = new Float32Array(B * C);
  const dz2 = new Float32Array(B * C);
  for (let i = 0; i < B; i++) {
    const o = i * C;
    for (let c = 0; c < C; c++) z2[o + c] = P2[o + c]! + b2[c]!;
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
    rowSum[0] = s;
    for (let c = 0; c < C; c++) {
      p[o + c] = e[c]! / rowSum[0]!;
      diff[o + c] = p[o + c]! - (labels[i] === c ? 1 : 0);
      dz2[o + c] = diff[o + c]! / B;
    }
  }

  const dz1 = new Float32Array(B * H);
  for (let k = 0; k < B * H; k++) dz1[k] = da1[k]! * (z1[k]! > 0 ? 1 : 0);

  return { a1, dz2, db2: columnSums(dz2, B, C), dz1, db1: columnSums(dz1, B, H) };
}

/** tf.sum(x, 0) of a [rows, cols] float32 matrix: per column a float64 sum over rows in order, rounded once. */
function columnSums(x: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(cols);
  for (let j = 0; j < cols; j++) {
    let s = 0;
    for (let i = 0; i < rows; i++) s += x[i * cols + j]!;
    out[j] = s;
  }
  return out;
}
