/**
 * `pouw provider serve`: the provider's duties after its last commit, until every job's challenge window has ended.
 * An honest provider is slashed by what it fails to do while its committed segments are disputable, so one pass, for
 * every job of this provider that is Active, Committed or TimedOut (or the jobs named):
 *
 * 1. answers every pending state opening of its jobs (openings.ts answerOpenings; an unanswered one is a withheld
 *    state, a Fault the panel slashes);
 * 2. defends every open dispute on its steps (defend-job.ts: proves circuit-class steps, appeals a unanimous
 *    first-round Fault on a step it recomputes as valid, leaves a really faulty one unappealed and says so).
 *
 * `pouw provider defend JOB` is one pass over that job. The loop (`serveProvider`) repeats passes every `pollMs` until
 * nothing remains (every job past its window with no open dispute), or, with `watch`, until its signal aborts (new
 * jobs are picked up as they are accepted).
 *
 * INVARIANT: a job stays served while any dispute on it is open or the chain time is at or before its deadline (for a
 * Committed or TimedOut job the end of its challenge window; an Active job is still being committed, so always), so
 * the service never exits while an opening or an appeal window can still open on it.
 */
import { getAddress, type Address } from "viem";
import { chainDate } from "../chain/revertText.ts";
import { getJob, getJobs, type GetJobReturnType, type JobStatusName } from "../chain/index.ts";
import { InputError, PouwError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import type { Strategy } from "../ml/index.ts";
import { defendProviderJob, type DecisionMemo, type DefendJobContext, type DisputeDefence } from "./defend-job.ts";
import { answerOpenings, type AnsweredOpening, type OpeningMode } from "./openings.ts";

const log = logger("provider.serve");

/** The statuses whose committed segments are still disputable (before the deadline) or still being committed. */
const SERVED: readonly JobStatusName[] = ["Active", "Committed", "TimedOut"];
/** The most of this provider's jobs one pass looks at (newest first). */
const MAX_JOBS = 1000;

export type ServeContext = DefendJobContext & { stateDir: string };

export type ServeOptions = {
  /** The strategy the provider trained with: a "recompute" opening replays it (openings.ts). */
  strategy: Strategy;
  /** How openings are answered: "recompute" (replay from the segment's start) or "kept" (per-state checkpoints). */
  openings: OpeningMode;
  /** Only these jobs (default: every Active, Committed or TimedOut job whose provider is this account). */
  jobIds?: readonly bigint[];
};

export type JobDuties = {
  jobId: bigint;
  status: JobStatusName;
  /** The job's deadline (unix seconds): for Committed and TimedOut the end of its challenge window. */
  deadline: number;
  openings: { answered: AnsweredOpening[]; failed: { step: number; reason: string }[] };
  disputes: DisputeDefence[];
  /** Why the service must keep serving the job; null when nothing remains. */
  remaining: string | null;
  /** What stopped this pass on the job (an RPC or content failure): retried next pass, and the job stays served. */
  error?: string;
};

export type ServePass = {
  /** Chain time of the pass (unix seconds). */
  at: number;
  jobs: JobDuties[];
  /** Jobs that still need the service after this pass. */
  remaining: number;
  /** False when the deployment has no StateOpenings (no opening can be asked). */
  openingsDeployed: boolean;
};

/** One pass of the provider's duties (see the file comment). `memo` keeps step decisions across passes. */
export async function servePass(ctx: ServeContext, opts: ServeOptions, memo: DecisionMemo = new Map()): Promise<ServePass> {
  const { clients, deployment: d } = ctx;
  const me = getAddress(clients.account.address);
  const at = Number((await clients.public.getBlock()).timestamp);
  const jobs = await jobsToServe(ctx, me, opts.jobIds);
  const duties = new Map<bigint, JobDuties>(jobs.map((j) => [j.jobId, { jobId: j.jobId, status: j.status, deadline: Number(j.deadline), openings: { answered: [], failed: [] }, disputes: [], remaining: null }]));
  const so = d.stateOpenings;
  for (const j of jobs) {
    const duty = duties.get(j.jobId)!;
    try {
      // openings first: a dispute's members read the opening of its pre-state, so an answer must not wait for a defence
      if (so && getAddress(j.provider) === me) {
        const r = await answerOpenings({ ...ctx, stateOpenings: so }, { strategy: opts.strategy, mode: opts.openings, jobId: j.jobId, now: at });
        duty.openings.answered.push(...r.answered);
        duty.openings.failed.push(...r.failed.map(({ step, reason }) => ({ step, reason })));
      }
      if (d.disputeGame) duty.disputes = await defendProviderJob(ctx, j.jobId, { memo });
      // INVARIANT: what remains is judged on the job and the chain time AFTER the duties: a dispute that settled
      // NoDecision during the pass re-opens the challenge window, and a service that judged the job read before
      // the pass would exit with a window open again (and an opening in it unanswered)
      const after = await getJob(clients.public, { jobMarket: d.jobMarket, jobId: j.jobId });
      const now = Number((await clients.public.getBlock()).timestamp);
      duty.status = after.status;
      duty.deadline = Number(after.deadline);
      duty.remaining = remainingOf(duty, after, me, now);
    } catch (err) {
      // one job's failure (an RPC error, content no source serves now) must not stop the duties of the others
      if (err instanceof InputError) throw err;
      log.error({ err, jobId: j.jobId.toString() }, "provider pass failed on a job; retried next pass");
      duty.error = err instanceof PouwError ? err.shortMessage : err instanceof Error ? err.message.split("\n")[0]! : String(err);
      duty.remaining = `retrying after an error: ${duty.error}`;
    }
  }
  const pass: ServePass = { at, jobs: [...duties.values()], remaining: [...duties.values()].filter((x) => x.remaining !== null).length, openingsDeployed: so !== undefined };
  log.info({ jobs: pass.jobs.length, remaining: pass.remaining }, "provider pass");
  return pass;
}

/**
 * Passes every `pollMs` until nothing remains (or, with `watch`, until `signal` aborts); each pass goes to `onPass`.
 * Returns the last pass.
 */
export async function serveProvider(
  ctx: ServeContext,
  opts: ServeOptions & { watch?: boolean; pollMs: number; signal?: AbortSignal; onPass?: (p: ServePass) => void },
): Promise<ServePass> {
  if (!Number.isFinite(opts.pollMs) || opts.pollMs <= 0) throw new InputError(`poll interval ${opts.pollMs} ms: must be a positive number`);
  const memo: DecisionMemo = new Map();
  for (;;) {
    const pass = await servePass(ctx, opts, memo);
    opts.onPass?.(pass);
    if ((!opts.watch && pass.remaining === 0) || opts.signal?.aborted) return pass;
    await sleep(opts.pollMs, opts.signal);
    if (opts.signal?.aborted) return pass;
  }
}

async function jobsToServe(ctx: ServeContext, me: Address, jobIds: readonly bigint[] | undefined): Promise<GetJobReturnType[]> {
  const { clients, deployment: d } = ctx;
  if (jobIds !== undefined) {
    const out: GetJobReturnType[] = [];
    for (const jobId of jobIds) {
      const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
      if (job.status === "None") throw new InputError(`job ${jobId} does not exist`);
      out.push(job);
    }
    return out;
  }
  const { jobs } = await getJobs(clients.public, { jobMarket: d.jobMarket, statuses: SERVED, limit: MAX_JOBS });
  return jobs.filter((j) => getAddress(j.provider) === me).reverse();
}

function remainingOf(duty: JobDuties, job: GetJobReturnType, me: Address, at: number): string | null {
  const open = duty.disputes.filter((x) => x.open);
  if (open.length > 0) return `${open.length} open dispute(s) (${open.map((x) => `${x.disputeId} on step ${x.step}: ${x.action}`).join("; ")})`;
  if (getAddress(job.provider) !== me) return null;
  if (job.status === "Active") return `still being committed (segment ${job.nextSegment} of ${job.policy.segments} next); disputable until ${job.policy.challengeWindow} s after its last commit`;
  if ((job.status === "Committed" || job.status === "TimedOut") && at <= Number(job.deadline)) return `disputable until ${chainDate(job.deadline)}`;
  return null;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
