/**
 * The evaluate kind on the market: an evaluate manifest (evaluate/manifest.ts, kind "pouw/evaluate-job") as an
 * ExampleJob. Example i (1-based) is example i-1 of the evaluation set, recomputed by the same pinned harness as
 * `pouw evaluate` (the engine's forward pass, cpu backend, bitwise, in chunks of harness.batch).
 *
 *   item_i  = keccak256(the example's float32 LE logits)        (evaluate/outputs.ts logitsHash)
 *   score_i = round(1e6 * its float32 loss)                       (a non-finite loss scores 2^64-1)
 *   hit_i   = its correct argmax predictions (MNIST: 0 or 1; text: 0..T)
 *
 * so total_N / N / 1e6 is the mean loss and hits_N / (N x predictions per example) the accuracy.
 */
import type { Hex } from "viem";
import { bitsToFloat32, computeOutputs, openHarness, paramsOf, type EvaluateManifest, type Harness } from "../evaluate/index.ts";
import type { ExampleJob } from "./job.ts";
import type { ExampleResult, StateContext } from "./state.ts";

const UINT64_MAX = (1n << 64n) - 1n;

/** round(1e6 * loss) as an unsigned integer (INVARIANT: an exact IEEE float64 operation on the float32 value). */
export function lossScore(lossBits: number): bigint {
  const loss = bitsToFloat32(lossBits);
  if (!Number.isFinite(loss) || loss < 0) return UINT64_MAX;
  const micro = Math.round(loss * 1e6);
  return micro > Number(UINT64_MAX) ? UINT64_MAX : BigInt(micro);
}

export type EvaluateJob = ExampleJob & { readonly harness: Harness; readonly manifest: EvaluateManifest };

/**
 * The evaluate job `jobId` of `manifest` with K examples a segment; `weights` must hash to manifest.weightsCid
 * (CidMismatchError) and the evaluation set to evalSet.contentId (EvalSetMismatchError).
 */
export async function evaluateJob(manifest: EvaluateManifest, weights: Uint8Array, p: { jobId: bigint; examplesPerSegment: number; harness?: Harness }): Promise<EvaluateJob> {
  const harness = p.harness ?? (await openHarness(manifest));
  const params = paramsOf(harness, weights);
  const ctx: StateContext = { jobId: p.jobId, kind: "evaluate", modelCid: manifest.weightsCid };
  return {
    ctx,
    manifest,
    harness,
    examples: manifest.evalSet.examples,
    examplesPerSegment: p.examplesPerSegment,
    async results(from: number, to: number): Promise<ExampleResult[]> {
      const { outputs, hits } = computeOutputs(harness, params, from, to);
      return outputs.map((o, j) => ({ item: o.logitsHash as Hex, score: lossScore(o.lossBits), hits: BigInt(hits[j]!) }));
    },
  };
}
