/**
 * The dispute open on (job, step) now (DisputeGame.openDisputeOf), undefined when none is.
 *
 * @example
 *   if ((await getOpenDispute(clients.public, { disputeGame, jobId, step })) === undefined) ...
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { withRetry } from "./retry.ts";

export async function getOpenDispute(client: PublicClient<Transport, Chain>, p: { disputeGame: Address; jobId: bigint; step: number }): Promise<bigint | undefined> {
  const id = await withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "openDisputeOf", args: [p.jobId, BigInt(p.step)] }), { what: "DisputeGame.openDisputeOf" });
  return id === 0n ? undefined : id;
}
