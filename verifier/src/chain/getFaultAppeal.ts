/**
 * The provider appeal of dispute `disputeId` (DisputeGame.faultAppealOf): `deadline` is the end of the window in which
 * its provider may appeal a unanimous first-round Fault (undefined: no window open), `providerBond` the bond an appeal
 * posted (0n: none).
 *
 * @example
 *   const { deadline } = await getFaultAppeal(clients.public, { disputeGame, disputeId });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { withRetry } from "./retry.ts";

export async function getFaultAppeal(
  client: PublicClient<Transport, Chain>,
  p: { disputeGame: Address; disputeId: bigint },
): Promise<{ deadline: bigint | undefined; providerBond: bigint }> {
  const [deadline, providerBond] = await withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "faultAppealOf", args: [p.disputeId] }), { what: "DisputeGame.faultAppealOf" });
  return { deadline: deadline === 0n ? undefined : BigInt(deadline), providerBond };
}
