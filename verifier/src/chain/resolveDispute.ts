/**
 * Resolve dispute `disputeId` after its reveal deadline or once every member revealed (anyone; DisputeGame.resolve).
 *
 * @example
 *   await resolveDispute(clients, { disputeGame, disputeId });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ResolveDisputeParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
};

export type ResolveDisputeReturnType = SendResult;

export async function resolveDispute(clients: ChainClients, p: ResolveDisputeParameters): Promise<ResolveDisputeReturnType> {
  return sendContractTx(clients, { address: p.disputeGame, abi: disputeGameAbi, functionName: "resolve", args: [p.disputeId] }, p);
}
