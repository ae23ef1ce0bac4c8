/**
 * The auditors' expected work as a share of the provider's training loop, at the quoted contract of one manifest
 * (default examples/mnist-fast.json), with step sampling (state openings) side by side with segment recompute, in one
 * process on one machine:
 *
 *   provider  the honest segment loop (`pouw provider run`'s trainSegments), start checkpoints only: training CPU;
 *             one state opening by replay (provider/openings.ts openState): the provider's extra CPU per opening;
 *   auditor   through checks/ only, each on a committed segment of that run:
 *               - segment recompute (auditSegment, checks ["recompute"]): K steps from the start checkpoint;
 *               - the state screen (screenSegment) of one segment's start checkpoint;
 *               - a sampled step (auditSampledStep): fetch and verify the opened state, recompute ONE step.
 *   cheats    copy-like classes that make every step wrong (quarter-batch, fp16, stale:2) and one that skips half of
 *             them (skip:0.5), trained for two segments from the same start; a handful of their states opened and the
 *             step after each audited: the measured per-step detection q of each class.
 *
 * The contract: the quoted segment audit rate p (policy/quote.ts quotePolicy over bench/results/detection.json), the
 * last segment recomputed whatever the rate (bot/auditor.ts), the screen on every segment; step sampling at the
 * per-segment rate r = 1 - (1 - 0.99)^(1/S) (bot/sampler.ts stepRateFor). Expected auditor CPU per job:
 *   segment recompute (today)   S * screen + (p (S-1) + 1) * recompute
 *   segment recompute at p99    S * screen + (p99 (S-1) + 1) * recompute, p99 the rate that catches a cheat of every
 *                               segment with 0.99 (what copy-like cheats needed without openings)
 *   step sampling + sparse      S r * step + (p (S-1) + 1) * recompute (no screen: copy-like classes are the steps')
 *   step sampling only          S r * step + 1 * recompute (the last segment's rule only)
 * Detection of an every-step cheat that touches n segments (not the last): 1 - (1-p)^n for segment recompute,
 * 1 - (1-p)^n (1 - r q)^n with step sampling; n = 1 (the cheapest cheat to hide) and n = S - 1.
 *
 * CPU is process.cpuUsage (user + system, every thread) around each part; each auditor part is the median of `REPS`
 * runs after one warm-up run (the cold first run compiles the kernels).
 * Writes bench/results/audit-cost.json.
 *
 * Run: npm run bench:audit-cost [-- manifest.json]   (Node 22; no chain)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { zeroAddress, type Hex } from "viem";
import { sampledStep, stepRateFor } from "../verifier/src/bot/sampler.ts";
import type { SegmentCommit } from "../verifier/src/chain/index.ts";
import { auditSampledStep, auditSegment, screenSegment, type AuditTarget, type SegmentCommitment } from "../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, type Run, type Strategy } from "../verifier/src/ml/index.ts";
import { trainSegments, type SegmentResult } from "../verifier/src/ml/segments.ts";
import { DEFAULT_DETECTION_PATH, loadDetectionMatrix } from "../verifier/src/policy/detection.ts";
import { quoteJobOf, quotePolicy } from "../verifier/src/policy/quote.ts";
import { openState } from "../verifier/src/provider/openings.ts";
import { LocalDirStore } from "../verifier/src/store/index.ts";

const manifestPath = process.argv[2] ?? new URL("../examples/mnist-fast.json", import.meta.url).pathname;
const manifest = parseManifest(JSON.parse(readFileSync(manifestPath, "utf8")));
const K = manifest.training.stepsPerSegment;
const S = manifest.training.steps / K;
const JOB = 1n;
const REPS = 5;
const DETECTION = 0.99;
const CHEATS = ["quarter-batch", "fp16", "stale:2", "skip:0.5"];
/** States opened per cheat class (in its first two segments). */
const CHEAT_OPENINGS = 8;
const tmp = mkdtempSync(join(tmpdir(), "pouw-bench-audit-cost-"));

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
async function cpu<T>(f: () => Promise<T>): Promise<{ value: T; cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const value = await f();
  return { value, cpuMs: cpuMs(process.cpuUsage(c0)), wallMs: performance.now() - w0 };
}

async function trainRun(strategy: Strategy, dir: string, endSegment: number) {
  const store = new LocalDirStore(dir);
  const run = await createRun(manifest, { jobId: JOB, salt: offlineSalt(JOB), store });
  const start = await run.initFromStore(store);
  const segments: SegmentResult[] = [];
  const t = await cpu(async () => {
    for await (const s of trainSegments(run, { strategy, store, start, endSegment })) segments.push(s);
  });
  return { run, store, segments, cpuMs: t.cpuMs, wallMs: t.wallMs };
}

const commitmentsOf = (segments: readonly SegmentResult[]): SegmentCommitment[] => segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot, checkpointCid: s.checkpointCid, stateHashes: s.stateHashes }));
const commitOf = (s: SegmentResult): SegmentCommit => ({ jobId: JOB, segment: s.index, traceRoot: s.traceRoot, endStateHash: s.stateHashes[K]!, lossE6: BigInt(s.lossE6), checkpointCid: s.checkpointCid, stateHashes: s.stateHashes, blockNumber: 0n, transactionHash: "0x" });
const toAudit = (segments: readonly SegmentResult[], i: number) => ({ market: zeroAddress, jobId: JOB, segment: i, traceRoot: segments[i]!.traceRoot as Hex, endStateHash: segments[i]!.stateHashes[K]! as Hex, commitments: commitmentsOf(segments.slice(0, i + 1)) });

/** Opens state step-1 as the provider would (replay), then audits step `step` from the opened CID. */
async function openAndAudit(run: Run, store: LocalDirStore, strategy: Strategy, segments: readonly SegmentResult[], step: number) {
  const seg = Math.floor((step - 1) / K);
  const opened = await openState(run, store, strategy, commitOf(segments[seg]!), step - 1, null);
  const audit = await cpu(() => auditSampledStep({ run, store }, toAudit(segments, seg), step, { checkpointCid: opened.checkpointCid }));
  return { opened, verdict: audit.value, cpuMs: audit.cpuMs, wallMs: audit.wallMs };
}

// ---------------------------------------------------------------- the provider's training loop
const honest = parseStrategy("honest");
const provider = await trainRun(honest, join(tmp, "honest"), S);
const trainCpu = provider.cpuMs;
const stepCpu = trainCpu / (S * K);
const target: AuditTarget = { run: provider.run, store: provider.store, commitments: commitmentsOf(provider.segments) };
const mid = Math.floor(S / 2);

// ---------------------------------------------------------------- the auditors' parts, through checks/
const recompute: number[] = [];
const screen: number[] = [];
for (let i = 0; i <= REPS; i++) {
  const r = await cpu(() => auditSegment(target, mid, { checks: ["recompute"] }));
  if (!r.value.ok) throw new Error(`the honest segment ${mid} fails its recompute: ${r.value.failure?.message}`);
  recompute.push(r.cpuMs);
  const sc = await cpu(() => screenSegment(target, mid, { previous: null }));
  if (!sc.value.ok) throw new Error(`the honest segment ${mid} fails the screen: ${sc.value.failure?.message}`);
  // the first run is the warm-up
  if (i > 0) screen.push(sc.cpuMs);
  if (i === 0) recompute.pop();
}
const stepAudits: number[] = [];
const openings: number[] = [];
// steps spread over the middle segment (j = 1 .. K): an opening replays j - 1 steps, a uniformly drawn one (K - 1) / 2
const js = [1, 1, Math.ceil(K / 4), Math.ceil(K / 2), Math.ceil((3 * K) / 4), K];
for (const j of js) {
  const r = await openAndAudit(provider.run, provider.store, honest, provider.segments, mid * K + j);
  if (!r.verdict.ok) throw new Error(`honest step ${mid * K + j} fails its sampled-step audit: ${r.verdict.failure?.message}`);
  stepAudits.push(r.cpuMs);
  openings.push(r.opened.cpuMs);
}
// the first opening and step audit are the warm-up
stepAudits.shift();
openings.shift();
js.shift();
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
// an opening replays j - 1 steps: the least-squares line over j, at a uniformly drawn state ((K - 1) / 2 replayed steps)
const mj = js.reduce((a, j) => a + j, 0) / js.length;
const mo = openings.reduce((a, o) => a + o, 0) / openings.length;
const slope = js.reduce((a, j, i) => a + (j - mj) * (openings[i]! - mo), 0) / js.reduce((a, j) => a + (j - mj) ** 2, 0);
const expectedOpening = mo + slope * ((K + 1) / 2 - mj);
const c = { recompute: median(recompute), screen: median(screen), step: median(stepAudits), opening: expectedOpening };

// ---------------------------------------------------------------- per-step detection of every-step cheats
const secret = "00".repeat(31) + "01";
const cheats: { strategy: string; opened: number; caught: number; q: number; kinds: string[] }[] = [];
for (const name of CHEATS) {
  const strategy = parseStrategy(name);
  const r = await trainRun(strategy, join(tmp, name.replace(/[^a-z0-9]/g, "-")), 2);
  let caught = 0;
  const kinds = new Set<string>();
  for (let n = 0; n < CHEAT_OPENINGS; n++) {
    // the bot's own private draw, one step of segment n % 2 per opening
    const step = sampledStep(secret, zeroAddress, BigInt(1000 + n), n % 2, K, 1)!;
    const a = await openAndAudit(r.run, r.store, strategy, r.segments, step);
    if (!a.verdict.ok) {
      caught++;
      kinds.add(a.verdict.failure!.kind);
    }
  }
  await r.run.close();
  cheats.push({ strategy: name, opened: CHEAT_OPENINGS, caught, q: caught / CHEAT_OPENINGS, kinds: [...kinds] });
}

// ---------------------------------------------------------------- the contract and the expected work
const quote = await quotePolicy(quoteJobOf(manifest), loadDetectionMatrix(DEFAULT_DETECTION_PATH, { isDefault: true }));
const p = quote.auditRate;
const r = stepRateFor(S, DETECTION);
// the segment rate that catches a cheat of every (non-last) segment with 0.99 by recompute alone
const p99 = 1 - (1 - DETECTION) ** (1 / (S - 1));
const share = (ms: number) => ms / trainCpu;
const designs = [
  { design: "segment recompute at the quoted rate + screen (today)", ms: S * c.screen + (p * (S - 1) + 1) * c.recompute, stepRate: 0, segmentRate: p },
  { design: `segment recompute at the rate for ${DETECTION} + screen`, ms: S * c.screen + (p99 * (S - 1) + 1) * c.recompute, stepRate: 0, segmentRate: p99 },
  { design: "step sampling + segment recompute at the quoted rate (sparse cheats)", ms: S * r * c.step + (p * (S - 1) + 1) * c.recompute, stepRate: r, segmentRate: p },
  { design: "step sampling + last-segment recompute only", ms: S * r * c.step + c.recompute, stepRate: r, segmentRate: 0 },
];
const detect = (segmentRate: number, stepRate: number, q: number, n: number) => 1 - ((1 - segmentRate) * (1 - stepRate * q)) ** n;
// the classes whose every sampled step failed: every-step cheats (the others touch a fraction q of the steps)
const everyStep = cheats.filter((x) => x.caught === x.opened);
const qEvery = 1;
const rows = designs.map((d) => {
  const work = share(d.ms);
  const oneSegment = detect(d.segmentRate, d.stepRate, qEvery, 1);
  const allButLast = detect(d.segmentRate, d.stepRate, qEvery, S - 1);
  return {
    design: d.design,
    segmentRate: round(d.segmentRate, 3),
    stepRate: round(d.stepRate, 3),
    auditorCpuMs: Math.round(d.ms),
    shareOfTraining: round(work, 4),
    providerOpeningCpuMs: Math.round(S * d.stepRate * c.opening),
    providerOpeningShare: round(share(S * d.stepRate * c.opening), 4),
    detectEveryStepCheat: { oneSegment: round(oneSegment, 3), allButLastSegment: round(allButLast, 3), touchingLastSegment: 1 },
    detectSparsePlant: round(d.segmentRate, 3),
    detectByClassAllButLastSegment: Object.fromEntries(cheats.map((x) => [x.strategy, round(detect(d.segmentRate, d.stepRate, x.q, S - 1), 3)])),
    detectionPerPercentOfTraining: round(allButLast / (100 * work), 3),
  };
});

const result = {
  manifest: manifestPath.split("/").slice(-2).join("/"),
  segments: S,
  stepsPerSegment: K,
  quote: { auditRate: round(p, 4), checks: quote.checks },
  provider: { trainingCpuMs: Math.round(trainCpu), trainingWallMs: Math.round(provider.wallMs), cpuMsPerStep: round(stepCpu, 2), openingCpuMs: round(c.opening) },
  auditor: {
    segmentRecomputeCpuMs: round(c.recompute),
    screenCpuMs: round(c.screen),
    sampledStepCpuMs: round(c.step),
    sampledStepInTrainingSteps: round(c.step / stepCpu, 2),
    segmentRecomputeInTrainingSteps: round(c.recompute / stepCpu, 1),
  },
  perStepDetection: cheats,
  everyStepClasses: everyStep.map((x) => x.strategy),
  stepSamplingShareOfTraining: round(share(S * r * c.step), 4),
  designs: rows,
  node: process.version,
};
await provider.run.close();
rmSync(tmp, { recursive: true, force: true });

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
console.log(`${result.manifest}: ${S} segments of ${K}; training ${Math.round(trainCpu)} ms CPU (${stepCpu.toFixed(2)} ms a step); quoted segment rate p = ${p.toFixed(3)}, step rate r = ${r.toFixed(3)}`);
console.log(`auditor: segment recompute ${c.recompute.toFixed(0)} ms, screen ${c.screen.toFixed(1)} ms, sampled step ${c.step.toFixed(1)} ms (${(c.step / stepCpu).toFixed(1)} training steps); provider opening ${c.opening.toFixed(0)} ms`);
console.log(`step sampling alone (S r sampled steps): ${pct(share(S * r * c.step))} of training; the last segment's recompute alone: ${pct(share(c.recompute))}`);
for (const x of cheats) console.log(`  per-step detection ${x.strategy.padEnd(14)} ${x.caught}/${x.opened} (${x.kinds.join(", ") || "-"})`);
console.log("| design | p | r | auditor CPU / training | provider openings / training | every-step cheat, 1 segment | every-step cheat, S-1 segments | sparse plant |");
console.log("|---|---|---|---|---|---|---|---|");
for (const x of rows) console.log(`| ${x.design} | ${x.segmentRate} | ${x.stepRate} | ${pct(x.shareOfTraining)} | ${pct(x.providerOpeningShare)} | ${x.detectEveryStepCheat.oneSegment} | ${x.detectEveryStepCheat.allButLastSegment} | ${x.detectSparsePlant} |`);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/audit-cost.json", import.meta.url), JSON.stringify(result, null, 2) + "\n");
