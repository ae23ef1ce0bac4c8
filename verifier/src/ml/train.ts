/**
 * `pouw train` (a trace directory, no chain): consumes the segment loop (segments.ts, the loop `pouw provider run`
 * consumes too) over the manifest's steps, keeps every state hash, and writes the final checkpoint and trace.json
 * (see trace-file.ts). The copy, full-copy and steer strategies train nothing and build their trace here from a
 * peer's directory.
 */
import { mkdir, readFile, writeFile, access, constants, rm } from "node:fs/promises";
import { join, resolve, dirname } from "node:path";
import type { Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { LocalDirStore, type ContentStore } from "../store/index.ts";
import { traceRoot } from "../trace/index.ts";
import { StrategyError } from "./errors.ts";
import type { Run, TrainState } from "./run.ts";
import { lossE6, segmentLossE6, trainSegments } from "./segments.ts";
import { steerStates } from "./steer.ts";
import { formatStrategy, type Strategy } from "./strategies.ts";
import { readTraceFile, TRACE_FORMAT, type SegmentEntry, type TraceFile } from "./trace-file.ts";

const log = logger("train");

export type Progress = { step: number; steps: number; loss: number; segment: number };

export type TrainOptions = {
  outDir: string;
  strategy: Strategy;
  /** Store for a base checkpoint named by manifest.init.checkpointCid (default: the out dir's store). */
  baseStore?: ContentStore;
  onStep?: (p: Progress) => void;
  /** Evaluate the final state on the held-out split (default true). */
  evaluate?: boolean;
  /**
   * Also store the checkpoint of every state, not only segment starts, and return their CIDs
   * (`stepStateCids[t]` = state t): what the magnitude and tolerance checks ask a provider to serve
   * (checks/step-states.ts). Not available with the copy strategy, which holds no per-step states
   * (full-copy and steer return theirs anyway: they hold every state).
   */
  keepStepStates?: boolean;
  /**
   * Hash h(t) on a worker thread while step t+1 runs (hash-pipeline.ts; the same bits). Default: on when the
   * run has more than one matmul thread. On a 1-thread run it is the 2-thread configuration of a 2-core
   * machine: one core steps, the other hashes (`pouw train --hash-worker`).
   */
  hashWorker?: boolean;
};

export type TrainResult = { trace: TraceFile; tracePath: string; finalState: TrainState | undefined; stepStateCids?: string[] };

/** Creates the out dir and checks it is writable; InputError otherwise. */
export async function prepareOutDir(outDir: string): Promise<void> {
  const dir = resolve(outDir);
  try {
    await mkdirs(dir);
    await access(dir, constants.W_OK);
    const probe = join(dir, `.write-probe-${process.pid}`);
    await writeFile(probe, "");
    await rm(probe);
  } catch (err) {
    throw new InputError(`output dir ${outDir} is not writable (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  }
}

/**
 * mkdir -p one component at a time. NOTE: fs.mkdir({ recursive: true }) spins forever on some
 * pseudo file systems (e.g. a path under /proc, where mkdir answers ENOENT for an existing parent).
 */
async function mkdirs(dir: string): Promise<void> {
  const parent = dirname(dir);
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || parent === dir) throw err;
    await mkdirs(parent);
    await mkdir(dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
  }
}

export async function train(run: Run, options: TrainOptions): Promise<TrainResult> {
  const started = performance.now();
  const outDir = resolve(options.outDir);
  await prepareOutDir(outDir);
  const store = new LocalDirStore(join(outDir, "store"));
  const { steps, stepsPerSegment: K, batchSize: B } = run.manifest.training;
  const strategy = options.strategy;
  if (strategy.kind === "copy") {
    if (options.keepStepStates) throw new InputError("per-step states cannot be kept with the copy strategy: it trains nothing");
    return copyTrace(run, strategy.dir, outDir, store, started);
  }
  if (strategy.kind === "steer" || strategy.kind === "full-copy") return peerStatesTrace(run, strategy, outDir, store, started);

  const start = await run.initFromStore(options.baseStore ?? store);
  let state = start;
  const hashes: Hex[] = [];
  const losses: number[] = [];
  const segments: SegmentEntry[] = [];
  const flopsPerStep = run.model.flopsPerStep(B);
  let spentFlops = 0;
  let gradientsComputed = 0;
  let stepsSkipped = 0;
  let planted: TraceFile["planted"];
  const stepStateCids: string[] | undefined = options.keepStepStates ? [] : undefined;
  const loop = trainSegments(run, {
    strategy,
    store,
    start,
    endSegment: Math.ceil(steps / K),
    ...(options.hashWorker !== undefined ? { hashWorker: options.hashWorker } : {}),
    ...(options.keepStepStates ? { keepStepStates: true } : {}),
    onStep: (p) => options.onStep?.({ ...p, steps }),
  });
  for await (const s of loop) {
    state = s.state;
    hashes.push(...(hashes.length === 0 ? s.stateHashes : s.stateHashes.slice(1)));
    losses.push(...s.losses);
    spentFlops += s.flops;
    gradientsComputed += s.gradientsComputed;
    stepsSkipped += s.stepsSkipped;
    if (s.planted) planted = s.planted;
    s.stateCids?.forEach((cid, j) => (stepStateCids![s.firstStep + j] = cid));
    segments.push({ index: s.index, firstStep: s.firstStep, lastStep: s.lastStep, traceRoot: s.traceRoot, endStateHash: s.stateHashes[K]!, lossE6: s.lossE6, checkpointCid: s.checkpointCid });
    log.debug({ segment: s.index, root: s.traceRoot }, "segment done");
  }

  const finalBytes = run.checkpointBytes(state);
  const finalCheckpointCid = await store.put(finalBytes);
  await writeFile(join(outDir, "final.safetensors"), finalBytes);
  // the model caps its final evaluation where the whole held-out split would cost more than training (models/*)
  const evaluation = options.evaluate === false ? undefined : run.evaluate(state, run.model.finalEvaluationLimit ?? Infinity);
  const honestFlops = flopsPerStep * steps;
  const trace: TraceFile = {
    format: TRACE_FORMAT,
    manifestHash: run.manifestHash,
    jobId: run.jobId.toString(),
    salt: run.salt,
    strategy: formatStrategy(strategy),
    model: run.model.arch,
    steps,
    stepsPerSegment: K,
    backend: run.backend,
    store: "store",
    segments,
    stateHashes: hashes,
    stepLossE6: losses.map(lossE6),
    finalCheckpointCid,
    compute: {
      flopsPerStep,
      honestFlops,
      spentFlops,
      savedFlops: honestFlops - spentFlops,
      savedFraction: (honestFlops - spentFlops) / honestFlops,
      stepsSkipped,
      gradientsComputed,
      basis: strategy.kind === "fp16" ? "nominal FLOPs; fp16 counted at half the fp32 cost (accelerator throughput), the CPU engine only emulates the rounding" : "nominal FLOPs of forward+backward passes actually computed",
    },
    ...(planted ? { planted } : {}),
    // a diverged run's held-out loss is NaN or infinite: recorded as null (JSON has no NaN), the rule's own result
    ...(evaluation ? { evaluation: { ...evaluation, loss: Number.isFinite(evaluation.loss) ? evaluation.loss : null } } : {}),
    wallSeconds: (performance.now() - started) / 1000,
  };
  const tracePath = join(outDir, "trace.json");
  await writeFile(tracePath, JSON.stringify(trace, null, 2) + "\n");
  if (stepStateCids) stepStateCids[steps] = finalCheckpointCid;
  return { trace, tracePath, finalState: state, ...(stepStateCids ? { stepStateCids } : {}) };
}

function segmentEntry(seg: number, K: number, hashes: readonly Hex[], losses: readonly number[], checkpointCid: string): SegmentEntry {
  const first = seg * K;
  const last = first + K;
  return {
    index: seg,
    firstStep: first,
    lastStep: last,
    traceRoot: traceRoot(first, hashes.slice(first, last + 1)),
    endStateHash: hashes[last]!,
    lossE6: segmentLossE6(losses.slice(first, last)),
    checkpointCid,
  };
}

/** copy:<dir>: republish a peer's trace under this run's jobId without training. */
async function copyTrace(run: Run, peerDir: string, outDir: string, store: LocalDirStore, started: number): Promise<TrainResult> {
  const peer = await readTraceFile(join(peerDir, "trace.json"));
  if (peer.manifestHash !== run.manifestHash) throw new StrategyError(`copy: ${peerDir} is a trace of manifest ${peer.manifestHash}, not ${run.manifestHash}`);
  if (BigInt(peer.jobId) === run.jobId) throw new StrategyError(`copy: ${peerDir} has this run's jobId ${run.jobId}; copying it would be the honest trace`);
  const peerStore = new LocalDirStore(join(dirname(join(peerDir, "trace.json")), peer.store));
  const K = peer.stepsPerSegment;
  const hashes = [...peer.stateHashes] as Hex[];
  const rekey = async (cid: string, step: number): Promise<{ cid: string; state: TrainState }> => {
    const state = run.loadCheckpoint(await peerStore.get(cid), { step, jobId: BigInt(peer.jobId) });
    hashes[step] = run.stateHashOf(state);
    return { cid: await store.put(run.checkpointBytes(state)), state };
  };
  const segments: SegmentEntry[] = [];
  const cids: string[] = [];
  for (const s of peer.segments) cids.push((await rekey(s.checkpointCid, s.firstStep)).cid);
  const final = await rekey(peer.finalCheckpointCid, peer.steps);
  const losses = peer.stepLossE6.map((l) => l / 1e6);
  for (const s of peer.segments) segments.push(segmentEntry(s.index, K, hashes, losses, cids[s.index]!));
  await writeFile(join(outDir, "final.safetensors"), run.checkpointBytes(final.state));
  const flopsPerStep = run.model.flopsPerStep(run.batchSize);
  const honestFlops = flopsPerStep * peer.steps;
  const trace: TraceFile = {
    format: TRACE_FORMAT,
    manifestHash: run.manifestHash,
    jobId: run.jobId.toString(),
    salt: run.salt,
    strategy: `copy:${peerDir}`,
    model: run.model.arch,
    steps: peer.steps,
    stepsPerSegment: K,
    backend: run.backend,
    store: "store",
    segments,
    stateHashes: hashes,
    stepLossE6: peer.stepLossE6,
    finalCheckpointCid: final.cid,
    compute: { flopsPerStep, honestFlops, spentFlops: 0, savedFlops: honestFlops, savedFraction: 1, stepsSkipped: peer.steps, gradientsComputed: 0, basis: "copied a peer's trace: no forward or backward pass" },
    ...(peer.evaluation ? { evaluation: peer.evaluation } : {}),
    wallSeconds: (performance.now() - started) / 1000,
  };
  const tracePath = join(outDir, "trace.json");
  await writeFile(tracePath, JSON.stringify(trace, null, 2) + "\n");
  return { trace, tracePath, finalState: final.state };
}

/**
 * full-copy:<dir> and steer:<dir> (ml/steer.ts): a peer's per-step states under this run's jobId, without
 * training. The peer's directory must serve its per-step states (steps.json, checks/step-states.ts format).
 * full-copy re-keys every state as it is; steer replaces the moments so the reference step from each lands
 * on the peer's next weights. Every state is stored, and its CIDs returned as stepStateCids, since the
 * cheater holds them all.
 */
async function peerStatesTrace(run: Run, strategy: Extract<Strategy, { kind: "full-copy" | "steer" }>, outDir: string, store: LocalDirStore, started: number): Promise<TrainResult> {
  const { kind, dir: peerDir } = strategy;
  const peer = await readTraceFile(join(peerDir, "trace.json"));
  if (peer.manifestHash !== run.manifestHash) throw new StrategyError(`${kind}: ${peerDir} is a trace of manifest ${peer.manifestHash}, not ${run.manifestHash}`);
  if (kind === "full-copy" && BigInt(peer.jobId) === run.jobId) throw new StrategyError(`full-copy: ${peerDir} has this run's jobId ${run.jobId}; copying it would be the honest trace`);
  let cids: unknown;
  try {
    cids = (JSON.parse(await readFile(join(peerDir, "steps.json"), "utf8")) as { cids?: unknown }).cids;
  } catch (err) {
    throw new StrategyError(`${kind}: ${peerDir} serves no readable steps.json (the peer's per-step states)`, { cause: err });
  }
  if (!Array.isArray(cids) || cids.length !== peer.steps + 1) throw new StrategyError(`${kind}: ${peerDir}/steps.json does not list ${peer.steps + 1} states`);
  const peerStore = new LocalDirStore(join(peerDir, peer.store));
  const peerStates: TrainState[] = [];
  for (let t = 0; t <= peer.steps; t++) peerStates.push(run.loadCheckpoint(await peerStore.get(String(cids[t])), { step: t, jobId: BigInt(peer.jobId) }));
  const states = kind === "steer" ? steerStates(run, peerStates) : peerStates;
  const K = peer.stepsPerSegment;
  const hashes = states.map((s) => run.stateHashOf(s));
  const stepStateCids: string[] = [];
  for (const s of states) stepStateCids.push(await store.put(run.checkpointBytes(s)));
  const losses = peer.stepLossE6.map((l) => l / 1e6);
  const segments = peer.segments.map((s) => segmentEntry(s.index, K, hashes, losses, stepStateCids[s.firstStep]!));
  const final = states[states.length - 1]!;
  await writeFile(join(outDir, "final.safetensors"), run.checkpointBytes(final));
  const flopsPerStep = run.model.flopsPerStep(run.batchSize);
  const honestFlops = flopsPerStep * peer.steps;
  const trace: TraceFile = {
    format: TRACE_FORMAT,
    manifestHash: run.manifestHash,
    jobId: run.jobId.toString(),
    salt: run.salt,
    strategy: formatStrategy(strategy),
    model: run.model.arch,
    steps: peer.steps,
    stepsPerSegment: K,
    backend: run.backend,
    store: "store",
    segments,
    stateHashes: hashes,
    stepLossE6: peer.stepLossE6,
    finalCheckpointCid: stepStateCids[peer.steps]!,
    compute: {
      flopsPerStep,
      honestFlops,
      spentFlops: 0,
      savedFlops: honestFlops,
      savedFraction: 1,
      stepsSkipped: peer.steps,
      gradientsComputed: 0,
      basis: kind === "steer" ? "steered a peer's per-step weights with chosen moments: no forward or backward pass" : "re-keyed a peer's per-step states to this job: no forward or backward pass",
    },
    ...(peer.evaluation ? { evaluation: peer.evaluation } : {}),
    wallSeconds: (performance.now() - started) / 1000,
  };
  const tracePath = join(outDir, "trace.json");
  await writeFile(tracePath, JSON.stringify(trace, null, 2) + "\n");
  return { trace, tracePath, finalState: final, stepStateCids };
}
