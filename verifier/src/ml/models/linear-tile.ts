/**
 * linear-tile: the circuit-provable model class (circuits/step.circom, verifier/src/zk/), trained and recomputed by
 * the engine like any model. One SGD step of a fixed-point linear tile W (8 inputs x 4 outputs) on a batch of 8:
 *
 *   W' = W - floor((lr·Xᵀ(X·W - Y·2^F) + 2^(S-1)) / 2^S),   S = 3F + log2(B)   (zk/step.ts referenceStep, bit-exact
 *                                                                              with the circuit)
 *
 * Data (feature map "mnist-blocks-4x2", a pure function of the shipped MNIST pixels): the image batch of step t is the
 * engine's usual one (Run.batchFor: epoch permutations salted by the job); each 28x28 image is cut into 4 x 2 blocks of
 * 7 rows x 14 columns, and input i is the block's mean pixel (row-major block order, pixels summed in row-major order
 * as doubles, divided by 98) in fixed point, toFixed (round half away from zero at 2^-16). The 4 targets are the bits
 * of the digit, least significant first: Y[b][j] = ((label >> j) & 1) · 2^F.
 *
 * State: params = [W] as float32 real values (integer / 2^16), no optimizer state. Every weight must be an exact
 * multiple of 2^-16 with |integer| <= 2^24 (float32 holds those exactly; the circuit allows 2^31, the engine the float32
 * range): a state outside is refused (checkState: CheckpointError, the audit's checkpoint-invalid) and a step that would
 * leave it throws FixedPointRangeError (the job cannot be trained further; lower the learning rate).
 *
 * State hash: h(t) = stateHash(jobId, t, bytes32(Commit(W_t)), 0) with the circuit's Poseidon commitment, the leaf
 * DisputeGame.prove checks a proof's commitW / commitWNext against (dispute/circuit.ts circuitStateHash).
 */
import { zeroHash, type Hex } from "viem";
import { stateHash } from "../../trace/index.ts";
// NOTE: the zk modules one by one, not zk/index.ts: the engine must not load snarkjs (the prover) to train or audit
import { commitmentToBytes32 } from "../../zk/commit.ts";
import { FixedPointRangeError } from "../../zk/errors.ts";
import { toFixed } from "../../zk/fixed.ts";
import { STEP_PARAMS, type Matrix } from "../../zk/params.ts";
import { referenceStep, residuals } from "../../zk/step.ts";
import { MNIST_PIXELS } from "../data/mnist.ts";
import { CheckpointError } from "../errors.ts";
import { Rng } from "../prng.ts";
import type { TensorSpec } from "../tensors.ts";
import { heldOutImages } from "./held-out.ts";
import type { Batch, Dataset, Evaluation, ExampleOutputs, LossAndGrads, Model } from "./types.ts";

const { inputs: IN, outputs: OUT, batch: B, fracBits: F } = STEP_PARAMS;
const SCALE = 2 ** F;
/** Largest |integer| of a weight the engine keeps (float32 holds every integer up to 2^24 exactly). */
export const TILE_ENGINE_BOUND = 2 ** 24;
/** Half-width of the initial weights, real units (each then rounded to a multiple of 2^-16). */
export const TILE_INIT_BOUND = 0.25;
const BLOCK_ROWS = 7;
const BLOCK_COLS = 14;

export type TileBatch = { x: bigint[][]; y: bigint[][] };

/** The feature map of the manifest's "mnist-blocks-4x2": an image batch -> X (B x 8) and Y (B x 4) in fixed point. */
export function tileBatchOf(batch: Batch): TileBatch {
  if (batch.kind !== "images") throw new TypeError("linear-tile needs an image batch");
  if (batch.size !== B) throw new RangeError(`linear-tile batches hold ${B} examples (the circuit's B), got ${batch.size}`);
  const x: bigint[][] = [];
  const y: bigint[][] = [];
  for (let b = 0; b < B; b++) {
    const img = batch.x.subarray(b * MNIST_PIXELS, (b + 1) * MNIST_PIXELS);
    const row: bigint[] = [];
    for (let br = 0; br < 4; br++) {
      for (let bc = 0; bc < 2; bc++) {
        let sum = 0;
        for (let r = br * BLOCK_ROWS; r < (br + 1) * BLOCK_ROWS; r++) for (let c = bc * BLOCK_COLS; c < (bc + 1) * BLOCK_COLS; c++) sum += img[r * 28 + c]!;
        row.push(toFixed(sum / (BLOCK_ROWS * BLOCK_COLS), `X[${b}][${row.length}]`));
      }
    }
    x.push(row);
    const label = batch.y[b]!;
    y.push(Array.from({ length: OUT }, (_, j) => (((label >> j) & 1) === 1 ? BigInt(SCALE) : 0n)));
  }
  return { x, y };
}

/** W as integers (row-major IN x OUT) from its float32 real values; CheckpointError if a value is not in the class. */
export function tileWeightsOf(params: readonly Float32Array[]): bigint[][] {
  const w = params[0];
  if (params.length !== 1 || !w || w.length !== IN * OUT) throw new CheckpointError(`a linear-tile state is one ${IN}x${OUT} tensor W, got ${params.length} tensors`);
  const out: bigint[][] = [];
  for (let i = 0; i < IN; i++) {
    const row: bigint[] = [];
    for (let j = 0; j < OUT; j++) {
      const real = w[i * OUT + j]!;
      const v = real * SCALE;
      if (!Number.isInteger(v) || Math.abs(v) > TILE_ENGINE_BOUND) {
        throw new CheckpointError(`W[${i}][${j}] = ${real} is not a multiple of 2^-${F} within ±2^${Math.log2(TILE_ENGINE_BOUND) - F} (the linear-tile class)`);
      }
      row.push(BigInt(v));
    }
    out.push(row);
  }
  return out;
}

/** float32 params [W] from integer weights; FixedPointRangeError outside the engine's range. */
export function tileParamsOf(w: Matrix): Float32Array[] {
  const out = new Float32Array(IN * OUT);
  w.forEach((row, i) =>
    row.forEach((v, j) => {
      if (v > BigInt(TILE_ENGINE_BOUND) || v < -BigInt(TILE_ENGINE_BOUND)) {
        throw new FixedPointRangeError(`the step leaves the engine's range: W'[${i}][${j}] = ${v} (|W'| <= 2^24 / 2^${F})`, { details: "lower the learning rate" });
      }
      out[i * OUT + j] = Number(v) / SCALE;
    }),
  );
  return [out];
}

/** Mean squared error |X·W - Y|² / (2B) in real units, from the exact residuals (fixed summation order). */
function tileLoss(w: Matrix, t: TileBatch): number {
  let sum = 0;
  for (const row of residuals(w, t.x, t.y)) for (const e of row) sum += (Number(e) / SCALE ** 2) ** 2;
  return sum / (2 * B);
}

export class LinearTile implements Model {
  readonly arch = "linear-tile";
  /** No step witness: the step is integer arithmetic the circuit proves (pouw provider defend), not Freivalds. */
  readonly witnessed = false;
  readonly paramSpecs: readonly TensorSpec[] = [{ name: "W", shape: [IN, OUT] }];
  /** Learning rate in fixed point (toFixed(manifest lr)), the circuit's public lr. */
  readonly lr: bigint;
  private readonly commit: (values: readonly bigint[]) => bigint;

  constructor(lr: bigint, commit: (values: readonly bigint[]) => bigint) {
    this.lr = lr;
    this.commit = commit;
  }

  /** Uniform in ±TILE_INIT_BOUND, each weight rounded to a multiple of 2^-16 (exact in float32). */
  init(seed: number): Float32Array[] {
    const u = new Rng(seed, "init", 0).uniform(IN * OUT, TILE_INIT_BOUND);
    return [Float32Array.from(u, (r) => Number(toFixed(r)) / SCALE)];
  }

  /** The step the circuit proves: W' from W and the step's batch (zk/step.ts referenceStep), with the loss before it. */
  exactStep(params: readonly Float32Array[], batch: Batch): { params: Float32Array[]; loss: number } {
    const w = tileWeightsOf(params);
    const t = tileBatchOf(batch);
    return { params: tileParamsOf(referenceStep({ w, x: t.x, y: t.y, lr: this.lr })), loss: tileLoss(w, t) };
  }

  /** h(t) = stateHash(jobId, t, bytes32(Commit(W)), 0). */
  stateHash(jobId: bigint, t: number, params: readonly Float32Array[]): Hex {
    return stateHash(jobId, BigInt(t), commitmentToBytes32(this.commit(tileWeightsOf(params).flat())), zeroHash);
  }

  /** Throws CheckpointError unless the state is one of the class (checkpoint decoding). */
  checkState(params: readonly Float32Array[]): void {
    tileWeightsOf(params);
  }

  /** Loss and the real-valued gradient Xᵀ(X·W - Y)/B (a report; the step itself is exactStep's single rounding). */
  lossAndGrads(params: readonly Float32Array[], batch: Batch): LossAndGrads {
    const w = tileWeightsOf(params);
    const t = tileBatchOf(batch);
    const e = residuals(w, t.x, t.y);
    const g = new Float32Array(IN * OUT);
    for (let i = 0; i < IN; i++) {
      for (let j = 0; j < OUT; j++) {
        let acc = 0;
        for (let b = 0; b < B; b++) acc += (Number(t.x[b]![i]!) / SCALE) * (Number(e[b]![j]!) / SCALE ** 2);
        g[i * OUT + j] = acc / B;
      }
    }
    return { loss: tileLoss(w, t), grads: [g] };
  }

  /** Mean loss over full batches of B held-out images; accuracy: all four bits of the digit right (prediction > 1/2). */
  evaluate(params: readonly Float32Array[], batches: Iterable<Batch>): Evaluation {
    const w = tileWeightsOf(params);
    let lossSum = 0;
    let correct = 0;
    let n = 0;
    for (const batch of batches) {
      if (batch.kind !== "images") throw new TypeError("linear-tile needs an image batch");
      for (let s = 0; s + B <= batch.size; s += B) {
        const sub: Batch = { kind: "images", size: B, x: batch.x.subarray(s * MNIST_PIXELS, (s + B) * MNIST_PIXELS), y: batch.y.subarray(s, s + B) };
        const t = tileBatchOf(sub);
        lossSum += tileLoss(w, t) * B;
        const e = residuals(w, t.x, t.y);
        for (let b = 0; b < B; b++) {
          const ok = e[b]!.every((ej, j) => {
            const pred = (Number(ej) + Number(t.y[b]![j]!) * SCALE) / SCALE ** 2;
            return pred > 0.5 === (t.y[b]![j]! !== 0n);
          });
          if (ok) correct++;
        }
        n += B;
      }
    }
    return { loss: n === 0 ? NaN : lossSum / n, accuracy: n === 0 ? NaN : correct / n, examples: n };
  }

  outputs(): ExampleOutputs {
    throw new TypeError("linear-tile has no per-example outputs (evaluate jobs use mnist-mlp or char-transformer)");
  }

  /** The circuit class's step terms: its lr in fixed point (dispute/circuit.ts reads it through checks/circuit-step.ts). */
  get circuit(): { readonly lr: bigint } {
    return { lr: this.lr };
  }

  /** A seeded sample of the test split's images (models/held-out.ts). */
  heldOutBatch(data: Dataset, auditorSeed: number, examples: number): Batch {
    return heldOutImages(data, auditorSeed, examples);
  }

  /** Nominal: 2 products of B·IN·OUT multiply-adds (X·W, Xᵀ·E), x2. */
  flopsPerStep(batchSize: number): number {
    return 2 * 2 * batchSize * IN * OUT;
  }
}
