/** Auditor checks (docs/checks.md). */
export { auditRun, auditSegment, openTraceDir, parseChecks, parseSegmentSelection, runCheck, selectSegments, type AuditContext, type AuditOptions, type AuditReport, type CheckOptions, type SegmentSelection, type TraceAuditContext } from "./audit.ts";
export { CHECK_NAMES, countAgainstProvider, segmentVerdict, type AuditCheckName, type CheckResult, type SegmentVerdict, type VerdictFailure } from "./result.ts";
export { auditChainSegment, auditTargetOf, isCircuitClass, isLastSegment, jobRun, screenStart, startCheckpointUnavailable, withheldVerdict, type ChainAuditContext, type Run, type SegmentToAudit, type StartScreen, type StepClaim, type TrainState } from "./target.ts";
export { AuditInputError, BaseCheckpointError, assertBaseUsable, usableInitialState, type BaseProblem, FAILURE_KINDS, challengeProof, checkTarget, noClaimReason, nonFinite, openSegment, openStart, segmentLeaves, startClaim, type AuditFailure, type AuditTarget, type ChallengeProof, type FailureKind, type SegmentCommitment } from "./segment.ts";
export { recomputeSegment, replaySegment, replaySteps } from "./recompute.ts";
export { auditSampledStep, type OpenedPreState } from "./step-sample.ts";
export { decideStep, type DecideStepParameters, type StepDecision } from "./decide.ts";
export { freivaldsSegment, replayWitnesses, verifyStepWitness, WITNESS_PRODUCTS, type StepCheck, type WitnessSource } from "./stepwitness.ts";
export { magnitudeSegment, adamRatioBound, updateRatio } from "./magnitude.ts";
export { progressSegment, progressFamilyHash, calibrateProgress, heldOutBatch, heldOutLoss, readProgressCalibration, writeProgressCalibration, ProgressCalibrationError, type ProgressCalibration, type ProgressOptions } from "./progress.ts";
export { toleranceSegment, calibrateThreshold, stepDistance, segmentDistances, ToleranceCalibrationError, type ToleranceCalibration } from "./tolerance.ts";
export { publishStepStates, readStepStates, writeStepStates, segmentStates, STEP_STATES_FILE, type StepStateSource, type StatesOutcome } from "./step-states.ts";
export { cheatedSteps, affectedSegments, segmentsTouched } from "./cheated-steps.ts";
export { replayUpdate } from "./update.ts";
export { screenState, screenConfigOf, adamPowers, adamDriftBound, type GradientBound, type ScreenConfig, type ScreenDetails, type ScreenResult } from "./state-screen.ts";
export { screenSegment, screenFinalState, committedState, recomputeAfterScreen, type ScreenSegmentOptions, type ScreenSegmentResult } from "./screen-segment.ts";
