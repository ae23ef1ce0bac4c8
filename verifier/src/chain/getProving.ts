/**
 * Read which setup may settle disputes with proofs on a DisputeGame (IDisputeGame.proving, fixed at deployment):
 * Disabled, Development (the committed development setup, dev chain only) or Ceremony, with the verifier and the
 * vkey hash it was deployed with (0x0: the development setup).
 *
 * @example
 *   const { mode, verifier, vkeyHash } = await getProving(clients.public, { disputeGame });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { withRetry } from "./retry.ts";

/** IDisputeGame.ProvingMode, by index. */
export const PROVING_MODES = ["Disabled", "Development", "Ceremony"] as const;
export type ProvingMode = (typeof PROVING_MODES)[number];
export type Proving = { mode: ProvingMode; verifier: Address; vkeyHash: Hex };

export type GetProvingParameters = { disputeGame: Address };
export type GetProvingReturnType = Proving;

export async function getProving(client: PublicClient<Transport, Chain>, p: GetProvingParameters): Promise<GetProvingReturnType> {
  const [verifier, vkeyHash, mode] = await withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "proving" }), { what: "DisputeGame.proving" });
  const name = PROVING_MODES[mode];
  if (name === undefined) throw new Error(`DisputeGame.proving returned unknown mode ${mode}`);
  return { mode: name, verifier, vkeyHash: vkeyHash as Hex };
}
