/**
 * How a job ended, from the chain: its status, the provider's remaining lock for it in the StakeVault, every slash of
 * that lock (StakeSlashed), the fault settlement (ProviderFaultSettled: slashed, to challengers, buyer refund) and the
 * finalization (JobFinalized: provider pay, buyer refund), and the provider's unclaimed JobMarket credit. What the
 * walkthrough (scripts/walkthrough.ts) asserts at its end: the cheater's job Refunded with its lock slashed, the honest
 * job Finalized with its pay claimed.
 *
 * @example
 *   const o = await getJobOutcome(clients.public, { deployment, jobId: 1n });
 *   if (o.job.status === "Refunded" && o.slashed === o.job.policy.requiredStake && o.lock === 0n) ...
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { Deployment } from "./deployment.ts";
import { getJob, type GetJobReturnType } from "./getJob.ts";
import { getStakeSlashes, type StakeSlash } from "./getStakeSlashes.ts";
import { withRetry } from "./retry.ts";

export type GetJobOutcomeParameters = { deployment: Pick<Deployment, "jobMarket" | "stakeVault" | "token" | "startBlock">; jobId: bigint };

export type GetJobOutcomeReturnType = {
  job: GetJobReturnType;
  /** StakeVault.lockedFor(provider, jobId): 0 once the lock was slashed or released. */
  lock: bigint;
  slashes: StakeSlash[];
  /** Sum of the slashes' amounts. */
  slashed: bigint;
  /** ProviderFaultSettled; `transactionHash` is the transaction whose StakeSlashed is the fault slash. */
  fault: { slashed: bigint; toChallengers: bigint; refund: bigint; transactionHash: Hex } | undefined;
  finalized: { providerPay: bigint; buyerRefund: bigint } | undefined;
  /** JobCancelled: the escrow credited back to the buyer (cancelled before acceptance, or ended by the idle-timeout cap). */
  cancelled: { refund: bigint } | undefined;
  /** The provider's JobMarket credit in the payment token, not yet claimed. */
  providerCredit: bigint;
};

export async function getJobOutcome(client: PublicClient<Transport, Chain>, p: GetJobOutcomeParameters): Promise<GetJobOutcomeReturnType> {
  const { jobMarket, stakeVault, token } = p.deployment;
  const fromBlock = BigInt(p.deployment.startBlock);
  const job = await getJob(client, { jobMarket, jobId: p.jobId });
  const [lock, slashes, faults, finals, cancels, providerCredit] = await Promise.all([
    withRetry(() => client.readContract({ address: stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [job.provider, p.jobId] }), { what: "lockedFor" }),
    getStakeSlashes(client, { stakeVault, jobId: p.jobId, fromBlock }),
    withRetry(() => client.getContractEvents({ address: jobMarket, abi: jobMarketAbi, eventName: "ProviderFaultSettled", args: { jobId: p.jobId }, fromBlock, strict: true }), { what: "ProviderFaultSettled logs" }),
    withRetry(() => client.getContractEvents({ address: jobMarket, abi: jobMarketAbi, eventName: "JobFinalized", args: { jobId: p.jobId }, fromBlock, strict: true }), { what: "JobFinalized logs" }),
    withRetry(() => client.getContractEvents({ address: jobMarket, abi: jobMarketAbi, eventName: "JobCancelled", args: { jobId: p.jobId }, fromBlock, strict: true }), { what: "JobCancelled logs" }),
    withRetry(() => client.readContract({ address: jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [job.provider as Address, token] }), { what: "creditOf" }),
  ]);
  const faultLog = faults.at(-1);
  const cancel = cancels.at(-1)?.args;
  const f = faultLog?.args;
  const fin = finals.at(-1)?.args;
  return {
    job,
    lock,
    slashes,
    slashed: slashes.reduce((s, x) => s + x.amount, 0n),
    fault: f ? { slashed: f.slashed, toChallengers: f.toChallengers, refund: f.refund, transactionHash: faultLog!.transactionHash } : undefined,
    finalized: fin ? { providerPay: fin.providerPay, buyerRefund: fin.buyerRefund } : undefined,
    cancelled: cancel ? { refund: cancel.refund } : undefined,
    providerCredit,
  };
}
