/**
 * Draw the panel of dispute `disputeId` once its seed block has passed (anyone; DisputeGame.drawPanel).
 *
 * @example
 *   await drawPanel(clients, { disputeGame, disputeId });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type DrawPanelParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
};

export type DrawPanelReturnType = SendResult;

/** The call `drawPanel` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function drawPanelCall(p: CallParameters<DrawPanelParameters>): ContractCall<typeof disputeGameAbi, "drawPanel"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "drawPanel", args: [p.disputeId] };
}

export async function drawPanel(clients: ChainClients, p: DrawPanelParameters): Promise<DrawPanelReturnType> {
  return sendContractTx(clients, drawPanelCall(p), p);
}
