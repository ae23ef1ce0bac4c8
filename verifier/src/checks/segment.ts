/**
 * What every segment check needs before it looks at the arithmetic: the provider's committed leaves
 * of the segment (checked against the committed root), the committed start state hash, the start
 * checkpoint (fetched by CID, CID-checked, decoded, its state hash checked), and Merkle proofs of the
 * provider's own leaves for a challenge.
 *
 * Trust model: the commitments (root and checkpoint CID per segment) are what the provider anchored
 * on chain (`commitSegment`); trace.json and the content store are the provider's untrusted serving
 * of the data behind them. Every served byte is checked against a commitment before it is used, and
 * every mismatch is a typed `AuditFailure` (never a thrown crash), because a provider that serves data
 * that does not match its commitments is at fault.
 */
import type { Hex } from "viem";
import { checkpointSizeBound } from "../ml/checkpoint.ts";
import { CheckpointError } from "../ml/errors.ts";
import type { Run, TrainState } from "../ml/run.ts";
import type { TraceFile } from "../ml/trace-file.ts";
import { CidMismatchError, ContentNotFoundError, InvalidCidError, type ContentStore } from "../store/index.ts";
import { segmentStateRange, verifyTraceProof, type Bytes32, type SegmentTree } from "../trace/index.ts";
import { segmentRoot, segmentTreeOf } from "./segment-root.ts";
import { InputError, type PouwErrorOptions } from "../errors/index.ts";
import { SourceUnavailableError } from "../net/index.ts";

/** What the provider committed for one segment (on chain: JobMarket.commitSegment). */
export type SegmentCommitment = {
  readonly index: number;
  readonly traceRoot: Bytes32;
  readonly checkpointCid: string;
  /** The K+1 state hashes committed in calldata (SegmentCommitted); when present they are the leaves, not trace.json's. */
  readonly stateHashes?: readonly Bytes32[];
};

/**
 * Why a segment failed an audit. Each kind is its own failure so that the caller (bot, receipt,
 * dispute) can act on it:
 *   trace-leaf-mismatch        the provider's per-step hashes do not reproduce the committed root
 *   trace-entry-mismatch       trace.json's own entry for the segment (index, firstStep, lastStep, endStateHash)
 *                              disagrees with its position or its leaves (a provider-served structural lie)
 *   boundary-mismatch          the segment's first leaf differs from the previous segment's last leaf
 *   initial-state-mismatch     segment 0 does not start from the manifest's initial state
 *   checkpoint-missing         no content is served for the committed checkpoint CID
 *   checkpoint-cid-mismatch    the served checkpoint bytes do not hash to the committed CID
 *   checkpoint-invalid         the bytes are not a checkpoint of this job (truncated, wrong model...)
 *   checkpoint-state-mismatch  the checkpoint decodes, but its state hash is not the committed start state
 *   state-divergence           recomputing step s from state s-1 does not give the committed h(s)
 *   witness-invalid            a step witness fails a Freivalds product or elementwise check
 *   step-states-missing        the per-step states (steps.json) a check needs are not served
 *   step-state-mismatch        a served per-step state does not hash to its committed leaf
 *   magnitude-exceeded         an update is larger than the optimizer can produce
 *   optimizer-state-invalid    the optimizer state did not advance as one step of the optimizer does
 *                              (the bias-correction powers are not the step's exact value)
 *   state-non-finite           a screened state holds a NaN or an infinity (weights or optimizer state): a screen's
 *                              finding, never a claim by itself (the exact recompute of the producing step decides)
 *   moment-bound-exceeded      an optimizer moment no gradient sequence can produce (state-screen.ts)
 *   tolerance-exceeded         a step's distance from the reference recompute exceeds the threshold
 *   progress-below-curve       held-out loss fell less than honest runs' calibrated curve allows
 */
export const FAILURE_KINDS = [
  "trace-leaf-mismatch",
  "trace-entry-mismatch",
  "boundary-mismatch",
  "initial-state-mismatch",
  "checkpoint-missing",
  "checkpoint-cid-mismatch",
  "checkpoint-invalid",
  "checkpoint-state-mismatch",
  "state-divergence",
  "witness-invalid",
  "step-states-missing",
  "step-state-mismatch",
  "magnitude-exceeded",
  "optimizer-state-invalid",
  "state-non-finite",
  "moment-bound-exceeded",
  "tolerance-exceeded",
  "progress-below-curve",
] as const;

export type FailureKind = (typeof FAILURE_KINDS)[number];

export type AuditFailure = { readonly kind: FailureKind; readonly message: string };

/**
 * Why a failure carries no challenge claim, when it has none: every failure of the pipeline is either a claim (a step
 * with proofs of the provider's leaves, what DisputeGame.challenge takes) or one of these reasons.
 */
export function noClaimReason(kind: FailureKind): string {
  switch (kind) {
    case "trace-leaf-mismatch":
    case "trace-entry-mismatch":
      return "trace.json's leaves do not reproduce the committed root; the on-chain leaves (SegmentCommitted) give a claim: audit with the chain's commitments";
    case "step-states-missing":
    case "step-state-mismatch":
      return "per-step states are a service the market does not commit to; a recompute of the segment names the step";
    case "progress-below-curve":
      return "a statistical screen names no step; a recompute of the segment does";
    case "state-non-finite":
      return "a non-finite state is no fault by itself; a recompute of the segment that produced it names the step if the rule does not produce it";
    case "moment-bound-exceeded":
    case "optimizer-state-invalid":
    case "magnitude-exceeded":
      return "the screened state was produced by the previous segment's steps; a recompute of that segment names the step";
    default:
      return "no step of the segment is named by this check; a recompute of the segment names one";
  }
}

/**
 * A challenge-ready claim that step `step` is wrong: the provider's own leaves for s-1 and s with
 * Merkle proofs against the committed root (what `DisputeGame.challenge` takes), and the state hash
 * the auditor computed for step s where it has one.
 */
export type ChallengeProof = {
  readonly segment: number;
  readonly traceRoot: Bytes32;
  readonly step: number;
  readonly prevStateHash: Bytes32;
  readonly prevProof: readonly Bytes32[];
  readonly stateHash: Bytes32;
  readonly proof: readonly Bytes32[];
  /** h(s) the auditor derived (recompute or verified witness); absent for bound checks. */
  readonly expectedStateHash?: Bytes32;
};

/**
 * Everything an audit needs: the run (manifest, job id, salt), the store the provider's content is read from, and the
 * commitments. Two shapes, one pipeline:
 *   - a published trace directory (`pouw audit --trace DIR`): `trace` is trace.json; the commitments default to its
 *     own segments (or are the on-chain ones where the auditor passes them);
 *   - the chain only (the challenger bot, a panel member): no trace, `commitments` are what SegmentCommitted logged,
 *     each with its K+1 state hashes, for segments 0..n-1 committed so far (a prefix of the job).
 */
export type AuditTarget = {
  readonly run: Run;
  readonly store: ContentStore;
  /** The provider's trace.json; absent for an audit from the chain alone (then `commitments` carry the leaves). */
  readonly trace?: TraceFile;
  /** The on-chain commitments; default: trace.segments (local audits). */
  readonly commitments?: readonly SegmentCommitment[];
  /** The final checkpoint's CID (the final screen); default: trace.finalCheckpointCid. */
  readonly finalCheckpointCid?: string;
};

/** The audit input is unusable (not the provider's fault): wrong manifest, segment out of range. */
export class AuditInputError extends InputError {
  override name = "AuditInputError";
  override readonly code: string = "AUDIT_INPUT";
}

/** What is wrong with a fine-tuning job's base checkpoint: no source serves it, it does not decode, or h(0) is not finite. */
export type BaseProblem = "missing" | "invalid" | "non-finite";

/**
 * The job's base checkpoint (manifest init.checkpointCid, the buyer's content) gives no usable h(0): it is missing, does
 * not decode as this job's model and optimizer, or its weights hold a NaN or an infinity. Not the provider's fault: an
 * honest provider trains the rule's trajectory from that h(0) (deterministic, so its leaves match recomputation) and a
 * non-finite h(0) makes every later state non-finite. So no audit holds a failure of such a job against its provider
 * (`assertBaseUsable`), a panel member votes Valid on it (decideStep), and a provider refuses the job at accept and
 * before any commit (provider/check-base.ts). docs/checks.md "Fine-tuning jobs".
 */
export class BaseCheckpointError extends AuditInputError {
  override name = "BaseCheckpointError";
  override readonly code: string = "BASE_CHECKPOINT";
  readonly problem: BaseProblem;
  readonly cid: string;
  constructor(problem: BaseProblem, cid: string, message: string, options: PouwErrorOptions = {}) {
    super(message, options);
    this.problem = problem;
    this.cid = cid;
  }
}

/**
 * The job's h(0) (`Run.initFromStore`: a fine-tuning manifest's base weights with a fresh optimizer state), checked: it
 * decodes and every value is finite; BaseCheckpointError otherwise (a base no source serves now is "missing", with the
 * store's error as its cause). A seed-init job's h(0) is the model's own initialisation, returned as it is.
 */
export async function usableInitialState(run: Run, store: ContentStore): Promise<TrainState> {
  const init = run.manifest.init;
  if (!("checkpointCid" in init)) return run.initState();
  const cid = init.checkpointCid;
  let state: TrainState;
  try {
    state = await run.initFromStore(store);
  } catch (err) {
    if (err instanceof CheckpointError) throw new BaseCheckpointError("invalid", cid, `the job's base checkpoint ${cid} does not decode as a checkpoint of this job's model and optimizer: ${err.shortMessage}`, { cause: err });
    if (err instanceof ContentNotFoundError || err instanceof CidMismatchError || err instanceof InvalidCidError || err instanceof SourceUnavailableError) {
      throw new BaseCheckpointError("missing", cid, `the job's base checkpoint ${cid} is not served by any source: ${(err as Error & { shortMessage?: string }).shortMessage ?? (err as Error).message}`, { cause: err });
    }
    throw err;
  }
  const bad = nonFinite(run, state);
  if (bad) throw new BaseCheckpointError("non-finite", cid, `the job's base checkpoint ${cid} gives a non-finite h(0): ${bad} (the buyer's input; every state trained from it is non-finite too)`);
  return state;
}

/**
 * h(0) for an audit: `usableInitialState`, except that a base no source serves now is rethrown as the store's own error
 * (ContentNotFoundError, SourceUnavailableError), which the callers already treat as content that is not the
 * provider's to serve: `pouw audit` exits 2 naming it, the bot retries and logs CANNOT AUDIT, a panel member does not
 * vote yet.
 */
export async function auditInitialState(target: AuditTarget): Promise<TrainState> {
  try {
    return await usableInitialState(target.run, target.store);
  } catch (err) {
    if (err instanceof BaseCheckpointError && err.problem === "missing" && err.cause) throw err.cause;
    throw err;
  }
}

/**
 * IMPORTANT: call before a failure of the audit pipeline is held against the provider (reported, challenged, voted
 * Fault). A fine-tuning job whose base gives no usable h(0) throws BaseCheckpointError: its failures are the buyer's
 * input, not the provider's steps. A seed-init job, or a usable base, returns.
 */
export async function assertBaseUsable(target: AuditTarget): Promise<void> {
  if ("checkpointCid" in target.run.manifest.init) await auditInitialState(target);
}

export function commitmentsOf(target: AuditTarget): readonly SegmentCommitment[] {
  if (target.commitments) return target.commitments;
  if (!target.trace) throw new AuditInputError("an audit needs the provider's trace.json or the on-chain commitments");
  return target.trace.segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot as Bytes32, checkpointCid: s.checkpointCid }));
}

/**
 * Throws AuditInputError unless the target is usable: the trace (when given) belongs to the run's manifest and job (id
 * and salt) and has one commitment per segment; a chain-only target has commitments 0..n-1 (n <= segments), each with
 * its K+1 leaves.
 */
export function checkTarget(target: AuditTarget): void {
  const { run, trace } = target;
  if (!trace) {
    const { steps, stepsPerSegment: K } = run.manifest.training;
    const c = target.commitments;
    if (!c || c.length === 0) throw new AuditInputError("an audit without trace.json needs the on-chain commitments");
    if (c.length > steps / K) throw new AuditInputError(`${c.length} segment commitments for ${steps / K} segments`);
    c.forEach((x, i) => {
      if (x.index !== i) throw new AuditInputError(`commitment ${i} is for segment ${x.index}`);
      if (x.stateHashes?.length !== K + 1) throw new AuditInputError(`commitment ${i} carries ${x.stateHashes?.length ?? "no"} state hashes, expected ${K + 1} (the leaves of SegmentCommitted)`);
    });
    return;
  }
  if (trace.manifestHash !== run.manifestHash) throw new AuditInputError(`trace is for manifest ${trace.manifestHash}, the audited manifest hashes to ${run.manifestHash}`);
  if (BigInt(trace.jobId) !== run.jobId) throw new AuditInputError(`trace is for job ${trace.jobId}, the audit runs job ${run.jobId}`);
  // NOTE: like the job id, the salt names the job: a trace that records another salt is for another job (or
  // deployment), or the auditor gave the wrong one. The salt the audit recomputes with is the auditor's own (run.salt,
  // from the chain), never the trace's: a provider cannot choose its data order by writing a salt here.
  if (trace.salt !== run.salt) throw new AuditInputError(`trace is for job salt ${trace.salt}, the audit runs salt ${run.salt} (another job or deployment, or the wrong --salt)`);
  const { steps, stepsPerSegment } = run.manifest.training;
  if (trace.steps !== steps || trace.stepsPerSegment !== stepsPerSegment) {
    throw new AuditInputError(`trace has ${trace.steps} steps of ${trace.stepsPerSegment} per segment, the manifest ${steps} of ${stepsPerSegment}`);
  }
  const commitments = commitmentsOf(target);
  if (commitments.length !== steps / stepsPerSegment) throw new AuditInputError(`${commitments.length} segment commitments for ${steps / stepsPerSegment} segments`);
  // NOTE: commitments the auditor passes (from the chain) are its input: a wrong index is its error. Those read from
  // trace.json are the provider's: a wrong entry there is a fault of that segment (segmentLeaves: trace-entry-mismatch).
  if (target.commitments) {
    commitments.forEach((c, i) => {
      if (c.index !== i) throw new AuditInputError(`commitment ${i} is for segment ${c.index}`);
    });
  }
}

export type SegmentLeaves = {
  readonly segment: number;
  readonly first: number;
  readonly last: number;
  readonly root: Bytes32;
  /** Provider's h(first) .. h(last), verified to reproduce `root`. */
  readonly hashes: readonly Bytes32[];
  readonly tree: SegmentTree;
};

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: AuditFailure };

/** openSegment's outcome: a failure after the leaves verified carries the claim on the segment's first step. */
export type Opened = { ok: true; value: { leaves: SegmentLeaves; start: TrainState } } | { ok: false; failure: AuditFailure; claim?: ChallengeProof };

const fail = (kind: FailureKind, message: string): { ok: false; failure: AuditFailure } => ({ ok: false, failure: { kind, message } });

/**
 * The provider's leaves of segment `i`, checked against the committed root: the on-chain leaves of the commitment
 * when it carries them (JobMarket keeps every segment's K+1 state hashes in calldata), else trace.json's.
 */
export function segmentLeaves(target: AuditTarget, i: number): Outcome<SegmentLeaves> {
  const K = target.run.manifest.training.stepsPerSegment;
  const { first, last } = segmentStateRange(i, K);
  const c = commitmentsOf(target)[i];
  if (!c) throw new AuditInputError(`segment ${i} does not exist (${commitmentsOf(target).length} segments)`);
  if (!c.stateHashes && !target.trace) throw new AuditInputError(`segment ${i}: the commitment carries no state hashes and there is no trace.json`);
  const hashes = (c.stateHashes ? [...c.stateHashes] : target.trace!.stateHashes.slice(first, last + 1)) as Bytes32[];
  if (hashes.length !== K + 1) return fail("trace-leaf-mismatch", `trace.json serves ${hashes.length} state hashes for segment ${i}, expected ${K + 1}`);
  if (!target.commitments && target.trace) {
    // the commitment itself is trace.json's entry: it must say what its position and its leaves say
    const e = target.trace.segments[i]!;
    const wrong = [
      e.index !== i ? `index ${e.index}` : null,
      e.firstStep !== first ? `firstStep ${e.firstStep} (expected ${first})` : null,
      e.lastStep !== last ? `lastStep ${e.lastStep} (expected ${last})` : null,
      e.endStateHash !== hashes[K] ? `endStateHash ${e.endStateHash} (its last leaf h(${last}) is ${hashes[K]})` : null,
    ].filter((x) => x !== null);
    if (wrong.length > 0) return fail("trace-entry-mismatch", `trace.json segments[${i}] says ${wrong.join(", ")}`);
  }
  const root = segmentRoot(first, hashes);
  if (root !== c.traceRoot) {
    return fail("trace-leaf-mismatch", `segment ${i}: the served state hashes ${first}..${last} give root ${root}, the committed root is ${c.traceRoot}`);
  }
  // the proofs' tree is built only for a claim (challengeProof), from the same leaves
  let tree: SegmentTree | undefined;
  return { ok: true, value: { segment: i, first, last, root: c.traceRoot, hashes, get tree() { return (tree ??= segmentTreeOf(first, hashes)); } } };
}

/**
 * The committed hash of the segment's start state: for segment 0 the manifest's initial state
 * (computed here), otherwise the previous segment's last leaf (checked against its committed root),
 * which must equal this segment's first leaf.
 */
export async function committedStartHash(target: AuditTarget, leaves: SegmentLeaves): Promise<Outcome<Bytes32>> {
  const { run } = target;
  if (leaves.segment === 0) {
    // a base that gives no usable h(0) is the buyer's input, not a segment-0 fault: BaseCheckpointError
    const init = await auditInitialState(target);
    const h = run.stateHashOf(init);
    if (leaves.hashes[0] !== h) return fail("initial-state-mismatch", `segment 0 starts from h(0) = ${leaves.hashes[0]}, the manifest's initial state is ${h}`);
    return { ok: true, value: h };
  }
  const prev = segmentLeaves(target, leaves.segment - 1);
  if (!prev.ok) return prev;
  const end = prev.value.hashes[prev.value.hashes.length - 1]!;
  if (end !== leaves.hashes[0]) {
    return fail("boundary-mismatch", `segment ${leaves.segment - 1} ends at h(${leaves.first}) = ${end}, segment ${leaves.segment} starts at ${leaves.hashes[0]}`);
  }
  return { ok: true, value: end };
}

/**
 * Fetches a checkpoint by CID and decodes it as state `step` of this run; each failure typed. The read
 * is capped at the size of one state of this model (checkpointSizeBound).
 *
 * IMPORTANT: a state that decodes and matches its committed hash is returned even when it holds a NaN or an infinity.
 * A verified non-finite state is no fault by itself: the rule's own trajectory diverges on some manifests (a buyer's
 * learning rate of 1e30 overflows at step 2), and an honest provider must follow it. Whether the rule produces the
 * state is decided by the exact recompute of the step that produced it (`exactStep`, the producing segment's
 * recompute), which names a planted NaN as state-divergence. The screens still report it (state-screen.ts,
 * state-non-finite, no claim). docs/checks.md "Non-finite states".
 */
export async function fetchState(target: AuditTarget, cid: string, step: number, expectedHash: Hex, label: string): Promise<Outcome<TrainState>> {
  let bytes: Uint8Array;
  try {
    bytes = await target.store.get(cid, { maxBytes: checkpointSizeBound(target.run.paramSpecs, target.run.optSpecs) });
  } catch (err) {
    if (err instanceof CidMismatchError) return fail("checkpoint-cid-mismatch", `${label} ${cid}: served bytes hash to ${err.actual}`);
    if (err instanceof ContentNotFoundError || err instanceof InvalidCidError) return fail("checkpoint-missing", `${label} ${cid}: ${(err as Error).message}`);
    throw err;
  }
  let state: TrainState;
  try {
    state = target.run.loadCheckpoint(bytes, { step });
  } catch (err) {
    if (err instanceof CheckpointError) return fail("checkpoint-invalid", `${label} ${cid}: ${err.shortMessage}`);
    throw err;
  }
  const h = target.run.stateHashOf(state);
  if (h !== expectedHash) return fail("checkpoint-state-mismatch", `${label} ${cid} decodes to state hash ${h}, the committed h(${step}) is ${expectedHash}`);
  return { ok: true, value: state };
}

/** exactStep's answer: the rule's state t (its hash is the committed leaf), or the state-divergence it names. */
export type ExactStep = { ok: true; state: TrainState } | { ok: false; failure: AuditFailure; stateHash: Bytes32 };

/**
 * The rule on a non-finite value, for the checks that cannot decide one (Freivalds, the magnitude bound, the screens):
 * recompute step t exactly (`Run.step`) from the verified state t-1 and compare with the committed h(t). Equal: the
 * state is the rule's trajectory (diverged, but followed), not a fault; different: state-divergence at step t, the
 * claim a panel member votes Fault on (decideStep recomputes the same step). Costs one step.
 */
export function exactStep(run: Run, before: TrainState, t: number, committed: Bytes32, why: string): ExactStep {
  const state = run.step(before, t).state;
  const h = run.stateHashOf(state);
  if (h === committed) return { ok: true, state };
  return { ok: false, failure: { kind: "state-divergence", message: `step ${t} (${why}): the exact recompute gives h(${t}) = ${h}, committed ${committed}` }, stateHash: h };
}

/** Where a state first holds a non-finite value ("tensor[i] is NaN"), or null. */
export function nonFinite(run: Run, state: TrainState): string | null {
  const names = [...run.paramSpecs.map((s) => s.name), ...run.optSpecs.map((s) => `opt.${s.name}`)];
  const arrays = [...state.params, ...state.opt];
  for (let i = 0; i < arrays.length; i++) {
    const a = arrays[i]!;
    for (let j = 0; j < a.length; j++) if (a[j]! - a[j]! !== 0) return `${names[i]}[${j}] is ${a[j]}`;
  }
  return null;
}

/**
 * The verified start state of a segment whose leaves are verified: its committed start hash (segment 0: the manifest's
 * initial state; otherwise the previous segment's end), then its committed checkpoint fetched and checked against it.
 * Every failure here is the segment's own and challengeable at its first step (`startClaim`).
 */
export async function openStart(target: AuditTarget, leaves: SegmentLeaves): Promise<Outcome<TrainState>> {
  const startHash = await committedStartHash(target, leaves);
  if (!startHash.ok) return startHash;
  const cid = commitmentsOf(target)[leaves.segment]!.checkpointCid;
  return fetchState(target, cid, leaves.first, startHash.value, `segment ${leaves.segment} start checkpoint`);
}

/** Verified leaves, committed start hash and the start state of segment `i`. */
export async function openSegment(target: AuditTarget, i: number): Promise<Opened> {
  const leaves = segmentLeaves(target, i);
  if (!leaves.ok) return leaves;
  const start = await openStart(target, leaves.value);
  if (!start.ok) return { ...start, claim: startClaim(leaves.value) };
  return { ok: true, value: { leaves: leaves.value, start: start.value } };
}

/**
 * The claim when a segment's start cannot be opened (openStart failed): step first+1. A panel member decides that step
 * with openSegment too (dispute/panel.ts decideStep), so it votes Fault on the same failure: a provider that withholds
 * or corrupts its committed checkpoint, or starts segment 0 anywhere but the manifest's initial state, loses the
 * dispute (docs/disputes.md, data availability).
 */
export function startClaim(leaves: SegmentLeaves): ChallengeProof {
  return challengeProof(leaves, leaves.first + 1);
}

/** Challenge proof for step s (first+1 <= s <= last) from the verified leaves. */
export function challengeProof(leaves: SegmentLeaves, s: number, expectedStateHash?: Bytes32): ChallengeProof {
  if (s <= leaves.first || s > leaves.last) throw new RangeError(`step ${s} is not a step of segment ${leaves.segment} (${leaves.first + 1}..${leaves.last})`);
  const proof: ChallengeProof = {
    segment: leaves.segment,
    traceRoot: leaves.root,
    step: s,
    prevStateHash: leaves.hashes[s - 1 - leaves.first]!,
    prevProof: leaves.tree.proof(s - 1),
    stateHash: leaves.hashes[s - leaves.first]!,
    proof: leaves.tree.proof(s),
    ...(expectedStateHash ? { expectedStateHash } : {}),
  };
  // INVARIANT: a proof handed to a challenge verifies on chain (MerkleProof.verify) against the committed root.
  if (!verifyTraceProof(proof.traceRoot, s - 1, proof.prevStateHash, proof.prevProof) || !verifyTraceProof(proof.traceRoot, s, proof.stateHash, proof.proof)) {
    throw new Error(`internal: proof for step ${s} does not verify against root ${proof.traceRoot}`);
  }
  return proof;
}
