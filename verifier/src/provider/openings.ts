/**
 * State openings, the provider's side: an active auditor asks (StateOpenings.requestOpening) for state t of a committed
 * segment; the provider rebuilds that state, checks it against the committed leaf h(t), publishes its checkpoint to
 * the content store and answers on chain with the CID and the leaf's Merkle proof before the deadline. An opening left
 * unanswered is a withheld state, slashed by the panel as a withheld checkpoint is (docs/disputes.md).
 *
 * Two ways to hold the state (docs/checks.md, "State openings"):
 * - "recompute": keep only each segment's start checkpoint (already published for commitSegment) and replay
 *   t - segment*K steps from it, at most K - 1 steps a opening, no extra storage;
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
import { createRun, deploymentSalt, type Run, type Strategy } from "../ml/index.ts";
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
 * Rebuilds state `step` of committed segment `commit` and publishes its checkpoint: from `keptCids` (mode "kept") or
 * by replaying from the segment's start checkpoint with `strategy` (mode "recompute", or "kept" without a record).
 * Throws OpeningError when the rebuilt state does not hash to the committed h(step).
 */
export async function openState(run: Run, store: ContentStore, strategy: Strategy, commit: SegmentCommit, step: number, keptCids?: readonly string[] | null): Promise<OpenedState> {
  const K = run.manifest.training.stepsPerSegment;
  const first = commit.segment * K;
  const j = step - first;
  const expected = commit.stateHashes[j];
  // the job's last segment also opens its end state, the final model (StateOpenings' rule): auditors screen it there
  const end = commit.segment + 1 === run.manifest.training.steps / K ? K : K - 1;
  if (!Number.isInteger(j) || j < 0 || j > end || expected === undefined) {
    throw new OpeningError(`state ${step} is not a state segment ${commit.segment} opens (states ${first}..${first + end})`);
  }
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
    const start = run.loadCheckpoint(await store.get(commit.checkpointCid), { step: first });
    const { state } = replayStrategySteps(run, strategy, start, step);
    const stateHash = run.stateHashOf(state);
    if (stateHash !== expected) {
      throw new OpeningError(`replaying segment ${commit.segment} to state ${step} gives ${stateHash}, committed ${expected}`, {
        details: "the strategy or the start checkpoint differs from what was committed",
      });
    }
    const bytes = run.checkpointBytes(state);
    const checkpointCid = await store.put(bytes);
    opened = { step, mode: "recompute", stateHash, checkpointCid, bytes: bytes.length, stepsReplayed: j };
  }
  const cpu = process.cpuUsage(cpu0);
  return { ...opened, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - wall0 };
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
 * One pass of the provider's opening duty (serve.ts runs it every pass, before the disputes): every unanswered, unexpired opening of a job this account provides is
 * opened and answered (each requester's: a state asked by several auditors is answered to each, rebuilt once). Openings of other providers' jobs are skipped. Safe to rerun (answered ones are skipped; an
 * answer mined before a restart reverts StateOpeningsAlreadyAnswered, reported in `failed`).
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
    const openedHere = new Map<string, OpenedState>();
    try {
      for (const r of pending) {
        if (now > r.deadline) {
          result.failed.push({ jobId, step: r.step, reason: `expired at ${r.deadline}` });
          continue;
        }
        const commit = commits.find((c) => c.segment === r.segment);
        if (!commit) {
          result.failed.push({ jobId, step: r.step, reason: `segment ${r.segment} has no SegmentCommitted event` });
          continue;
        }
        try {
          // the same state asked by several auditors (openings are keyed by requester) is rebuilt once
          const memo = `${r.segment}:${r.step}`;
          let opened = openedHere.get(memo);
          if (!opened) {
            const kept = opts.mode === "kept" ? await readStateCids(ctx, jobId, r.segment) : null;
            // the final state (the last segment's end) is answered from the end checkpoint kept at commit, in either mode
            const final = r.step === (r.segment + 1) * manifest.training.stepsPerSegment ? await readEndCid(ctx, jobId, r.segment) : null;
            const K = manifest.training.stepsPerSegment;
            opened = final
              ? await openState(run, ctx.store, opts.strategy, commit, r.step, finalCids(final, K)).catch((err: unknown) => {
                  // a record that no longer serves the committed end state: the replay below still answers in time
                  log.warn({ err, jobId, step: r.step }, "kept end checkpoint does not open the final state; replaying the last segment");
                  return openState(run, ctx.store, opts.strategy, commit, r.step, kept);
                })
              : await openState(run, ctx.store, opts.strategy, commit, r.step, kept);
            openedHere.set(memo, opened);
          }
          const tree = new SegmentTree(commit.segment * manifest.training.stepsPerSegment, commit.stateHashes);
          const tx = await answerOpening(clients, {
            stateOpenings: ctx.stateOpenings,
            jobId,
            step: r.step,
            requester: r.requester,
            checkpointCid: opened.checkpointCid,
            traceRoot: commit.traceRoot,
            endStateHash: commit.endStateHash,
            stateHash: opened.stateHash,
            proof: tree.proof(r.step),
          });
          result.answered.push({ ...opened, jobId, segment: r.segment, gasUsed: tx.gasUsed, transactionHash: tx.hash });
          log.info({ jobId, step: r.step, mode: opened.mode, cpuMs: Math.round(opened.cpuMs) }, "opening answered");
        } catch (err) {
          log.error({ err, jobId, step: r.step }, "opening not answered");
          result.failed.push({ jobId, step: r.step, reason: err instanceof Error ? err.message.split("\n")[0]! : String(err) });
        }
      }
    } finally {
      await run.close();
    }
  }
  return result;
}
