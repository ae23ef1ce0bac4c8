/**
 * `pouw adapter merge`: an adapter job's deliverable folded into its base, as a checkpoint in the base's format
 * (pouw-checkpoint-1, model char-transformer), so it serves wherever a char-transformer checkpoint does: `pouw evaluate`,
 * a fine-tuning job's or another adapter job's base.
 *
 * The merged weights are exactly the ones the adapter job's step and evaluation ran (LoraTransformer.merged, the same
 * mergeAdapter on the reference matmul, whose bits every bitwise-v2 kernel reproduces).
 * NOTE: the file's optimizer tensors are the base's own, carried unchanged so it decodes wherever the base does; no job
 * reads them (fine-tuning and adapter jobs start from a fresh optimizer state). Its metadata names the adapter job
 * (step, jobId, manifestHash), whose manifest binds the base CID: the provenance chain data -> base -> adapter.
 */
import { decodeCheckpoint, encodeCheckpoint } from "../checkpoint.ts";
import { ManifestError } from "../errors.ts";
import { jsTransformerKernels } from "../kernels/transformer.ts";
import { manifestHash, type Manifest } from "../manifest.ts";
import { optimizerStateSpecs, transformerParamSpecs, type TransformerShape } from "../state-layout.ts";
import { decodeBase } from "./base.ts";
import { adapterParamSpecs, LORA_MODEL } from "./layout.ts";
import { mergeAdapter } from "./lora.ts";

/** The char-transformer shape of a manifest's model (ManifestError for another class). */
export function transformerShapeOf(manifest: Manifest): TransformerShape {
  const m = manifest.model;
  if (m.arch !== "char-transformer") throw new ManifestError(`manifest model is ${m.arch}: adapters are defined for char-transformer only`);
  return { layers: m.layers, dModel: m.dModel, heads: m.heads, context: m.context, ffHidden: m.ffHidden ?? 4 * m.dModel, ...(m.vocab !== undefined ? { vocab: m.vocab } : {}) };
}

export type MergeResult = { bytes: Uint8Array; step: number; jobId: bigint; matrices: number };

/**
 * Merges an adapter checkpoint of `manifest` (any step: its metadata must name this manifest's hash) into the base the
 * manifest names. Throws ManifestError for a manifest without an adapter, AdapterBaseError for a base that does not
 * match, CheckpointError for an adapter file that is not a state of this manifest.
 */
export function mergeCheckpoint(manifest: Manifest, baseBytes: Uint8Array, adapterBytes: Uint8Array): MergeResult {
  const adapter = manifest.adapter;
  if (!adapter || !("checkpointCid" in manifest.init)) throw new ManifestError("manifest has no adapter block: there is nothing to merge (the deliverable of a full training job is already the model)");
  const shape = transformerShapeOf(manifest);
  const base = decodeBase(baseBytes, shape, manifest.init.checkpointCid);
  const specs = adapterParamSpecs(shape, adapter);
  const optimizer = manifest.optimizer.name;
  const state = decodeCheckpoint(adapterBytes, specs, optimizerStateSpecs(optimizer, specs), { manifestHash: manifestHash(manifest), model: LORA_MODEL, optimizer });
  const merged = mergeAdapter(jsTransformerKernels.matmul, shape, adapter, base.params, state.params);
  const baseSpecs = transformerParamSpecs(shape);
  const bytes = encodeCheckpoint(baseSpecs, optimizerStateSpecs(base.optimizer, baseSpecs), {
    metadata: { ...state.metadata, model: "char-transformer", optimizer: base.optimizer },
    params: merged,
    opt: base.opt,
  });
  return { bytes, step: state.metadata.step, jobId: state.metadata.jobId, matrices: specs.length / 2 };
}
