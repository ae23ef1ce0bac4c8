/**
 * bench/detection: the measured detection matrix (every cheat strategy x every check) on the tiny
 * manifest, in the schema of verifier/src/policy/detection.ts, written to
 * bench/results/detection.json; details (per-seed outcomes, drift distribution, costs) to
 * bench/results/detection-details.json and the tolerance calibration to bench/results/tolerance.json.
 *
 *   npm run bench:detection [-- --honest 100 --honest-all-checks 100 --seeds 4 --tolerance-calibration 40]
 *   npm run bench:detection -- --only skip-powers,plant:10 [--seeds 4]
 *
 * `--only LIST` measures only the listed strategies, with the committed calibrations (progress from
 * detection-details.json, the tolerance threshold from tolerance.json), and merges their rows into the committed
 * detection.json (same name replaced, new ones appended; checks, costs and false alarms kept), their outcomes into
 * detection-details.json, and re-prices detection-quote.json: a bounded run for a new cheat.
 *
 * Method:
 * - each strategy is trained with S data seeds; every AFFECTED segment (one holding a cheated step,
 *   checks/cheated-steps.ts) is audited with every check; detection = flagged / affected audited.
 *   The cheater serves what it has: its committed checkpoints, the per-step states it trained
 *   (train's keepStepStates, as `pouw train --step-states`), and for
 *   Freivalds the best witness it can give (replayed from its committed state, stepwitness.ts).
 * - false alarms: N honest runs (other data seeds, default 100), every segment audited with
 *   recompute; the first M of them (default all 100) also with freivalds, magnitude and progress; the
 *   tolerance column audits M honest providers on the wasm backend against the cpu reference, with
 *   a threshold calibrated on separate wasm runs (target per-step false-alarm rate 1e-6).
 * - screen (the state screen, checks/state-screen.ts): a cheated segment counts as caught when the
 *   screen of the state it produced (the next segment's start checkpoint, or the final checkpoint)
 *   fails; false alarms: every committed state of the honest runs (S segment starts and the final
 *   checkpoint per run), each screened with the previous segment's start as its baseline, as a bot
 *   that screens every commitment holds it.
 * - costRatio: mean check wall time on an honest segment / mean wall time of training a segment
 *   (pouw train's loop: K steps, K state hashes, one checkpoint), both measured in this process; the
 *   screen's includes fetching and verifying the checkpoint, and detection-details.json also has the
 *   screen's pure arithmetic (screenState) alone.
 * - computeSaving: the trace's own compute record (savedFraction), mean over seeds.
 * - every run trains with the offline salt of its job id (ml/salt.ts); the peers of copy, full-copy and steer are
 *   job JOB + 1, so their batches are not the cheater's (the job salt).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import {
  affectedSegments,
  segmentsTouched,
  calibrateProgress,
  calibrateThreshold,
  openTraceDir,
  publishStepStates,
  runCheck,
  screenConfigOf,
  screenSegment,
  screenState,
  segmentLeaves,
  segmentDistances,
  segmentStates,
  writeStepStates,
  type AuditCheckName,
  type CheckOptions,
  type CheckResult,
} from "../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, useBackend, type Manifest } from "../verifier/src/ml/index.ts";
import { parseDetectionMatrix, type DetectionMatrix } from "../verifier/src/policy/detection.ts";
import { quotePolicy, readQuoteJob } from "../verifier/src/policy/quote.ts";
import { readFileSync } from "node:fs";

const { values } = parseArgs({
  options: {
    honest: { type: "string", default: "100" },
    "honest-all-checks": { type: "string", default: "100" },
    seeds: { type: "string", default: "4" },
    "tolerance-calibration": { type: "string", default: "40" },
    "progress-calibration": { type: "string", default: "20" },
    only: { type: "string" },
  },
});
const ONLY = values.only?.split(",").map((x) => x.trim()).filter((x) => x !== "");
const HONEST = Number(values.honest);
const HONEST_ALL = Math.min(HONEST, Number(values["honest-all-checks"]));
const SEEDS = Number(values.seeds);
const TOL_CAL = Number(values["tolerance-calibration"]);
const PROG_CAL = Number(values["progress-calibration"]);
const MANIFEST_PATH = "examples/tiny.json";
const CHECKS: AuditCheckName[] = ["recompute", "freivalds", "magnitude", "progress", "tolerance", "screen"];
// plant:4 is the boundary plant: the planted state is segment 0's committed end state, the one segment 1 starts from
// the adaptive cheats: skip-powers does no work but advances Adam's powers (the screen's power check passes);
// plant-bounded plants, at every segment end, as much as the screen's weight-continuity bound leaves; plant-spread:5
// doses the plant in five steps spread over the segments; plant:10 plants in the last segment
const STRATEGIES = ["skip:0.25", "skip:0.5", "quarter-batch", "stale:2", "stale:4", "fp16", "copy", "full-copy", "plant:6", "plant:4", "near-zero", "state-poison", "nan-plant", "steer", "skip-powers", "plant-bounded", "plant-spread:5", "plant:10"];
const JOB = 3n;
const ALPHA_TOLERANCE = 1e-6;

const base = JSON.parse(readFileSync(MANIFEST_PATH, "utf8")) as Record<string, unknown> & { data: object; training: object };
const variant = (seed: number, extra: Record<string, unknown> = {}): Manifest =>
  parseManifest({ ...base, data: { ...base.data, seed }, ...extra });
const K = (base.training as { stepsPerSegment: number }).stepsPerSegment;
const STEPS = (base.training as { steps: number }).steps;
const SEGMENTS = STEPS / K;

const work = join(tmpdir(), `pouw-detection-${process.pid}`);
await rm(work, { recursive: true, force: true });
await mkdir(work, { recursive: true });
const log = (msg: string) => process.stderr.write(`[detection ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

if (ONLY) {
  await measureOnly(ONLY);
  await rm(work, { recursive: true, force: true });
  process.exit(0);
}

// ---- calibrations ---------------------------------------------------------------------------
log(`progress calibration: ${PROG_CAL} honest runs`);
const progressCalibration = await calibrateProgress(variant(7), { runs: PROG_CAL, auditorSeed: 0x5eed });

log(`tolerance calibration: ${TOL_CAL} honest wasm runs`);
const tolManifest = (seed: number) => variant(seed, { numerics: "tolerance" });
async function wasmHonest(seed: number): Promise<{ dir: string; drifts: number[]; ctx: Awaited<ReturnType<typeof openTraceDir>> }> {
  const m = tolManifest(seed);
  const wasm = await createRun(m, { jobId: JOB, salt: offlineSalt(JOB), backend: "wasm" });
  const dir = join(work, `wasm-${seed}`);
  const { trace } = await train(wasm, { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
  await publishStepStates(wasm, trace, dir);
  const cpu = await createRun(m, { jobId: JOB, salt: offlineSalt(JOB), backend: "cpu" });
  const ctx = await openTraceDir(cpu, dir);
  const drifts: number[] = [];
  for (let seg = 0; seg < SEGMENTS; seg++) {
    const opened = segmentLeaves(ctx, seg);
    if (!opened.ok) throw new Error(`wasm run ${seed}: ${opened.failure.message}`);
    const startCid = ctx.trace.segments[seg]!.checkpointCid;
    const start = cpu.loadCheckpoint(await ctx.store.get(startCid), { step: seg * K });
    const states = await segmentStates(ctx, ctx.stepStates!, opened.value, start);
    if (!states.ok) throw new Error(`wasm run ${seed}: ${states.failure.message}`);
    drifts.push(...segmentDistances(cpu, states.value));
  }
  return { dir, drifts, ctx };
}
const calibrationDrifts: number[] = [];
for (let r = 0; r < TOL_CAL; r++) {
  const { drifts, dir } = await wasmHonest(9000 + r);
  calibrationDrifts.push(...drifts);
  await rm(dir, { recursive: true, force: true });
  if ((r + 1) % 10 === 0) log(`tolerance calibration ${r + 1}/${TOL_CAL}`);
}
const tolerance = calibrateThreshold(calibrationDrifts, ALPHA_TOLERANCE);
log(`tolerance threshold ${tolerance.threshold.toExponential(3)} (max honest drift ${tolerance.max.toExponential(3)}, p50 ${tolerance.quantiles.p50.toExponential(3)})`);
const checkOptions: CheckOptions = { progress: { calibration: progressCalibration }, tolerance: { threshold: tolerance.threshold } };

// ---- cheats: detection per affected segment -------------------------------------------------
const { rows: strategyRows, outcomes } = await measureStrategies(STRATEGIES, checkOptions);

type Outcome = { strategy: string; seed: number; segment: number; affected: boolean; results: Record<string, { ok: boolean; kind?: string; step?: number | null }> };

/** Trains each strategy with SEEDS data seeds and audits every segment with every check (header: Method). */
async function measureStrategies(names: readonly string[], checkOptions: CheckOptions): Promise<{ rows: DetectionMatrix["strategies"]; outcomes: Outcome[] }> {
  const outcomes: Outcome[] = [];
  const strategyRows: DetectionMatrix["strategies"] = [];
  for (const name of names) {
    const flagged: Record<string, number> = Object.fromEntries(CHECKS.map((c) => [c, 0]));
    let audited = 0;
    const savings: number[] = [];
    let touched: number | "all" = "all";
    for (let i = 0; i < SEEDS; i++) {
      const seed = 100 + i;
      const run = await createRun(variant(seed), { jobId: JOB, salt: offlineSalt(JOB) });
      const dir = join(work, `${name.replace(":", "-")}-${seed}`);
      let strategyText = name;
      if (name === "copy" || name === "full-copy" || name === "steer") {
        // the peer: an honest provider of the same manifest under another job, serving its per-step states
        const peerRun = await createRun(variant(seed), { jobId: JOB + 1n, salt: offlineSalt(JOB + 1n) });
        const peerDir = join(work, `peer-${name}-${seed}`);
        const peer = await train(peerRun, { outDir: peerDir, strategy: { kind: "honest" }, evaluate: false, keepStepStates: true });
        await writeStepStates(peerRun, peerDir, peer.stepStateCids!);
        strategyText = `${name}:${peerDir}`;
      }
      const strategy = parseStrategy(strategyText);
      // every strategy but copy keeps the states it actually trained and serves them (steps.json); full-copy and steer
      // serve the (re-keyed or steered) peer states they hold
      const { trace, stepStateCids } = await train(run, { outDir: dir, strategy, evaluate: false, keepStepStates: name !== "copy" });
      savings.push(trace.compute.savedFraction);
      if (stepStateCids) await writeStepStates(run, dir, stepStateCids);
      // the copier's best serving of per-step states: the peer's (honest) states under its own job
      else await publishStepStates(run, trace, dir);
      const ctx = await openTraceDir(run, dir);
      const affected = affectedSegments(strategy, STEPS, K);
      touched = segmentsTouched(strategy, STEPS, K);
      for (let seg = 0; seg < SEGMENTS; seg++) {
        const results: Outcome["results"] = {};
        for (const check of CHECKS) {
          // the screen of the state this segment produced: the next segment's start, or the final checkpoint
          const res: CheckResult = check === "screen" ? await screenSegment(ctx, seg + 1) : await runCheck(ctx, seg, check, checkOptions);
          results[check] = { ok: res.ok, ...(res.failure ? { kind: res.failure.kind, step: res.firstBadStep } : {}) };
          if (affected.includes(seg) && !res.ok) flagged[check]!++;
        }
        if (affected.includes(seg)) audited++;
        outcomes.push({ strategy: name, seed, segment: seg, affected: affected.includes(seg), results });
      }
    }
    const detection = Object.fromEntries(CHECKS.map((c) => [c, audited > 0 ? flagged[c]! / audited : 0]));
    strategyRows.push({ name, computeSaving: Math.max(0, Math.min(1, savings.reduce((a, b) => a + b, 0) / savings.length)), detection, segmentsTouched: touched });
    log(`${name}: ${audited} affected segments audited; detection ${JSON.stringify(detection)}`);
  }
  return { rows: strategyRows, outcomes };
}

/** --only: the listed strategies with the committed calibrations, merged into the committed results. */
async function measureOnly(names: readonly string[]): Promise<void> {
  const details = JSON.parse(readFileSync("bench/results/detection-details.json", "utf8")) as { progressCalibration: Awaited<ReturnType<typeof calibrateProgress>>; outcomes: Outcome[] } & Record<string, unknown>;
  const tol = JSON.parse(readFileSync("bench/results/tolerance.json", "utf8")) as { calibration: { threshold: number } };
  const committed = parseDetectionMatrix(JSON.parse(readFileSync("bench/results/detection.json", "utf8")), "bench/results/detection.json");
  log(`--only ${names.join(", ")}: committed progress calibration and tolerance threshold ${tol.calibration.threshold.toExponential(3)}`);
  const measured = await measureStrategies(names, { progress: { calibration: details.progressCalibration }, tolerance: { threshold: tol.calibration.threshold } });
  const rows = [...committed.strategies];
  for (const r of measured.rows) {
    const i = rows.findIndex((x) => x.name === r.name);
    if (i >= 0) rows[i] = r;
    else rows.push(r);
  }
  const matrix = parseDetectionMatrix({ ...committed, strategies: rows });
  await writeFile("bench/results/detection.json", JSON.stringify(matrix, null, 2) + "\n");
  details.outcomes = [...details.outcomes.filter((o) => !names.includes(o.strategy)), ...measured.outcomes];
  await writeFile("bench/results/detection-details.json", JSON.stringify(details, null, 2) + "\n");
  await printAndQuote(matrix);
}

/** The matrix as a table, and what `pouw quote` prices for the bench manifest (written to detection-quote.json). */
async function printAndQuote(matrix: DetectionMatrix): Promise<void> {
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`.padStart(6);
  const lines = [`| strategy | saves | ${CHECKS.join(" | ")} |`, `|---|---|${CHECKS.map(() => "---").join("|")}|`];
  for (const s of matrix.strategies) lines.push(`| ${s.name} | ${pct(s.computeSaving)} | ${CHECKS.map((c) => pct(s.detection[c]!)).join(" | ")} |`);
  lines.push(`| false alarms | | ${CHECKS.map((c) => `${matrix.falseAlarms[c]!.alarms}/${matrix.falseAlarms[c]!.runs}`).join(" | ")} |`);
  lines.push(`| cost / training | | ${matrix.checks.map((c) => c.costRatio.toFixed(2)).join(" | ")} |`);
  process.stdout.write(lines.join("\n") + "\n");
  // detection per JOB at the quoted contract: the bot's pipeline (recompute on sampled segments at the quoted rate and
  // on the last segment, the screen on every segment), per strategy at its worst vertex, with the default margin
  const quote = await quotePolicy(readQuoteJob(MANIFEST_PATH), matrix);
  const perJob = [
    `quoted for ${MANIFEST_PATH}: audit rate ${quote.auditRate.toFixed(4)}, checks ${quote.checks.join(" + ")}, stake ${quote.stakeWei} wei, margin ${quote.margin}, worst class ${quote.worstStrategy}`,
    `| strategy | segments touched | detection per job Q | gain (wei) | provider side's expected loss (wei) | margin |`,
    `|---|---|---|---|---|---|`,
    ...quote.strategies.map((s) => `| ${s.name} | ${s.segmentsTouched} | ${s.Q.toFixed(4)} | ${s.gainWei} | ${s.lossWei} | ${s.marginRatio === null ? "no gain" : s.marginRatio.toFixed(3)} |`),
  ];
  process.stdout.write(perJob.join("\n") + "\n");
  await writeFile("bench/results/detection-quote.json", JSON.stringify({ manifest: MANIFEST_PATH, auditRate: quote.auditRate, checks: quote.checks, stakeWei: quote.stakeWei, margin: quote.margin, lastSegmentAudited: quote.lastSegmentAudited, worstStrategy: quote.worstStrategy, strategies: quote.strategies }, null, 2) + "\n");
}

// ---- honest runs: false alarms and costs ----------------------------------------------------
const falseAlarms: Record<string, { runs: number; alarms: number }> = Object.fromEntries(CHECKS.map((c) => [c, { runs: 0, alarms: 0 }]));
const costs: Record<string, number[]> = Object.fromEntries(CHECKS.map((c) => [c, []]));
const trainSegmentMs: number[] = [];
const honestAlarmDetails: { check: string; seed: number; segment: number; kind: string }[] = [];
const faDrifts: number[] = [];
const screenPureMs: number[] = [];
const screenWorst = { relation: 0, firstMoment: 0, secondMoment: 0, weights: 0 };
log(`honest runs: ${HONEST} bitwise (recompute), the first ${HONEST_ALL} also freivalds, magnitude, progress, and ${HONEST_ALL} wasm (tolerance)`);
for (let r = 0; r < HONEST; r++) {
  const seed = 5000 + r;
  const run = await createRun(variant(seed), { jobId: JOB, salt: offlineSalt(JOB) });
  const dir = join(work, `honest-${seed}`);
  const { trace } = await train(run, { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
  trainSegmentMs.push((trace.wallSeconds * 1000) / SEGMENTS);
  const all = r < HONEST_ALL;
  if (all) await publishStepStates(run, trace, dir);
  const ctx = await openTraceDir(run, dir);
  // the screen on every committed state, as a bot holding the previous one runs it
  if (all) {
    const config = screenConfigOf(run);
    let previous = null;
    for (let i = 0; i <= SEGMENTS; i++) {
      const res = await screenSegment(ctx, i, { previous, config });
      falseAlarms.screen!.runs++;
      costs.screen!.push(res.costMs);
      if (!res.ok) {
        falseAlarms.screen!.alarms++;
        honestAlarmDetails.push({ check: "screen", seed, segment: i, kind: res.failure!.kind });
      }
      if (res.state) {
        const t0 = performance.now();
        const v = screenState(config, res.state, previous ?? undefined);
        screenPureMs.push(performance.now() - t0);
        for (const k of Object.keys(screenWorst) as (keyof typeof screenWorst)[]) screenWorst[k] = Math.max(screenWorst[k], v.details[k] ?? 0);
      }
      previous = res.state;
    }
  }
  for (let seg = 0; seg < SEGMENTS; seg++) {
    for (const check of CHECKS) {
      if (check === "tolerance" || check === "screen" || (!all && check !== "recompute")) continue;
      const res = await runCheck(ctx, seg, check, checkOptions);
      falseAlarms[check]!.runs++;
      costs[check]!.push(res.costMs);
      if (!res.ok) {
        falseAlarms[check]!.alarms++;
        honestAlarmDetails.push({ check, seed, segment: seg, kind: res.failure!.kind });
      }
    }
  }
  await rm(dir, { recursive: true, force: true });
  if ((r + 1) % 10 === 0) log(`honest ${r + 1}/${HONEST}: alarms ${JSON.stringify(Object.fromEntries(Object.entries(falseAlarms).map(([k, v]) => [k, v.alarms])))}`);
  if (!all) continue;
  const w = await wasmHonest(7000 + r);
  for (let seg = 0; seg < SEGMENTS; seg++) {
    const res = await runCheck(w.ctx, seg, "tolerance", checkOptions);
    falseAlarms.tolerance!.runs++;
    costs.tolerance!.push(res.costMs);
    faDrifts.push(...((res.details?.distances as number[] | undefined) ?? []));
    if (!res.ok) {
      falseAlarms.tolerance!.alarms++;
      honestAlarmDetails.push({ check: "tolerance", seed: 7000 + r, segment: seg, kind: res.failure!.kind });
    }
  }
  await rm(w.dir, { recursive: true, force: true });
  await useBackend("cpu");
}

// ---- the screen on a realistic step (784-128-10, batch 128, Adam): its cost per segment -------
log("screen cost on mnist-mlp 784-128-10, batch 128");
const bigRun = await createRun(variant(7, { model: { arch: "mnist-mlp", hidden: 128 }, training: { batchSize: 128, steps: 8, stepsPerSegment: 4 } }), { jobId: JOB, salt: offlineSalt(JOB) });
const bigConfig = screenConfigOf(bigRun);
const bigStates = [bigRun.initState()];
const bigStepMs: number[] = [];
for (let t = 1; t <= 8; t++) {
  const t0 = performance.now();
  bigStates.push(bigRun.step(bigStates[t - 1]!, t).state);
  bigStepMs.push(performance.now() - t0);
}
const bigScreenMs: number[] = [];
for (let rep = 0; rep < 30; rep++) {
  const t0 = performance.now();
  const v = screenState(bigConfig, bigStates[8]!, bigStates[4]!);
  bigScreenMs.push(performance.now() - t0);
  if (!v.ok) throw new Error(`honest 784-128-10 state failed the screen: ${v.failure.message}`);
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const realistic = { model: "mnist-mlp 784-128-10, batch 128, Adam, K = 4", params: bigRun.paramSpecs.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0), stepMsMedian: median(bigStepMs), screenMsMedian: median(bigScreenMs), screenPerSegment: median(bigScreenMs) / (4 * median(bigStepMs)) };
log(`realistic screen: ${realistic.screenMsMedian.toFixed(1)} ms per state vs ${realistic.stepMsMedian.toFixed(0)} ms per step: ${(100 * realistic.screenPerSegment).toFixed(2)} % of a 4-step segment`);

// ---- results --------------------------------------------------------------------------------
const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
const trainMs = mean(trainSegmentMs);
const matrix: DetectionMatrix = parseDetectionMatrix({
  version: 1,
  manifest: MANIFEST_PATH,
  // the screen runs on every committed segment (the bot's rule), the other checks on the sampled ones
  checks: CHECKS.map((c) => ({ name: c, costRatio: mean(costs[c]!) / trainMs, ...(c === "screen" ? { everySegment: true } : {}) })),
  strategies: strategyRows,
  falseAlarms,
});
await mkdir("bench/results", { recursive: true });
await writeFile("bench/results/detection.json", JSON.stringify(matrix, null, 2) + "\n");
const sorted = [...faDrifts].sort((a, b) => a - b);
await writeFile(
  "bench/results/tolerance.json",
  JSON.stringify(
    {
      manifest: MANIFEST_PATH,
      provider: "@tensorflow/tfjs-backend-wasm",
      reference: "cpu",
      metric: "max over X in {weights, Adam m, Adam v} of ||X_provider(t) - step_cpu(state_provider(t-1)).X|| / ||X_provider(t) - X_provider(t-1)||, per step",
      calibration: { runs: TOL_CAL, ...tolerance },
      falseAlarmRuns: { runs: HONEST_ALL, steps: faDrifts.length, max: sorted[sorted.length - 1], p50: sorted[Math.floor(sorted.length / 2)], p99: sorted[Math.floor(sorted.length * 0.99)], alarms: falseAlarms.tolerance!.alarms },
    },
    null,
    2,
  ) + "\n",
);
await writeFile(
  "bench/results/detection-details.json",
  JSON.stringify(
    {
      trainSegmentMsMean: trainMs,
      checkCostMsMean: Object.fromEntries(CHECKS.map((c) => [c, mean(costs[c]!)])),
      screen: { pureMsMean: mean(screenPureMs), pureMsMax: Math.max(...screenPureMs), states: screenPureMs.length, worstHonestRatios: screenWorst, realistic },
      honestAlarms: honestAlarmDetails,
      progressCalibration,
      outcomes,
    },
    null,
    2,
  ) + "\n",
);

await printAndQuote(matrix);
process.stdout.write(`training one segment: ${trainMs.toFixed(0)} ms; tolerance threshold ${tolerance.threshold.toExponential(3)}; screenState alone ${mean(screenPureMs).toFixed(3)} ms per state (worst honest ratios ${JSON.stringify(screenWorst)})\n`);
await rm(work, { recursive: true, force: true });
