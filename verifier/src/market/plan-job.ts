/**
 * Plan a job before anything is sent: its data terms (market/data-terms.ts), its policy and stake quote
 * (market/job-policy.ts) against the deployed dispute panel, and whether the buyer can fund it. `pouw buyer create` and
 * the dApp's quote both call `planJob`, so a job posted from either is the same job.
 *
 * Browser-safe (the dApp bundles it): chain reads, the policy code and the manifest schema only.
 *
 * @example
 *   const plan = await planJob(clients.public, deployment, manifest, { detection });
 *   const funding = await jobFunding(clients.public, deployment, buyer, plan.payment);
 *   if (funding.shortfall > 0n) throw new TokenFundsError(funding.balance, funding.payment, deployment.devToken);
 */
import { type Address, type Chain, type PublicClient, type Transport } from "viem";
import type { Deployment } from "../chain/deployment.ts";
import { getDisputeParams } from "../chain/getDisputeParams.ts";
import { getTokenAllowance, getTokenBalance } from "../chain/getTokenBalance.ts";
import type { Manifest } from "../ml/manifest.ts";
import { dataTermsFor, DEFAULT_DATA_SHARE_BPS, type DataTermsDecision, type DataTermsMode } from "./data-terms.ts";
import { jobPolicyFor, type DerivedPolicy, type DetectionSource, type JobPolicyOptions, type PolicyOverrides } from "./job-policy.ts";

export type PlanJobOptions = {
  /** Payment (wei); default the manifest's policy.paymentWei. */
  payment?: bigint;
  /** The matrix the quote sizes the stake with; none: the manifest's stake (or overrides.requiredStake). */
  detection?: DetectionSource;
  /** The buyer's margin and integrity value for the quote (market/job-policy.ts). */
  quoteTerms?: JobPolicyOptions["terms"];
  /** Share of the payment for the corpora when data terms attach (default DEFAULT_DATA_SHARE_BPS) and the mode (default auto). */
  dataTerms?: { dataShareBps?: number; mode?: DataTermsMode };
  overrides?: PolicyOverrides;
};

/** A planned job: what createJob will be called with, and why (the quote and the data-terms decision). */
export type JobPlan = DerivedPolicy & { manifest: Manifest; terms: DataTermsDecision };

/**
 * Decides the job's data terms, then its policy: the quote models the deployed dispute panel (its size and the fee a
 * challenger pays each member) and forfeits only the provider's pay (the payment less the data share). Reads only.
 */
export async function planJob(client: PublicClient<Transport, Chain>, d: Pick<Deployment, "jobMarket" | "disputeGame">, manifest: Manifest, opts: PlanJobOptions = {}): Promise<JobPlan> {
  const terms = await dataTermsFor(client, d, manifest, { dataShareBps: opts.dataTerms?.dataShareBps ?? DEFAULT_DATA_SHARE_BPS, mode: opts.dataTerms?.mode ?? "auto" });
  const game = d.disputeGame ? await getDisputeParams(client, { disputeGame: d.disputeGame }) : undefined;
  const derived = await jobPolicyFor(manifest, {
    ...(opts.payment !== undefined ? { payment: opts.payment } : {}),
    ...(game ? { panel: { size: game.panelSize, feeWei: game.panelFee } } : {}),
    ...(opts.detection ? { detection: opts.detection } : {}),
    ...(opts.quoteTerms ? { terms: opts.quoteTerms } : {}),
    dataShareBps: terms.attached ? terms.terms.dataShareBps : 0,
    ...(opts.overrides ? { overrides: opts.overrides } : {}),
  });
  return { ...derived, manifest, terms };
}

/** What the buyer holds against a payment: its token balance, its allowance to JobMarket, and what it lacks of each. */
export type JobFunding = { payment: bigint; balance: bigint; allowance: bigint; shortfall: bigint; approveNeeded: boolean };

export async function jobFunding(client: PublicClient<Transport, Chain>, d: Pick<Deployment, "token" | "jobMarket">, buyer: Address, payment: bigint): Promise<JobFunding> {
  const balance = await getTokenBalance(client, { token: d.token, account: buyer });
  const allowance = await getTokenAllowance(client, { token: d.token, owner: buyer, spender: d.jobMarket });
  return { payment, balance, allowance, shortfall: balance < payment ? payment - balance : 0n, approveNeeded: allowance < payment };
}
