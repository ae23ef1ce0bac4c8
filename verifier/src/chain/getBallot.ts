/**
 * A panel member's ballot on a dispute (DisputeGame.ballotOf): its vote commitment (zeroHash before it committed) and
 * its revealed vote as the enum's name ("None" before it revealed).
 *
 * @example
 *   const { commitment, vote } = await getBallot(clients.public, { disputeGame, disputeId, member });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { VOTE, type VoteName } from "./getDispute.ts";
import { withRetry } from "./retry.ts";

export type Ballot = { commitment: Hex; vote: VoteName };

export async function getBallot(client: PublicClient<Transport, Chain>, p: { disputeGame: Address; disputeId: bigint; member: Address }): Promise<Ballot> {
  const [commitment, vote] = await withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "ballotOf", args: [p.disputeId, p.member] }), { what: "DisputeGame.ballotOf" });
  return { commitment, vote: VOTE[vote] ?? "None" };
}
