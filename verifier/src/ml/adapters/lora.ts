/**
 * LoRA on a frozen char-transformer base (numerics bitwise-v2, the pouw kernels): the trained state is the adapter
 * (A, B per adapted matrix, adapters/layout.ts) and its optimizer state; the base's weights live in the model, fetched
 * once by CID and never updated.
 *
 * The step (one function for trainer and auditor, Run.step):
 *   1. merge: W' = W + s * (A . B) for every adapted matrix (mergeAdapter below; `pouw adapter merge` writes exactly
 *      these weights, so the merged model IS the model the adapter was trained and evaluated as);
 *   2. the char-transformer's own bitwise-v2 pass (kernels/transformer.ts transformerPass) on the merged weights,
 *      giving the loss and dL/dW' of every matrix;
 *   3. the chain rule through the merge: dA = s * (dW' . B^T), dB = s * (A^T . dW'), each product one kernel matmul
 *      (a sequential float32 sum, kernels/transformer-ref.ts matmul32Ref defines its bits), then one float32 multiply.
 * INVARIANT: every operation above is a kernel of the bitwise-v2 set or one float32 rounding, so the step is a pure
 * function of (adapter state, base, batch), bit for bit on every machine that runs bitwise-v2.
 * NOTE: step 2 computes the frozen weights' gradients too and drops them: the backward pass needs dL/dx through every
 * layer anyway, and the weight gradients of the frozen matrices are one product each (measured in docs/data.md).
 */
import { InputError } from "../../errors/index.ts";
import { Rng } from "../prng.ts";
import { kernelOracle, transformerPass, type TransformerKernels } from "../kernels/transformer.ts";
import { CharTransformer, type TransformerShape } from "../models/transformer.ts";
import type { Batch, Dataset, Evaluation, ExampleOutputs, LossAndGrads, Model } from "../models/types.ts";
import type { TensorSpec } from "../tensors.ts";
import { adaptedMatrices, adapterParamSpecs, adapterScale, LORA_MODEL, type AdaptedMatrix, type AdapterSpec } from "./layout.ts";

type MatMul = TransformerKernels["matmul"];

/** Each element times s, rounded to float32 once. */
function scaled(x: Float32Array, s: number): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = Math.fround(x[i]! * s);
  return out;
}

/**
 * The merged weights: the base's parameters with every adapted matrix W replaced by W' = float32(W + float32(s * D)),
 * D = A . B by `matmul` (layout nn). Untargeted tensors are the base's own arrays (never written).
 */
export function mergeAdapter(matmul: MatMul, shape: TransformerShape, adapter: AdapterSpec, base: readonly Float32Array[], params: readonly Float32Array[]): Float32Array[] {
  const s = adapterScale(adapter);
  const merged = [...base];
  for (const m of adaptedMatrices(shape, adapter)) {
    const i = baseIndex(m);
    const w = base[i]!;
    const delta = matmul(params[m.a]!, params[m.b]!, m.din, adapter.rank, m.dout, "nn", 1);
    const out = new Float32Array(w.length);
    for (let j = 0; j < w.length; j++) out[j] = Math.fround(w[j]! + Math.fround(s * delta[j]!));
    merged[i] = out;
  }
  return merged;
}

/** Index of an adapted matrix in transformerParamSpecs: 2 embeddings, then 12 tensors per layer (wq at +2 .. w2 at +10). */
function baseIndex(m: AdaptedMatrix): number {
  const offset = { wq: 2, wk: 3, wv: 4, wo: 5, w1: 8, w2: 10 }[m.target];
  return 2 + 12 * m.layer + offset;
}

export class LoraTransformer implements Model {
  readonly arch = LORA_MODEL;
  readonly paramSpecs: readonly TensorSpec[];
  readonly witnessed = false;
  readonly witnessRequirement = "has no step witness: an adapter job (LoRA) is audited by recomputing its steps";
  readonly finalEvaluationLimit: number;
  readonly adapter: AdapterSpec;
  /** The frozen base (transformerParamSpecs order). */
  readonly base: readonly Float32Array[];
  /** The char-transformer the merged weights run in. */
  readonly inner: CharTransformer;
  private readonly kernels: TransformerKernels;
  private readonly matrices: AdaptedMatrix[];

  constructor(shape: TransformerShape, kernels: TransformerKernels, adapter: AdapterSpec, base: readonly Float32Array[]) {
    this.inner = new CharTransformer(shape, kernels);
    this.kernels = kernels;
    this.adapter = adapter;
    this.base = base;
    this.paramSpecs = adapterParamSpecs(shape, adapter);
    this.matrices = adaptedMatrices(shape, adapter);
    this.finalEvaluationLimit = this.inner.finalEvaluationLimit;
    if (base.length !== this.inner.paramSpecs.length) throw new InputError(`base has ${base.length} tensors, the char-transformer needs ${this.inner.paramSpecs.length}`);
  }

  /**
   * A uniform in +-1/sqrt(din) (the fan-in bound of PyTorch's LoRA default) from (seed, "lora-A", index); B all zero,
   * so h(0)'s merged weights are the base's and the first step moves only B.
   */
  init(seed: number): Float32Array[] {
    return this.matrices.flatMap((m) => [new Rng(seed, "lora-A", m.a).uniform(m.din * this.adapter.rank, 1 / Math.sqrt(m.din)), new Float32Array(this.adapter.rank * m.dout)]);
  }

  /** The merged weights of an adapter state (what the step's pass and `pouw adapter merge` use). */
  merged(params: readonly Float32Array[]): Float32Array[] {
    const k = this.kernels;
    return mergeAdapter((a, b, M, K, N, layout, count) => k.matmul(a, b, M, K, N, layout, count), this.inner.cfg, this.adapter, this.base, params);
  }

  lossAndGrads(params: readonly Float32Array[], batch: Batch, options: { witness?: boolean } = {}): LossAndGrads {
    if (options.witness) throw new InputError(`${this.arch} ${this.witnessRequirement}`);
    if (batch.kind !== "tokens") throw new TypeError("char-transformer needs a token batch");
    const r = transformerPass(this.kernels, kernelOracle(this.kernels), this.merged(params), batch.tokens, this.inner.dimsFor(batch.size), { grads: true });
    const s = adapterScale(this.adapter);
    const rank = this.adapter.rank;
    const grads: Float32Array[] = [];
    for (const m of this.matrices) {
      const gW = r.grads![baseIndex(m)]!;
      // dA [din, r] = s * (dW' [din, dout] . B^T), B stored [r, dout] (layout nt)
      grads.push(scaled(this.kernels.matmul(gW, params[m.b]!, m.din, m.dout, rank, "nt", 1), s));
      // dB [r, dout] = s * (A^T . dW'), A stored [din, r] (layout tn)
      grads.push(scaled(this.kernels.matmul(params[m.a]!, gW, rank, m.din, m.dout, "tn", 1), s));
    }
    return { loss: r.loss, grads };
  }

  evaluate(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation {
    return this.inner.evaluate(this.merged(params), batches);
  }

  outputs(params: readonly Float32Array[], batch: Batch): ExampleOutputs {
    return this.inner.outputs(this.merged(params), batch);
  }

  heldOutBatch(data: Dataset, auditorSeed: number, examples: number): Batch {
    return this.inner.heldOutBatch(data, auditorSeed, examples);
  }

  /** The base model's pass plus the merge and the two adapter products per adapted matrix (2 flops per multiply-add). */
  flopsPerStep(batchSize: number): number {
    const perAdapter = this.matrices.reduce((a, m) => a + 3 * 2 * m.din * m.dout * this.adapter.rank, 0);
    return this.inner.flopsPerStep(batchSize) + perAdapter;
  }
}
