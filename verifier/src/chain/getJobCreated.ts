/**
 * The JobCreated event of a job: manifest URI (only in the event), manifest hash, token, payment, policy.
 *
 * @example
 *   const created = await getJobCreated(clients.public, { jobMarket, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { JobPolicy } from "./createJob.ts";
import { ChainError } from "./errors.ts";
import { withRetry } from "./retry.ts";

export type GetJobCreatedParameters = { jobMarket: Address; jobId: bigint; fromBlock: bigint };

export type GetJobCreatedReturnType = {
  jobId: bigint;
  buyer: Address;
  manifestHash: Hex;
  manifestUri: string;
  token: Address;
  payment: bigint;
  policy: JobPolicy;
  blockNumber: bigint;
};

export async function getJobCreated(client: PublicClient<Transport, Chain>, p: GetJobCreatedParameters): Promise<GetJobCreatedReturnType> {
  const logs = await withRetry(
    () => client.getContractEvents({ address: p.jobMarket, abi: jobMarketAbi, eventName: "JobCreated", args: { jobId: p.jobId }, fromBlock: p.fromBlock, toBlock: "latest", strict: true }),
    { what: "JobCreated logs" },
  );
  const log = logs[0];
  if (!log) throw new ChainError(`no JobCreated event for job ${p.jobId}`);
  const a = log.args;
  return { jobId: a.jobId, buyer: a.buyer, manifestHash: a.manifestHash, manifestUri: a.manifestUri, token: a.token, payment: a.payment, policy: { ...a.policy }, blockNumber: log.blockNumber };
}
