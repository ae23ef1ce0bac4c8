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
import { InputError } from "../errors/index.ts";
import type { Manifest } from "../ml/manifest.ts";
import { computeWorthWei, DEFAULT_COMPUTE_PRICE, jobFlopsOf } from "../policy/compute.ts";
import { approxTokens } from "../policy/words.ts";
import { dataTermsFor, DEFAULT_DATA_SHARE_BPS, type DataTermsDecision, type DataTermsMode } from "./data-terms.ts";
import { jobPolicyFor, type DerivedPolicy, type DetectionSource, type JobPolicyOptions, type PolicyOverrides } from "./job-policy.ts";

export type PlanJobOptions = {
  /** Payment (wei), or "compute": what the job's compute is worth at the price (computeWorthWei); default the manifest's policy.paymentWei. */
  payment?: bigint | "compute";
  /** Post a payment below what the job's compute is worth (refused by default: UnderpricedPaymentError). */
  allowUnderpriced?: boolean;
  /** The matrix the quote sizes the stake with; none: the manifest's stake (or overrides.requiredStake). */
  detection?: DetectionSource;
  /** The buyer's margin and integrity value for the quote (market/job-policy.ts). */
  quoteTerms?: JobPolicyOptions["terms"];
  /** Share of the payment for the corpora when data terms attach (default DEFAULT_DATA_SHARE_BPS) and the mode (default auto). */
  dataTerms?: { dataShareBps?: number; mode?: DataTermsMode };
  overrides?: PolicyOverrides;
};

/** The job's compute against its payment: FLOPs, the price, what they are worth, and whether the payment is below it. */
export type JobCompute = { flops: number; pricePerTflop: number; worthWei: bigint; underpriced: boolean };

/** A planned job: what createJob will be called with, and why (the quote, the data-terms decision, the compute). */
export type JobPlan = DerivedPolicy & { manifest: Manifest; terms: DataTermsDecision; compute: JobCompute };

/** A payment below what the job's compute is worth at the price: an honest provider would train at a loss. */
export class UnderpricedPaymentError extends InputError {
  override name = "UnderpricedPaymentError";
  override readonly code: string = "UNDERPRICED_PAYMENT";
}

/**
 * The payment the plan posts and its compute: "compute" pays the compute's worth; a payment below that worth is
 * refused unless `allowUnderpriced` (then `compute.underpriced` says so, for the warning).
 *
 * INVARIANT: no job is planned with a payment below FLOPs x price unless the buyer said --allow-underpriced.
 */
export function jobCompute(manifest: Manifest, opts: Pick<PlanJobOptions, "payment" | "allowUnderpriced" | "quoteTerms">): { payment: bigint; compute: JobCompute } {
  const flops = jobFlopsOf(manifest);
  const pricePerTflop = opts.quoteTerms?.computePrice ?? DEFAULT_COMPUTE_PRICE;
  const worthWei = computeWorthWei(flops, pricePerTflop);
  const payment = opts.payment === "compute" ? worthWei : (opts.payment ?? BigInt(manifest.policy.paymentWei));
  const underpriced = payment < worthWei;
  if (underpriced && opts.allowUnderpriced !== true) {
    throw new UnderpricedPaymentError(
      `the payment ${approxTokens(payment)} tokens (${payment} wei) is below what the job's compute is worth: ${Number(flops.toPrecision(4))} FLOPs at ${pricePerTflop} tokens per TFLOP = ${approxTokens(worthWei)} tokens (${worthWei} wei), so an honest provider would train at a loss; pay at least that (--pay compute pays exactly it) or post it anyway with --allow-underpriced`,
    );
  }
  return { payment, compute: { flops, pricePerTflop, worthWei, underpriced } };
}

/**
 * Checks the payment against the job's compute (jobCompute), decides the job's data terms, then its policy: the quote models the deployed dispute panel (its size and the fee a
 * challenger pays each member) and forfeits only the provider's pay (the payment less the data share). Reads only.
 */
export async function planJob(client: PublicClient<Transport, Chain>, d: Pick<Deployment, "jobMarket" | "disputeGame">, manifest: Manifest, opts: PlanJobOptions = {}): Promise<JobPlan> {
  const { payment, compute } = jobCompute(manifest, opts);
  const terms = await dataTermsFor(client, d, manifest, { dataShareBps: opts.dataTerms?.dataShareBps ?? DEFAULT_DATA_SHARE_BPS, mode: opts.dataTerms?.mode ?? "auto" });
  const game = d.disputeGame ? await getDisputeParams(client, { disputeGame: d.disputeGame }) : undefined;
  const derived = await jobPolicyFor(manifest, {
    payment,
    ...(game ? { panel: { size: game.panelSize, feeWei: game.panelFee } } : {}),
    ...(opts.detection ? { detection: opts.detection } : {}),
    ...(opts.quoteTerms ? { terms: opts.quoteTerms } : {}),
    dataShareBps: terms.attached ? terms.terms.dataShareBps : 0,
    ...(opts.overrides ? { overrides: opts.overrides } : {}),
  });
  return { ...derived, manifest, terms, compute };
}

/** What the buyer holds against a payment: its token balance, its allowance to JobMarket, and what it lacks of each. */
export type JobFunding = { payment: bigint; balance: bigint; allowance: bigint; shortfall: bigint; approveNeeded: boolean };

export async function jobFunding(client: PublicClient<Transport, Chain>, d: Pick<Deployment, "token" | "jobMarket">, buyer: Address, payment: bigint): Promise<JobFunding> {
  const balance = await getTokenBalance(client, { token: d.token, account: buyer });
  const allowance = await getTokenAllowance(client, { token: d.token, owner: buyer, spender: d.jobMarket });
  return { payment, balance, allowance, shortfall: balance < payment ? payment - balance : 0n, approveNeeded: allowance < payment };
}
