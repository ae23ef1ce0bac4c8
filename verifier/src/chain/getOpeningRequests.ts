/**
 * The OpeningRequested and OpeningAnswered events of StateOpenings (of one job, or of all), merged per (job, step): one
 * opening per state serves every auditor. What a provider's watcher must answer and what it already did.
 *
 * @example
 *   const pending = (await getOpeningRequests(clients.public, { stateOpenings, fromBlock })).filter((r) => !r.answered);
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { stateOpeningsAbi } from "./abi/StateOpenings.ts";
import { withRetry } from "./retry.ts";

export type GetOpeningRequestsParameters = { stateOpenings: Address; jobId?: bigint; fromBlock: bigint; toBlock?: bigint };

export type OpeningRequest = {
  jobId: bigint;
  segment: number;
  step: number;
  /** The auditor who asked (the only one: a state is asked once). */
  requester: Address;
  /** Unix seconds. */
  deadline: number;
  /** The answer, when one was mined. */
  answered: { stateHash: Hex; checkpointCid: string; transactionHash: Hex } | null;
  blockNumber: bigint;
};

export async function getOpeningRequests(client: PublicClient<Transport, Chain>, p: GetOpeningRequestsParameters): Promise<OpeningRequest[]> {
  const args = p.jobId === undefined ? {} : { jobId: p.jobId };
  const range = { fromBlock: p.fromBlock, toBlock: p.toBlock ?? ("latest" as const) };
  const [requested, answered] = await withRetry(
    () =>
      Promise.all([
        client.getContractEvents({ address: p.stateOpenings, abi: stateOpeningsAbi, eventName: "OpeningRequested", args, ...range, strict: true }),
        client.getContractEvents({ address: p.stateOpenings, abi: stateOpeningsAbi, eventName: "OpeningAnswered", args, ...range, strict: true }),
      ]),
    { what: "StateOpenings logs" },
  );
  const key = (jobId: bigint, step: bigint) => `${jobId}:${step}`;
  const answers = new Map(answered.map((l) => [key(l.args.jobId, l.args.step), { stateHash: l.args.stateHash, checkpointCid: l.args.checkpointCid, transactionHash: l.transactionHash }]));
  return requested.map((l) => ({
    jobId: l.args.jobId,
    segment: Number(l.args.segment),
    step: Number(l.args.step),
    requester: l.args.requester,
    deadline: Number(l.args.deadline),
    answered: answers.get(key(l.args.jobId, l.args.step)) ?? null,
    blockNumber: l.blockNumber,
  }));
}
