/**
 * Per-step states: what a provider must serve, on request, for the checks that look at every step's
 * weights without recomputing the step (magnitude) or that compare them with a tolerance (tolerance
 * mode): the checkpoint of every state t = 0..steps, in the provider's content store, listed in
 * `<trace dir>/steps.json`:
 *
 *   { "format": "pouw-step-states-1", "manifestHash": "0x..", "jobId": "..", "cids": ["bafkrei..", ...] }
 *
 * `cids[t]` is the CID of the checkpoint of state t (safetensors layout, ml/checkpoint.ts). The
 * auditor checks each served file against its CID and its state hash against the provider's leaf
 * h(t), itself checked against the committed segment root, so a served state is bound to the
 * commitment; serving nothing, or a state that does not match, is the provider's fault.
 *
 * `pouw train --step-states` (train's keepStepStates) stores every state as it trains and writes
 * steps.json. A provider that kept only the segment-start checkpoints (pouw train's default) rebuilds
 * the others with `publishStepStates` (bitwise mode: replaying its own steps reproduces them exactly).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Run, TrainState } from "../ml/run.ts";
import type { TraceFile } from "../ml/trace-file.ts";
import { ContentNotFoundError, LocalDirStore, readStoredFile, UnreadableContentError, type ContentStore } from "../store/index.ts";
import { fetchState, type AuditFailure, type AuditTarget, type SegmentLeaves } from "./segment.ts";

export const STEP_STATES_FORMAT = "pouw-step-states-1";
export const STEP_STATES_FILE = "steps.json";
/** Largest steps.json read (about 70 bytes per state: a million steps fit). */
export const STEP_STATES_MAX_BYTES = 64 * 1024 * 1024;

const StepStatesFile = z.strictObject({
  format: z.literal(STEP_STATES_FORMAT),
  manifestHash: z.string().regex(/^0x[0-9a-f]{64}$/),
  jobId: z.string().regex(/^(0|[1-9][0-9]*)$/),
  cids: z.array(z.string().regex(/^b[a-z2-7]{58}$/)),
});
export type StepStatesFile = z.infer<typeof StepStatesFile>;

/** Reads `<dir>/steps.json`; undefined when the provider serves none. A malformed file is served but wrong: returned as a string reason. */
export async function readStepStates(traceDir: string): Promise<StepStatesFile | string | undefined> {
  let text: string;
  try {
    // the trace directory is the provider's: a steps.json that is a FIFO, a device or huge is refused, not read
    text = new TextDecoder().decode(await readStoredFile(join(traceDir, STEP_STATES_FILE), { maxBytes: STEP_STATES_MAX_BYTES, root: traceDir }));
  } catch (err) {
    if (err instanceof UnreadableContentError) return `${STEP_STATES_FILE}: ${err.message}`;
    if (err instanceof ContentNotFoundError) return undefined;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${STEP_STATES_FILE} is not valid JSON`;
  }
  const r = StepStatesFile.safeParse(value);
  if (!r.success) return `${STEP_STATES_FILE} field ${r.error.issues[0]!.path.join(".") || "(root)"}: ${r.error.issues[0]!.message}`;
  return r.data;
}

/** Writes steps.json for the given per-state CIDs (cids[t] = checkpoint of state t). */
export async function writeStepStates(run: Run, traceDir: string, cids: readonly string[]): Promise<StepStatesFile> {
  const file: StepStatesFile = { format: STEP_STATES_FORMAT, manifestHash: run.manifestHash, jobId: run.jobId.toString(), cids: [...cids] };
  await writeFile(join(traceDir, STEP_STATES_FILE), JSON.stringify(file, null, 2) + "\n");
  return file;
}

/**
 * Honest provider: rebuilds every state from its segment-start checkpoints with the engine's step
 * function, stores each state's checkpoint and writes steps.json. Bitwise runs only reproduce their
 * own states this way if they are honest (a cheater must keep what it actually committed).
 */
export async function publishStepStates(run: Run, trace: TraceFile, traceDir: string): Promise<StepStatesFile> {
  const store = new LocalDirStore(join(traceDir, trace.store));
  const cids: string[] = [];
  for (const seg of trace.segments) {
    let state: TrainState = run.loadCheckpoint(await store.get(seg.checkpointCid), { step: seg.firstStep });
    cids[seg.firstStep] = seg.checkpointCid;
    for (let t = seg.firstStep + 1; t <= seg.lastStep; t++) {
      state = run.step(state, t).state;
      cids[t] = await store.put(run.checkpointBytes(state));
    }
  }
  return writeStepStates(run, traceDir, cids);
}

/** Where the per-step states of a target come from. */
export type StepStateSource = { readonly file: StepStatesFile | string | undefined; readonly store: ContentStore };

/** The verified states of a segment, or why not; `step` names the state whose fetch failed. */
export type StatesOutcome = { ok: true; value: TrainState[] } | { ok: false; failure: AuditFailure; step?: number };

/**
 * The verified states first..last of a segment (each against its leaf; a non-finite state that matches its leaf is
 * returned: the caller decides it by exactStep). The segment's first state is the caller's verified start checkpoint.
 * Failures: step-states-missing, or the fetch failures of segment.ts with a state mismatch reported
 * as step-state-mismatch.
 */
export async function segmentStates(target: AuditTarget, source: StepStateSource, leaves: SegmentLeaves, start: TrainState): Promise<StatesOutcome> {
  const file = source.file;
  if (file === undefined) return { ok: false, failure: { kind: "step-states-missing", message: `the provider serves no ${STEP_STATES_FILE} (per-step states)` } };
  if (typeof file === "string") return { ok: false, failure: { kind: "step-states-missing", message: file } };
  if (file.manifestHash !== target.run.manifestHash || BigInt(file.jobId) !== target.run.jobId || file.cids.length !== target.run.manifest.training.steps + 1) {
    return { ok: false, failure: { kind: "step-states-missing", message: `${STEP_STATES_FILE} is for another job or has ${file.cids.length} states, expected ${target.run.manifest.training.steps + 1}` } };
  }
  const states: TrainState[] = [start];
  const sub: AuditTarget = { ...target, store: source.store };
  for (let t = leaves.first + 1; t <= leaves.last; t++) {
    const r = await fetchState(sub, file.cids[t]!, t, leaves.hashes[t - leaves.first]!, `state ${t}`);
    if (!r.ok) return { ok: false, failure: r.failure.kind === "checkpoint-state-mismatch" ? { kind: "step-state-mismatch", message: r.failure.message } : r.failure, step: t };
    states.push(r.value);
  }
  return { ok: true, value: states };
}
