/**
 * `pouw provider run`: trains an accepted job with the segment loop `pouw train` uses too (ml/segments.ts: store
 * the start checkpoint, whose CID goes on chain, run K steps, hash every state) and commits each segment before
 * the loop trains the next: store the end checkpoint (for resuming), publish the segment's leaves
 * (market/segment-traces.ts), then commitSegment.
 *
 * Restart: the chain says which segment is next. The start state of segment n is the end state of
 * segment n-1, which this provider stored before committing it; it is checked against the committed
 * end state hash. If the local record is gone (or the job was re-opened by a predecessor who timed out),
 * the state is rebuilt from segment n-1's published start checkpoint by re-running its K steps, and
 * checked the same way.
 *
 * A fine-tuning job whose base checkpoint is missing, does not decode or gives a non-finite h(0) is refused before
 * anything is committed (check-base.ts, BaseCheckpointError).
 *
 * `engine` (default: the manifest's, ml/engines.ts defaultBackend) is checked against the manifest's numerics once it
 * is fetched; "webgpu" (numerics bitwise-v3) opens the WebGPU device before the run and trains through the same
 * segment loop with its matmuls on the device: the same bits, so an auditor recomputes on CPU (docs/engine.md).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Hex } from "viem";
import { getAddress } from "viem";
import {
  commitSegment,
  ContractRevertError,
  getCommitter,
  getJob,
  getJobCreated,
  getSegmentCommits,
  rebindCommitter,
  type ChainClients,
  type Deployment,
  type JobStatusName,
  type SegmentCommit,
  txRef,
  type TxRef,
} from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { SegmentBoard } from "../market/segment-traces.ts";
import { createRun, deploymentSalt, formatStrategy, policyShapeMismatch, type Manifest, type Run, type Strategy, type TrainState } from "../ml/index.ts";
import { checkEngine, defaultBackend } from "../ml/engines.ts";
import type { BackendName } from "../ml/backend.ts";
import type { ContentStore } from "../store/index.ts";
import { lossE6 as lossE6Of, replayStrategySteps, trainSegments } from "../ml/segments.ts";
import { checkJobBase } from "./check-base.ts";
import { fetchKindManifest, runKindJob, type KindManifest } from "../kinds/market.ts";
import { datasetCidPath, endRecordPath, providerJobDir, writeStateCids, type ProviderContext } from "./records.ts";
import { answerOpenings } from "./openings.ts";

export { endRecordPath, providerJobDir, type ProviderContext } from "./records.ts";

const log = logger("provider");

export class ProviderJobError extends PouwError {
  override name = "ProviderJobError";
  override readonly code: string = "PROVIDER_JOB";
}

export type SegmentProgress = { jobId: bigint; segment: number; step: number; steps: number; loss: number };

export type RunJobOptions = {
  strategy: Strategy;
  onStep?: (p: SegmentProgress) => void;
  onSegment?: (s: { jobId: bigint; segment: number; traceRoot: Hex; lossE6: bigint; gasUsed: bigint }) => void;
  /** Stop after committing this many segments in this call (tests of restart). */
  maxSegments?: number;
  /** Matmul threads of the pouw engine (default 1; the bits do not depend on it: ml/kernels/threads.ts). */
  threads?: number;
  /** The engine (default the manifest's); "webgpu" runs a bitwise-v3 job's matmuls on the WebGPU device, the same bits. */
  engine?: BackendName;
  /** Store every state's checkpoint while training and record their CIDs (openings.ts, mode "kept"): K checkpoints a
   * segment instead of one, so that a state opening needs no replay. */
  keepStepStates?: boolean;
};

export type RunJobResult = {
  jobId: bigint;
  resumedFrom: number;
  committed: number[];
  /** The commitSegment transactions this call sent (not those a restart found already mined). */
  txs: TxRef[];
  gasUsed: bigint;
  /** Nominal FLOPs this call spent (forward + backward passes actually computed). */
  flops: number;
  /** Per-step training losses of the steps trained by this call. */
  stepLosses: { step: number; loss: number }[];
  wallSeconds: number;
  /** The job's manifest: a training manifest, or an evaluate/generate manifest (then `kind` says which). */
  manifest: Manifest | KindManifest["manifest"];
  kind?: KindManifest["kind"];
  /** A generate job's dataset CID (published to the store before its first commit). */
  datasetCid?: string;
  /** The job's status when the call started (a job that is not Active is not trained), and its deadline then. */
  status: JobStatusName;
  deadline: number;
  /** The engine that trained (absent when nothing was trained): its name, and with webgpu the device and its matmul count. */
  engine?: { backend: BackendName; device?: string; deviceMatmuls?: number };
};

async function resumeState(ctx: ProviderContext, run: Run, strategy: Strategy, jobId: bigint, next: number, commits: SegmentCommit[]): Promise<{ state: TrainState; flops: number }> {
  if (next === 0) return { state: await run.initFromStore(ctx.store), flops: 0 };
  const prev = commits.find((c) => c.segment === next - 1);
  if (!prev) throw new ProviderJobError(`job ${jobId}: segment ${next - 1} is committed on chain but its event was not found`);
  const K = run.manifest.training.stepsPerSegment;
  try {
    const cid = (await readFile(endRecordPath(ctx, jobId, next - 1), "utf8")).trim();
    const state = run.loadCheckpoint(await ctx.store.get(cid), { step: next * K });
    if (run.stateHashOf(state) === prev.endStateHash) return { state, flops: 0 };
    log.warn({ jobId, segment: next - 1 }, "stored end checkpoint does not match the committed end state; rebuilding");
  } catch {
    log.info({ jobId, segment: next - 1 }, "no stored end checkpoint; rebuilding from the segment's start checkpoint");
  }
  const { state, flops } = replayStrategySteps(run, strategy, run.loadCheckpoint(await ctx.store.get(prev.checkpointCid), { step: (next - 1) * K }), next * K);
  if (run.stateHashOf(state) !== prev.endStateHash) {
    throw new ProviderJobError(`job ${jobId}: re-running segment ${next - 1} from its checkpoint does not reach the committed end state (strategy ${formatStrategy(strategy)})`);
  }
  return { state, flops };
}

export async function runProviderJob(ctx: ProviderContext, jobId: bigint, options: RunJobOptions): Promise<RunJobResult> {
  const started = performance.now();
  const { clients, deployment } = ctx;
  const me = getAddress(clients.account.address);
  const jobMarket = deployment.jobMarket;
  const fromBlock = BigInt(deployment.startBlock);
  const job = await getJob(clients.public, { jobMarket, jobId });
  if (job.status === "None") throw new ProviderJobError(`job ${jobId} does not exist`);
  if (job.provider !== me) throw new ProviderJobError(`job ${jobId} is ${job.status} with provider ${job.provider}, not ${me}: accept it first (pouw provider accept ${jobId})`);
  const created = await getJobCreated(clients.public, { jobMarket, jobId, fromBlock });
  // a linear-tile job is trained only if its manifest hash and registered terms are its document's (else no proof of it
  // could ever settle a dispute: CircuitTermsMismatchError)
  // an evaluate or generate job is inference, one example a step (kinds/market.ts)
  const kind = await fetchKindManifest(ctx.store, created.manifestUri, job.manifestHash);
  if (kind) {
    const r = await runKindJob(ctx, kind, { jobId, nextSegment: job.nextSegment, policy: job.policy, status: job.status });
    if (r.datasetCid) {
      // claim names it on KindRecords (kinds/record.ts) without recomputing the samples
      await mkdir(providerJobDir(ctx, jobId), { recursive: true });
      await writeFile(datasetCidPath(ctx, jobId), `${r.datasetCid}\n`);
    }
    return { jobId, resumedFrom: r.resumedFrom, committed: r.committed, txs: r.txs, gasUsed: r.gasUsed, flops: 0, stepLosses: [], wallSeconds: r.wallSeconds, manifest: kind.manifest, kind: kind.kind, status: job.status, deadline: Number(job.deadline), ...(r.datasetCid ? { datasetCid: r.datasetCid } : {}) };
  }
  const manifest = await fetchManifest(ctx.store, created.manifestUri, job.manifestHash, { circuitHash: circuitJobCheck(clients.public, deployment, jobId, { requireRegistered: true }) });
  const K = manifest.training.stepsPerSegment;
  const S = job.policy.segments;
  const mismatch = policyShapeMismatch(jobId, job.policy, manifest);
  if (mismatch !== undefined) throw new ProviderJobError(mismatch);
  const result: RunJobResult = { jobId, resumedFrom: job.nextSegment, committed: [], txs: [], gasUsed: 0n, flops: 0, stepLosses: [], wallSeconds: 0, manifest, status: job.status, deadline: Number(job.deadline) };
  if (job.status !== "Active") {
    result.wallSeconds = (performance.now() - started) / 1000;
    return result;
  }
  const engine = options.engine ?? defaultBackend(manifest);
  checkEngine(manifest, engine, `job ${jobId}: engine`);
  // the device opens before the data: a machine without an adapter fails at once, naming VK_ICD_FILENAMES
  const webgpu = engine === "webgpu" ? await (await import("../ml/webgpu/sync-kernels.ts")).openWebGpuKernelsV3() : undefined;
  let run: Run;
  try {
    // the data order of this job: salt(chainId, jobMarket, jobId), what every auditor and panel member derives too
    run = await createRun(manifest, { jobId, salt: deploymentSalt(deployment, jobId), backend: engine, threads: options.threads ?? 1, store: ctx.store, ...(webgpu ? { transformerKernels: webgpu.kernels } : {}) });
  } catch (err) {
    await webgpu?.gpu.close();
    throw err;
  }
  try {
    // IMPORTANT: before any commit: a fine-tuning base that gives no usable h(0) is never trained (check-base.ts)
    await checkJobBase(run, ctx.store, jobId, "not trained (nothing committed)");
    const r = await trainJob(ctx, run, job, options, result, started);
    r.engine = webgpu ? { backend: engine, device: webgpu.gpu.info.description || webgpu.gpu.info.vendor, deviceMatmuls: webgpu.gpu.calls } : { backend: engine };
    return r;
  } finally {
    await run.close();
    await webgpu?.gpu.close();
  }
}

/**
 * The clients job `jobId`'s commits go out from: the provider's, or the session key's when the job's attested tier bound
 * one (JobMarket.committerOf). When the bound key is not this provider's session key (a restarted machine re-attested
 * with a new one), the tenure is first rebound to the current record's key (JobMarket.rebindCommitter); throws before
 * any training when that is refused or there is no session key: the market would refuse every commit.
 */
async function commitClients(ctx: ProviderContext, jobId: bigint): Promise<ChainClients> {
  let key = await getCommitter(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
  if (key === undefined) return ctx.clients;
  const have = ctx.sessionClients?.account.address;
  if (have !== undefined && getAddress(have) !== getAddress(key)) {
    try {
      await rebindCommitter(ctx.clients, { jobMarket: ctx.deployment.jobMarket, jobId });
    } catch (err) {
      throw new ProviderJobError(`job ${jobId} is bound to session key ${key}, not this provider's ${getAddress(have)}, and the rebind was refused: ${(err as Error).message}`, { cause: err });
    }
    key = await getCommitter(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
    if (key === undefined) return ctx.clients;
  }
  if (have === undefined || getAddress(have) !== getAddress(key)) {
    throw new ProviderJobError(
      `job ${jobId} was accepted at a tier whose evidence bound session key ${key}: only that key commits its segments, and this provider ${have === undefined ? "has no session key" : `holds session key ${getAddress(have)}`}`,
    );
  }
  return ctx.sessionClients as ChainClients;
}

async function trainJob(ctx: ProviderContext, run: Run, job: Awaited<ReturnType<typeof getJob>>, options: RunJobOptions, result: RunJobResult, started: number): Promise<RunJobResult> {
  const { clients, deployment } = ctx;
  const jobId = result.jobId;
  const jobMarket = deployment.jobMarket;
  const fromBlock = BigInt(deployment.startBlock);
  const K = run.manifest.training.stepsPerSegment;
  const S = job.policy.segments;
  const commits = await getSegmentCommits(clients.public, { jobMarket, jobId, fromBlock });
  const committer = await commitClients(ctx, jobId);
  const next = job.nextSegment;
  const resumed = await resumeState(ctx, run, options.strategy, jobId, next, commits);
  result.flops += resumed.flops;
  await mkdir(join(endRecordPath(ctx, jobId, 0), ".."), { recursive: true });
  // INVARIANT: openings of this job's committed segments may be asked while it trains, and an unanswered one is a
  // withholding Fault: they are answered before training resumes and after every commit, not only by `provider serve`
  // after the last one (a failure here is logged and left to the next call or to serve; training goes on)
  const answerPending = async () => {
    const stateOpenings = deployment.stateOpenings;
    if (!stateOpenings) return;
    try {
      const r = await answerOpenings({ ...ctx, stateOpenings }, { strategy: options.strategy, mode: options.keepStepStates ? "kept" : "recompute", jobId });
      if (r.answered.length > 0 || r.failed.length > 0) log.info({ jobId, answered: r.answered.map((x) => x.step), failed: r.failed }, "state openings answered while training");
    } catch (err) {
      log.error({ err, jobId }, "answering state openings failed; provider serve (or the next commit) retries");
    }
  };
  await answerPending();
  const end = options.maxSegments === undefined ? S : Math.min(S, next + options.maxSegments);
  // the segment loop `pouw train` consumes too (ml/segments.ts): h(t) on a worker while step t+1 runs when the
  // run has threads, the same bits
  const loop = trainSegments(run, {
    strategy: options.strategy,
    store: ctx.store,
    start: resumed.state,
    startSegment: next,
    endSegment: end,
    ...(options.keepStepStates ? { keepStepStates: true } : {}),
    onStep: (p) => {
      result.stepLosses.push({ step: p.step, loss: p.loss });
      options.onStep?.({ jobId, segment: p.segment, step: p.step, steps: S * K, loss: p.loss });
    },
  });
  for await (const s of loop) {
    const seg = s.index;
    result.flops += s.flops;
    const lossE6 = BigInt(s.lossE6);
    const endCid = await ctx.store.put(run.checkpointBytes(s.state));
    await writeFile(endRecordPath(ctx, jobId, seg), endCid);
    if (s.stateCids) await writeStateCids(ctx, jobId, seg, s.stateCids);
    await ctx.board.publish(jobMarket, {
      format: "pouw-segment-1",
      jobId: jobId.toString(),
      segment: seg,
      firstStep: s.firstStep,
      stateHashes: s.stateHashes,
      stepLossE6: s.losses.map(lossE6Of),
      checkpointCid: s.checkpointCid,
    });
    try {
      const r = await commitSegment(committer, { jobMarket, jobId, segment: seg, stateHashes: s.stateHashes, lossE6, checkpointCid: s.checkpointCid });
      result.gasUsed += r.gasUsed;
      result.txs.push(txRef(`commitSegment ${seg}`, r));
      options.onSegment?.({ jobId, segment: seg, traceRoot: s.traceRoot, lossE6, gasUsed: r.gasUsed });
    } catch (err) {
      // A commit sent before a crash and mined meanwhile: the chain already has this segment.
      if (!(err instanceof ContractRevertError && err.errorName === "JobMarketSegmentAlreadyCommitted")) throw err;
      log.info({ jobId, segment: seg }, "segment already committed (sent before a restart)");
    }
    result.committed.push(seg);
    log.info({ jobId, segment: seg, root: s.traceRoot }, "segment committed");
    await answerPending();
  }
  result.wallSeconds = (performance.now() - started) / 1000;
  return result;
}
