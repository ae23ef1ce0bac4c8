/** Deterministic training engine: one step function for the provider's trainer and the auditor. */
export { checkEngine, ENGINES, enginesAllowed, isBitwiseNumerics, parseEngine } from "./engines.ts";
export { createRun, defaultBackend, Run, type TrainState, type StepResult, type RunOptions } from "./run.ts";
export { jobSalt, offlineSalt, deploymentSalt, parseSalt, dataOrderRng, SaltError, OFFLINE_CHAIN_ID } from "./salt.ts";
export { parseManifest, parseManifestJson, readManifestFile, policyShapeMismatch, manifestHash, canonicalManifest, corpusProportions, stateDigestOf, MANIFEST_VERSION, Manifest, Corpus, type CorpusEntry, type ModelConfig, type OptimizerConfig } from "./manifest.ts";
export { encodeCheckpoint, decodeCheckpoint, CHECKPOINT_FORMAT, type CheckpointContents, type CheckpointMetadata } from "./checkpoint.ts";
export { ManifestError, DataError, CorpusMismatchError, UnknownCorpusError, CheckpointError, BackendError, StrategyError } from "./errors.ts";
export { DATASETS, DEFAULT_SOTU_YEARS, corpusBytes, corpusId, corpusSpecOf, checkCorpusBytes, datasetOfArch, parseDatasetName, type CorpusSpec, type CorpusId, type DatasetName } from "./data/corpus.ts";
export { parseStrategy, formatStrategy, firstAffectedStep, isSkipped, plantSpreadSteps, type Strategy } from "./strategies.ts";
export { train, prepareOutDir, type TrainOptions, type TrainResult, type Progress } from "./train.ts";
export { readTraceFile, parseTraceFile, TraceFile, TraceFileError, TRACE_FORMAT, LEGACY_TRACE_FORMATS, type SegmentEntry } from "./trace-file.ts";
export { useBackend, assertBackend, isBitwiseBackend, CPU_MATMUL_BLOCK_SIZE, type BackendName } from "./backend.ts";
export { float32Bytes, roundToHalf, sizeOf, type TensorSpec } from "./tensors.ts";
export { Rng } from "./prng.ts";
export type { Batch, StepWitness, MatMulWitness, WitnessTensor, Model, Evaluation, ExampleOutputs } from "./models/types.ts";
