/**
 * char-transformer: decoder-only character transformer (pre-LayerNorm blocks, learned positional
 * embeddings, ReLU feed-forward, untied output head). Numerics "bitwise": gradients by tf.valueAndGrads
 * on the CPU backend (deterministic kernels: see docs/determinism.md). Numerics "bitwise-v2" (engine
 * pouw, constructed with `kernels`): the explicit forward and backward pass of kernels/transformer.ts
 * on our own kernels (transformer-ref.ts defines the bits), with a step witness for Freivalds.
 *
 * Parameter order: tokEmb [V,d], posEmb [T,d], then per layer l: ln1.g, ln1.b [d], wq, wk, wv, wo
 * [d,d], ln2.g, ln2.b [d], w1 [d,F], b1 [F], w2 [F,d], b2 [d]; then lnf.g, lnf.b [d], head [d,V],
 * headB [V].
 */
import { scoped, tf } from "../backend.ts";
import { Rng } from "../prng.ts";
import { VOCAB_SIZE } from "../data/sotu.ts";
import { transformerParamSpecs, type TransformerShape } from "../state-layout.ts";
import { sizeOf, type TensorSpec } from "../tensors.ts";
import { kernelOracle, transformerPass, type TransformerDims, type TransformerKernels } from "../kernels/transformer.ts";
import { heldOutWindows } from "./held-out.ts";
import type { Batch, Dataset, Evaluation, ExampleOutputs, LossAndGrads, MatMulWitness, Model, ProductOracle } from "./types.ts";

export type { TransformerShape };

const LN_EPSILON = 1e-5;

export class CharTransformer implements Model {
  readonly arch = "char-transformer";
  readonly cfg: TransformerShape;
  readonly paramSpecs: readonly TensorSpec[];
  /** Vocabulary size V: the SOTU corpus's 96 symbols, or a text data set's own byte vocabulary (data/text.ts). */
  readonly vocab: number;
  /** The bitwise-v2 kernels (engine pouw); undefined: the tfjs-cpu path of numerics "bitwise". */
  readonly kernels: TransformerKernels | undefined;

  constructor(cfg: TransformerShape, kernels?: TransformerKernels) {
    this.cfg = cfg;
    this.kernels = kernels;
    this.vocab = cfg.vocab ?? VOCAB_SIZE;
    this.paramSpecs = transformerParamSpecs(cfg);
  }

  /** Embeddings uniform with std 0.02; matrices Glorot-uniform; LayerNorm gains 1; biases 0. */
  init(seed: number): Float32Array[] {
    return this.paramSpecs.map((spec, i) => {
      const n = sizeOf(spec.shape);
      if (spec.name.endsWith(".g")) return new Float32Array(n).fill(1);
      if (spec.shape.length === 1) return new Float32Array(n);
      const rng = new Rng(seed, "init", i);
      if (spec.name === "tokEmb" || spec.name === "posEmb") return rng.uniform(n, 0.02 * Math.sqrt(3));
      const [fanIn, fanOut] = spec.shape as [number, number];
      return rng.uniform(n, Math.sqrt(6 / (fanIn + fanOut)));
    });
  }

  /** Mean next-character cross-entropy over all B*T positions (scalar tensor). */
  private lossOf(p: tf.Tensor[], batch: Batch): { loss: tf.Scalar; logits: tf.Tensor2D; targets: tf.Tensor1D } {
    if (batch.kind !== "tokens") throw new TypeError("char-transformer needs a token batch");
    const { layers, dModel: d, heads: H, context: T, ffHidden: F } = this.cfg;
    const B = batch.size;
    const dh = d / H;
    const all = tf.tensor2d(Int32Array.from(batch.tokens), [B, T + 1], "int32");
    const inputs = tf.slice(all, [0, 0], [B, T]);
    const targets = tf.reshape(tf.slice(all, [0, 1], [B, T]), [B * T]) as tf.Tensor1D;
    const layerNorm = (x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor): tf.Tensor2D => {
      const { mean, variance } = tf.moments(x, 1, true);
      return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, LN_EPSILON))), g), b) as tf.Tensor2D;
    };
    // additive causal mask: 0 on and below the diagonal, -1e9 above
    const maskData = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) maskData[i * T + j] = -1e9;
    const mask = tf.tensor2d(maskData, [T, T]);
    const scale = tf.scalar(1 / Math.sqrt(dh));

    // NOTE: the embedding lookup is a one-hot matMul, not tf.gather: gather's gradient on the CPU
    // backend (unsortedSegmentSum) is ~100x slower; both are exact (one product term per sum).
    const oneHotInputs = tf.cast(tf.oneHot(tf.reshape(inputs, [B * T]) as tf.Tensor1D, this.vocab), "float32") as tf.Tensor2D;
    const embedded = tf.matMul(oneHotInputs, p[0]! as tf.Tensor2D);
    let x = tf.reshape(tf.add(tf.reshape(embedded, [B, T, d]), p[1]!), [B * T, d]) as tf.Tensor2D;
    let k = 2;
    const heads = (t: tf.Tensor2D) => tf.reshape(tf.transpose(tf.reshape(t, [B, T, H, dh]), [0, 2, 1, 3]), [B * H, T, dh]) as tf.Tensor3D;
    for (let l = 0; l < layers; l++) {
      const [g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2] = p.slice(k, k + 12) as tf.Tensor2D[];
      k += 12;
      const h = layerNorm(x, g1!, be1!);
      const q = heads(tf.matMul(h, wq!));
      const kk = heads(tf.matMul(h, wk!));
      const v = heads(tf.matMul(h, wv!));
      const att = tf.softmax(tf.add(tf.mul(tf.matMul(q, kk, false, true), scale), mask));
      const o = tf.reshape(tf.transpose(tf.reshape(tf.matMul(att, v), [B, H, T, dh]), [0, 2, 1, 3]), [B * T, d]) as tf.Tensor2D;
      x = tf.add(x, tf.matMul(o, wo!)) as tf.Tensor2D;
      const h2 = layerNorm(x, g2!, be2!);
      const ff = tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(h2, w1!), b1!)) as tf.Tensor2D, w2!), b2!);
      x = tf.add(x, ff) as tf.Tensor2D;
    }
    void F;
    const hf = layerNorm(x, p[k]!, p[k + 1]!);
    const logits = tf.add(tf.matMul(hf, p[k + 2]! as tf.Tensor2D), p[k + 3]!) as tf.Tensor2D;
    const logp = tf.logSoftmax(logits);
    const loss = tf.neg(tf.mean(tf.sum(tf.mul(tf.cast(tf.oneHot(targets, this.vocab), "float32"), logp), 1))) as tf.Scalar;
    return { loss, logits, targets };
  }

  private tensorsOf(params: readonly Float32Array[]): tf.Tensor[] {
    return this.paramSpecs.map((s, i) => tf.tensor(params[i]!, [...s.shape], "float32"));
  }

  get witnessed(): boolean {
    return this.kernels !== undefined;
  }

  get witnessRequirement(): string | undefined {
    return this.kernels ? undefined : "needs numerics bitwise-v2 (the explicit backward pass)";
  }

  /**
   * The verifier's pass of one step: the SAME pass as the trainer (kernels/transformer.ts `transformerPass`) with
   * `oracle` in place of the product kernel, so every activation and gradient comes from the elementwise kernels
   * applied to the oracle's (claimed) outputs. Only under bitwise-v2 (`witnessed`).
   */
  witnessPass(params: readonly Float32Array[], batch: Batch, oracle: ProductOracle): { grads: Float32Array[] } {
    if (!this.kernels) throw new TypeError(`char-transformer ${this.witnessRequirement}`);
    return { grads: transformerPass(this.kernels, oracle, params, this.tokenBatch(batch), this.dimsFor(batch.size), { grads: true }).grads! };
  }

  /** Seeded windows of the held-out tail (models/held-out.ts). */
  heldOutBatch(data: Dataset, auditorSeed: number, examples: number): Batch {
    return heldOutWindows(data, auditorSeed, examples, this.cfg.context);
  }

  /**
   * The final evaluation reads the first 128 held-out windows (128 x context characters), a few steps' cost; the
   * whole held-out tail of examples/sotu.json took 3 minutes.
   */
  readonly finalEvaluationLimit = 128;

  /** The kernel pass's dimensions for a batch of B windows. */
  dimsFor(B: number): TransformerDims {
    const { layers, dModel, heads, context, ffHidden } = this.cfg;
    return { B, T: context, d: dModel, H: heads, F: ffHidden, V: this.vocab, L: layers };
  }

  private tokenBatch(batch: Batch): Uint8Array {
    if (batch.kind !== "tokens") throw new TypeError("char-transformer needs a token batch");
    return batch.tokens;
  }

  /** The kernel pass copies its gradients out of scratch memory: into the caller's arrays when given. */
  get takesGradsInto(): boolean {
    return this.kernels !== undefined;
  }

  lossAndGrads(params: readonly Float32Array[], batch: Batch, options: { witness?: boolean; gradsInto?: Float32Array[] } = {}): LossAndGrads {
    if (this.kernels) {
      const products: MatMulWitness[] | undefined = options.witness ? [] : undefined;
      const r = transformerPass(this.kernels, kernelOracle(this.kernels, products), params, this.tokenBatch(batch), this.dimsFor(batch.size), { grads: true, ...(options.gradsInto ? { gradsInto: options.gradsInto } : {}) });
      const out: LossAndGrads = { loss: r.loss, grads: r.grads! };
      if (products) out.witness = { model: this.arch, products, tensors: { loss: { shape: [], data: Float32Array.of(r.loss) } } };
      return out;
    }
    if (options.witness) throw new TypeError("char-transformer has a step witness only under numerics bitwise-v2 (engine pouw)");
    return scoped(() => {
      const ps = this.tensorsOf(params);
      const { value, grads } = tf.valueAndGrads((...args: tf.Tensor[]) => this.lossOf(args, batch).loss)(ps);
      return { loss: value.dataSync()[0]!, grads: grads.map((g) => Float32Array.from(g.dataSync())) };
    });
  }

  evaluate(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation {
    let lossSum = 0;
    let correct = 0;
    let n = 0;
    for (const batch of batches) {
      if (this.kernels) {
        const r = transformerPass(this.kernels, kernelOracle(this.kernels), params, this.tokenBatch(batch), this.dimsFor(batch.size));
        const count = batch.size * this.cfg.context;
        lossSum += r.loss * count;
        correct += r.correct;
        n += count;
        continue;
      }
      const [l, c, count] = scoped(() => {
        const { loss, logits, targets } = this.lossOf(this.tensorsOf(params), batch);
        const hits = tf.sum(tf.cast(tf.equal(tf.argMax(logits, 1), targets), "int32"));
        return [loss.dataSync()[0]! * targets.size, hits.dataSync()[0]!, targets.size];
      });
      lossSum += l;
      correct += c;
      n += count;
    }
    return { loss: lossSum / n, accuracy: correct / n, examples: n };
  }

  outputs(params: readonly Float32Array[], batch: Batch): ExampleOutputs {
    const T = this.cfg.context;
    if (this.kernels) {
      const r = transformerPass(this.kernels, kernelOracle(this.kernels), params, this.tokenBatch(batch), this.dimsFor(batch.size), { rowLosses: true });
      const losses = new Float32Array(batch.size);
      // per window: the fold of its T position losses, divided by T (float32)
      for (let b = 0; b < batch.size; b++) {
        let s = 0;
        for (let t = 0; t < T; t++) s = Math.fround(s + r.rowLoss![b * T + t]!);
        losses[b] = s / T;
      }
      return { logits: r.logits, losses, logitsPerExample: T * this.vocab };
    }
    return scoped(() => {
      const { logits, targets } = this.lossOf(this.tensorsOf(params), batch);
      const perPosition = tf.neg(tf.sum(tf.mul(tf.cast(tf.oneHot(targets, this.vocab), "float32"), tf.logSoftmax(logits)), 1));
      const losses = tf.mean(tf.reshape(perPosition, [batch.size, T]), 1);
      return { logits: Float32Array.from(logits.dataSync()), losses: Float32Array.from(losses.dataSync()), logitsPerExample: T * this.vocab };
    });
  }

  flopsPerStep(batchSize: number): number {
    const { layers, dModel: d, context: T, ffHidden: F } = this.cfg;
    const tokens = batchSize * T;
    const perTokenMacs = layers * (4 * d * d + 2 * d * F + 2 * T * d) + d * this.vocab;
    return 2 * 3 * tokens * perTokenMacs;
  }
}
