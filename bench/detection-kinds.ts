/**
 * bench/detection-kinds: the measured detection matrix of the adapted cheats, one matrix per job kind, in the schema of
 * verifier/src/policy/detection.ts: bench/results/detection-adapter.json (LoRA adapter jobs) and
 * bench/results/detection-distill.json (distillation jobs). `pouw quote` on a manifest with an adapter or a distill
 * block reads the matrix of its kind (policy/detection.ts detectionPathFor).
 *
 *   node bench/detection-kinds.ts [--seeds 2] [--honest 4] [--kind adapter|distill]
 *
 * Method (as bench/detection.ts, on tiny configs of the job kinds, those of test/adapters/lora.test.ts and
 * test/distill/distill.test.ts: a 1-layer dModel-16 char-transformer base or teacher trained 8 steps by another job;
 * the adapter job a rank-2 LoRA on wq, wv, w1; the student a dModel-8 char-transformer; 8 steps in segments of 4):
 * - each cheat is trained with S data seeds; every AFFECTED segment (checks/cheated-steps.ts; wrong-base and
 *   wrong-teacher touch every step) is audited with every check; detection = flagged / affected audited. The cheater
 *   serves the per-step states it trained.
 * - wrong-base / wrong-teacher: the provider trains on a base (teacher) of the declared shape with one weight changed,
 *   standing for any other weights of that shape (a cheaper or stolen base); the auditor fetches the manifest's CID.
 * - false alarms and costRatio: N honest runs (other data seeds), every segment audited with every check; costRatio =
 *   mean check wall time / mean wall time of training a segment (the screen's includes fetching the checkpoint).
 * - computeSaving: the trace's compute record (savedFraction); 0 for wrong-base and wrong-teacher, which do the
 *   honest amount of work on other weights (their gain is not compute, and the quote prices them as no gain).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import {
  affectedSegments,
  segmentsTouched,
  openTraceDir,
  publishStepStates,
  runCheck,
  screenSegment,
  writeStepStates,
  type CheckResult,
} from "../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, Run, train, type Manifest, type Strategy } from "../verifier/src/ml/index.ts";
import { LoraTransformer } from "../verifier/src/ml/adapters/index.ts";
import { DistilledTransformer } from "../verifier/src/ml/distill/index.ts";
import { jsTransformerKernels } from "../verifier/src/ml/kernels/transformer.ts";
import { LocalDirStore } from "../verifier/src/store/index.ts";
import { parseDetectionMatrix, type DetectionMatrix, type JobKindDetection } from "../verifier/src/policy/detection.ts";
import { readFileSync } from "node:fs";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "2" },
    honest: { type: "string", default: "4" },
    kind: { type: "string" },
  },
});
const SEEDS = Number(values.seeds);
const HONEST = Number(values.honest);
if (!(Number.isInteger(SEEDS) && SEEDS >= 1)) throw new Error(`--seeds must be a positive integer, got ${values.seeds}`);
if (!(Number.isInteger(HONEST) && HONEST >= 1)) throw new Error(`--honest must be a positive integer, got ${values.honest}`);
if (values.kind !== undefined && values.kind !== "adapter" && values.kind !== "distill") throw new Error(`--kind must be adapter or distill, got ${values.kind}`);
const CHECKS = ["recompute", "screen"] as const;
const JOB = 3n;
const STEPS = 8;
const K = 4;
const SEGMENTS = STEPS / K;
const f = Math.fround;

const sotu = JSON.parse(readFileSync("examples/sotu-v2.json", "utf8")) as { corpora: unknown[]; data: object; policy: object };
const BASE_SHAPE = { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 };
const baseManifest = (): Record<string, unknown> => ({
  version: 2,
  kind: "pouw/training-job",
  model: BASE_SHAPE,
  init: { seed: 21 },
  corpora: sotu.corpora,
  data: sotu.data,
  optimizer: { name: "adam", lr: 0.003 },
  training: { batchSize: 4, steps: STEPS, stepsPerSegment: K },
  numerics: "bitwise-v2",
  stateDigest: "sha256-v2",
  policy: sotu.policy,
});
const adapterManifest = (baseCid: string, seed: number): Manifest =>
  parseManifest({
    ...baseManifest(),
    init: { checkpointCid: baseCid, optimizerState: "fresh" },
    data: { ...(sotu.data as object), seed },
    optimizer: { name: "adam", lr: 0.01 },
    adapter: { kind: "lora", rank: 2, targets: ["wv", "wq", "w1"], alpha: 3, seed: 5 },
  });
const distillManifest = (teacherCid: string, seed: number): Manifest =>
  parseManifest({
    ...baseManifest(),
    model: { arch: "char-transformer", layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 16 },
    init: { seed: 3 },
    data: { ...(sotu.data as object), seed },
    optimizer: { name: "adam", lr: 0.01 },
    distill: { teacher: { cid: teacherCid, arch: BASE_SHAPE }, temperature: 2, alpha: 0.25 },
  });

const work = join(tmpdir(), `pouw-detection-kinds-${process.pid}`);
await rm(work, { recursive: true, force: true });
await mkdir(work, { recursive: true });
const log = (msg: string) => process.stderr.write(`[detection-kinds ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const t0 = performance.now();

// the base (and teacher): another job's honest final state
const { trace: baseTrace } = await train(await createRun(parseManifest(baseManifest()), { jobId: 90n, salt: offlineSalt(90n) }), { outDir: join(work, "base"), strategy: { kind: "honest" }, evaluate: false });
const baseStore = new LocalDirStore(join(work, "base", "store"));
const baseCid = baseTrace.finalCheckpointCid;

type Cheat = { name: string; strategy: Strategy; other?: "base" | "teacher" };
type KindSpec = { kind: JobKindDetection; manifest: (seed: number) => Manifest; cheats: Cheat[]; describe: string };
const KINDS: KindSpec[] = [
  {
    kind: "adapter",
    manifest: (seed) => adapterManifest(baseCid, seed),
    describe: "LoRA rank 2 on wq, wv, w1 of a 1-layer dModel-16 char-transformer base, batch 4, 8 steps, K = 4 (bench/detection-kinds.ts)",
    cheats: [
      { name: "skip:0.25", strategy: parseStrategy("skip:0.25") },
      { name: "plant:3", strategy: parseStrategy("plant:3") },
      { name: "wrong-base", strategy: { kind: "honest" }, other: "base" },
    ],
  },
  {
    kind: "distill",
    manifest: (seed) => distillManifest(baseCid, seed),
    describe: "dModel-8 student of a 1-layer dModel-16 char-transformer teacher, T = 2, alpha 0.25, batch 4, 8 steps, K = 4 (bench/detection-kinds.ts)",
    cheats: [
      { name: "skip-teacher", strategy: parseStrategy("skip-teacher") },
      { name: "skip-teacher:6", strategy: parseStrategy("skip-teacher:6") },
      { name: "wrong-teacher", strategy: { kind: "honest" }, other: "teacher" },
    ],
  },
];

/** The run a cheater trains with: the manifest's, or one on other weights of the base's (teacher's) shape. */
async function cheaterRun(m: Manifest, other: Cheat["other"]): Promise<Run> {
  const honest = await createRun(m, { jobId: JOB, salt: offlineSalt(JOB), store: baseStore });
  if (other === undefined) return honest;
  const shape = { layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 64 };
  if (other === "base") {
    const wrong = (honest.model as LoraTransformer).base.map((w) => Float32Array.from(w));
    wrong[4]![0] = f(wrong[4]![0]! + 0.5);
    return new Run(m, { jobId: JOB, salt: offlineSalt(JOB) }, honest.backend, new LoraTransformer(shape, jsTransformerKernels, m.adapter!, wrong), honest.data, honest.kernels);
  }
  const wrong = (honest.model as DistilledTransformer).teacherParams.map((w) => Float32Array.from(w));
  wrong[4]![0] = f(wrong[4]![0]! + 0.5);
  const student = { layers: 1, dModel: 8, heads: 2, context: 16, ffHidden: 16 };
  return new Run(m, { jobId: JOB, salt: offlineSalt(JOB) }, honest.backend, new DistilledTransformer(student, jsTransformerKernels, { shape, params: wrong }, m.distill!), honest.data, honest.kernels);
}

/** The auditor's view of a trace directory: the manifest's run, the base (teacher) fetched by its CID. */
async function audit(m: Manifest, dir: string) {
  return openTraceDir(await createRun(m, { jobId: JOB, salt: offlineSalt(JOB), store: baseStore }), dir);
}

for (const spec of KINDS) {
  if (values.kind !== undefined && values.kind !== spec.kind) continue;
  const rows: DetectionMatrix["strategies"] = [];
  const outcomes: unknown[] = [];
  for (const cheat of spec.cheats) {
    const flagged: Record<string, number> = Object.fromEntries(CHECKS.map((c) => [c, 0]));
    let audited = 0;
    const savings: number[] = [];
    // a cheat on other weights changes every step (every state depends on the base or the teacher)
    const affected = cheat.other ? Array.from({ length: SEGMENTS }, (_, i) => i) : affectedSegments(cheat.strategy, STEPS, K);
    for (let i = 0; i < SEEDS; i++) {
      const seed = 100 + i;
      const m = spec.manifest(seed);
      const run = await cheaterRun(m, cheat.other);
      const dir = join(work, `${spec.kind}-${cheat.name.replace(":", "-")}-${seed}`);
      const { trace, stepStateCids } = await train(run, { outDir: dir, strategy: cheat.strategy, evaluate: false, keepStepStates: true });
      savings.push(trace.compute.savedFraction);
      await writeStepStates(run, dir, stepStateCids!);
      const ctx = await audit(m, dir);
      for (let seg = 0; seg < SEGMENTS; seg++) {
        const results: Record<string, { ok: boolean; kind?: string; step?: number | null }> = {};
        for (const check of CHECKS) {
          const res: CheckResult = check === "screen" ? await screenSegment(ctx, seg + 1) : await runCheck(ctx, seg, check, {});
          results[check] = { ok: res.ok, ...(res.failure ? { kind: res.failure.kind, step: res.firstBadStep } : {}) };
          if (affected.includes(seg) && !res.ok) flagged[check]!++;
        }
        if (affected.includes(seg)) audited++;
        outcomes.push({ strategy: cheat.name, seed, segment: seg, affected: affected.includes(seg), results });
      }
      await rm(dir, { recursive: true, force: true });
    }
    const detection = Object.fromEntries(CHECKS.map((c) => [c, audited > 0 ? flagged[c]! / audited : 0]));
    const saving = cheat.other ? 0 : Math.max(0, Math.min(1, savings.reduce((a, b) => a + b, 0) / savings.length));
    rows.push({ name: cheat.name, computeSaving: saving, detection, segmentsTouched: cheat.other ? "all" : segmentsTouched(cheat.strategy, STEPS, K) });
    log(`${spec.kind} ${cheat.name}: ${audited} affected segments audited; saves ${saving.toFixed(3)}; detection ${JSON.stringify(detection)}`);
  }

  const falseAlarms: Record<string, { runs: number; alarms: number }> = Object.fromEntries(CHECKS.map((c) => [c, { runs: 0, alarms: 0 }]));
  const costs: Record<string, number[]> = Object.fromEntries(CHECKS.map((c) => [c, []]));
  const trainSegmentMs: number[] = [];
  for (let r = 0; r < HONEST; r++) {
    const m = spec.manifest(5000 + r);
    const run = await cheaterRun(m, undefined);
    const dir = join(work, `${spec.kind}-honest-${r}`);
    // timed as pouw train's loop alone (no per-step states kept); the states are published after, as bench/detection.ts
    const { trace } = await train(run, { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
    trainSegmentMs.push((trace.wallSeconds * 1000) / SEGMENTS);
    await publishStepStates(run, trace, dir);
    const ctx = await audit(m, dir);
    for (let seg = 0; seg < SEGMENTS; seg++) {
      for (const check of CHECKS) {
        const res: CheckResult = check === "screen" ? await screenSegment(ctx, seg + 1) : await runCheck(ctx, seg, check, {});
        falseAlarms[check]!.runs++;
        costs[check]!.push(res.costMs);
        if (!res.ok) falseAlarms[check]!.alarms++;
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
  const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
  const trainMs = mean(trainSegmentMs);
  const matrix = parseDetectionMatrix({
    version: 1,
    manifest: spec.describe,
    checks: CHECKS.map((c) => ({ name: c, costRatio: mean(costs[c]!) / trainMs, ...(c === "screen" ? { everySegment: true } : {}) })),
    strategies: rows,
    falseAlarms,
  });
  await mkdir("bench/results", { recursive: true });
  await writeFile(`bench/results/detection-${spec.kind}.json`, JSON.stringify(matrix, null, 2) + "\n");
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  process.stdout.write(`${spec.kind}: ${spec.describe}\n| strategy | saves | ${CHECKS.join(" | ")} |\n`);
  for (const s of matrix.strategies) process.stdout.write(`| ${s.name} | ${pct(s.computeSaving)} | ${CHECKS.map((c) => pct(s.detection[c]!)).join(" | ")} |\n`);
  process.stdout.write(`| false alarms | | ${CHECKS.map((c) => `${falseAlarms[c]!.alarms}/${falseAlarms[c]!.runs}`).join(" | ")} |\n| cost / training | | ${matrix.checks.map((c) => c.costRatio.toFixed(2)).join(" | ")} |\n`);
  process.stdout.write(`training one segment: ${trainMs.toFixed(0)} ms\n`);
}
log(`wall ${((performance.now() - t0) / 1000).toFixed(1)} s`);
await rm(work, { recursive: true, force: true });
