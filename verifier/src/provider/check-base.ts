/**
 * The checks a job must pass before any stake moves: `pouw buyer create` (before createJob: no transaction sent, nothing
 * escrowed) and `pouw provider accept` (before acceptJob: no stake locked) both run `checkJobTrainable`, a dry run of
 * the job: its data resolves (the corpus package is installed and its canonical bytes are the manifest's content id),
 * its base gives a usable h(0) (below), and step 1 runs from h(0). A job that fails it is the buyer's input, so it is
 * refused with the cause named (UntrainableJobError, BaseCheckpointError) instead of being accepted and then timing
 * out, which would slash the honest provider that accepted it (docs/checks.md "Jobs nobody can train").
 *
 * The provider's check of a fine-tuning job's base checkpoint (manifest init.checkpointCid, the buyer's content) before
 * it puts stake at risk (`pouw provider accept`) and before it commits anything (`pouw provider run`): the base must be
 * served, decode as the job's model and optimizer, and give a finite h(0). The rule is the audit's own
 * (checks/segment.ts usableInitialState): a job whose base fails it cannot be audited, so an honest provider has nothing
 * to gain from it, and on a client that did not check, a buyer could sell it NaN training (docs/checks.md "Fine-tuning
 * jobs"). A refusal is a BaseCheckpointError naming the job, the base and the problem.
 *
 * @example
 *   const manifest = await checkJobBeforeAccept(ctx, jobId); // throws before acceptJob locks any stake
 *   await acceptJob(ctx.clients, { jobMarket: ctx.deployment.jobMarket, jobId });
 */
import { getJob, getJobCreated, type ChainClients, type Deployment } from "../chain/index.ts";
import { BaseCheckpointError, usableInitialState } from "../checks/segment.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import type { Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { createRun, deploymentSalt, policyShapeMismatch, type Manifest, type Run, type TrainState } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";

/**
 * The job cannot be trained by any client: its data does not resolve (corpus package missing, its bytes not the
 * manifest's content id), the run cannot be built, or step 1 fails. The buyer's input, never the provider's fault.
 */
export class UntrainableJobError extends InputError {
  override name = "UntrainableJobError";
  override readonly code: string = "UNTRAINABLE_JOB";
}

export type CheckTrainableParameters = {
  /** The job id the dry run trains as (its data order); any id gives the same verdict, the step's batch differs. */
  jobId: bigint;
  salt: Hex;
  /** Where a fine-tuning job's base is read from. */
  store: ContentStore;
  /** Who is refused, e.g. "job 7" or "manifest examples/tiny.json" (starts the message). */
  subject: string;
  /** What was refused and what is left, e.g. "not accepted (no stake locked)" (ends the message). */
  what: string;
};

/**
 * The dry run of a job before any stake moves: builds its run (resolves and checks the corpus, loads the model), checks
 * a fine-tuning base (BaseCheckpointError: missing, not decodable, non-finite), and runs step 1 from h(0). Throws
 * UntrainableJobError naming the cause and `what` for the rest, so every refusal is typed and says why.
 * Cost: one step of the job plus loading its corpus and model (measured: tiny.json 1.5 s, sotu.json 4.4 s,
 * examples/gpt-sotu.json 21 s; docs/checks.md "Jobs nobody can train").
 *
 * @example
 *   await checkJobTrainable(manifest, { jobId: 0n, salt: offlineSalt(0n), store, subject: `manifest ${path}`, what: "not posted" });
 */
export async function checkJobTrainable(manifest: Manifest, p: CheckTrainableParameters): Promise<void> {
  const refuse = (why: string, cause: unknown) => new UntrainableJobError(`${p.subject} cannot be trained: ${why}; ${p.what}`, { cause });
  const reason = (err: unknown) => (err instanceof InputError ? err.shortMessage : err instanceof Error ? err.message : String(err));
  let run: Run;
  try {
    run = await createRun(manifest, { jobId: p.jobId, salt: p.salt, store: p.store });
  } catch (err) {
    throw refuse(reason(err), err);
  }
  try {
    const init = await usableBase(run, p.store, p.subject, p.what);
    try {
      run.step(init, 1);
    } catch (err) {
      throw refuse(`step 1 fails: ${reason(err)}`, err);
    }
  } finally {
    await run.close();
  }
}

/** Throws BaseCheckpointError (naming job `jobId` and `what` was refused) unless the run's h(0) is usable; a seed-init job passes. */
export async function checkJobBase(run: Run, store: ContentStore, jobId: bigint, what: string): Promise<void> {
  await usableBase(run, store, `job ${jobId}`, what);
}

/** h(0) of the run (usableInitialState), or BaseCheckpointError whose message starts with `subject` and ends with `what`. */
async function usableBase(run: Run, store: ContentStore, subject: string, what: string): Promise<TrainState> {
  try {
    return await usableInitialState(run, store);
  } catch (err) {
    if (!(err instanceof BaseCheckpointError)) throw err;
    throw new BaseCheckpointError(err.problem, err.cid, `${subject}: ${err.shortMessage}; ${what}`, { cause: err });
  }
}

export type CheckBeforeAcceptContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

/**
 * What `pouw provider accept` checks before it sends acceptJob: the job's manifest (its document, by the hash the job
 * commits, as `run` reads it), that the job's on-chain shape is the manifest's (policyShapeMismatch), then the dry run
 * of the job under its own salt (checkJobTrainable: data, base, step 1). Returns the manifest.
 */
export async function checkJobBeforeAccept(ctx: CheckBeforeAcceptContext, jobId: bigint): Promise<Manifest> {
  const { clients, deployment } = ctx;
  const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
  const created = await getJobCreated(clients.public, { jobMarket: deployment.jobMarket, jobId, fromBlock: BigInt(deployment.startBlock) });
  const manifest = await fetchManifest(ctx.store, created.manifestUri, job.manifestHash, { circuitHash: circuitJobCheck(clients.public, deployment, jobId, { requireRegistered: true }) });
  const mismatch = policyShapeMismatch(jobId, job.policy, manifest);
  // INVARIANT: a job is accepted only if `provider run` will train it (the same shape check runs there)
  if (mismatch !== undefined) throw new UntrainableJobError(`${mismatch}: not accepted (no stake locked): the buyer can cancel the job (JobMarket.cancelJob)`);
  await checkJobTrainable(manifest, {
    jobId,
    salt: deploymentSalt(deployment, jobId),
    store: ctx.store,
    subject: `job ${jobId}`,
    what: "not accepted (no stake locked): the buyer can cancel the job (JobMarket.cancelJob)",
  });
  return manifest;
}
