/** Evaluate jobs: scored inference of a committed model on a content-addressed evaluation set (docs/data.md). */
export { EVALUATE_KIND, EvaluateManifest, parseEvaluateManifest, parseEvaluateManifestJson, evaluateManifestHash } from "./manifest.ts";
export { OUTPUT_RECORD_BYTES, OutputsTree, OutputsFileError, outputLeaf, encodeOutputs, decodeOutputs, exampleClaim, verifyExampleClaim, float32Bits, bitsToFloat32, type ExampleOutput, type ExampleClaim } from "./outputs.ts";
export {
  EVALUATION_FORMAT,
  EvalSetMismatchError,
  EvaluationMismatchError,
  openHarness,
  evalSetIdOf,
  readParams,
  computeOutputs,
  paramsOf,
  runEvaluation,
  writeEvaluation,
  verifyEvaluation,
  challengeExample,
  type Harness,
  type Evaluation,
  type EvaluationResult,
  type EvaluationCheck,
} from "./run.ts";
export { improvementWeightsE6 } from "./improvement.ts";
