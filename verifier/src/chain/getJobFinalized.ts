/**
 * The JobFinalized event of a job (the payment split: provider pay and buyer refund) with its block and transaction;
 * undefined when the job was never finalized.
 *
 * @example
 *   const f = await getJobFinalized(clients.public, { jobMarket, jobId: 2n, fromBlock: BigInt(d.startBlock) });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetJobFinalizedParameters = { jobMarket: Address; jobId: bigint; fromBlock: bigint };

export type GetJobFinalizedReturnType = { jobId: bigint; provider: Address; providerPay: bigint; buyerRefund: bigint; blockNumber: bigint; transactionHash: Hex } | undefined;

export async function getJobFinalized(client: PublicClient<Transport, Chain>, p: GetJobFinalizedParameters): Promise<GetJobFinalizedReturnType> {
  const logs = await withRetry(
    () => client.getContractEvents({ address: p.jobMarket, abi: jobMarketAbi, eventName: "JobFinalized", args: { jobId: p.jobId }, fromBlock: p.fromBlock, toBlock: "latest", strict: true }),
    { what: "JobFinalized logs" },
  );
  const l = logs.at(-1);
  if (!l) return undefined;
  return { jobId: l.args.jobId, provider: l.args.provider, providerPay: l.args.providerPay, buyerRefund: l.args.buyerRefund, blockNumber: l.blockNumber, transactionHash: l.transactionHash };
}
