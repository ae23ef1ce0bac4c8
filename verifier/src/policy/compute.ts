/**
 * The job's compute, from the manifest alone: nominal FLOPs per training step of each model class and of the whole
 * job, and what they cost at a price per TFLOP. Pure (no data, no engine), so the quote, `buyer create` and the dApp
 * size the same compute cost C. The per-step formulas are the models' own `flopsPerStep` (ml/models/*.ts), written
 * here over the manifest's model config; test/policy/compute.test.ts checks each against the model class.
 */
import type { Manifest, ModelConfig } from "../ml/manifest.ts";
import { PolicyParamError } from "./params.ts";

/** Pixels and classes of the MNIST corpus (ml/data/mnist.ts: MNIST_PIXELS, MNIST_CLASSES). */
const MNIST_INPUTS = 784;
const MNIST_CLASSES = 10;
/** Symbols of the npm text corpus (ml/data/sotu.ts: VOCAB_SIZE), the char-transformer's vocabulary without model.vocab. */
const SOTU_VOCAB = 96;
/** The circuit's tile (models/linear-tile.ts: IN, OUT). */
const TILE_IN = 8;
const TILE_OUT = 4;

/**
 * Default compute price: 0.01 tokens per TFLOP (10^12 nominal FLOPs). It assumes 1 token is about 1 US dollar and a
 * CPU core at about $0.20 an hour (on-demand; spot is about a quarter of that), running the pouw engine at the
 * measured 6.1 GFLOP/s of a 784-128-10 step at batch 128 (12.7 ms, docs/checks.md): 1 TFLOP is 163 core-seconds,
 * $0.009. docs/economics.md. The buyer sets its own with `--compute-price`.
 */
export const DEFAULT_COMPUTE_PRICE = 0.01;

/** FLOPs in one TFLOP, the unit of a compute price. */
export const FLOPS_PER_TFLOP = 1e12;

/**
 * Multiply-adds x2 of one forward + backward pass of `model` over `batchSize` examples (nominal FLOPs, what the
 * model's `flopsPerStep` returns): an MLP 6*B*(in*hidden + hidden*out), a char-transformer
 * 6*B*T*(L*(4d^2 + 2dF + 2Td) + d*V), the linear tile 4*B*IN*OUT.
 */
export function flopsPerStepOf(model: ModelConfig, batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new PolicyParamError(`batchSize must be a positive integer, got ${batchSize}`);
  switch (model.arch) {
    case "mnist-mlp":
      return 6 * batchSize * (MNIST_INPUTS * model.hidden + model.hidden * MNIST_CLASSES);
    case "tabular-mlp": {
      // a regression head has one output; a classifier one per class
      const outputs = (model as { task?: string }).task === "regression" ? 1 : (model.classes ?? 1);
      return 6 * batchSize * (model.inputs * model.hidden + model.hidden * outputs);
    }
    case "char-transformer": {
      const d = model.dModel;
      const F = model.ffHidden ?? 4 * d;
      const T = model.context;
      const V = (model as { vocab?: number }).vocab ?? SOTU_VOCAB;
      return 6 * batchSize * T * (model.layers * (4 * d * d + 2 * d * F + 2 * T * d) + d * V);
    }
    case "linear-tile":
      return 4 * batchSize * TILE_IN * TILE_OUT;
  }
}

/**
 * Nominal FLOPs of the teacher's forward pass in one distillation step: a third of flopsPerStepOf(teacher, batchSize)
 * (forward 2x multiply-adds, forward + backward 6x): the teacher is frozen, so the step runs its forward pass only.
 */
export function teacherFlopsPerStepOf(teacher: ModelConfig, batchSize: number): number {
  return flopsPerStepOf(teacher, batchSize) / 3;
}

/**
 * Nominal FLOPs of the honest job: training.steps x flopsPerStepOf(model, training.batchSize), plus, for a
 * distillation job, the teacher's forward pass on every step's batch (teacherFlopsPerStepOf): part of the
 * deterministic step, so of the honest provider's cost and of what skip-teacher saves.
 */
export function jobFlopsOf(manifest: Pick<Manifest, "model" | "training"> & { distill?: Manifest["distill"] }): number {
  const { steps, batchSize } = manifest.training;
  const teacher = manifest.distill === undefined ? 0 : teacherFlopsPerStepOf(manifest.distill.teacher.arch as ModelConfig, batchSize);
  return steps * (flopsPerStepOf(manifest.model, batchSize) + teacher);
}

/** What `flops` nominal FLOPs cost at `pricePerTflop` tokens per TFLOP (tokens). */
export function computeCostOf(flops: number, pricePerTflop: number): number {
  return (flops / FLOPS_PER_TFLOP) * pricePerTflop;
}

/**
 * What `flops` nominal FLOPs are worth at `pricePerTflop`, in wei (18 decimals), rounded up to a whole wei: the least
 * payment that covers an honest provider's compute at that price. A payment below it is underpriced (an honest
 * provider trains at a loss); `--pay compute` pays exactly it, so the payment, C and the stake all follow the model's size.
 */
export function computeWorthWei(flops: number, pricePerTflop: number): bigint {
  if (!(Number.isFinite(flops) && flops > 0)) throw new PolicyParamError(`flops must be a positive finite number, got ${flops}`);
  if (!(Number.isFinite(pricePerTflop) && pricePerTflop >= 0)) throw new PolicyParamError(`computePrice must be a finite number >= 0, got ${pricePerTflop}`);
  return BigInt(Math.ceil(computeCostOf(flops, pricePerTflop) * 1e18));
}
