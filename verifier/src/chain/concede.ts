/**
 * The provider admits the fault of dispute `disputeId`: settles at once, provider at fault (DisputeGame.concede).
 *
 * @example
 *   await concede(providerClients, { disputeGame, disputeId: 3n });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ConcedeParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
};

export type ConcedeReturnType = SendResult;

/** The call `concede` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function concedeCall(p: CallParameters<ConcedeParameters>): ContractCall<typeof disputeGameAbi, "concede"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "concede", args: [p.disputeId] };
}

export async function concede(clients: ChainClients, p: ConcedeParameters): Promise<ConcedeReturnType> {
  return sendContractTx(clients, concedeCall(p), p);
}
