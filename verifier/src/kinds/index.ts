/** Inference job kinds on the market: evaluate and generate, one example a step (docs/kinds.md). */
export { SEGMENT_STATES_FORMAT, KIND_CODES, INITIAL_STATE, ZERO32, ExampleStateError, subjectOf, nextState, exampleStateHash, statesOf, encodeSegmentStates, decodeSegmentStates, type ExampleResult, type ExampleState, type InferenceKind, type StateContext } from "./state.ts";
export { KindJobError, checkShape, kindSegments, segmentsOfStates, servedStates, kindChallengeProof, auditKindSegment, decideExample, endStateOf, type ExampleJob, type KindAudit, type KindCommit, type KindDecision, type KindSegment } from "./job.ts";
export { evaluateJob, lossScore, type EvaluateJob } from "./evaluate.ts";
export { commitKindSegments, type CommitKindSegmentsParameters } from "./provider.ts";
export { EXP2_TABLE, samplingWeights, sampleToken, type Sampling } from "./sampler.ts";
export { GENERATE_KIND, DATASET_FORMAT, GenerateManifest, DatasetError, parseGenerateManifest, generateManifestHash, openGenerateHarness, generateSample, generateJob, sampleResult, datasetOf, verifyDataset, type GenerateJob } from "./generate.ts";
export { DEFAULT_KIND_AUDIT_RATE, kindAuditRate, kindSegmentVerdict, kindWithheldVerdict, exampleRange } from "./audit.ts";
export { generatedDataset, datasetFromSamples, type GeneratedDataset } from "./dataset.ts";
export { checkGeneratedCorpora, verifyGeneratedProvenance, provenanceLines, GeneratedProvenanceError, type GeneratedProvenance, type GeneratedProvenanceContext } from "./dataset-provenance.ts";
