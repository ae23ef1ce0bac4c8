/**
 * The state hash of a weights file: decodes a pouw-checkpoint-1 file (weights and optimizer state) with
 * the tensor layout the manifest's model and optimizer define, and computes h(step) exactly as the
 * trainer did (verifier/src/trace). Needs no data set and no backend: pure byte work, with no tfjs and no
 * node built-in on its path, so the buyer dApp runs this very function in the browser (docs/dapp.md).
 */
import type { Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { decodeCheckpoint } from "../ml/checkpoint.ts";
import { adapterParamSpecs, LORA_MODEL } from "../ml/adapters/layout.ts";
import { manifestHash, stateDigestOf, tabularOutputs, type Manifest } from "../ml/manifest.ts";
import { mlpParamSpecs, optimizerStateSpecs, transformerParamSpecs } from "../ml/state-layout.ts";
import type { TensorSpec } from "../ml/tensors.ts";
import { float32Chunks } from "../ml/tensors.ts";
import { tensorStateHash } from "../trace/index.ts";

/** Parameter and optimizer-state tensor specs of a manifest's model (checkpoint layout). */
export function stateSpecsOf(manifest: Manifest): { paramSpecs: readonly TensorSpec[]; optSpecs: readonly TensorSpec[]; model: string; optimizer: string } {
  const m = manifest.model;
  if (m.arch === "linear-tile") {
    // NOTE: one tensor W, no optimizer state (models/linear-tile.ts); its h(t) needs the circuit's Poseidon commitment
    return { paramSpecs: [{ name: "W", shape: [m.inputs, m.outputs] }], optSpecs: [], model: m.arch, optimizer: "sgd" };
  }
  // NOTE: the layout alone (ml/state-layout.ts), not the model classes: those pull in tfjs, and the dApp bundles this
  const paramSpecs =
    m.arch === "mnist-mlp"
      ? mlpParamSpecs(m.hidden)
      : m.arch === "tabular-mlp"
        ? mlpParamSpecs(m.hidden, m.inputs, tabularOutputs(m))
        : transformerParamSpecs({ layers: m.layers, dModel: m.dModel, heads: m.heads, context: m.context, ffHidden: m.ffHidden ?? 4 * m.dModel, ...(m.vocab !== undefined ? { vocab: m.vocab } : {}) });
  const optimizer = manifest.optimizer.name;
  if (manifest.adapter && m.arch === "char-transformer") {
    // an adapter job's state is the adapter alone (ml/adapters/layout.ts); the base is bound by CID in the manifest
    const shape = { layers: m.layers, dModel: m.dModel, heads: m.heads, context: m.context, ffHidden: m.ffHidden ?? 4 * m.dModel, ...(m.vocab !== undefined ? { vocab: m.vocab } : {}) };
    const adapterSpecs = adapterParamSpecs(shape, manifest.adapter);
    return { paramSpecs: adapterSpecs, optSpecs: optimizerStateSpecs(optimizer, adapterSpecs), model: LORA_MODEL, optimizer };
  }
  return { paramSpecs, optSpecs: optimizerStateSpecs(optimizer, paramSpecs), model: m.arch, optimizer };
}

/**
 * h(step) of the state in a weights file of job `jobId`. Throws CheckpointError when the file is not a
 * checkpoint of this manifest, job and step.
 */
export function weightsStateHash(manifest: Manifest, jobId: bigint, bytes: Uint8Array, step: number): Hex {
  if (manifest.model.arch === "linear-tile") {
    throw new InputError("provenance records of linear-tile jobs are not supported yet: their h(t) is the circuit's Poseidon commitment of W (docs/zk.md)");
  }
  const s = stateSpecsOf(manifest);
  const c = decodeCheckpoint(bytes, s.paramSpecs, s.optSpecs, { step, jobId, manifestHash: manifestHash(manifest), model: s.model, optimizer: s.optimizer });
  return tensorStateHash(stateDigestOf(manifest), jobId, step, float32Chunks(c.params), float32Chunks(c.opt));
}
