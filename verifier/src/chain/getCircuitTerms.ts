/**
 * Read a job's circuit terms (IDisputeGame.circuitTerms): the learning rate (16 fraction bits) and the batch root;
 * null when the job is not registered as circuit class (batchRoot 0: its disputes go to the panel).
 *
 * @example
 *   const terms = await getCircuitTerms(clients.public, { disputeGame, jobId });
 */
import { zeroHash, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { withRetry } from "./retry.ts";

export type GetCircuitTermsParameters = { disputeGame: Address; jobId: bigint };
export type CircuitTerms = { lr: bigint; batchRoot: Hex };
export type GetCircuitTermsReturnType = CircuitTerms | null;

export async function getCircuitTerms(client: PublicClient<Transport, Chain>, p: GetCircuitTermsParameters): Promise<GetCircuitTermsReturnType> {
  const t = await withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "circuitTerms", args: [p.jobId] }), { what: "DisputeGame.circuitTerms" });
  return t.batchRoot === zeroHash ? null : { lr: t.lr, batchRoot: t.batchRoot };
}
