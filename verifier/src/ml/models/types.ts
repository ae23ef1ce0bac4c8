import type { LabelledImages } from "../data/mnist.ts";
import type { TensorSpec } from "../tensors.ts";

/** A run's data: MNIST images (train and test splits) or a text corpus's token ids (train and held-out tail). */
export type Dataset =
  | { kind: "images"; train: LabelledImages; test: LabelledImages; canonicalBytes: Uint8Array; /** pixels (features) per example when not MNIST's 784 (tabular data) */ width?: number }
  | { kind: "tokens"; train: Uint8Array; test: Uint8Array; canonicalBytes: Uint8Array };

/** One training batch. MNIST: images and labels. Text: `size` windows of context+1 token ids. */
export type Batch =
  | { readonly kind: "images"; readonly size: number; readonly x: Float32Array; readonly y: Uint8Array; /** [size, outputs] float32 targets (tabular-mlp regression; y is then all 0) */ readonly targets?: Float32Array }
  | { readonly kind: "tokens"; readonly size: number; readonly tokens: Uint8Array };

/** A float32 tensor of a step witness. */
export type WitnessTensor = { readonly shape: readonly number[]; readonly data: Float32Array };

/** One matrix product C = A . B of the step (A and B given materialised, transposes applied). */
export type MatMulWitness = { readonly name: string; readonly a: WitnessTensor; readonly b: WitnessTensor; readonly c: WitnessTensor };

/**
 * Everything a Freivalds verifier needs to check one step without recomputing its products:
 * every matrix product of the forward and backward pass (inputs and output as the engine computed
 * them) and the elementwise intermediates (see docs/engine.md for the exact relations).
 */
export type StepWitness = {
  readonly model: string;
  readonly products: readonly MatMulWitness[];
  readonly tensors: Readonly<Record<string, WitnessTensor>>;
};

/** How a product reads its operands: "nn" C = A.B; "tn" A stored transposed [K,M]; "nt" B stored transposed [N,K]. */
export type ProductLayout = "nn" | "tn" | "nt";

/**
 * Computes (the engine) or fetches (the witness check) the `count` products named `name`, each C [M,N] = op(A) . op(B)
 * with A and B as the caller computed them; the outputs stacked.
 */
export type ProductOracle = (name: string, a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: ProductLayout, count: number) => Float32Array;

/** A per-element gradient bound of one tensor in factored form: G[j] = row[floor(j / cols)] * col[j % cols]. */
export type FactoredBound = { row: ArrayLike<number>; col: ArrayLike<number>; cols: number };

/** A state at one end of a screened window and the largest per-coordinate weight drift from it to any state of the window. */
export type WindowEnd = { readonly params: readonly Float32Array[]; readonly drift: number };

/**
 * A model's analytic bound on every gradient it can produce on a run's data, as a function of the weights (the state
 * screen's check 4, checks/state-screen.ts). `perElement` bounds every tensor's gradient over a window whose end
 * states are `ends` (weight norms taken at the ends, widened by the drift and by `growth`), each bound scaled by
 * `slack` for the gradient's own float32 rounding.
 */
export type ModelGradientBound = {
  /** The model whose analysis gives the bound (reported in the screen's details). */
  readonly kind: string;
  perElement(ends: readonly WindowEnd[], growth: number, slack: number): FactoredBound[];
};

export type LossAndGrads = { loss: number; grads: Float32Array[]; witness?: StepWitness };

export type ExampleOutputs = { logits: Float32Array; losses: Float32Array; logitsPerExample: number };

export type Evaluation = { loss: number; accuracy?: number; examples: number };

export interface Model {
  readonly arch: string;
  readonly paramSpecs: readonly TensorSpec[];
  /** Whether lossAndGrads can return a step witness (mnist-mlp; char-transformer under bitwise-v2). */
  readonly witnessed: boolean;
  /** Fresh parameters from the init seed (own PRNG, never tf.random*). */
  init(seed: number): Float32Array[];
  /**
   * Mean loss over the batch and its gradient w.r.t. every parameter, in paramSpecs order. With `gradsInto` (only where
   * `takesGradsInto`) the gradients are written into those arrays (paramSpecs sizes) and returned, not fresh ones.
   */
  lossAndGrads(params: readonly Float32Array[], batch: Batch, options?: { witness?: boolean; gradsInto?: Float32Array[] }): LossAndGrads;
  /** Whether lossAndGrads honours `gradsInto` (Run.step then reuses one gradient set across steps). */
  readonly takesGradsInto?: boolean;
  /** Mean loss (and accuracy where meaningful) over examples, evaluated in chunks. */
  evaluate(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation;
  /**
   * Per-example outputs of the forward pass (evaluate jobs, docs/data.md): `logits` of every example
   * concatenated ([size, logitsPerExample] row-major; text: the T positions' logits of a window) and each
   * example's loss (text: mean over its T positions), as float32 exactly as the backend computed them.
   */
  outputs(params: readonly Float32Array[], batch: Batch): ExampleOutputs;
  /** Multiply-adds x2 of one forward+backward pass over `batchSize` examples (nominal FLOPs). */
  flopsPerStep(batchSize: number): number;
  /**
   * A model class whose step is not gradients-then-optimizer (linear-tile: the circuit's fused update with one rounding):
   * Run.step calls this instead, and the optimizer is not used.
   */
  exactStep?(params: readonly Float32Array[], batch: Batch): { params: Float32Array[]; loss: number };
  /** A model class with its own state commitment (linear-tile: the circuit's Poseidon commitment of W): Run.stateHashOf. */
  stateHash?(jobId: bigint, t: number, params: readonly Float32Array[], opt: readonly Float32Array[]): `0x${string}`;
  /** The circuit model class (linear-tile): the fixed-point learning rate its ZK step proof uses. Absent for engine models. */
  readonly circuit?: { readonly lr: bigint };
  /** Throws CheckpointError unless decoded params are a state of the class (Run.loadCheckpoint). */
  checkState?(params: readonly Float32Array[]): void;
  /**
   * The verifier's side of a step witness (checks/stepwitness.ts): the step's forward and backward pass on `batch`
   * from `params` with every matrix product taken from `oracle` instead of multiplied, every other op the engine's
   * own elementwise kernel (so an honest witness gives the step's gradients bit for bit). Returns the gradients in
   * paramSpecs order. Present when `witnessed`.
   */
  witnessPass?(params: readonly Float32Array[], batch: Batch, oracle: ProductOracle): { grads: Float32Array[] };
  /** When `witnessed` is false: what a step witness of this model needs (an audit error names it). */
  readonly witnessRequirement?: string;
  /**
   * Per tensor, a bound on the norm of the batch gradient at `params` for `batch` (the SGD magnitude check,
   * checks/magnitude.ts: ||dW|| = lr ||g||), without a forward pass. Absent where no bound is known.
   */
  gradientNormBounds?(params: readonly Float32Array[], batch: Batch): number[];
  /** The model's analytic per-element gradient bound on `data` (the state screen), or undefined where it has none. */
  gradientBound?(data: Dataset): ModelGradientBound | undefined;
  /**
   * The progress check's verifier-held batch: up to `examples` examples of the held-out split chosen by the auditor's
   * private seed (a pure function of the data, the seed and the count).
   */
  heldOutBatch(data: Dataset, auditorSeed: number, examples: number): Batch;
  /** At most this many held-out examples (images, or context windows of text) in `pouw train`'s final evaluation (default all). */
  readonly finalEvaluationLimit?: number;
}
