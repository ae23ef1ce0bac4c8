export { ADAPTER_TARGETS, LORA_MODEL, adaptedMatrices, adapterParamSpecs, adapterScale, orderedTargets, targetShape, type AdaptedMatrix, type AdapterSpec, type AdapterTarget } from "./layout.ts";
export { AdapterBaseError, decodeBase, decodeCharTransformer } from "./base.ts";
export { LoraTransformer, mergeAdapter } from "./lora.ts";
export { mergeCheckpoint, transformerShapeOf, type MergeResult } from "./merge.ts";
