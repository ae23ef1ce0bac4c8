/**
 * The SegmentCommitted events of a job, in segment order (trace root, end state hash, loss, checkpoint CID and the
 * segment's K+1 state hashes: the leaves are on chain, in the commit's transaction input or its SegmentLeaves event
 * (getCommittedLeaves), so no challenger depends on the provider to serve them).
 *
 * @example
 *   const commits = await getSegmentCommits(clients.public, { jobMarket, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { getCommittedLeaves, type SegmentLeavesLog } from "./getCommittedLeaves.ts";
import { withRetry } from "./retry.ts";

export type GetSegmentCommitsParameters = { jobMarket: Address; jobId: bigint; fromBlock: bigint; toBlock?: bigint };

export type SegmentCommit = {
  jobId: bigint;
  segment: number;
  traceRoot: Hex;
  endStateHash: Hex;
  lossE6: bigint;
  checkpointCid: string;
  /** h(segment*K) .. h((segment+1)*K), as committed in calldata (checked against traceRoot and endStateHash). */
  stateHashes: readonly Hex[];
  blockNumber: bigint;
  transactionHash: Hex;
};

export type GetSegmentCommitsReturnType = SegmentCommit[];

export async function getSegmentCommits(client: PublicClient<Transport, Chain>, p: GetSegmentCommitsParameters): Promise<GetSegmentCommitsReturnType> {
  const range = { address: p.jobMarket, abi: jobMarketAbi, args: { jobId: p.jobId }, fromBlock: p.fromBlock, toBlock: p.toBlock ?? "latest", strict: true } as const;
  const [logs, leafLogs] = await Promise.all([
    withRetry(() => client.getContractEvents({ ...range, eventName: "SegmentCommitted" }), { what: "SegmentCommitted logs" }),
    withRetry(() => client.getContractEvents({ ...range, eventName: "SegmentLeaves" }), { what: "SegmentLeaves logs" }),
  ]);
  const leavesLogs: SegmentLeavesLog[] = leafLogs.map((l) => ({ ...l.args, transactionHash: l.transactionHash, logIndex: l.logIndex }));
  // A re-opened job can hold commits by two providers; segments never repeat (committed once).
  const out: SegmentCommit[] = [];
  for (const l of logs) {
    const stateHashes = await getCommittedLeaves(client, { jobMarket: p.jobMarket, ...l.args, blockHash: l.blockHash, transactionIndex: l.transactionIndex, transactionHash: l.transactionHash, logIndex: l.logIndex }, leavesLogs);
    out.push({
      jobId: l.args.jobId,
      segment: Number(l.args.segment),
      traceRoot: l.args.traceRoot,
      endStateHash: l.args.endStateHash,
      lossE6: l.args.lossE6,
      checkpointCid: l.args.checkpointCid,
      stateHashes,
      blockNumber: l.blockNumber,
      transactionHash: l.transactionHash,
    });
  }
  return out.sort((a, b) => a.segment - b.segment);
}
