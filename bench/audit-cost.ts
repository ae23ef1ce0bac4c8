/**
 * The auditors' expected work as a share of the provider's training loop, at the quoted contract of one manifest
 * (default examples/mnist-fast.json), with step sampling (state openings) side by side with segment recompute, in one
 * process on one machine:
 *
 *   provider  the honest segment loop (`pouw provider run`'s trainSegments), start checkpoints only: training CPU;
 *             one state opening by replay (provider/openings.ts openState): the provider's extra CPU per opening;
 *             the final state's opening, by replay of the last segment and from the kept final checkpoint;
 *   auditor   through checks/ only, each on a committed segment of that run:
 *               - segment recompute (auditSegment, checks ["recompute"]): K steps from the start checkpoint;
 *               - the state screen (screenSegment) of one segment's start checkpoint, as the contract ran it (no
 *                 baseline, both segments' trees built) and as the bot runs it on every segment (the previous
 *                 segment's verified start as its baseline, that segment's tree already built: one new tree);
 *               - the final state's screen from its opened CID (screenFinalState);
 *               - a sampled step (auditSampledStep): fetch and verify the opened state, recompute ONE step.
 *   cheats    copy-like classes that make every step wrong (quarter-batch, fp16, stale:2) and one that skips half of
 *             them (skip:0.5), trained for two segments from the same start; a handful of their states opened and the
 *             step after each audited: the measured per-step detection q of each class.
 *
 * The contracts compared (p the segment recompute rate, r the per-segment step rate r = 1 - (1 - 0.99)^(1/S),
 * policy/step-sampling.ts):
 *   segment recompute (before)  S * screen + (p (S-1) + 1) * recompute (the last segment always recomputed)
 *   segment recompute at p99    the same at the rate that catches a cheat of every segment with 0.99
 *   step sampling + last        S r * step + 1 * recompute (the last segment's rule, no screen)
 *   step sampling + final state S r * step + final screen + [S * screen] + p_b S * recompute: the final state opened and
 *                               screened, so the last segment is sampled like any other; p_b the segment rate the rest
 *                               of a 5% budget buys (sparse plants), with and without the every-segment screen.
 * Detection of a cheat touching n segments: 1 - ((1-p)(1 - r q))^n.
 *
 * CPU is process.cpuUsage (user + system, every thread) around each part; each auditor part is the median of `REPS`
 * runs after one warm-up run (the cold first run compiles the kernels).
 * Writes its manifest's entry of bench/results/audit-cost.json (`manifests`), keeping the other manifests' entries and
 * the file's `before` (the measurement of the contract before the final-state opening and the faster screen).
 *
 * A GPT-class manifest trains for hours on a CPU: `--segments S' --steps-per-segment K'` train the same model on S'
 * segments of K' steps and scale to the manifest's S and K (per-state parts as measured; a segment = one checkpoint put
 * + K training steps; a recompute or a replay one training step more a step). The quote, r, p_b and every share use the
 * manifest's S and K (docs/checks.md "Audit cost").
 *
 * Run: npm run bench:audit-cost [-- manifest.json | --manifest M] [--segments S' --steps-per-segment K'] [--reps N]
 *      [--cheat-openings N]   (Node 22; no chain)
 *      e.g. nice npm run bench:audit-cost -- --manifest examples/gpt-sotu-v3.json --segments 2 --steps-per-segment 4 --reps 3 --cheat-openings 4
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { zeroAddress, type Hex } from "viem";
import { sampledStep } from "../verifier/src/bot/sampler.ts";
import type { SegmentCommit } from "../verifier/src/chain/index.ts";
import { auditSampledStep, auditSegment, screenFinalState, screenSegment, type AuditTarget, type SegmentCommitment } from "../verifier/src/checks/index.ts";
import { segmentLeaves } from "../verifier/src/checks/segment.ts";
import { clearSegmentTrees } from "../verifier/src/checks/segment-root.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, type Run, type Strategy } from "../verifier/src/ml/index.ts";
import { trainSegments, type SegmentResult } from "../verifier/src/ml/segments.ts";
import { DEFAULT_DETECTION_PATH, loadDetectionMatrix } from "../verifier/src/policy/detection.ts";
import { quoteJobOf, quotePolicy } from "../verifier/src/policy/quote.ts";
import { detectionOver, stepRateForDetection } from "../verifier/src/policy/step-sampling.ts";
import { openState } from "../verifier/src/provider/openings.ts";
import { LocalDirStore } from "../verifier/src/store/index.ts";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    manifest: { type: "string" },
    // a GPT-class job trains for hours on this machine: run the same model on fewer, shorter segments
    segments: { type: "string" },
    "steps-per-segment": { type: "string" },
    reps: { type: "string" },
    "cheat-openings": { type: "string" },
  },
});
const manifestPath = opts.manifest ?? positionals[0] ?? new URL("../examples/mnist-fast.json", import.meta.url).pathname;
const manifest = parseManifest(JSON.parse(readFileSync(manifestPath, "utf8")));
const positiveInt = (name: string, v: string | undefined, dflt: number) => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`--${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
};
/** The manifest's own S and K: the quote, the rates and every share are computed for them. */
const K = manifest.training.stepsPerSegment;
const S = manifest.training.steps / K;
/** The measured run's S and K (the manifest's unless reduced). INVARIANT: S_RUN >= 2 (the screen needs a previous segment). */
const K_RUN = positiveInt("steps-per-segment", opts["steps-per-segment"], K);
const S_RUN = positiveInt("segments", opts.segments, S);
if (S_RUN < 2) throw new RangeError(`--segments must be at least 2 (the bot's screen of segment 1 takes segment 0's start as its baseline), got ${S_RUN}`);
if (K_RUN > K || S_RUN > S) throw new RangeError(`the measured run must not be longer than the manifest's (${S} segments of ${K}); got ${S_RUN} of ${K_RUN}`);
const reduced = K_RUN !== K || S_RUN !== S;
/** The run actually trained: the same model, data, optimizer and numerics, S_RUN segments of K_RUN steps. */
const runManifest = reduced ? parseManifest({ ...JSON.parse(readFileSync(manifestPath, "utf8")), training: { ...manifest.training, steps: S_RUN * K_RUN, stepsPerSegment: K_RUN } }) : manifest;
const JOB = 1n;
const REPS = positiveInt("reps", opts.reps, 5);
const DETECTION = 0.99;
/** The auditors' budget, share of the provider's training (what the segment rate p_b for sparse plants may use). */
const BUDGET = 0.05;
const CHEATS = ["quarter-batch", "fp16", "stale:2", "skip:0.5"];
/** States opened per cheat class (in its first two segments). */
const CHEAT_OPENINGS = positiveInt("cheat-openings", opts["cheat-openings"], 8);
const tmp = mkdtempSync(join(tmpdir(), "pouw-bench-audit-cost-"));

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
const began = performance.now();
/** Progress on stderr (a GPT-class run takes tens of minutes on a shared machine). */
const progress = (what: string) => console.error(`[audit-cost ${((performance.now() - began) / 1000).toFixed(0)} s, load ${loadavg()[0]!.toFixed(1)}] ${what}`);
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
async function cpu<T>(f: () => Promise<T>): Promise<{ value: T; cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const value = await f();
  return { value, cpuMs: cpuMs(process.cpuUsage(c0)), wallMs: performance.now() - w0 };
}

async function trainRun(strategy: Strategy, dir: string, endSegment: number) {
  const store = new LocalDirStore(dir);
  const run = await createRun(runManifest, { jobId: JOB, salt: offlineSalt(JOB), store });
  const start = await run.initFromStore(store);
  const segments: SegmentResult[] = [];
  const t = await cpu(async () => {
    for await (const s of trainSegments(run, { strategy, store, start, endSegment })) segments.push(s);
  });
  return { run, store, segments, cpuMs: t.cpuMs, wallMs: t.wallMs };
}

const commitmentsOf = (segments: readonly SegmentResult[]): SegmentCommitment[] => segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot, checkpointCid: s.checkpointCid, stateHashes: s.stateHashes }));
const commitOf = (s: SegmentResult): SegmentCommit => ({ jobId: JOB, segment: s.index, traceRoot: s.traceRoot, endStateHash: s.stateHashes[K_RUN]!, lossE6: BigInt(s.lossE6), checkpointCid: s.checkpointCid, stateHashes: s.stateHashes, blockNumber: 0n, transactionHash: "0x" });
const toAudit = (segments: readonly SegmentResult[], i: number) => ({ market: zeroAddress, jobId: JOB, segment: i, traceRoot: segments[i]!.traceRoot as Hex, endStateHash: segments[i]!.stateHashes[K_RUN]! as Hex, commitments: commitmentsOf(segments.slice(0, i + 1)) });

/** Opens state step-1 as the provider would (replay), then audits step `step` from the opened CID. */
async function openAndAudit(run: Run, store: LocalDirStore, strategy: Strategy, segments: readonly SegmentResult[], step: number) {
  const seg = Math.floor((step - 1) / K_RUN);
  const opened = await openState(run, store, strategy, commitOf(segments[seg]!), step - 1, null);
  const audit = await cpu(() => auditSampledStep({ run, store }, toAudit(segments, seg), step, { checkpointCid: opened.checkpointCid }));
  return { opened, verdict: audit.value, cpuMs: audit.cpuMs, wallMs: audit.wallMs };
}

// ---------------------------------------------------------------- the provider's training loop
const honest = parseStrategy("honest");
progress(`training ${S_RUN} segments of ${K_RUN} steps`);
const provider = await trainRun(honest, join(tmp, "honest"), S_RUN);
const trainCpu = provider.cpuMs;
const stepCpu = trainCpu / (S_RUN * K_RUN);
const target: AuditTarget = { run: provider.run, store: provider.store, commitments: commitmentsOf(provider.segments) };
const mid = Math.floor(S_RUN / 2);

// ---------------------------------------------------------------- the auditors' parts, through checks/
const recompute: number[] = [];
const screen: number[] = [];
const botScreen: number[] = [];
const finalScreen: number[] = [];
const screenParts: { leaves: number[]; rest: number[] } = { leaves: [], rest: [] };
// the final state: the provider opens it (replay of the last segment, then from its kept checkpoint), the auditor screens it
const lastCommit = commitOf(provider.segments[S_RUN - 1]!);
const finalByReplay = await openState(provider.run, provider.store, honest, lastCommit, S_RUN * K_RUN, null);
const keptFinal: string[] = [];
keptFinal[K_RUN] = finalByReplay.checkpointCid;
const finalKept: number[] = [];
const lastStart = (await screenSegment(target, S_RUN - 1, { previous: null })).state;
// the provider's loop on one segment, interleaved with the auditor's parts so that both see the same load (the shared
// machine's load moves by several times over a run): the job's training is S times its median
const segmentTraining: number[] = [];
const checkpointPut: number[] = [];
const midStart = (await screenSegment(target, mid, { previous: null })).state!;
for (let i = 0; i <= REPS; i++) {
  progress(`auditor parts, run ${i} of ${REPS} (0 the warm-up)`);
  const tr = await cpu(async () => {
    for await (const x of trainSegments(provider.run, { strategy: honest, store: provider.store, start: midStart, startSegment: mid, endSegment: mid + 1 })) {
      if (x.traceRoot !== provider.segments[mid]!.traceRoot) throw new Error(`segment ${mid} retrained to another root`);
    }
  });
  if (i > 0) segmentTraining.push(tr.cpuMs);
  // the segment loop's one fixed part (store the start checkpoint): what does not grow with K when a reduced run is scaled
  const put = await cpu(() => provider.store.put(provider.run.checkpointBytes(midStart)));
  if (i > 0) checkpointPut.push(put.cpuMs);
  const r = await cpu(() => auditSegment(target, mid, { checks: ["recompute"] }));
  if (!r.value.ok) throw new Error(`the honest segment ${mid} fails its recompute: ${r.value.failure?.message}`);
  recompute.push(r.cpuMs);
  // the screen as it was priced: no baseline, no tree built yet
  clearSegmentTrees();
  const sc = await cpu(() => screenSegment(target, mid, { previous: null }));
  if (!sc.value.ok) throw new Error(`the honest segment ${mid} fails the screen: ${sc.value.failure?.message}`);
  // the bot's screen of every segment: the previous start held, the previous segment's tree built by its own screen
  clearSegmentTrees();
  const prev = await screenSegment(target, mid - 1, { previous: null });
  const leaves = await cpu(async () => segmentLeaves(target, mid));
  clearSegmentTrees();
  segmentLeaves(target, mid - 1);
  const bs = await cpu(() => screenSegment(target, mid, { previous: prev.state }));
  if (!bs.value.ok) throw new Error(`the honest segment ${mid} fails the bot's screen: ${bs.value.failure?.message}`);
  clearSegmentTrees();
  segmentLeaves(target, S_RUN - 2);
  const fs = await cpu(() => screenFinalState(target, finalByReplay.checkpointCid, { previous: lastStart }));
  if (!fs.value.ok) throw new Error(`the honest final state fails the screen: ${fs.value.failure?.message}`);
  const fk = await openState(provider.run, provider.store, honest, lastCommit, S_RUN * K_RUN, keptFinal);
  // the first run is the warm-up
  if (i > 0) {
    screen.push(sc.cpuMs);
    botScreen.push(bs.cpuMs);
    finalScreen.push(fs.cpuMs);
    finalKept.push(fk.cpuMs);
    screenParts.leaves.push(leaves.cpuMs);
  }
  if (i === 0) recompute.pop();
}
const stepAudits: number[] = [];
const openings: number[] = [];
// steps spread over the middle segment (j = 1 .. K): an opening replays j - 1 steps, a uniformly drawn one (K - 1) / 2
const js = [1, 1, Math.ceil(K_RUN / 4), Math.ceil(K_RUN / 2), Math.ceil((3 * K_RUN) / 4), K_RUN];
progress("openings and sampled steps");
for (const j of js) {
  const r = await openAndAudit(provider.run, provider.store, honest, provider.segments, mid * K_RUN + j);
  if (!r.verdict.ok) throw new Error(`honest step ${mid * K_RUN + j} fails its sampled-step audit: ${r.verdict.failure?.message}`);
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
// A reduced run (fewer, shorter segments of the same model) is scaled to the manifest's K: per-state parts (a screen, a
// sampled step, a kept opening) do not depend on K; a segment's loop is its checkpoint put plus K steps, a recompute and
// a replay grow by one training step per step. stepTrain is the loop's CPU a step less the put, measured interleaved.
const put = median(checkpointPut);
const runSegment = median(segmentTraining);
const stepTrain = (runSegment - put) / K_RUN;
const extra = K - K_RUN;
// INVARIANT: without reduction every scaled value is the measured one (extra = 0, the fitted opening line as before)
const expectedOpening = reduced ? mo + stepTrain * ((K + 1) / 2 - mj) : mo + slope * ((K + 1) / 2 - mj);
const c = {
  recompute: median(recompute) + extra * stepTrain,
  screen: median(screen),
  botScreen: median(botScreen),
  tree: median(screenParts.leaves),
  finalScreen: median(finalScreen),
  finalOpeningReplay: finalByReplay.cpuMs + extra * stepTrain,
  finalOpeningKept: median(finalKept),
  step: median(stepAudits),
  opening: expectedOpening,
};

// ---------------------------------------------------------------- per-step detection of every-step cheats
const secret = "00".repeat(31) + "01";
const cheats: { strategy: string; opened: number; caught: number; q: number; kinds: string[] }[] = [];
for (const name of CHEATS) {
  const strategy = parseStrategy(name);
  progress(`cheat ${name}`);
  const r = await trainRun(strategy, join(tmp, name.replace(/[^a-z0-9]/g, "-")), 2);
  let caught = 0;
  const kinds = new Set<string>();
  for (let n = 0; n < CHEAT_OPENINGS; n++) {
    // the bot's own private draw, one step of segment n % 2 per opening
    const step = sampledStep(secret, zeroAddress, BigInt(1000 + n), n % 2, K_RUN, 1)!;
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
const matrix = loadDetectionMatrix(DEFAULT_DETECTION_PATH, { isDefault: true });
const quote = await quotePolicy(quoteJobOf(manifest), matrix);
// with the final state screened the last segment is priced at p like any other (the quote's lastSegmentAudited rule off)
const quoteNoLast = await quotePolicy(quoteJobOf(manifest), matrix, { lastSegmentAudited: false });
const p = quote.auditRate;
const r = stepRateForDetection(S, DETECTION);
// the segment rate that catches a cheat of every (non-last) segment with 0.99 by recompute alone
const p99 = 1 - (1 - DETECTION) ** (1 / (S - 1));
// shares against the interleaved measure of the provider's loop (trainCpu, the whole run's, is reported beside it)
const jobTraining = S * (put + K * stepTrain);
const share = (ms: number) => ms / jobTraining;
const jobStep = jobTraining / (S * K);
const stepMs = S * r * c.step;
// The provider's side of step sampling when it keeps a checkpoint every m steps of a segment (m = K: the start only, the
// measured replay; m = 1: every state, the measured read of a kept one). Between them a model from the measured parts:
// an opening replays (m - 1) / 2 steps on average from the kept state before it, at the replay's fixed part (load the
// kept state, hash and store the opened one); training stores K/m - 1 more checkpoints a segment at the measured put.
const checkpointBytes = provider.run.checkpointBytes(midStart).length;
// the replay's cost a step: the one c.opening was extrapolated with (the training step for a reduced run, else the fit)
const replayStep = reduced ? stepTrain : slope;
const openingFixed = c.opening - replayStep * ((K - 1) / 2);
const schedules = [...new Set([1, 2, 5, 10, 25, K])].filter((m) => m <= K && K % m === 0).map((m) => {
  const openingMs = m === 1 ? c.finalOpeningKept : m === K ? c.opening : Math.max(c.finalOpeningKept, openingFixed + replayStep * ((m - 1) / 2));
  const trainingMs = S * (K / m - 1) * put;
  const perAuditorMs = S * r * openingMs;
  return {
    keptEvery: m,
    openingCpuMs: Math.round(openingMs),
    trainingOverheadShare: round(share(trainingMs), 4),
    oneAuditorShare: round(share(trainingMs + perAuditorMs), 4),
    threeAuditorsShare: round(share(trainingMs + 3 * perAuditorMs), 4),
    storedBytes: S * (K / m) * checkpointBytes,
    modelled: m !== 1 && m !== K,
  };
});
// the segment rate the rest of the budget buys, with and without the every-segment screen
const budgetRate = (fixedMs: number) => Math.max(0, Math.min(1, (BUDGET * jobTraining - fixedMs) / (S * c.recompute)));
const pScreen = budgetRate(stepMs + c.finalScreen + S * c.botScreen);
const pFinal = budgetRate(stepMs + c.finalScreen);
type Design = { design: string; ms: number; stepRate: number; segmentRate: number; lastRecomputed: boolean; finalOpenings: number; screen: "every segment" | "final state" | "none" };
const designs: Design[] = [
  { design: "segment recompute at the quoted rate + screen (before)", ms: S * c.screen + (p * (S - 1) + 1) * c.recompute, stepRate: 0, segmentRate: p, lastRecomputed: true, finalOpenings: 0, screen: "every segment" },
  { design: `segment recompute at the rate for ${DETECTION} + screen (before)`, ms: S * c.screen + (p99 * (S - 1) + 1) * c.recompute, stepRate: 0, segmentRate: p99, lastRecomputed: true, finalOpenings: 0, screen: "every segment" },
  { design: "step sampling + the last segment's recompute (before)", ms: stepMs + c.recompute, stepRate: r, segmentRate: 0, lastRecomputed: true, finalOpenings: 0, screen: "none" },
  { design: "step sampling + final state opened and screened + every-segment screen + segment recompute at p_b", ms: stepMs + c.finalScreen + S * c.botScreen + pScreen * S * c.recompute, stepRate: r, segmentRate: pScreen, lastRecomputed: false, finalOpenings: 1, screen: "every segment" },
  { design: "step sampling + final state opened and screened + segment recompute at p_b", ms: stepMs + c.finalScreen + pFinal * S * c.recompute, stepRate: r, segmentRate: pFinal, lastRecomputed: false, finalOpenings: 1, screen: "final state" },
];
// the classes whose every sampled step failed: every-step cheats (the others touch a fraction q of the steps)
const everyStep = cheats.filter((x) => x.caught === x.opened);
// one planted step saves at most one step of the provider's compute: its gain against the stake it risks at rate p
const stakeWei = Number(manifest.policy?.providerStakeWei ?? 0);
const paymentWei = Number(manifest.policy?.paymentWei ?? 0);
const stepGainWei = paymentWei / (S * K);
const rows = designs.map((d) => {
  const work = share(d.ms);
  // a cheat touching the last segment: caught by its recompute where that rule holds, else like any other segment
  const oneSegment = detectionOver(1, d.stepRate, 1, d.segmentRate);
  const allSegments = d.lastRecomputed ? 1 : detectionOver(S, d.stepRate, 1, d.segmentRate);
  const allButLast = detectionOver(S - 1, d.stepRate, 1, d.segmentRate);
  const providerOpeningMs = S * d.stepRate * c.opening + d.finalOpenings * c.finalOpeningKept;
  return {
    design: d.design,
    segmentRate: round(d.segmentRate, 4),
    stepRate: round(d.stepRate, 3),
    screen: d.screen,
    lastSegmentRecomputed: d.lastRecomputed,
    auditorCpuMs: Math.round(d.ms),
    shareOfTraining: round(work, 4),
    providerOpeningCpuMs: Math.round(providerOpeningMs),
    providerOpeningShare: round(share(providerOpeningMs), 4),
    detectEveryStepCheat: { oneSegment: round(oneSegment, 3), allButLastSegment: round(allButLast, 3), allSegments: round(allSegments, 3) },
    detectByClassAllSegments: Object.fromEntries(cheats.map((x) => [x.strategy, round(d.lastRecomputed ? 1 : detectionOver(S, d.stepRate, x.q, d.segmentRate), 3)])),
    // a plant of one step (no trace in the state): the segment recompute's rate, in any segment (the last: 1 where recomputed)
    detectSparsePlant: { anySegment: round(d.segmentRate, 4), lastSegment: d.lastRecomputed ? 1 : round(d.segmentRate, 4) },
    // the expected slash of a one-step plant against the one step of compute it saves (the integrity value is the quote's)
    sparseLossOverGain: stepGainWei > 0 ? round((d.segmentRate * stakeWei) / stepGainWei, 1) : null,
    // a cheat that persists in the state (poisoned moments, NaN) to the delivered model
    detectPersistentStateCheat: d.screen === "none" && !d.lastRecomputed ? round(d.segmentRate, 3) : 1,
    detectionPerPercentOfTraining: round(allSegments / (100 * work), 3),
  };
});

const result = {
  manifest: manifestPath.split("/").slice(-2).join("/"),
  segments: S,
  stepsPerSegment: K,
  // the run measured: the manifest's, or the same model on fewer, shorter segments scaled to S and K (see above)
  measuredRun: { segments: S_RUN, stepsPerSegment: K_RUN, scaled: reduced, trainingStepCpuMs: round(stepTrain), checkpointPutCpuMs: round(put), openingSlopeCpuMsPerStep: round(slope), loadAverage: loadavg().map((x) => round(x, 2)) },
  quote: { auditRate: round(p, 4), auditRateWithoutLastSegmentRule: round(quoteNoLast.auditRate, 4), checks: quote.checks },
  budget: BUDGET,
  provider: {
    trainingCpuMs: Math.round(trainCpu),
    // S times the median of one segment's loop, interleaved with the auditor's parts: the shares' denominator
    trainingCpuMsInterleaved: Math.round(jobTraining),
    trainingWallMs: Math.round(provider.wallMs),
    cpuMsPerStep: round(stepCpu, 2),
    openingCpuMs: round(c.opening),
    finalOpeningReplayCpuMs: round(c.finalOpeningReplay),
    finalOpeningKeptCpuMs: round(c.finalOpeningKept),
  },
  auditor: {
    segmentRecomputeCpuMs: round(c.recompute),
    screenCpuMsBefore: round(c.screen),
    screenCpuMs: round(c.botScreen),
    segmentTreeCpuMs: round(c.tree),
    finalScreenCpuMs: round(c.finalScreen),
    sampledStepCpuMs: round(c.step),
    sampledStepInTrainingSteps: round(c.step / jobStep, 2),
    segmentRecomputeInTrainingSteps: round(c.recompute / jobStep, 1),
  },
  perStepDetection: cheats,
  everyStepClasses: everyStep.map((x) => x.strategy),
  stepSamplingShareOfTraining: round(share(stepMs), 4),
  checkpointBytes,
  providerOpeningSchedules: schedules,
  designs: rows,
  node: process.version,
};
await provider.run.close();
rmSync(tmp, { recursive: true, force: true });

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
if (reduced) console.log(`measured on ${S_RUN} segments of ${K_RUN} (scaled to ${S} of ${K}): ${stepTrain.toFixed(0)} ms a training step, checkpoint put ${put.toFixed(0)} ms, opening replay ${slope.toFixed(0)} ms a step (fit)`);
console.log(`${result.manifest}: ${S} segments of ${K}; training ${Math.round(trainCpu)} ms CPU (${stepCpu.toFixed(2)} ms a step), ${Math.round(jobTraining)} ms interleaved with the audits; quoted segment rate p = ${p.toFixed(3)} (${quoteNoLast.auditRate.toFixed(3)} without the last-segment rule), step rate r = ${r.toFixed(3)}`);
console.log(`auditor: segment recompute ${c.recompute.toFixed(0)} ms; screen ${c.screen.toFixed(1)} ms before, ${c.botScreen.toFixed(1)} ms the bot's (tree ${c.tree.toFixed(1)} ms); final screen ${c.finalScreen.toFixed(1)} ms; sampled step ${c.step.toFixed(1)} ms (${(c.step / jobStep).toFixed(1)} training steps)`);
console.log(`provider: opening ${c.opening.toFixed(0)} ms (replay, uniform state); final state ${c.finalOpeningReplay.toFixed(0)} ms by replay, ${c.finalOpeningKept.toFixed(1)} ms kept`);
for (const x of cheats) console.log(`  per-step detection ${x.strategy.padEnd(14)} ${x.caught}/${x.opened} (${x.kinds.join(", ") || "-"})`);
console.log("| design | p | r | auditor CPU / training | provider openings / training | every-step cheat, 1 segment | every-step cheat, all S | sparse plant (any segment / last) | one-step plant loss / gain |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const x of rows) console.log(`| ${x.design} | ${x.segmentRate} | ${x.stepRate} | ${pct(x.shareOfTraining)} | ${pct(x.providerOpeningShare)} | ${x.detectEveryStepCheat.oneSegment} | ${x.detectEveryStepCheat.allSegments} | ${x.detectSparsePlant.anySegment} / ${x.detectSparsePlant.lastSegment} | ${x.sparseLossOverGain ?? "-"} |`);
console.log("| provider keeps a checkpoint every m steps | opening CPU ms | training overhead | 1 auditor at r | 3 auditors at r | stored |");
console.log("|---|---|---|---|---|---|");
for (const x of schedules) console.log(`| ${x.keptEvery}${x.modelled ? " (model)" : ""} | ${x.openingCpuMs} | ${pct(x.trainingOverheadShare)} | ${pct(x.oneAuditorShare)} | ${pct(x.threeAuditorsShare)} | ${(x.storedBytes / 1e9).toFixed(2)} GB |`);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const out = new URL("./results/audit-cost.json", import.meta.url);
// one entry per manifest; a file of the older single-manifest form is kept whole as `before`
const old: Record<string, unknown> = existsSync(out) ? JSON.parse(readFileSync(out, "utf8")) : {};
const file = "manifests" in old ? old : { before: old, manifests: {} };
(file.manifests as Record<string, unknown>)[result.manifest] = result;
writeFileSync(out, JSON.stringify(file, null, 2) + "\n");
