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
import type { Manifest } from "../ml/manifest.ts";
import type { ContentStore } from "../store/index.ts";
import { publishManifest } from "./manifest-store.ts";

export type PostJobResult = { jobId: bigint; manifestUri: string; manifestHash: Hex; gasUsed: bigint; txHash: Hex; blockNumber: bigint };

export type PostJobOptions = {
  terms?: JobTerms;
  /** Called after each transaction is mined (the dApp shows progress). */
  onStep?: (step: "approved" | "created", hash: Hex) => void;
};

/** Publishes the manifest, approves the payment and creates the job (with `terms`: createJobWithTerms; see market/data-terms.ts). */
export async function postJob(clients: ChainClients, d: Pick<Deployment, "token" | "jobMarket">, store: Pick<ContentStore, "put">, manifest: Manifest, policy: JobPolicy, payment: bigint, opts: PostJobOptions = {}): Promise<PostJobResult> {
  const { uri, hash } = await publishManifest(store, manifest);
  let gasUsed = 0n;
  const allowance = await getTokenAllowance(clients.public, { token: d.token, owner: clients.account.address, spender: d.jobMarket });
  if (allowance < payment) {
    const a = await approveToken(clients, { token: d.token, spender: d.jobMarket, amount: payment });
    gasUsed += a.gasUsed;
    opts.onStep?.("approved", a.hash);
  }
  const r = await createJob(clients, { jobMarket: d.jobMarket, manifestHash: hash, manifestUri: uri, token: d.token, payment, policy, ...(opts.terms ? { terms: opts.terms } : {}) });
  opts.onStep?.("created", r.hash);
  return { jobId: r.jobId, manifestUri: uri, manifestHash: hash, gasUsed: gasUsed + r.gasUsed, txHash: r.hash, blockNumber: r.receipt.blockNumber };
}
