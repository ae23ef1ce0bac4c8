/**
 * The disputes opened on a job (its Challenged events), oldest first; on every job when `jobId` is left out.
 *
 * @example
 *   const ids = await getJobDisputes(clients.public, { disputeGame, jobId: 1n, fromBlock: 0n });
 *   const all = await getJobDisputes(clients.public, { disputeGame, fromBlock: cursor + 1n, toBlock: head });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { withRetry } from "./retry.ts";

export type GetJobDisputesParameters = { disputeGame: Address; jobId?: bigint; fromBlock: bigint; toBlock?: bigint };

export type JobDisputeOpened = {
  disputeId: bigint;
  jobId: bigint;
  challenger: Address;
  segment: number;
  step: number;
  bond: bigint;
  /** Panel fees deposited with the bond (panelSize * panelFee). */
  fees: bigint;
  /** The committed leaves the challenge disputes: h(step - 1) and h(step). */
  hPrev: Hex;
  hStep: Hex;
  blockNumber: bigint;
  transactionHash: Hex;
};

export type GetJobDisputesReturnType = JobDisputeOpened[];

export async function getJobDisputes(client: PublicClient<Transport, Chain>, p: GetJobDisputesParameters): Promise<GetJobDisputesReturnType> {
  const logs = await withRetry(
    () =>
      client.getContractEvents({
        address: p.disputeGame,
        abi: disputeGameAbi,
        eventName: "Challenged",
        ...(p.jobId === undefined ? {} : { args: { jobId: p.jobId } }),
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "Challenged logs" },
  );
  return logs
    .map((l) => ({
      disputeId: l.args.disputeId,
      jobId: l.args.jobId,
      challenger: l.args.challenger,
      segment: Number(l.args.segment),
      step: Number(l.args.step),
      bond: l.args.bond,
      fees: l.args.fees,
      hPrev: l.args.hPrev,
      hStep: l.args.hStep,
      blockNumber: l.blockNumber,
      transactionHash: l.transactionHash,
    }))
    .sort((a, b) => (a.disputeId < b.disputeId ? -1 : 1));
}
