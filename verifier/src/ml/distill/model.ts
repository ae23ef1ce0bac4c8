/**
 * A distillation job's model (numerics bitwise-v2): the student is the manifest's char-transformer, the trained state is
 * the student's (a plain char-transformer checkpoint, so the deliverable serves wherever one does), and the step is
 *   1. the teacher's forward pass on the step's batch (kernels/transformer.ts transformerPass, no gradients), giving
 *      its logits u on the student's positions;
 *   2. the student's bitwise-v2 pass with the distillation head (distill/loss.ts) in place of the plain cross-entropy,
 *      giving the mixed loss and the student's gradients; then the optimizer (Run.step).
 * One function for trainer and auditor (Run.step -> lossAndGrads): an auditor recomputes the teacher's pass as part of
 * the step, so a student trained without the teacher term, or on another teacher, diverges at the first such step.
 * INVARIANT: teacher and student run the same kernel set and the head is plain float32 JS, so the step is a pure
 * function of (student state, teacher weights, batch), bit for bit on every machine that runs bitwise-v2.
 */
import { InputError } from "../../errors/index.ts";
import { kernelOracle, transformerPass, type TransformerKernels } from "../kernels/transformer.ts";
import { CharTransformer, type TransformerShape } from "../models/transformer.ts";
import type { Batch, Dataset, Evaluation, ExampleOutputs, LossAndGrads, Model } from "../models/types.ts";
import type { TensorSpec } from "../tensors.ts";
import { distillHead, type DistillLoss } from "./loss.ts";

export class DistilledTransformer implements Model {
  /** The student's class: its checkpoints are char-transformer checkpoints. */
  readonly arch = "char-transformer";
  readonly paramSpecs: readonly TensorSpec[];
  readonly witnessed = false;
  readonly witnessRequirement = "has no step witness: a distillation job is audited by recomputing its steps (the teacher's pass is part of each)";
  readonly finalEvaluationLimit: number;
  readonly student: CharTransformer;
  /** The teacher as the pass reads it: its declared shape with the student's context (it reads the same windows). */
  readonly teacher: CharTransformer;
  readonly teacherParams: readonly Float32Array[];
  readonly loss: DistillLoss;
  private readonly kernels: TransformerKernels;

  constructor(shape: TransformerShape, kernels: TransformerKernels, teacher: { shape: TransformerShape; params: readonly Float32Array[] }, loss: DistillLoss) {
    if ((teacher.shape.vocab ?? 96) !== (shape.vocab ?? 96)) throw new InputError(`teacher vocabulary ${teacher.shape.vocab ?? 96} is not the student's ${shape.vocab ?? 96}`);
    if (teacher.shape.context < shape.context) throw new InputError(`teacher context ${teacher.shape.context} is shorter than the student's ${shape.context}`);
    this.student = new CharTransformer(shape, kernels);
    this.teacher = new CharTransformer({ ...teacher.shape, context: shape.context }, kernels);
    const specs = new CharTransformer(teacher.shape).paramSpecs;
    if (teacher.params.length !== specs.length) throw new InputError(`teacher has ${teacher.params.length} tensors, its char-transformer needs ${specs.length}`);
    this.teacherParams = teacher.params;
    this.kernels = kernels;
    this.loss = loss;
    this.paramSpecs = this.student.paramSpecs;
    this.finalEvaluationLimit = this.student.finalEvaluationLimit;
  }

  init(seed: number): Float32Array[] {
    return this.student.init(seed);
  }

  /** The teacher's logits [B*T, V] on the batch (step 1 above). */
  teacherLogits(batch: Batch): Float32Array {
    if (batch.kind !== "tokens") throw new TypeError("char-transformer needs a token batch");
    return transformerPass(this.kernels, kernelOracle(this.kernels), this.teacherParams, batch.tokens, this.teacher.dimsFor(batch.size)).logits;
  }

  lossAndGrads(params: readonly Float32Array[], batch: Batch, options: { witness?: boolean } = {}): LossAndGrads {
    if (options.witness) throw new InputError(`distillation ${this.witnessRequirement}`);
    if (batch.kind !== "tokens") throw new TypeError("char-transformer needs a token batch");
    const head = distillHead(this.teacherLogits(batch), this.loss);
    const r = transformerPass(this.kernels, kernelOracle(this.kernels), params, batch.tokens, this.student.dimsFor(batch.size), { grads: true, head });
    return { loss: r.loss, grads: r.grads! };
  }

  /** The student as a plain char-transformer: held-out next-token loss (what the deliverable scores anywhere). */
  evaluate(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation {
    return this.student.evaluate(params, batches);
  }

  outputs(params: readonly Float32Array[], batch: Batch): ExampleOutputs {
    return this.student.outputs(params, batch);
  }

  heldOutBatch(data: Dataset, auditorSeed: number, examples: number): Batch {
    return this.student.heldOutBatch(data, auditorSeed, examples);
  }

  /** The student's forward and backward pass plus the teacher's forward pass (a third of its full step). */
  flopsPerStep(batchSize: number): number {
    return this.student.flopsPerStep(batchSize) + this.teacher.flopsPerStep(batchSize) / 3;
  }
}
