/**
 * Progress check: the loss of the committed checkpoints on a verifier-held batch (examples of the
 * manifest's held-out split, which the provider never trains on, chosen by the auditor's private
 * seed), against the curve honest runs of the manifest's model follow. For segment i it evaluates
 * the start checkpoint (state i*K) and the end checkpoint (the next segment's start, or the final
 * checkpoint), both bound to the committed leaves, and flags the segment when the loss fell less
 * than honest runs allow:
 *
 *   drop_i = L(i*K) - L((i+1)*K)     flag iff  drop_i < meanDrop_i - k * sdDrop_i
 *                                     or     L((i+1)*K) > meanEnd_i + k * sdEnd_i
 *
 * with the means and standard deviations over n calibration runs (the manifest with other data seeds,
 * same init, trained honestly with the engine) and k the one-sided normal prediction multiplier for a
 * new run at half the target false-alarm rate alpha (two tests): k = t(1 - alpha/2, n - 1) * sqrt(1 + 1/n)
 * (stats.ts predictionMultiplier; with n = 20 and alpha = 1e-2, k = 2.93 where the normal quantile
 * z(0.995) = 2.58 would treat the calibration's mean and sd as exact). The first test sees a segment that does not learn; the
 * second sees a run that has fallen behind the honest curve (it accumulates over segments).
 * A progress alarm is a screening signal that triggers a recompute, not slashing evidence, so its
 * default false-alarm rate is 1e-2 per segment.
 * It needs no training compute (two forward passes over the held-out batch) and catches near-zero
 * and heavily skipped steps; it is blind to changes that do not move the held-out loss (a backdoor
 * plant, a quarter batch that still learns). Both checkpoints also go through the state screen
 * (state-screen.ts; the end state with the start as its baseline, K steps), since the loss reads the
 * weights only and a poisoned optimizer state leaves them honest.
 */
import { writeFile, readFile } from "node:fs/promises";
import type { Hex } from "viem";
import { z } from "zod";
import { manifestHash, parseManifest, type Manifest } from "../ml/manifest.ts";
import type { Batch } from "../ml/models/types.ts";
import { createRun, type Run, type TrainState } from "../ml/run.ts";
import { offlineSalt } from "../ml/salt.ts";
import type { ContentStore } from "../store/index.ts";
import { InputError } from "../errors/index.ts";
import { failed, openFailed, passed, type CheckResult } from "./result.ts";
import { commitmentsOf, fetchState, openSegment, segmentLeaves, AuditInputError, type AuditTarget } from "./segment.ts";
import { screenConfigOf, screenState } from "./state-screen.ts";
import { predictionMultiplier } from "./stats.ts";

/** Held-out examples the check evaluates (fewer if the split is smaller). */
export const PROGRESS_EXAMPLES = 128;

/**
 * The verifier-held batch: PROGRESS_EXAMPLES examples of the run's held-out split, chosen by the
 * auditor's private seed. The model picks them (Model.heldOutBatch; images: a seeded sample of the test
 * split; text: seeded windows of the held-out tail, ml/models/held-out.ts).
 */
export function heldOutBatch(run: Run, auditorSeed: number, examples = PROGRESS_EXAMPLES): Batch {
  return run.model.heldOutBatch(run.data, auditorSeed, examples);
}

export function heldOutLoss(run: Run, state: TrainState, batch: Batch): number {
  return run.model.evaluate(state.params, [batch]).loss;
}

export const ProgressCalibration = z.strictObject({
  format: z.literal("pouw-progress-calibration-1"),
  /**
   * progressFamilyHash of the manifest: the calibration applies to every manifest that differs from
   * it only in the data seed (the calibration runs vary exactly that); any other change needs a new one.
   */
  familyHash: z.string().regex(/^0x[0-9a-f]{64}$/),
  runs: z.number().int().min(2),
  /** The auditor's private seed that chose the held-out batch (keep the file private). */
  auditorSeed: z.number().int().min(0).max(0xffff_ffff),
  examples: z.number().int().positive(),
  /** Per segment: mean and sample standard deviation of the held-out loss drop over the runs. */
  segments: z.array(z.strictObject({ index: z.number().int().min(0), meanDrop: z.number(), sdDrop: z.number().min(0), meanStartLoss: z.number(), meanEndLoss: z.number(), sdEndLoss: z.number().min(0) })),
});
export type ProgressCalibration = z.infer<typeof ProgressCalibration>;

export class ProgressCalibrationError extends InputError {
  override name = "ProgressCalibrationError";
  override readonly code: string = "PROGRESS_CALIBRATION";
}

/** keccak of the canonical manifest with data.seed set to 0: what a progress calibration is valid for. */
export function progressFamilyHash(manifest: Manifest): Hex {
  return manifestHash({ ...manifest, data: { ...manifest.data, seed: 0 } });
}

/**
 * Variant of the manifest for calibration run r: another data seed (batch order and held-out split),
 * same model, initialisation and optimizer, so the curve is the one this job's model should follow.
 */
export function calibrationManifest(manifest: Manifest, r: number): Manifest {
  return parseManifest({ ...manifest, data: { ...manifest.data, seed: (manifest.data.seed + 1000 + r) >>> 0 } });
}

/**
 * Trains `runs` honest variants of the manifest (calibrationManifest) with the engine's step
 * function and records each segment's held-out loss drop. The auditor's seed picks the batch.
 * A fine-tuning manifest (init.checkpointCid) starts every run from its base checkpoint, read from
 * `baseStore` (the same h(0) as the job: the base's weights, a fresh optimizer state).
 */
export async function calibrateProgress(manifest: Manifest, options: { runs: number; auditorSeed: number; baseStore?: ContentStore }): Promise<ProgressCalibration> {
  if ("checkpointCid" in manifest.init && !options.baseStore) throw new ProgressCalibrationError(`a fine-tuning manifest's calibration starts from its base checkpoint ${manifest.init.checkpointCid}: pass the store that holds it (baseStore)`);
  if (!Number.isInteger(options.auditorSeed) || options.auditorSeed < 0 || options.auditorSeed > 0xffff_ffff) throw new ProgressCalibrationError(`auditor seed must be a uint32, got ${options.auditorSeed}`);
  if (!Number.isInteger(options.runs) || options.runs < 2) throw new ProgressCalibrationError(`progress calibration needs at least 2 runs, got ${options.runs}`);
  const { steps, stepsPerSegment: K } = manifest.training;
  const drops: number[][] = [];
  const starts: number[][] = [];
  const ends: number[][] = [];
  let examples = 0;
  for (let r = 0; r < options.runs; r++) {
    // NOTE: any salt gives an honest run; the data seed already varies the order (and the split) between runs, so
    // the calibration is valid for every job of the family, whatever its salt.
    const run = await createRun(calibrationManifest(manifest, r), { jobId: 0n, salt: offlineSalt(0n), ...(options.baseStore ? { store: options.baseStore } : {}) });
    const batch = heldOutBatch(run, options.auditorSeed);
    examples = batch.size;
    let state = options.baseStore ? await run.initFromStore(options.baseStore) : run.initState();
    let before = heldOutLoss(run, state, batch);
    for (let seg = 0; seg * K < steps; seg++) {
      for (let t = seg * K + 1; t <= (seg + 1) * K; t++) state = run.step(state, t).state;
      const after = heldOutLoss(run, state, batch);
      ((drops[seg] ??= []), (starts[seg] ??= []), (ends[seg] ??= []));
      drops[seg]!.push(before - after);
      starts[seg]!.push(before);
      ends[seg]!.push(after);
      before = after;
    }
  }
  const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
  const sd = (a: number[]) => {
    const m = mean(a);
    return Math.sqrt(a.reduce((s, x) => s + (x - m) ** 2, 0) / (a.length - 1));
  };
  return {
    format: "pouw-progress-calibration-1",
    familyHash: progressFamilyHash(manifest),
    runs: options.runs,
    auditorSeed: options.auditorSeed,
    examples,
    segments: drops.map((d, i) => ({ index: i, meanDrop: mean(d), sdDrop: sd(d), meanStartLoss: mean(starts[i]!), meanEndLoss: mean(ends[i]!), sdEndLoss: sd(ends[i]!) })),
  };
}

export async function writeProgressCalibration(path: string, c: ProgressCalibration): Promise<void> {
  await writeFile(path, JSON.stringify(c, null, 2) + "\n");
}

export async function readProgressCalibration(path: string): Promise<ProgressCalibration> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new ProgressCalibrationError(`cannot read progress calibration ${path}: ${(err as Error).message}`, { cause: err });
  }
  const r = ProgressCalibration.safeParse(value);
  if (!r.success) throw new ProgressCalibrationError(`progress calibration ${path}: field ${r.error.issues[0]!.path.join(".")}: ${r.error.issues[0]!.message}`);
  return r.data;
}

export type ProgressOptions = {
  /** Calibration of this manifest; its auditorSeed chooses the held-out batch. */
  readonly calibration: ProgressCalibration;
  /** Target false-alarm rate per audited honest segment (default 1e-2, split over the two tests). */
  readonly falseAlarmRate?: number;
};

export async function progressSegment(target: AuditTarget, segment: number, options: ProgressOptions): Promise<CheckResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const family = progressFamilyHash(target.run.manifest);
  if (options.calibration.familyHash !== family) throw new AuditInputError(`the progress calibration is for manifest family ${options.calibration.familyHash}, this manifest's is ${family}`);
  const cal = options.calibration.segments[segment];
  if (!cal) throw new AuditInputError(`the progress calibration has no segment ${segment}`);
  const config = screenConfigOf(target.run);
  const opened = await openSegment(target, segment);
  if (!opened.ok) return openFailed(segment, "progress", opened, elapsed());
  const { leaves, start } = opened.value;
  const { run } = target;
  // End state: the next segment's start checkpoint (its first leaf is this segment's last), or the final checkpoint.
  const next = commitmentsOf(target)[segment + 1];
  if (next) {
    const nextLeaves = segmentLeaves(target, segment + 1);
    if (!nextLeaves.ok) return failed(segment, "progress", nextLeaves.failure, elapsed());
  }
  const endCid = next ? next.checkpointCid : (target.finalCheckpointCid ?? target.trace?.finalCheckpointCid);
  if (!endCid) throw new AuditInputError(`the progress check of the last segment needs the final checkpoint's CID (trace.json or the provenance record)`);
  const end = await fetchState(target, endCid, leaves.last, leaves.hashes[leaves.hashes.length - 1]!, `segment ${segment} end checkpoint`);
  if (!end.ok) return failed(segment, "progress", end.failure, elapsed());
  for (const [state, previous] of [[start, undefined], [end.value, start]] as const) {
    const screen = screenState(config, state, previous);
    if (!screen.ok) return failed(segment, "progress", screen.failure, elapsed(), { stepsChecked: leaves.last - leaves.first, details: { screen: screen.details, tensor: screen.tensor, index: screen.index } });
  }
  const batch = heldOutBatch(run, options.calibration.auditorSeed, options.calibration.examples);
  const lossStart = heldOutLoss(run, start, batch);
  const lossEnd = heldOutLoss(run, end.value, batch);
  const drop = lossStart - lossEnd;
  const alpha = options.falseAlarmRate ?? 1e-2;
  if (!(alpha > 0 && alpha < 1)) throw new AuditInputError(`progress false-alarm rate must be in (0, 1), got ${alpha}`);
  // two one-sided tests at alpha/2 each; the calibration's mean and sd are estimates from cal.runs runs
  const k = predictionMultiplier(alpha / 2, options.calibration.runs);
  const threshold = cal.meanDrop - k * cal.sdDrop;
  const endThreshold = cal.meanEndLoss + k * cal.sdEndLoss;
  const details = { lossStart, lossEnd, drop, threshold, endThreshold, meanDrop: cal.meanDrop, sdDrop: cal.sdDrop, k };
  if (!(drop >= threshold)) {
    return failed(segment, "progress", { kind: "progress-below-curve", message: `held-out loss fell ${drop.toFixed(4)} over segment ${segment}; honest runs fall ${cal.meanDrop.toFixed(4)} +- ${cal.sdDrop.toFixed(4)} (threshold ${threshold.toFixed(4)})` }, elapsed(), { stepsChecked: leaves.last - leaves.first, details });
  }
  if (!(lossEnd <= endThreshold)) {
    return failed(segment, "progress", { kind: "progress-below-curve", message: `held-out loss ${lossEnd.toFixed(4)} after segment ${segment}; honest runs reach ${cal.meanEndLoss.toFixed(4)} +- ${cal.sdEndLoss.toFixed(4)} (threshold ${endThreshold.toFixed(4)})` }, elapsed(), { stepsChecked: leaves.last - leaves.first, details });
  }
  return passed(segment, "progress", leaves.last - leaves.first, elapsed(), details);
}
