import type { TensorSpec } from "../tensors.ts";

/** One training batch. MNIST: images and labels. Text: `size` windows of context+1 token ids. */
export type Batch =
  | { readonly kind: "images"; readonly size: number; readonly x: Float32Array; readonly y: Uint8Array }
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
  /** Mean loss over the batch and its gradient w.r.t. every parameter, in paramSpecs order. */
  lossAndGrads(params: readonly Float32Array[], batch: Batch, options?: { witness?: boolean }): LossAndGrads;
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
  /** Throws CheckpointError unless decoded params are a state of the class (Run.loadCheckpoint). */
  checkState?(params: readonly Float32Array[]): void;
}
