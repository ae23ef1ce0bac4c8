/**
 * State openings, the provider's side: an active auditor asks (StateOpenings.requestOpening) for state t of a committed
 * segment; the provider rebuilds that state, checks it against the committed leaf h(t), publishes its checkpoint to
 * the content store and answers on chain with the CID and the leaf's Merkle proof before the deadline. An opening left
 * unanswered is a withheld state, slashed by the panel as a withheld checkpoint is (docs/disputes.md). One opening per
 * state serves every auditor, and the provider's deadlines are queued one replaySeconds apart (docs/checks.md, "State
 * openings: the queue"): answered in deadline order at no more than one segment replay each, every one is in time.
 *
 * Two ways to hold the state (docs/checks.md, "State openings"):
 * - "recompute": keep only each segment's start checkpoint (already published for commitSegment) and replay from it,
 *   walking each segment once for all of its asked states (openStates): at most K - 1 steps a segment, however many of
 *   its states are asked, no extra storage;
 * - "kept": store every state's checkpoint while training (`runProviderJob(..., { keepStepStates: true })`, K
 *   checkpoints a segment) and answer with the stored CID, no replay.
 *
 * @example
 *   const answered = await answerOpenings({ ...ctx, stateOpenings }, { strategy: { kind: "honest" }, mode: "recompute" });
 */
import { getAddress, type Address, type Hex } from "viem";
import {
  answerOpening,
  getJob,
  getJobCreated,
  getOpeningRequests,
  getSegmentCommits,
  type OpeningRequest,
  type SegmentCommit,
} from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { createRun, deploymentSalt, type Run, type Strategy, type TrainState } from "../ml/index.ts";
import { replayStrategySteps } from "../ml/segments.ts";
import type { ContentStore } from "../store/index.ts";
import { SegmentTree } from "../trace/index.ts";
import { readFile } from "node:fs/promises";
import { endRecordPath, readStateCids, type ProviderContext } from "./records.ts";

export { readStateCids, stateCidsPath, writeStateCids } from "./records.ts";

const log = logger("provider-openings");

/** A state the provider cannot open as committed (its record is gone, or it does not hash to the committed leaf). */
export class OpeningError extends PouwError {
  override name = "OpeningError";
  override readonly code: string = "PROVIDER_OPENING";
}

export type OpeningMode = "recompute" | "kept";

export type OpenedState = {
  step: number;
  mode: OpeningMode;
  stateHash: Hex;
  checkpointCid: string;
  /** Size of the checkpoint file published for the opening. */
  bytes: number;
  /** Training steps re-run to rebuild the state (0 when kept). */
  stepsReplayed: number;
  /** Process CPU time (user + system) the opening cost here, and its wall time, in milliseconds. */
  cpuMs: number;
  wallMs: number;
};

/**
 * Rebuilds state `step` of committed segment `commit` and publishes its checkpoint (openStates with one state).
 * Throws OpeningError when the rebuilt state does not hash to the committed h(step).
 */
export async function openState(run: Run, store: ContentStore, strategy: Strategy, commit: SegmentCommit, step: number, keptCids?: readonly string[] | null): Promise<OpenedState> {
  return (await openStates(run, store, strategy, commit, [step], keptCids))[0]!;
}

/**
 * Rebuilds states `steps` of committed segment `commit` and publishes their checkpoints: from `keptCids` where a state
 * is kept (mode "kept"), else by ONE replay walk from the segment's start checkpoint with `strategy` that stops at each
 * asked state in turn (mode "recompute"): the segment is replayed once however many of its states are asked, so an
 * opening costs at most one segment replay. Returns the opened states in ascending step order (duplicates once).
 * Throws OpeningError when a step is not a state the segment opens or a rebuilt state does not hash to its leaf.
 */
export async function openStates(run: Run, store: ContentStore, strategy: Strategy, commit: SegmentCommit, steps: readonly number[], keptCids?: readonly string[] | null): Promise<OpenedState[]> {
  const K = run.manifest.training.stepsPerSegment;
  const first = commit.segment * K;
  // the job's last segment also opens its end state, the final model (StateOpenings' rule): auditors screen it there
  const end = commit.segment + 1 === run.manifest.training.steps / K ? K : K - 1;
  const asked = [...new Set(steps)].sort((x, y) => x - y);
  for (const step of asked) {
    const j = step - first;
    if (!Number.isInteger(j) || j < 0 || j > end || commit.stateHashes[j] === undefined) {
      throw new OpeningError(`state ${step} is not a state segment ${commit.segment} opens (states ${first}..${first + end})`);
    }
  }
  const out: OpenedState[] = [];
  // the replay walk: loaded once, on the first state that is not kept, and carried forward from state to state
  let walk: TrainState | null = null;
  for (const step of asked) {
    const j = step - first;
    const expected = commit.stateHashes[j]!;
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const kept = keptCids?.[j];
    let opened: Omit<OpenedState, "cpuMs" | "wallMs">;
    if (kept !== undefined) {
      const bytes = await store.get(kept);
      const state = run.loadCheckpoint(bytes, { step });
      const stateHash = run.stateHashOf(state);
      if (stateHash !== expected) throw new OpeningError(`kept checkpoint ${kept} of state ${step} hashes to ${stateHash}, committed ${expected}`);
      opened = { step, mode: "kept", stateHash, checkpointCid: kept, bytes: bytes.length, stepsReplayed: 0 };
    } else {
      walk ??= run.loadCheckpoint(await store.get(commit.checkpointCid), { step: first });
      const from: number = walk.step;
      ({ state: walk } = replayStrategySteps(run, strategy, walk, step));
      const stateHash = run.stateHashOf(walk);
      if (stateHash !== expected) {
        throw new OpeningError(`replaying segment ${commit.segment} to state ${step} gives ${stateHash}, committed ${expected}`, {
          details: "the strategy or the start checkpoint differs from what was committed",
        });
      }
      const bytes = run.checkpointBytes(walk);
      const checkpointCid = await store.put(bytes);
      // INVARIANT: stepsReplayed counts only this state's share of the walk: a segment's openings sum to at most K
      opened = { step, mode: "recompute", stateHash, checkpointCid, bytes: bytes.length, stepsReplayed: step - from };
    }
    const cpu = process.cpuUsage(cpu0);
    out.push({ ...opened, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - wall0 });
  }
  return out;
}

/** The end checkpoint CID recorded when segment `segment` was committed (run-job.ts), or null when none is recorded. */
async function readEndCid(ctx: Pick<ProviderContext, "stateDir" | "deployment">, jobId: bigint, segment: number): Promise<string | null> {
  try {
    const cid = (await readFile(endRecordPath(ctx, jobId, segment), "utf8")).trim();
    return cid === "" ? null : cid;
  } catch {
    return null;
  }
}

/** A kept-CIDs row holding only the end state's CID (index K): openState answers the final state from it, no replay. */
function finalCids(cid: string, K: number): string[] {
  const row: string[] = [];
  row[K] = cid;
  return row;
}

/** What answering needs: the chain, the store the checkpoints go to, and the local records of kept states. */
export type OpeningsContext = Pick<ProviderContext, "clients" | "deployment" | "store" | "stateDir"> & { stateOpenings: Address };

export type AnswerOpeningsOptions = {
  /** The strategy the provider trained with (a replay must reproduce the committed states). */
  strategy: Strategy;
  /** "kept" answers from per-state CIDs recorded while training, falling back to a replay where none is recorded. */
  mode: OpeningMode;
  /** Only this job's openings (default: every job this account provides). */
  jobId?: bigint;
  /** Unix seconds used to skip expired openings (default: the latest block's timestamp). */
  now?: number;
};

export type AnsweredOpening = OpenedState & { jobId: bigint; segment: number; gasUsed: bigint; transactionHash: Hex };

export type AnswerOpeningsResult = {
  answered: AnsweredOpening[];
  /** Openings this account must answer but could not (expired, or the state could not be rebuilt), with the reason. */
  failed: { jobId: bigint; step: number; reason: string }[];
};

/**
 * One pass of the provider's opening duty (serve.ts runs it every pass, before the disputes): every unanswered, unexpired
 * opening of a job this account provides is opened and answered, in deadline order (the order StateOpenings' queue
 * guarantees is in time), each segment's asked states rebuilt by one replay walk (openStates). Openings of other
 * providers' jobs are skipped. Safe to rerun (answered ones are skipped; an answer mined before a restart reverts
 * StateOpeningsAlreadyAnswered, reported in `failed`).
 */
export async function answerOpenings(ctx: OpeningsContext, opts: AnswerOpeningsOptions): Promise<AnswerOpeningsResult> {
  const { clients, deployment } = ctx;
  const me = getAddress(clients.account.address);
  const fromBlock = BigInt(deployment.startBlock);
  const now = opts.now ?? Number((await clients.public.getBlock()).timestamp);
  const requests = await getOpeningRequests(clients.public, { stateOpenings: ctx.stateOpenings, fromBlock, ...(opts.jobId === undefined ? {} : { jobId: opts.jobId }) });
  const byJob = new Map<bigint, OpeningRequest[]>();
  for (const r of requests) {
    if (r.answered !== null) continue;
    byJob.set(r.jobId, [...(byJob.get(r.jobId) ?? []), r]);
  }
  const result: AnswerOpeningsResult = { answered: [], failed: [] };
  for (const [jobId, pending] of byJob) {
    const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
    if (job.provider !== me) continue;
    const created = await getJobCreated(clients.public, { jobMarket: deployment.jobMarket, jobId, fromBlock });
    const manifest = await fetchManifest(ctx.store, created.manifestUri, job.manifestHash);
    const commits = await getSegmentCommits(clients.public, { jobMarket: deployment.jobMarket, jobId, fromBlock });
    const run = await createRun(manifest, { jobId, salt: deploymentSalt(deployment, jobId), store: ctx.store });
    const K = manifest.training.stepsPerSegment;
    try {
      // the segments in the order of their earliest deadline: the queue's order, so a pass that runs long misses none
      const bySegment = new Map<number, OpeningRequest[]>();
      for (const r of [...pending].sort((x, y) => x.deadline - y.deadline || x.step - y.step)) {
        if (now > r.deadline) {
          result.failed.push({ jobId, step: r.step, reason: `expired at ${r.deadline}` });
          continue;
        }
        bySegment.set(r.segment, [...(bySegment.get(r.segment) ?? []), r]);
      }
      for (const [segment, asked] of bySegment) {
        const commit = commits.find((c) => c.segment === segment);
        if (!commit) {
          for (const r of asked) result.failed.push({ jobId, step: r.step, reason: `segment ${segment} has no SegmentCommitted event` });
          continue;
        }
        let opened: Map<number, OpenedState>;
        try {
          opened = await openSegmentStates(ctx, run, opts, jobId, commit, asked.map((r) => r.step), K);
        } catch (err) {
          log.error({ err, jobId, segment }, "openings not answered: the segment's states could not be rebuilt");
          const reason = err instanceof Error ? err.message.split("\n")[0]! : String(err);
          for (const r of asked) result.failed.push({ jobId, step: r.step, reason });
          continue;
        }
        const tree = new SegmentTree(commit.segment * K, commit.stateHashes);
        for (const r of asked) {
          const o = opened.get(r.step)!;
          try {
            const tx = await answerOpening(clients, {
              stateOpenings: ctx.stateOpenings,
              jobId,
              step: r.step,
              checkpointCid: o.checkpointCid,
              traceRoot: commit.traceRoot,
              endStateHash: commit.endStateHash,
              stateHash: o.stateHash,
              proof: tree.proof(r.step),
            });
            result.answered.push({ ...o, jobId, segment, gasUsed: tx.gasUsed, transactionHash: tx.hash });
            log.info({ jobId, step: r.step, mode: o.mode, cpuMs: Math.round(o.cpuMs) }, "opening answered");
          } catch (err) {
            log.error({ err, jobId, step: r.step }, "opening not answered");
            result.failed.push({ jobId, step: r.step, reason: err instanceof Error ? err.message.split("\n")[0]! : String(err) });
          }
        }
      }
    } finally {
      await run.close();
    }
  }
  return result;
}

/**
 * The asked states of one committed segment, rebuilt by one walk (openStates): kept per-state CIDs in mode "kept", and
 * the final state (the last segment's end) from the end checkpoint kept at commit, in either mode; a kept record that
 * no longer serves its state falls back to the replay walk (in time all the same).
 */
async function openSegmentStates(ctx: OpeningsContext, run: Run, opts: AnswerOpeningsOptions, jobId: bigint, commit: SegmentCommit, steps: readonly number[], K: number): Promise<Map<number, OpenedState>> {
  const kept = opts.mode === "kept" ? await readStateCids(ctx, jobId, commit.segment) : null;
  const finalStep = (commit.segment + 1) * K;
  const endCid = steps.includes(finalStep) ? await readEndCid(ctx, jobId, commit.segment) : null;
  const cids = endCid ? Object.assign([...(kept ?? [])], finalCids(endCid, K)) : kept;
  const opened = await openStates(run, ctx.store, opts.strategy, commit, steps, cids).catch((err: unknown) => {
    if (cids === null) throw err;
    log.warn({ err, jobId, segment: commit.segment }, "a kept checkpoint does not open its state; replaying the segment");
    return openStates(run, ctx.store, opts.strategy, commit, steps, null);
  });
  return new Map(opened.map((o) => [o.step, o]));
}
