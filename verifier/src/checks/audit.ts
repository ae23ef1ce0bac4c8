/**
 * The auditor's entry points: `auditSegment` runs the chosen checks on one segment, `auditRun` on a
 * selection of segments; `openTraceDir` loads a provider's published trace directory. The CLI
 * (`pouw audit`) and the challenger bot call these.
 *
 * @example
 *   const target = await openTraceDir(run, "out/job-7");
 *   const report = await auditRun(target, { segments: { kind: "random", count: 2 }, checks: ["recompute"] });
 *   for (const s of report.segments) if (!s.ok && s.proof) await challenge(s.proof);
 */
import { randomInt } from "node:crypto";
import { join, resolve } from "node:path";
import { logger } from "../log/index.ts";
import type { Run } from "../ml/run.ts";
import { readTraceFile, type TraceFile } from "../ml/trace-file.ts";
import { LocalDirStore, type ContentSource } from "../store/index.ts";
import { LayeredStore } from "../store/layered.ts";
import type { FreivaldsOptions } from "./freivalds.ts";
import { magnitudeSegment } from "./magnitude.ts";
import { progressSegment, type ProgressOptions } from "./progress.ts";
import { recomputeSegment } from "./recompute.ts";
import { CHECK_NAMES, segmentVerdict, type AuditCheckName, type CheckResult, type SegmentVerdict } from "./result.ts";
import { AuditInputError, checkTarget, commitmentsOf, type AuditTarget, type SegmentCommitment } from "./segment.ts";
import { readStepStates, type StepStateSource } from "./step-states.ts";
import { freivaldsSegment, type WitnessSource } from "./stepwitness.ts";
import { toleranceSegment, type ToleranceOptions } from "./tolerance.ts";
import { screenSegment } from "./screen-segment.ts";

const log = logger("checks.audit");

/** An audit target plus what the optional checks need. */
export type AuditContext = AuditTarget & {
  /** Per-step states served by the provider (magnitude, tolerance). */
  readonly stepStates?: StepStateSource;
  /** Step witnesses served by the provider (freivalds); default: replayed (see stepwitness.ts). */
  readonly witnesses?: WitnessSource;
};

/** An audit context opened from a published trace directory: trace.json is there. */
export type TraceAuditContext = AuditContext & { readonly trace: TraceFile };

export type CheckOptions = {
  readonly freivalds?: FreivaldsOptions;
  readonly progress?: ProgressOptions;
  readonly tolerance?: ToleranceOptions;
};

export type SegmentSelection = { kind: "all" } | { kind: "list"; segments: readonly number[] } | { kind: "random"; count: number };

export type AuditOptions = CheckOptions & {
  readonly checks: readonly AuditCheckName[];
  readonly segments?: SegmentSelection;
};

export type AuditReport = {
  readonly manifestHash: string;
  readonly jobId: string;
  readonly ok: boolean;
  readonly segments: readonly SegmentVerdict[];
};

/** Parses `all`, `i,j,k` or `random:N`; AuditInputError otherwise. */
export function parseSegmentSelection(text: string): SegmentSelection {
  if (text === "all") return { kind: "all" };
  const random = /^random:([1-9][0-9]*)$/.exec(text);
  if (random) return { kind: "random", count: Number(random[1]) };
  if (/^(0|[1-9][0-9]*)(,(0|[1-9][0-9]*))*$/.test(text)) return { kind: "list", segments: text.split(",").map(Number) };
  throw new AuditInputError(`--segments ${JSON.stringify(text)}: expected all, i,j,... or random:N`);
}

/** Parses a comma-separated list of check names; AuditInputError on an unknown or repeated name. */
export function parseChecks(text: string): AuditCheckName[] {
  const names = text.split(",").map((s) => s.trim());
  const out: AuditCheckName[] = [];
  for (const n of names) {
    if (!(CHECK_NAMES as readonly string[]).includes(n)) throw new AuditInputError(`--checks: unknown check ${JSON.stringify(n)} (${CHECK_NAMES.join(", ")})`);
    if (out.includes(n as AuditCheckName)) throw new AuditInputError(`--checks: ${n} given twice`);
    out.push(n as AuditCheckName);
  }
  return out;
}

/**
 * The segments to audit. `random:N` draws N distinct segments with node:crypto: the auditor's
 * private randomness, drawn after the provider committed.
 */
export function selectSegments(selection: SegmentSelection, count: number, draw: (n: number) => number = (n) => randomInt(n)): number[] {
  if (selection.kind === "all") return Array.from({ length: count }, (_, i) => i);
  if (selection.kind === "list") {
    for (const s of selection.segments) if (s >= count) throw new AuditInputError(`segment ${s} does not exist (the job has ${count} segments)`);
    return [...new Set(selection.segments)].sort((a, b) => a - b);
  }
  if (selection.count > count) throw new AuditInputError(`random:${selection.count} exceeds the job's ${count} segments`);
  const pool = Array.from({ length: count }, (_, i) => i);
  for (let i = 0; i < selection.count; i++) {
    const j = i + draw(count - i);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, selection.count).sort((a, b) => a - b);
}

/** Runs one check on one segment. */
export async function runCheck(ctx: AuditContext, segment: number, check: AuditCheckName, options: CheckOptions = {}): Promise<CheckResult> {
  switch (check) {
    case "recompute":
      return recomputeSegment(ctx, segment);
    case "freivalds":
      return freivaldsSegment(ctx, segment, ctx.witnesses, options.freivalds);
    case "magnitude":
      return magnitudeSegment(ctx, segment, ctx.stepStates ?? { file: undefined, store: ctx.store });
    case "tolerance":
      if (!options.tolerance) throw new AuditInputError("the tolerance check needs a threshold (--tolerance-threshold)");
      return toleranceSegment(ctx, segment, ctx.stepStates ?? { file: undefined, store: ctx.store }, options.tolerance);
    case "progress":
      if (!options.progress) throw new AuditInputError("the progress check needs a calibration (--progress-calibration) and an auditor seed");
      return progressSegment(ctx, segment, options.progress);
    case "screen":
      // the segment's start checkpoint, with the previous segment's start as its window's baseline
      return screenSegment(ctx, segment);
  }
}

/**
 * Runs `checks` on segment `segment`, in order; every check runs (a report lists all results). The verdict is
 * segmentVerdict's: a failure is held against the provider only when the job's h(0) is usable (BaseCheckpointError
 * otherwise).
 */
export async function auditSegment(ctx: AuditContext, segment: number, options: AuditOptions): Promise<SegmentVerdict> {
  checkTarget(ctx);
  if (!Number.isInteger(segment) || segment < 0 || segment >= commitmentsOf(ctx).length) throw new AuditInputError(`segment ${segment} does not exist (${commitmentsOf(ctx).length} segments)`);
  if (options.checks.length === 0) throw new AuditInputError("no checks selected");
  const results: CheckResult[] = [];
  for (const c of options.checks) results.push(await runCheck(ctx, segment, c, options));
  const verdict = await segmentVerdict(ctx, segment, results);
  if (!verdict.ok) log.info({ segment, check: verdict.check, kind: verdict.failure?.kind, step: verdict.firstBadStep }, "segment failed");
  return verdict;
}

export async function auditRun(ctx: AuditContext, options: AuditOptions): Promise<AuditReport> {
  checkTarget(ctx);
  const segments = selectSegments(options.segments ?? { kind: "all" }, commitmentsOf(ctx).length);
  const out: SegmentVerdict[] = [];
  for (const s of segments) out.push(await auditSegment(ctx, s, options));
  return { manifestHash: ctx.run.manifestHash, jobId: ctx.run.jobId.toString(), ok: out.every((s) => s.ok), segments: out };
}

/**
 * Loads a provider's published trace directory (trace.json, its store, optional steps.json) as an
 * audit context for `run`. `commitments` are the on-chain ones where the caller has them. With
 * `remotes` (e.g. the provider's `pouw serve`), content missing from the directory's store is fetched
 * from them, verified, and cached in that store.
 */
export async function openTraceDir(run: Run, dir: string, commitments?: readonly SegmentCommitment[], remotes: readonly ContentSource[] = []): Promise<TraceAuditContext> {
  const trace = await readTraceFile(join(dir, "trace.json"));
  const local = new LocalDirStore(resolve(dir, trace.store));
  const store = remotes.length === 0 ? local : new LayeredStore(local, remotes);
  const ctx: TraceAuditContext = { run, trace, store, stepStates: { file: await readStepStates(dir), store }, ...(commitments ? { commitments } : {}) };
  checkTarget(ctx);
  return ctx;
}
