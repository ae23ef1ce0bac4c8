/**
 * Draw the panel of dispute `disputeId` once its seed block has passed (anyone; DisputeGame.drawPanel).
 *
 * @example
 *   await drawPanel(clients, { disputeGame, disputeId });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type DrawPanelParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
};

export type DrawPanelReturnType = SendResult;

export async function drawPanel(clients: ChainClients, p: DrawPanelParameters): Promise<DrawPanelReturnType> {
  return sendContractTx(clients, { address: p.disputeGame, abi: disputeGameAbi, functionName: "drawPanel", args: [p.disputeId] }, p);
}
