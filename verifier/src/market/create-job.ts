/**
 * The buyer's whole "post a job" flow as `pouw buyer create` runs it: refuse a job nobody can train (the provider's
 * dry run, before any transaction), plan it (market/plan-job.ts: data terms, policy, quote), fund it (mint on a dev
 * chain when asked, approve), register a circuit-class job's terms, and post it (market/post-job.ts).
 *
 * Node only (the dry run trains one step). The dApp runs the same plan and post without the dry run.
 *
 * @example
 *   const { plan, posted, txs } = await createJobFromManifest(ctx, manifest, { detection, mint: true, subject: "manifest job.json" });
 */
import type { ChainClients } from "../chain/clients.ts";
import type { Deployment } from "../chain/deployment.ts";
import type { TxRef } from "../chain/send.ts";
import type { Manifest } from "../ml/manifest.ts";
import type { ContentStore } from "../store/index.ts";
import { ensureTokenFunds } from "./funding.ts";
import { planJob, type JobPlan, type PlanJobOptions } from "./plan-job.ts";
import { postJob, type PostJobResult } from "./post-job.ts";

export type CreateJobFromManifestContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

export type CreateJobFromManifestOptions = PlanJobOptions & {
  /** Dev chain: mint the payment when the balance is short. */
  mint?: boolean;
  /** How errors name the manifest ("manifest job.json"). */
  subject: string;
};

export type CreateJobFromManifestResult = {
  plan: JobPlan;
  posted: PostJobResult;
  /** Every transaction sent, in order: the mint and approve funding needed, then createJob. */
  txs: TxRef[];
};

export async function createJobFromManifest(ctx: CreateJobFromManifestContext, manifest: Manifest, opts: CreateJobFromManifestOptions): Promise<CreateJobFromManifestResult> {
  const [{ checkJobTrainable }, { offlineSalt }] = await Promise.all([import("../provider/check-base.ts"), import("../ml/salt.ts")]);
  // IMPORTANT: before any transaction: a job nobody can train (its corpus does not resolve, its base is unusable,
  // step 1 fails) is never posted (provider/check-base.ts; the provider's accept runs the same dry run)
  await checkJobTrainable(manifest, { jobId: 0n, salt: offlineSalt(0n), store: ctx.store, subject: opts.subject, what: "not posted (no transaction sent, nothing escrowed)" });
  // IMPORTANT: a generated dataset as data is posted only when its bytes chain to a finalized generate job's record
  await checkGeneratedData(ctx, manifest, `${opts.subject}: not posted (no transaction sent, nothing escrowed)`);
  const plan = await planJob(ctx.clients.public, ctx.deployment, manifest, opts);
  const funding = await ensureTokenFunds(ctx.clients, ctx.deployment, ctx.deployment.jobMarket, plan.payment, { mint: opts.mint === true });
  // a linear-tile job's manifest hash commits its circuit terms (lr, batch root of its data order), registered after createJob
  const circuit = manifest.model.arch === "linear-tile" ? (await import("./circuit-job.ts")).circuitPostOption(ctx.deployment, manifest) : undefined;
  const posted = await postJob(ctx.clients, ctx.deployment, ctx.store, manifest, plan.policy, plan.payment, {
    ...(plan.terms.attached ? { terms: plan.terms.terms } : {}),
    ...(circuit ? { circuit } : {}),
  });
  return { plan, posted, txs: [...funding, { what: "createJob", hash: posted.txHash, blockNumber: posted.blockNumber }] };
}

/** The provenance check of every generated dataset `manifest` trains on (kinds/dataset-provenance.ts), its error prefixed. */
export async function checkGeneratedData(ctx: { clients: Pick<ChainClients, "public">; deployment: Deployment; store: ContentStore }, manifest: Manifest, what: string) {
  const { checkGeneratedCorpora, GeneratedProvenanceError } = await import("../kinds/dataset-provenance.ts");
  try {
    return await checkGeneratedCorpora({ client: ctx.clients.public, deployment: ctx.deployment, store: ctx.store }, manifest);
  } catch (err) {
    if (err instanceof GeneratedProvenanceError) throw new GeneratedProvenanceError(`${what}: ${err.message}`, { cause: err });
    throw err;
  }
}
