/**
 * trace.json: what a provider publishes per run (and what the auditor reads). See docs/engine.md.
 *
 * Segment i's leaves are the states firstStep..lastStep (= i*K .. (i+1)*K, as SegmentTree in
 * verifier/src/trace); its training steps are firstStep+1..lastStep; checkpointCid is the
 * checkpoint of state firstStep (the segment's start).
 */
import { dirname } from "node:path";
import type { Hex } from "viem";
import { z } from "zod";
import { InputError } from "../errors/index.ts";
import { readStoredFile, UnreadableContentError } from "../store/index.ts";

const bytes32 = z.string().regex(/^0x[0-9a-f]{64}$/) as unknown as z.ZodType<Hex>;
const cid = z.string().regex(/^b[a-z2-7]{58}$/);

/** 2: adds `salt` (the job salt the data order was derived from, ml/salt.ts). */
export const TRACE_FORMAT = "pouw-trace-2";
/**
 * Formats this reader refuses with a reason instead of a schema error: pouw-trace-1 traces were trained with the
 * unsalted data order (version-1 manifests), which this engine does not reproduce.
 */
export const LEGACY_TRACE_FORMATS: Readonly<Record<string, string>> = {
  "pouw-trace-1": "predates job salts (its batches were a function of the data seed alone, a version-1 manifest); this engine cannot recompute it: re-train with a version-2 manifest",
};

export const SegmentEntry = z.strictObject({
  index: z.number().int().min(0),
  firstStep: z.number().int().min(0),
  lastStep: z.number().int().min(1),
  traceRoot: bytes32,
  endStateHash: bytes32,
  /** Mean training loss of the segment's K steps, x 1e6, rounded. */
  lossE6: z.number().int(),
  checkpointCid: cid,
});

export const ComputeRecord = z.strictObject({
  /** Nominal FLOPs of one honest step (2 x multiply-adds of forward + backward). */
  flopsPerStep: z.number(),
  honestFlops: z.number(),
  spentFlops: z.number(),
  savedFlops: z.number(),
  savedFraction: z.number(),
  stepsSkipped: z.number().int(),
  gradientsComputed: z.number().int(),
  basis: z.string(),
});

export const TraceFile = z.strictObject({
  format: z.literal(TRACE_FORMAT),
  manifestHash: bytes32,
  jobId: z.string().regex(/^(0|[1-9][0-9]*)$/),
  /** The job salt the data order was derived from (ml/salt.ts); an audit checks it against the job's. */
  salt: bytes32,
  strategy: z.string(),
  model: z.string(),
  steps: z.number().int().positive(),
  stepsPerSegment: z.number().int().positive(),
  backend: z.string(),
  /** Directory (relative to trace.json) of the LocalDirStore holding the checkpoints. */
  store: z.string(),
  segments: z.array(SegmentEntry),
  /** h(0) .. h(steps). */
  stateHashes: z.array(bytes32),
  /** Training loss of steps 1..steps as reported by the provider, x 1e6, rounded. */
  stepLossE6: z.array(z.number().int()),
  finalCheckpointCid: cid,
  compute: ComputeRecord,
  planted: z.strictObject({ step: z.number().int(), tensor: z.string(), count: z.number().int(), delta: z.number() }).optional(),
  /** Held-out evaluation of the final state; loss null when it is not finite (a run whose rule diverged). */
  evaluation: z.strictObject({ loss: z.number().nullable(), accuracy: z.number().optional(), examples: z.number().int() }).optional(),
  wallSeconds: z.number(),
});

export type TraceFile = z.infer<typeof TraceFile>;
export type SegmentEntry = z.infer<typeof SegmentEntry>;

export class TraceFileError extends InputError {
  override name = "TraceFileError";
  override readonly code: string = "TRACE_FILE_ERROR";
}

export function parseTraceFile(value: unknown): TraceFile {
  const format = (value as { format?: unknown } | null)?.format;
  if (typeof format === "string" && Object.hasOwn(LEGACY_TRACE_FORMATS, format)) throw new TraceFileError(`trace.json format ${format} ${LEGACY_TRACE_FORMATS[format]}`);
  const r = TraceFile.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new TraceFileError(`trace.json field ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const t = r.data;
  if (t.stateHashes.length !== t.steps + 1) throw new TraceFileError(`trace.json has ${t.stateHashes.length} state hashes, expected ${t.steps + 1}`);
  if (t.segments.length * t.stepsPerSegment !== t.steps) throw new TraceFileError(`trace.json has ${t.segments.length} segments of ${t.stepsPerSegment} steps for ${t.steps} steps`);
  return t;
}

/**
 * Largest trace.json read: about 70 bytes per state hash and step loss, so a million steps fit. A provider serves this
 * file: a bigger one, a FIFO, a device or a symlink out of its directory is refused with one line, never read.
 */
export const TRACE_FILE_MAX_BYTES = 128 * 1024 * 1024;

export async function readTraceFile(path: string): Promise<TraceFile> {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await readStoredFile(path, { maxBytes: TRACE_FILE_MAX_BYTES, root: dirname(path), label: "trace.json" }));
  } catch (err) {
    if (err instanceof UnreadableContentError) throw new TraceFileError(`${path}: ${err.shortMessage}`, { cause: err });
    if (err instanceof TypeError) throw new TraceFileError(`${path} is not UTF-8 text`, { cause: err });
    throw new TraceFileError(`cannot read ${path}`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TraceFileError(`${path} is not valid JSON`, { cause: err });
  }
  return parseTraceFile(value);
}

/** The K+1 state hashes of segment `index` (what commitSegment takes): h(index*K) .. h((index+1)*K). */
export function segmentStateHashes(trace: TraceFile, index: number): `0x${string}`[] {
  const K = trace.stepsPerSegment;
  const hashes = trace.stateHashes.slice(index * K, (index + 1) * K + 1) as `0x${string}`[];
  if (hashes.length !== K + 1) throw new TraceFileError(`trace.json has ${hashes.length} state hashes for segment ${index}, expected ${K + 1}`);
  return hashes;
}
