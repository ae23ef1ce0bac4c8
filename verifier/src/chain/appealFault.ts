/**
 * The provider appeals the unanimous first-round Fault of dispute `disputeId` to a larger, fresh panel
 * (DisputeGame.appealFault): provider only, within the window resolve opened (getFaultAppeal), posting a bond as large
 * as the challenger's in the bond token (approve it first). The bond comes back unless the dispute ends Conceded or
 * PanelFault.
 *
 * @example
 *   await appealFault(providerClients, { disputeGame, disputeId });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type AppealFaultParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
};

/** The call `appealFault` sends, as data. */
export function appealFaultCall(p: CallParameters<AppealFaultParameters>): ContractCall<typeof disputeGameAbi, "appealFault"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "appealFault", args: [p.disputeId] };
}

export async function appealFault(clients: ChainClients, p: AppealFaultParameters): Promise<SendResult> {
  return sendContractTx(clients, appealFaultCall(p), p);
}
