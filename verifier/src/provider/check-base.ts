/**
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
import { createRun, deploymentSalt, type Manifest, type Run } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";

/** Throws BaseCheckpointError (naming job `jobId` and `what` was refused) unless the run's h(0) is usable; a seed-init job passes. */
export async function checkJobBase(run: Run, store: ContentStore, jobId: bigint, what: string): Promise<void> {
  if (!("checkpointCid" in run.manifest.init)) return;
  try {
    await usableInitialState(run, store);
  } catch (err) {
    if (!(err instanceof BaseCheckpointError)) throw err;
    throw new BaseCheckpointError(err.problem, err.cid, `job ${jobId}: ${err.shortMessage}; ${what}`, { cause: err });
  }
}

export type CheckBeforeAcceptContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

/**
 * What `pouw provider accept` checks before it sends acceptJob: the job's manifest (its document, by the hash the job
 * commits, as `run` reads it), and for a fine-tuning manifest its base (checkJobBase). Returns the manifest.
 */
export async function checkJobBeforeAccept(ctx: CheckBeforeAcceptContext, jobId: bigint): Promise<Manifest> {
  const { clients, deployment } = ctx;
  const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
  const created = await getJobCreated(clients.public, { jobMarket: deployment.jobMarket, jobId, fromBlock: BigInt(deployment.startBlock) });
  const manifest = await fetchManifest(ctx.store, created.manifestUri, job.manifestHash, { circuitHash: circuitJobCheck(clients.public, deployment, jobId, { requireRegistered: true }) });
  if (!("checkpointCid" in manifest.init)) return manifest;
  const run = await createRun(manifest, { jobId, salt: deploymentSalt(deployment, jobId) });
  try {
    await checkJobBase(run, ctx.store, jobId, "not accepted (no stake locked): the buyer can cancel the job (JobMarket.cancelJob)");
  } finally {
    await run.close();
  }
  return manifest;
}
