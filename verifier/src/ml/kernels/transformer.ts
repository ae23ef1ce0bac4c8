/**
 * The char-transformer step of numerics "bitwise-v2" on the kernel layer: forward pass and an explicit
 * backward pass (no autodiff), every rounding defined by transformer-ref.ts. The same function serves
 * the trainer (products computed by the kernels) and the Freivalds step check (products taken from the
 * provider's witness, CharTransformer.witnessPass checked by checks/stepwitness.ts): `ProductOracle` is the only difference, so the
 * elementwise arithmetic of both is one implementation.
 *
 * Model (models/transformer.ts has the parameter order): x = tokEmb[tok] + posEmb[t]; per layer
 *   y1 = LN1(x); q, k, v = y1.Wq, y1.Wk, y1.Wv; per head S = (q_h . k_h^T) * scale, P = causalSoftmax(S),
 *   O_h = P . v_h; x1 = x + O.Wo; y2 = LN2(x1); u = y2.W1 + b1; a = relu(u); x2 = x1 + (a.W2 + b2);
 * then yf = LNf(x); logits = yf.head + headB; loss = mean cross-entropy over all B*T positions.
 *
 * Products (names in the witness; batched ones per (b, h) block as `<name>.<b*H + h>`):
 *   l<i>.q|k|v|o|ff1|ff2            forward, A . W          "nn"
 *   l<i>.<p>.dW  = A^T . dOut        "tn"      l<i>.<p>.dX = dOut . W^T    "nt"
 *   l<i>.scores  = q_h . k_h^T "nt"  l<i>.scores.dA = dS . k_h "nn"  l<i>.scores.dB = dS^T . q_h "tn"
 *   l<i>.pv      = P . v_h     "nn"  l<i>.pv.dA = dO_h . v_h^T "nt"  l<i>.pv.dB = P^T . dO_h "tn"
 *   head, head.dW, head.dX
 */
import type { ProductOracle, StepWitness, WitnessTensor } from "../models/types.ts";
import {
  causalSoftmaxBackRef, causalSoftmaxRef, layerNormBackRef, layerNormRef, matmul32Ref, softmaxXentRef, type Layout,
} from "./transformer-ref.ts";
import { scratchF32, withScratch } from "./scratch.ts";

const f = Math.fround;

/** The kernels of a bitwise-v2 transformer step; every implementation gives transformer-ref.ts's bits. */
export interface TransformerKernels {
  /** "js" (transformer-ref.ts) or "wasm-simd128" (transformer-wasm.ts). */
  readonly name: string;
  /** The numerics whose bits the set gives; absent: "bitwise-v2". */
  readonly numerics?: "bitwise-v2" | "bitwise-v3";
  /**
   * The operands of every product as the matmul multiplies them (bitwise-v3: rounded to bf16, transformer-v3.ts);
   * absent: as given. When present the pass hands the product oracle the quantized operands, so a Freivalds claim
   * is C = Q(A) . Q(B). INVARIANT: idempotent, and `matmul(quantize(a), quantize(b))` has `matmul(a, b)`'s bits.
   */
  quantize?(x: Float32Array): Float32Array;
  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number): Float32Array;
  causalSoftmax(s: Float32Array, T: number, count: number): Float32Array;
  causalSoftmaxBack(p: Float32Array, dp: Float32Array, T: number, count: number): Float32Array;
  layerNorm(x: Float32Array, g: Float32Array, b: Float32Array, rows: number, d: number): { y: Float32Array; xhat: Float32Array; rstd: Float32Array };
  layerNormBack(dy: Float32Array, xhat: Float32Array, rstd: Float32Array, g: Float32Array, rows: number, d: number): { dx: Float32Array; dg: Float32Array; db: Float32Array };
}

export const jsTransformerKernels: TransformerKernels = {
  name: "js",
  matmul: matmul32Ref,
  causalSoftmax: causalSoftmaxRef,
  causalSoftmaxBack: causalSoftmaxBackRef,
  layerNorm: layerNormRef,
  layerNormBack: layerNormBackRef,
};

/** Computes (or, for the witness check, fetches) the `count` products named `name` (models/types.ts). */
export type { ProductOracle };

export type TransformerDims = { B: number; T: number; d: number; H: number; F: number; V: number; L: number };

export type TransformerPass = {
  loss: number;
  /** Positions whose argmax logit is the target. */
  correct: number;
  logits: Float32Array;
  /** Per-position loss (only with `rowLosses`). */
  rowLoss?: Float32Array;
  grads?: Float32Array[];
};

/**
 * The loss on the logits [rows, V] and its gradient dz: the mean cross-entropy against the next tokens
 * (softmaxXentRef) unless a job kind gives its own (distillation's soft-target loss, ml/distill/loss.ts).
 * INVARIANT: plain float32 JS (each op rounded once), so every kernel set shares its bits.
 */
export type LossHead = (logits: Float32Array, targets: Uint8Array, rows: number, V: number, rowLoss?: Float32Array) => { loss: number; dz: Float32Array; correct: number };

/**
 * Oracles whose products quantize their own operands (the kernels' own matmul): `transformerPass` hands them the raw
 * operands. INVARIANT (TransformerKernels.quantize): `matmul(quantize(a), quantize(b))` has `matmul(a, b)`'s bits, so
 * skipping the pass's copy changes no bit; it was ~45% of a GPT-class bitwise-v3 step (a JS pass over every operand
 * that the wasm matmul's packing repeats).
 */
const SELF_QUANTIZING = new WeakSet<ProductOracle>();

/**
 * The kernels' own products, recording each (transposes materialised) into `record` when given. A recorded product
 * holds the operands the matmul multiplies (`k.quantize` of them, when the kernels quantize), so a Freivalds claim
 * is C = Q(A) . Q(B), as the verifier's pass (which quantizes before its oracle) checks it.
 */
export function kernelOracle(k: TransformerKernels, record?: StepWitness["products"][number][]): ProductOracle {
  const quantize = record && k.quantize ? k.quantize.bind(k) : undefined;
  const oracle: ProductOracle = (name, a, b, M, K, N, layout, count) => {
    if (quantize) {
      a = quantize(a);
      b = quantize(b);
    }
    const c = k.matmul(a, b, M, K, N, layout, count);
    if (record) {
      for (let q = 0; q < count; q++) {
        const aq = a.subarray(q * M * K, (q + 1) * M * K), bq = b.subarray(q * K * N, (q + 1) * K * N);
        const w = (shape: number[], data: Float32Array): WitnessTensor => ({ shape, data: Float32Array.from(data) });
        record.push({
          name: count === 1 ? name : `${name}.${q}`,
          a: w([M, K], layout === "tn" ? transpose2(aq, K, M) : aq),
          b: w([K, N], layout === "nt" ? transpose2(bq, N, K) : bq),
          c: w([M, N], c.subarray(q * M * N, (q + 1) * M * N)),
        });
      }
    }
    return c;
  };
  SELF_QUANTIZING.add(oracle);
  return oracle;
}

function transpose2(x: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = x[i * cols + j]!;
  return out;
}

/** [B*T, d] -> [B*H, T, dh] (a copy). */
function splitHeads(x: Float32Array, B: number, T: number, H: number, dh: number): Float32Array {
  const out = scratchF32(x.length);
  const d = H * dh;
  // plain loops, not subarray + set: one typed-array view per (b, h, t) cost more than the copy at dh = 64
  for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) {
    const from = (b * T + t) * d + h * dh, to = ((b * H + h) * T + t) * dh;
    for (let j = 0; j < dh; j++) out[to + j] = x[from + j]!;
  }
  return out;
}

function mergeHeads(x: Float32Array, B: number, T: number, H: number, dh: number): Float32Array {
  const out = scratchF32(x.length);
  const d = H * dh;
  for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) {
    const from = ((b * H + h) * T + t) * dh, to = (b * T + t) * d + h * dh;
    for (let j = 0; j < dh; j++) out[to + j] = x[from + j]!;
  }
  return out;
}

function add(a: Float32Array, b: Float32Array): Float32Array {
  const out = scratchF32(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! + b[i]!;
  return out;
}

function addBias(x: Float32Array, bias: Float32Array, rows: number, cols: number): Float32Array {
  const out = scratchF32(x.length);
  for (let r = 0; r < rows; r++) for (let j = 0; j < cols; j++) out[r * cols + j] = x[r * cols + j]! + bias[j]!;
  return out;
}

/** Column folds over rows ascending from +0. */
function colSum(x: Float32Array, rows: number, cols: number): Float32Array {
  const out = scratchF32(cols).fill(0);
  for (let r = 0; r < rows; r++) for (let j = 0; j < cols; j++) out[j] = out[j]! + x[r * cols + j]!;
  return out;
}

function scaleBy(x: Float32Array, s: number): Float32Array {
  const out = scratchF32(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]! * s;
  return out;
}

/** 1/sqrt(dh) in float32: f(1 / f(sqrt(dh))). */
export function attentionScale(dh: number): number {
  return f(1 / f(Math.sqrt(dh)));
}

/**
 * One forward (and, with `grads`, backward) pass over a token batch of B windows of T+1 ids.
 * `params` in models/transformer.ts's order. Returns gradients in the same order.
 */
export function transformerPass(
  k: TransformerKernels, oracle: ProductOracle, params: readonly Float32Array[], tokens: Uint8Array, dims: TransformerDims,
  options: { grads?: boolean; rowLosses?: boolean; head?: LossHead; gradsInto?: Float32Array[] } = {},
): TransformerPass {
  // every temporary lives in pass-scoped scratch memory (scratch.ts); what the pass returns is copied out of it, the
  // gradients into `gradsInto` when given (arrays the caller reuses: no fresh 4-bytes-per-parameter set per step)
  const into = options.gradsInto;
  if (into && (into.length !== params.length || into.some((g, i) => g.length !== params[i]!.length))) {
    throw new RangeError(`transformerPass: gradsInto has ${into.length} arrays of sizes ${into.map((g) => g.length).join(",")}, the parameters ${params.map((p) => p.length).join(",")}`);
  }
  return withScratch(() => {
    const r = passInScratch(k, oracle, params, tokens, dims, options);
    r.logits = r.logits.slice();
    if (r.grads) r.grads = r.grads.map((g, i) => (into ? (into[i]!.set(g), into[i]!) : g.slice()));
    return r;
  });
}

function passInScratch(
  k: TransformerKernels, oracle: ProductOracle, params: readonly Float32Array[], tokens: Uint8Array, dims: TransformerDims,
  options: { grads?: boolean; rowLosses?: boolean; head?: LossHead },
): TransformerPass {
  const quantize = SELF_QUANTIZING.has(oracle) ? undefined : k.quantize?.bind(k);
  const mm: ProductOracle = quantize ? (name, a, b, M, K, N, layout, count) => oracle(name, quantize(a), quantize(b), M, K, N, layout, count) : oracle;
  const { B, T, d, H, F, V, L } = dims;
  const dh = d / H;
  const BT = B * T;
  const BH = B * H;
  const scale = attentionScale(dh);
  if (tokens.length !== B * (T + 1)) throw new RangeError(`transformer: ${tokens.length} tokens, ${B} windows of ${T + 1} need ${B * (T + 1)}`);
  const inputs = new Uint8Array(BT);
  const targets = new Uint8Array(BT);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) {
    inputs[b * T + t] = tokens[b * (T + 1) + t]!;
    targets[b * T + t] = tokens[b * (T + 1) + t + 1]!;
  }
  const tokEmb = params[0]!, posEmb = params[1]!;
  let x: Float32Array = scratchF32(BT * d);
  for (let r = 0; r < BT; r++) {
    const tok = inputs[r]!, t = r % T;
    if (tok >= V) throw new RangeError(`transformer: token id ${tok} is outside the vocabulary of ${V}`);
    for (let j = 0; j < d; j++) x[r * d + j] = tokEmb[tok * d + j]! + posEmb[t * d + j]!;
  }
  type Saved = {
    x: Float32Array; ln1: ReturnType<TransformerKernels["layerNorm"]>; qh: Float32Array; kh: Float32Array; vh: Float32Array; p: Float32Array; o: Float32Array;
    x1: Float32Array; ln2: ReturnType<TransformerKernels["layerNorm"]>; u: Float32Array; a: Float32Array;
  };
  const saved: Saved[] = [];
  const P = (l: number, i: number) => params[2 + 12 * l + i]!;
  for (let l = 0; l < L; l++) {
    const ln1 = k.layerNorm(x, P(l, 0), P(l, 1), BT, d);
    const q = mm(`l${l}.q`, ln1.y, P(l, 2), BT, d, d, "nn", 1);
    const kk = mm(`l${l}.k`, ln1.y, P(l, 3), BT, d, d, "nn", 1);
    const v = mm(`l${l}.v`, ln1.y, P(l, 4), BT, d, d, "nn", 1);
    const qh = splitHeads(q, B, T, H, dh), kh = splitHeads(kk, B, T, H, dh), vh = splitHeads(v, B, T, H, dh);
    const s = scaleBy(mm(`l${l}.scores`, qh, kh, T, dh, T, "nt", BH), scale);
    const p = k.causalSoftmax(s, T, BH);
    const o = mergeHeads(mm(`l${l}.pv`, p, vh, T, T, dh, "nn", BH), B, T, H, dh);
    const x1 = add(x, mm(`l${l}.o`, o, P(l, 5), BT, d, d, "nn", 1));
    const ln2 = k.layerNorm(x1, P(l, 6), P(l, 7), BT, d);
    const u = addBias(mm(`l${l}.ff1`, ln2.y, P(l, 8), BT, d, F, "nn", 1), P(l, 9), BT, F);
    const a = scratchF32(u.length);
    for (let i = 0; i < u.length; i++) a[i] = u[i]! > 0 ? u[i]! : 0;
    const x2 = add(x1, addBias(mm(`l${l}.ff2`, a, P(l, 10), BT, F, d, "nn", 1), P(l, 11), BT, d));
    saved.push({ x, ln1, qh, kh, vh, p, o, x1, ln2, u, a });
    x = x2;
  }
  const base = 2 + 12 * L;
  const lnf = k.layerNorm(x, params[base]!, params[base + 1]!, BT, d);
  const logits = addBias(mm("head", lnf.y, params[base + 2]!, BT, d, V, "nn", 1), params[base + 3]!, BT, V);
  const rowLoss = options.rowLosses ? new Float32Array(BT) : undefined;
  const xent = (options.head ?? softmaxXentRef)(logits, targets, BT, V, rowLoss);
  const result: TransformerPass = { loss: xent.loss, correct: xent.correct, logits };
  if (rowLoss) result.rowLoss = rowLoss;
  if (!options.grads) return result;

  // every gradient is assigned below; the embeddings' two are folds into zeroed arrays
  const grads: Float32Array[] = params.map(() => new Float32Array(0));
  grads[0] = scratchF32(params[0]!.length).fill(0);
  grads[1] = scratchF32(params[1]!.length).fill(0);
  const dz = xent.dz;
  grads[base + 2] = mm("head.dW", lnf.y, dz, d, BT, V, "tn", 1);
  grads[base + 3] = colSum(dz, BT, V);
  const lnfBack = k.layerNormBack(mm("head.dX", dz, params[base + 2]!, BT, V, d, "nt", 1), lnf.xhat, lnf.rstd, params[base]!, BT, d);
  grads[base] = lnfBack.dg;
  grads[base + 1] = lnfBack.db;
  let dx = lnfBack.dx;
  const G = (l: number, i: number, g: Float32Array) => { grads[2 + 12 * l + i] = g; };
  for (let l = L - 1; l >= 0; l--) {
    const s = saved[l]!;
    // x2 = x1 + (a.W2 + b2)
    G(l, 11, colSum(dx, BT, d));
    G(l, 10, mm(`l${l}.ff2.dW`, s.a, dx, F, BT, d, "tn", 1));
    const da = mm(`l${l}.ff2.dX`, dx, P(l, 10), BT, d, F, "nt", 1);
    const du = scratchF32(da.length);
    for (let i = 0; i < da.length; i++) du[i] = s.u[i]! > 0 ? da[i]! : 0;
    G(l, 9, colSum(du, BT, F));
    G(l, 8, mm(`l${l}.ff1.dW`, s.ln2.y, du, d, BT, F, "tn", 1));
    const ln2Back = k.layerNormBack(mm(`l${l}.ff1.dX`, du, P(l, 8), BT, F, d, "nt", 1), s.ln2.xhat, s.ln2.rstd, P(l, 6), BT, d);
    G(l, 6, ln2Back.dg);
    G(l, 7, ln2Back.db);
    const dx1 = add(dx, ln2Back.dx);
    // x1 = x + O.Wo
    G(l, 5, mm(`l${l}.o.dW`, s.o, dx1, d, BT, d, "tn", 1));
    const doh = splitHeads(mm(`l${l}.o.dX`, dx1, P(l, 5), BT, d, d, "nt", 1), B, T, H, dh);
    const dp = mm(`l${l}.pv.dA`, doh, s.vh, T, dh, T, "nt", BH);
    const dvh = mm(`l${l}.pv.dB`, s.p, doh, T, T, dh, "tn", BH);
    const dsRaw = scaleBy(k.causalSoftmaxBack(s.p, dp, T, BH), scale);
    const dq = mergeHeads(mm(`l${l}.scores.dA`, dsRaw, s.kh, T, T, dh, "nn", BH), B, T, H, dh);
    const dk = mergeHeads(mm(`l${l}.scores.dB`, dsRaw, s.qh, T, T, dh, "tn", BH), B, T, H, dh);
    const dv = mergeHeads(dvh, B, T, H, dh);
    G(l, 2, mm(`l${l}.q.dW`, s.ln1.y, dq, d, BT, d, "tn", 1));
    G(l, 3, mm(`l${l}.k.dW`, s.ln1.y, dk, d, BT, d, "tn", 1));
    G(l, 4, mm(`l${l}.v.dW`, s.ln1.y, dv, d, BT, d, "tn", 1));
    const dy1 = add(add(mm(`l${l}.q.dX`, dq, P(l, 2), BT, d, d, "nt", 1), mm(`l${l}.k.dX`, dk, P(l, 3), BT, d, d, "nt", 1)), mm(`l${l}.v.dX`, dv, P(l, 4), BT, d, d, "nt", 1));
    const ln1Back = k.layerNormBack(dy1, s.ln1.xhat, s.ln1.rstd, P(l, 0), BT, d);
    G(l, 0, ln1Back.dg);
    G(l, 1, ln1Back.db);
    dx = add(dx1, ln1Back.dx);
  }
  // embeddings: folds over positions r = b*T + t ascending
  const dTok = grads[0]!, dPos = grads[1]!;
  for (let r = 0; r < BT; r++) {
    const tok = inputs[r]!, t = r % T;
    for (let j = 0; j < d; j++) {
      dTok[tok * d + j] = dTok[tok * d + j]! + dx[r * d + j]!;
      dPos[t * d + j] = dPos[t * d + j]! + dx[r * d + j]!;
    }
  }
  result.grads = grads;
  return result;
}
