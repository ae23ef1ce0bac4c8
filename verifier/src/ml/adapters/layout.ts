/**
 * The tensor layout of a LoRA adapter on a char-transformer (pure data, no tfjs: provenance/weights.ts and the dApp
 * read it). For each layer l and each target matrix W [din, dout] of the manifest's `adapter.targets` (in the fixed
 * order of ADAPTER_TARGETS, not the manifest's order): `l<l>.<target>.A` [din, r] then `l<l>.<target>.B` [r, dout].
 * The adapted weight is W' = W + s * (A . B) with s = float32(alpha / r) (docs/data.md "Job kinds: adapters").
 */
import type { TransformerShape } from "../state-layout.ts";
import type { TensorSpec } from "../tensors.ts";

/** The matrices an adapter may target: attention q, k, v, o and the feed-forward projections w1, w2. */
export const ADAPTER_TARGETS = ["wq", "wk", "wv", "wo", "w1", "w2"] as const;
export type AdapterTarget = (typeof ADAPTER_TARGETS)[number];

/** A manifest's `adapter` block (manifest.ts `AdapterConfig`). */
export type AdapterSpec = { readonly rank: number; readonly targets: readonly AdapterTarget[]; readonly alpha: number; readonly seed: number };

/** The model name a LoRA state's checkpoint carries (its metadata `model`), so it never decodes as a base. */
export const LORA_MODEL = "char-transformer-lora";

/** [din, dout] of a target matrix in a model of this shape. */
export function targetShape(shape: TransformerShape, target: AdapterTarget): [number, number] {
  const { dModel: d, ffHidden: F } = shape;
  if (target === "w1") return [d, F];
  if (target === "w2") return [F, d];
  return [d, d];
}

/** The targets in layout order (ADAPTER_TARGETS order), whatever order the manifest lists them in. */
export function orderedTargets(adapter: Pick<AdapterSpec, "targets">): AdapterTarget[] {
  return ADAPTER_TARGETS.filter((t) => adapter.targets.includes(t));
}

/** One adapted matrix: its layer, target, shape and the indices of A and B in the adapter's parameters. */
export type AdaptedMatrix = { layer: number; target: AdapterTarget; din: number; dout: number; a: number; b: number; baseName: string };

/** Every adapted matrix in layout order (layer-major, then ADAPTER_TARGETS order). */
export function adaptedMatrices(shape: TransformerShape, adapter: Pick<AdapterSpec, "targets">): AdaptedMatrix[] {
  const out: AdaptedMatrix[] = [];
  for (let l = 0; l < shape.layers; l++) {
    for (const target of orderedTargets(adapter)) {
      const [din, dout] = targetShape(shape, target);
      out.push({ layer: l, target, din, dout, a: 2 * out.length, b: 2 * out.length + 1, baseName: `l${l}.${target}` });
    }
  }
  return out;
}

/** The adapter's parameter specs (the whole trained state's weights; the base is not part of the state). */
export function adapterParamSpecs(shape: TransformerShape, adapter: Pick<AdapterSpec, "rank" | "targets">): TensorSpec[] {
  return adaptedMatrices(shape, adapter).flatMap((m) => [
    { name: `${m.baseName}.A`, shape: [m.din, adapter.rank] },
    { name: `${m.baseName}.B`, shape: [adapter.rank, m.dout] },
  ]);
}

/** The scaling s = alpha / rank as float32 (one rounding, the value every merge multiplies by). */
export function adapterScale(adapter: Pick<AdapterSpec, "alpha" | "rank">): number {
  return Math.fround(adapter.alpha / adapter.rank);
}
