/**
 * The disputes opened on a job (its Challenged events), oldest first.
 *
 * @example
 *   const ids = await getJobDisputes(clients.public, { disputeGame, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { withRetry } from "./retry.ts";

export type GetJobDisputesParameters = { disputeGame: Address; jobId: bigint; fromBlock: bigint; toBlock?: bigint };

export type JobDisputeOpened = {
  disputeId: bigint;
  challenger: Address;
  segment: number;
  step: number;
  bond: bigint;
  /** Panel fees deposited with the bond (panelSize * panelFee). */
  fees: bigint;
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
        args: { jobId: p.jobId },
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "Challenged logs" },
  );
  return logs
    .map((l) => ({
      disputeId: l.args.disputeId,
      challenger: l.args.challenger,
      segment: Number(l.args.segment),
      step: Number(l.args.step),
      bond: l.args.bond,
      fees: l.args.fees,
      blockNumber: l.blockNumber,
      transactionHash: l.transactionHash,
    }))
    .sort((a, b) => (a.disputeId < b.disputeId ? -1 : 1));
}
