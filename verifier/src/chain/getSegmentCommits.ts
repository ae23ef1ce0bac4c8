/**
 * The SegmentCommitted events of a job, in segment order (trace root, end state hash, loss, checkpoint CID and the
 * segment's K+1 state hashes: the leaves are on chain, so no challenger depends on the provider to serve them).
 *
 * @example
 *   const commits = await getSegmentCommits(clients.public, { jobMarket, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetSegmentCommitsParameters = { jobMarket: Address; jobId: bigint; fromBlock: bigint; toBlock?: bigint };

export type SegmentCommit = {
  jobId: bigint;
  segment: number;
  traceRoot: Hex;
  endStateHash: Hex;
  lossE6: bigint;
  checkpointCid: string;
  /** h(segment*K) .. h((segment+1)*K), as committed in calldata. */
  stateHashes: readonly Hex[];
  blockNumber: bigint;
  transactionHash: Hex;
};

export type GetSegmentCommitsReturnType = SegmentCommit[];

export async function getSegmentCommits(client: PublicClient<Transport, Chain>, p: GetSegmentCommitsParameters): Promise<GetSegmentCommitsReturnType> {
  const logs = await withRetry(
    () =>
      client.getContractEvents({
        address: p.jobMarket,
        abi: jobMarketAbi,
        eventName: "SegmentCommitted",
        args: { jobId: p.jobId },
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "SegmentCommitted logs" },
  );
  // A re-opened job can hold commits by two providers; segments never repeat (committed once).
  return logs
    .map((l) => ({
      jobId: l.args.jobId,
      segment: Number(l.args.segment),
      traceRoot: l.args.traceRoot,
      endStateHash: l.args.endStateHash,
      lossE6: l.args.lossE6,
      checkpointCid: l.args.checkpointCid,
      stateHashes: l.args.stateHashes,
      blockNumber: l.blockNumber,
      transactionHash: l.transactionHash,
    }))
    .sort((a, b) => a.segment - b.segment);
}
