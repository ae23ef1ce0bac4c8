/**
 * Post a job as `pouw buyer create`, the demo and the dApp do: publish the manifest's canonical JSON to a
 * content store (the URI on chain is `cid:<CID>`), approve the payment when the allowance is short, and
 * createJob (with `terms`: createJobWithTerms; see market/data-terms.ts).
 *
 * Browser-safe (the dApp bundles it): only chain actions, the manifest schema and a store's `put`.
 *
 * @example
 *   const { jobId } = await postJob(clients, deployment, store, manifest, derived.policy, derived.payment);
 */
import type { Hex } from "viem";
import { approveToken } from "../chain/approveToken.ts";
import { getTokenAllowance } from "../chain/getTokenBalance.ts";
import type { ChainClients } from "../chain/clients.ts";
import { createJob, type JobPolicy, type JobTerms } from "../chain/createJob.ts";
import type { Deployment } from "../chain/deployment.ts";
import { getJobCount } from "../chain/getJobCount.ts";
import { setCircuitTerms } from "../chain/setCircuitTerms.ts";
import type { CircuitTerms } from "../chain/getCircuitTerms.ts";
import { PouwError } from "../errors/index.ts";
import { circuitManifestHash } from "../dispute/terms.ts";
import type { Manifest } from "../ml/manifest.ts";
import type { ContentStore } from "../store/index.ts";
import { publishManifest } from "./manifest-store.ts";

export type PostJobResult = { jobId: bigint; manifestUri: string; manifestHash: Hex; gasUsed: bigint; txHash: Hex; blockNumber: bigint; circuitTerms?: CircuitTerms };

/**
 * createJob took another job id than the one the circuit terms were derived for (another job was created first): the
 * job's batch root is not its data order's. Cancel it (pouw buyer cancel) and post again.
 */
export class CircuitJobIdError extends PouwError {
  override name = "CircuitJobIdError";
  override readonly code: string = "CIRCUIT_JOB_ID";
}

export type PostJobOptions = {
  terms?: JobTerms;
  /**
   * A circuit-class (linear-tile) job: the DisputeGame and the terms for a given job id (market/circuit-job.ts
   * circuitTermsFor: lr and the batch root of that job's salted data order). The job is created with
   * manifestHash = circuitManifestHash(manifestHash, terms(jobCount + 1)), then setCircuitTerms registers them.
   */
  circuit?: { disputeGame: `0x${string}`; termsFor(jobId: bigint): Promise<CircuitTerms> };
  /** Called after each transaction is mined (the dApp shows progress). */
  onStep?: (step: "approved" | "created", hash: Hex) => void;
};

/** Publishes the manifest, approves the payment and creates the job (with `terms`: createJobWithTerms; see market/data-terms.ts). */
export async function postJob(clients: ChainClients, d: Pick<Deployment, "token" | "jobMarket">, store: Pick<ContentStore, "put">, manifest: Manifest, policy: JobPolicy, payment: bigint, opts: PostJobOptions = {}): Promise<PostJobResult> {
  const { uri, hash: body } = await publishManifest(store, manifest);
  let hash = body;
  let circuit: { jobId: bigint; terms: CircuitTerms } | undefined;
  if (opts.circuit) {
    // NOTE: the batch root depends on the job's salt, so on its id: predicted here, checked after createJob
    const jobId = (await getJobCount(clients.public, { jobMarket: d.jobMarket })) + 1n;
    const terms = await opts.circuit.termsFor(jobId);
    circuit = { jobId, terms };
    hash = circuitManifestHash(body, terms);
  }
  let gasUsed = 0n;
  const allowance = await getTokenAllowance(clients.public, { token: d.token, owner: clients.account.address, spender: d.jobMarket });
  if (allowance < payment) {
    const a = await approveToken(clients, { token: d.token, spender: d.jobMarket, amount: payment });
    gasUsed += a.gasUsed;
    opts.onStep?.("approved", a.hash);
  }
  const r = await createJob(clients, { jobMarket: d.jobMarket, manifestHash: hash, manifestUri: uri, token: d.token, payment, policy, ...(opts.terms ? { terms: opts.terms } : {}) });
  opts.onStep?.("created", r.hash);
  if (circuit && opts.circuit) {
    if (r.jobId !== circuit.jobId) {
      throw new CircuitJobIdError(`job ${r.jobId} was created with the circuit terms of job ${circuit.jobId} (another job was created first): its batch root is not its data order's`, {
        details: `cancel job ${r.jobId} (pouw buyer cancel ${r.jobId}) and post again`,
      });
    }
    const t = await setCircuitTerms(clients, { disputeGame: opts.circuit.disputeGame, jobId: r.jobId, lr: circuit.terms.lr, batchRoot: circuit.terms.batchRoot, manifestBody: body });
    gasUsed += t.gasUsed;
  }
  return { jobId: r.jobId, manifestUri: uri, manifestHash: hash, gasUsed: gasUsed + r.gasUsed, txHash: r.hash, blockNumber: r.receipt.blockNumber, ...(circuit ? { circuitTerms: circuit.terms } : {}) };
}
