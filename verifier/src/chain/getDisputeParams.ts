/**
 * Read a DisputeGame's deployment parameters (IDisputeGame.Params): bond floor, panel size, windows,
 * forfeit and panel fee. `buyer create` prices the panel fee a challenger bears into its quote.
 *
 * @example
 *   const p = await getDisputeParams(clients.public, { disputeGame });
 *   p.panelFee; // wei per drawn member
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { DisputeParams } from "./deployDisputeGame.ts";
import { withRetry } from "./retry.ts";

export type GetDisputeParamsParameters = { disputeGame: Address };

export async function getDisputeParams(client: PublicClient<Transport, Chain>, p: GetDisputeParamsParameters): Promise<DisputeParams> {
  const r = await withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "params" }), { what: "DisputeGame.params" });
  return {
    minChallengerBond: r.minChallengerBond,
    panelErrorBps: Number(r.panelErrorBps),
    panelSize: Number(r.panelSize),
    seedDelayBlocks: Number(r.seedDelayBlocks),
    commitWindowSeconds: Number(r.commitWindowSeconds),
    revealWindowSeconds: Number(r.revealWindowSeconds),
    panelForfeit: r.panelForfeit,
    panelFee: r.panelFee,
  };
}
