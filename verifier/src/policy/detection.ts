/**
 * The measured detection matrix (bench/results/detection.json, written by bench/detection): for each
 * cheat strategy, the compute it saves and, per check, the probability that auditing ONE affected
 * segment with that check flags it; per check, its compute relative to training the segment and its
 * false alarms over honest runs. Parsed once here; everything downstream takes the typed value.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { DetectionMatrixError } from "./params.ts";

const prob = z.number().min(0).max(1);

export const DetectionCheck = z.strictObject({
  /** Check name as used by `pouw audit --checks` (recompute, freivalds, progress, magnitude, ...). */
  name: z.string().min(1),
  /** costRatio: compute of this check on one segment / compute of training that segment (>= 0). */
  costRatio: z.number().min(0).finite(),
  /** everySegment: the check runs on every committed segment whatever the audit rate (the state screen). */
  everySegment: z.boolean().optional(),
});

export const DetectionStrategy = z.strictObject({
  /** Strategy name as given to `pouw train --strategy` (skip:0.3, quarter-batch, ...). */
  name: z.string().min(1),
  /** computeSaving: fraction of the honest training compute of the job the cheat saves, [0, 1]. */
  computeSaving: prob,
  /** detection[check]: probability that auditing one affected segment with that check flags the cheat. */
  detection: z.record(z.string(), prob),
  /**
   * segmentsTouched: "all" (default) for a cheat applied per segment (its saving scales with the segments it touches),
   * or T for a one-shot cheat that injects in T segments and saves computeSaving of the whole job (state-poison).
   */
  segmentsTouched: z.union([z.literal("all"), z.number().int().positive()]).optional(),
});

export const FalseAlarms = z.strictObject({
  /** runs: honest segments (or runs) audited with the check. */
  runs: z.number().int().positive(),
  /** alarms: how many of them the check flagged. */
  alarms: z.number().int().min(0),
});

export const DetectionMatrix = z
  .strictObject({
    version: z.literal(1),
    /** Path of the manifest the matrix was measured on. */
    manifest: z.string().min(1),
    checks: z.array(DetectionCheck).min(1),
    strategies: z.array(DetectionStrategy).min(1),
    falseAlarms: z.record(z.string(), FalseAlarms),
  })
  .superRefine((m, ctx) => {
    const names = new Set<string>();
    m.checks.forEach((c, i) => {
      if (names.has(c.name)) ctx.addIssue({ code: "custom", path: ["checks", i, "name"], message: `duplicate check "${c.name}"` });
      names.add(c.name);
    });
    const strategyNames = new Set<string>();
    m.strategies.forEach((s, i) => {
      if (strategyNames.has(s.name)) ctx.addIssue({ code: "custom", path: ["strategies", i, "name"], message: `duplicate strategy "${s.name}"` });
      strategyNames.add(s.name);
      for (const c of names) {
        if (!(c in s.detection)) ctx.addIssue({ code: "custom", path: ["strategies", i, "detection"], message: `missing a rate for check "${c}"` });
      }
      for (const c of Object.keys(s.detection)) {
        if (!names.has(c)) ctx.addIssue({ code: "custom", path: ["strategies", i, "detection", c], message: `check "${c}" is not listed in checks` });
      }
    });
    for (const [c, fa] of Object.entries(m.falseAlarms)) {
      if (!names.has(c)) ctx.addIssue({ code: "custom", path: ["falseAlarms", c], message: `check "${c}" is not listed in checks` });
      if (fa.alarms > fa.runs) ctx.addIssue({ code: "custom", path: ["falseAlarms", c, "alarms"], message: `exceeds runs (${fa.runs})` });
    }
    for (const c of names) {
      if (!(c in m.falseAlarms)) ctx.addIssue({ code: "custom", path: ["falseAlarms"], message: `missing an entry for check "${c}"` });
    }
  });

export type DetectionMatrix = z.infer<typeof DetectionMatrix>;

/** Default location written by bench/detection, relative to the package root. */
export const DEFAULT_DETECTION_PATH = "bench/results/detection.json";

/**
 * The committed matrix of this package for full training (DEFAULT_DETECTION_PATH under the package root), as an absolute
 * path: independent of the working directory a command runs in.
 */
export function packageDetectionPath(): string {
  return fileURLToPath(new URL(`../../../${DEFAULT_DETECTION_PATH}`, import.meta.url));
}

/**
 * The job kinds with their own measured matrix (bench/detection-kinds.ts): a manifest with an `adapter` block is
 * priced from bench/results/detection-adapter.json, one with a `distill` block from detection-distill.json (the
 * adapted cheats: skipped adapter step, planted adapter, wrong base; skipped teacher, wrong teacher). Full training
 * reads DEFAULT_DETECTION_PATH.
 */
export type JobKindDetection = "adapter" | "distill";

/** The job kind whose matrix prices a manifest; undefined for full training. */
export function detectionKindOf(manifest: { adapter?: unknown; distill?: unknown }): JobKindDetection | undefined {
  // INVARIANT: a manifest cannot be both (ml/manifest.ts refuses it); adapter first keeps the choice total anyway
  if (manifest.adapter !== undefined) return "adapter";
  if (manifest.distill !== undefined) return "distill";
  return undefined;
}

/** The committed matrix that prices a job of `kind` (detectionKindOf), as an absolute path; packageDetectionPath for full training. */
export function detectionPathFor(kind: JobKindDetection | undefined): string {
  if (kind === undefined) return packageDetectionPath();
  return fileURLToPath(new URL(`../../../bench/results/detection-${kind}.json`, import.meta.url));
}

/** Validates a parsed value; throws DetectionMatrixError naming the first bad field. */
export function parseDetectionMatrix(value: unknown, source = "detection matrix"): DetectionMatrix {
  const r = DetectionMatrix.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
  let message = issue.message;
  if (issue.code === "unrecognized_keys") message = `unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  throw new DetectionMatrixError(`${source}: field ${field}: ${message}`, {
    details: r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "),
  });
}

/** Reads and validates a detection matrix file. A missing file gets a one-line reason with the fix. */
export function loadDetectionMatrix(path: string, opts: { isDefault?: boolean } = {}): DetectionMatrix {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new DetectionMatrixError(
        opts.isDefault
          ? `no detection matrix at ${path}: run the detection bench (bench/detection) first, or pass --detection FILE`
          : `detection matrix ${path} does not exist`,
        { cause: err },
      );
    }
    throw new DetectionMatrixError(`cannot read detection matrix ${path}: ${(err as Error).message}`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DetectionMatrixError(`detection matrix ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  return parseDetectionMatrix(value, `detection matrix ${path}`);
}

/** Point estimate of a check's false-alarm rate per audited honest segment: alarms / runs. */
export function falseAlarmRate(m: DetectionMatrix, check: string): number {
  const fa = m.falseAlarms[check];
  return fa ? fa.alarms / fa.runs : 0;
}
