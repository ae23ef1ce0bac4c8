/**
 * Commit the next segment of an Active job (provider only, before the segment deadline): its K+1 state hashes
 * h(segment*K) .. h((segment+1)*K) in calldata (JobMarket computes the trace root, binds the end state to the last leaf
 * and checks the first leaf against the previous segment's end), the mean loss x 1e6 and the CID of its start checkpoint.
 *
 * Sender: the provider, or, when the job was accepted at a tier whose evidence bound a session key (getCommitter), that
 * session key only: pass the clients of the session key (made inside the attested machine), or the market reverts
 * with JobMarketNotSessionKey.
 *
 * @example
 *   await commitSegment(clients, { jobMarket, jobId, segment: 0, stateHashes, lossE6: 2_301_000n, checkpointCid });
 */
import type { Address, Hex } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type CommitSegmentParameters = SendOptions & {
  jobMarket: Address;
  jobId: bigint;
  segment: number;
  /** The segment's K+1 state hashes, first state first. */
  stateHashes: readonly Hex[];
  lossE6: bigint;
  checkpointCid: string;
};

export type CommitSegmentReturnType = SendResult;

export async function commitSegment(clients: ChainClients, p: CommitSegmentParameters): Promise<CommitSegmentReturnType> {
  return sendContractTx(
    clients,
    {
      address: p.jobMarket,
      abi: jobMarketAbi,
      functionName: "commitSegment",
      args: [p.jobId, BigInt(p.segment), p.stateHashes, p.lossE6, p.checkpointCid],
    },
    p,
  );
}
