/**
 * Evaluate jobs: the pinned harness, the evaluation set, per-example outputs, verification by
 * byte-equality recompute and one-example challenges (docs/data.md, "Evaluate jobs").
 *
 * @example
 *   const result = await runEvaluation(manifest, weightsBytes);          // provider
 *   await writeEvaluation(outDir, result);                               // outputs.bin + evaluation.json
 *   const check = await verifyEvaluation(manifest, weightsBytes, { root: result.evaluation.outputsRoot, outputsBytes });
 *   if (!check.ok) challenge with check.claim (the first differing example and its Merkle proof)
 *
 * The harness loads data through the engine's createRun (same corpus check, same split, cpu backend
 * pinned) and calls the engine's forward pass (Model.outputs) in chunks of harness.batch examples.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { keccak256, type Hex } from "viem";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { CheckpointError, DataError } from "../ml/errors.ts";
import { MANIFEST_VERSION, parseManifest } from "../ml/manifest.ts";
import { MNIST_PIXELS } from "../ml/data/mnist.ts";
import type { Batch } from "../ml/models/types.ts";
import { createRun, type Run } from "../ml/run.ts";
import { offlineSalt } from "../ml/salt.ts";
import { sizeOf, type TensorSpec } from "../ml/tensors.ts";
import { cidOf, verifyCid } from "../store/index.ts";
import { evaluateManifestHash, type EvaluateManifest } from "./manifest.ts";
import { bitsToFloat32, decodeOutputs, encodeOutputs, exampleClaim, float32Bits, OutputsTree, verifyExampleClaim, type ExampleClaim, type ExampleOutput } from "./outputs.ts";

const log = logger("evaluate");

export const EVALUATION_FORMAT = "pouw-evaluation-1";

/** The evaluation set's bytes do not hash to the manifest's evalSet.contentId. */
export class EvalSetMismatchError extends DataError {
  override name = "EvalSetMismatchError";
  override readonly code: string = "EVAL_SET_MISMATCH";
}

/** A claimed evaluation does not match the recompute (the first differing example is in `claim`). */
export class EvaluationMismatchError extends PouwError {
  override name = "EvaluationMismatchError";
  override readonly code: string = "EVALUATION_MISMATCH";
}

export type Harness = {
  manifest: EvaluateManifest;
  run: Run;
  /** Canonical bytes of the evaluation set (what evalSet.contentId covers). */
  evalSetBytes: Uint8Array;
  examples: number;
  batch(start: number, size: number): Batch;
  /** Label (MNIST) or target tokens (SOTU, T per window) of example i. */
  targets(i: number): Uint8Array;
};

export type Evaluation = {
  format: typeof EVALUATION_FORMAT;
  manifestHash: Hex;
  weightsCid: string;
  evalSetCid: string;
  examples: number;
  /** CID of outputs.bin. */
  outputsCid: string;
  outputsRoot: Hex;
  /** Mean of the per-example float32 losses, summed in example order in float64. */
  meanLoss: number;
  /** Share of correct argmax predictions (MNIST: per image; SOTU: per character position). */
  accuracy: number;
};

export type EvaluationResult = { evaluation: Evaluation; outputs: ExampleOutput[]; outputsBytes: Uint8Array };

/** The training-manifest view of an evaluate manifest: what createRun needs to load and check the corpus. */
function dataManifest(m: EvaluateManifest) {
  return parseManifest({
    version: MANIFEST_VERSION,
    kind: "pouw/training-job",
    model: m.model,
    init: { seed: 0 },
    corpora: [m.corpus],
    data: m.data,
    // NOTE: never used: an evaluation does not train. Present only because createRun takes a full manifest.
    optimizer: { name: "sgd", lr: 1 },
    training: { batchSize: 1, steps: 1, stepsPerSegment: 1 },
    numerics: "bitwise",
    policy: { auditRate: 1, minTier: 4, challengeWindowSeconds: 1, providerStakeWei: "0", paymentWei: "0" },
  });
}

/** Loads the corpus (CorpusMismatchError if its bytes differ) and builds the evaluation set (unchecked). */
async function buildHarness(manifest: EvaluateManifest): Promise<Harness> {
  // NOTE: no step is ever run, so the job id and salt are unused (the salt orders training batches only; the
  // held-out split depends on the data seed alone).
  const run = await createRun(dataManifest(manifest), { jobId: 0n, salt: offlineSalt(0n), backend: "cpu" });
  const N = manifest.evalSet.examples;
  let evalSetBytes: Uint8Array;
  let batch: Harness["batch"];
  let targets: Harness["targets"];
  if (run.data.kind === "images") {
    const test = run.data.test;
    if (N > test.count) throw new DataError(`evalSet.examples ${N} exceeds the ${test.count} held-out images`);
    const images = test.images.subarray(0, N * MNIST_PIXELS);
    const labels = test.labels.subarray(0, N);
    evalSetBytes = new Uint8Array(N * MNIST_PIXELS * 4 + N);
    const view = new DataView(evalSetBytes.buffer);
    for (let i = 0; i < images.length; i++) view.setFloat32(4 * i, images[i]!, true);
    evalSetBytes.set(labels, N * MNIST_PIXELS * 4);
    batch = (start, size) => ({ kind: "images", size, x: images.subarray(start * MNIST_PIXELS, (start + size) * MNIST_PIXELS), y: labels.subarray(start, start + size) });
    targets = (i) => labels.subarray(i, i + 1);
  } else {
    const T = manifest.model.arch === "char-transformer" ? manifest.model.context : 0;
    const text = run.data.test;
    const windows = Math.floor((text.length - 1) / T);
    if (N > windows) throw new DataError(`evalSet.examples ${N} exceeds the ${windows} held-out windows of ${T + 1} characters`);
    evalSetBytes = new Uint8Array(N * (T + 1));
    for (let i = 0; i < N; i++) evalSetBytes.set(text.subarray(i * T, i * T + T + 1), i * (T + 1));
    batch = (start, size) => ({ kind: "tokens", size, tokens: evalSetBytes.subarray(start * (T + 1), (start + size) * (T + 1)) });
    targets = (i) => evalSetBytes.subarray(i * (T + 1) + 1, (i + 1) * (T + 1));
  }
  return { manifest, run, evalSetBytes, examples: N, batch, targets };
}

/** Loads the corpus and the evaluation set; EvalSetMismatchError unless it hashes to evalSet.contentId. */
export async function openHarness(manifest: EvaluateManifest): Promise<Harness> {
  const h = await buildHarness(manifest);
  const actual = cidOf(h.evalSetBytes);
  if (actual !== manifest.evalSet.contentId) {
    throw new EvalSetMismatchError(`evaluation set of corpus '${manifest.corpus.name}' content id mismatch: manifest says ${manifest.evalSet.contentId}, the split gives ${actual}`);
  }
  return h;
}

/** The CID of the evaluation set an evaluate manifest describes (what evalSet.contentId must be). */
export async function evalSetIdOf(manifest: EvaluateManifest): Promise<string> {
  return cidOf((await buildHarness(manifest)).evalSetBytes);
}

/** Reads the model parameters (param.* tensors) of a pouw-checkpoint-1 file; optimizer tensors are ignored. */
export function readParams(bytes: Uint8Array, specs: readonly TensorSpec[]): Float32Array[] {
  if (bytes.length < 8) throw new CheckpointError(`weights file is truncated: ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(bytes.length - 8)) throw new CheckpointError(`weights file is truncated: header length ${n}`);
  let header: Record<string, { dtype?: unknown; shape?: unknown; data_offsets?: unknown }>;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + Number(n))));
  } catch (err) {
    throw new CheckpointError("weights file header is not valid JSON", { cause: err });
  }
  const dataStart = 8 + Number(n);
  return specs.map((s) => {
    const e = header[`param.${s.name}`];
    if (!e || e.dtype !== "F32" || !Array.isArray(e.shape) || e.shape.join(",") !== s.shape.join(",")) throw new CheckpointError(`weights file lacks F32 tensor param.${s.name} of shape [${s.shape.join(",")}]`);
    const off = e.data_offsets;
    const size = sizeOf(s.shape) * 4;
    if (!Array.isArray(off) || typeof off[0] !== "number" || off[1] !== off[0] + size || dataStart + off[1] > bytes.length) throw new CheckpointError(`tensor param.${s.name} has bad data_offsets`);
    const out = new Float32Array(size / 4);
    const dv = new DataView(bytes.buffer, bytes.byteOffset + dataStart + off[0], size);
    for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(4 * i, true);
    return out;
  });
}

/** Per-example outputs of examples [from, to) (whole harness chunks are computed, as the harness fixes them). */
export function computeOutputs(h: Harness, params: readonly Float32Array[], from = 0, to = h.examples): { outputs: ExampleOutput[]; correct: number; predictions: number; hits: number[] } {
  const B = h.manifest.harness.batch;
  const outputs: ExampleOutput[] = [];
  /** Correct predictions of each example of [from, to). */
  const hits: number[] = [];
  let correct = 0;
  let predictions = 0;
  for (let start = Math.floor(from / B) * B; start < to; start += B) {
    const size = Math.min(B, h.examples - start);
    const o = h.run.model.outputs(params, h.batch(start, size));
    const W = o.logitsPerExample;
    for (let j = 0; j < size; j++) {
      const i = start + j;
      if (i < from || i >= to) continue;
      const logits = o.logits.subarray(j * W, (j + 1) * W);
      const bytes = new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength);
      outputs.push({ logitsHash: keccak256(bytes), lossBits: float32Bits(o.losses[j]!) });
      const t = h.targets(i);
      const classes = W / t.length;
      let hit = 0;
      for (let p = 0; p < t.length; p++) {
        let best = 0;
        for (let c = 1; c < classes; c++) if (logits[p * classes + c]! > logits[p * classes + best]!) best = c;
        if (best === t[p]) hit++;
        predictions++;
      }
      correct += hit;
      hits.push(hit);
    }
  }
  return { outputs, correct, predictions, hits };
}

/** Checks the weights against the manifest's weightsCid (CidMismatchError) and decodes the parameters. */
export function paramsOf(h: Harness, weightsBytes: Uint8Array): Float32Array[] {
  verifyCid(h.manifest.weightsCid, weightsBytes);
  return readParams(weightsBytes, h.run.model.paramSpecs);
}

export async function runEvaluation(manifest: EvaluateManifest, weightsBytes: Uint8Array, harness?: Harness): Promise<EvaluationResult> {
  const h = harness ?? (await openHarness(manifest));
  const params = paramsOf(h, weightsBytes);
  const { outputs, correct, predictions } = computeOutputs(h, params);
  const outputsBytes = encodeOutputs(outputs);
  let lossSum = 0;
  for (const o of outputs) lossSum += bitsToFloat32(o.lossBits);
  const evaluation: Evaluation = {
    format: EVALUATION_FORMAT,
    manifestHash: evaluateManifestHash(manifest),
    weightsCid: manifest.weightsCid,
    evalSetCid: manifest.evalSet.contentId,
    examples: outputs.length,
    outputsCid: cidOf(outputsBytes),
    outputsRoot: new OutputsTree(outputs).root,
    meanLoss: lossSum / outputs.length,
    accuracy: correct / predictions,
  };
  log.info({ examples: outputs.length, root: evaluation.outputsRoot }, "evaluation done");
  return { evaluation, outputs, outputsBytes };
}

export async function writeEvaluation(dir: string, r: EvaluationResult): Promise<{ outputsPath: string; evaluationPath: string }> {
  await mkdir(dir, { recursive: true });
  const outputsPath = join(dir, "outputs.bin");
  const evaluationPath = join(dir, "evaluation.json");
  await writeFile(outputsPath, r.outputsBytes);
  await writeFile(evaluationPath, JSON.stringify(r.evaluation, null, 2) + "\n");
  return { outputsPath, evaluationPath };
}

export type EvaluationCheck =
  | { ok: true; examples: number; root: Hex }
  | {
      ok: false;
      reason: "root" | "count" | "example";
      detail: string;
      /** The first example whose claimed output differs from the recompute, with its proof against the claimed root. */
      claim?: ExampleClaim;
      recomputed?: ExampleOutput;
    };

/**
 * Recomputes every example's output and compares bytes with a claimed outputs file committed under
 * `root`. On a difference, returns the first differing example's claim (proven against `root`), which
 * anyone can check with challengeExample by recomputing one harness chunk.
 */
export async function verifyEvaluation(manifest: EvaluateManifest, weightsBytes: Uint8Array, claimed: { root: Hex; outputsBytes: Uint8Array }, harness?: Harness): Promise<EvaluationCheck> {
  const h = harness ?? (await openHarness(manifest));
  const claimedOutputs = decodeOutputs(claimed.outputsBytes);
  const claimedRoot = new OutputsTree(claimedOutputs).root;
  if (claimedRoot !== claimed.root) return { ok: false, reason: "root", detail: `outputs file has root ${claimedRoot}, the claim commits ${claimed.root}` };
  if (claimedOutputs.length !== h.examples) return { ok: false, reason: "count", detail: `outputs file has ${claimedOutputs.length} examples, the evaluation set ${h.examples}` };
  const { outputs } = computeOutputs(h, paramsOf(h, weightsBytes));
  const mine = encodeOutputs(outputs);
  for (let i = 0; i < outputs.length; i++) {
    const a = claimed.outputsBytes.subarray(i * 36, (i + 1) * 36);
    const b = mine.subarray(i * 36, (i + 1) * 36);
    if (!a.every((x, k) => x === b[k])) {
      return { ok: false, reason: "example", detail: `example ${i}: claimed loss ${bitsToFloat32(claimedOutputs[i]!.lossBits)}, recomputed ${bitsToFloat32(outputs[i]!.lossBits)}`, claim: exampleClaim(claimedOutputs, i), recomputed: outputs[i]! };
    }
  }
  return { ok: true, examples: outputs.length, root: claimed.root };
}

/**
 * Settles a one-example challenge: the claim must be proven against `root` (else it is not the
 * provider's commitment), then the example's harness chunk is recomputed. Returns whether the committed
 * output is wrong.
 */
export async function challengeExample(manifest: EvaluateManifest, weightsBytes: Uint8Array, root: Hex, claim: ExampleClaim, harness?: Harness): Promise<{ committed: boolean; wrong: boolean; recomputed: ExampleOutput }> {
  const h = harness ?? (await openHarness(manifest));
  const committed = verifyExampleClaim(root, claim);
  const recomputed = computeOutputs(h, paramsOf(h, weightsBytes), claim.index, claim.index + 1).outputs[0]!;
  const wrong = recomputed.logitsHash !== claim.output.logitsHash || recomputed.lossBits !== claim.output.lossBits;
  return { committed, wrong, recomputed };
}
