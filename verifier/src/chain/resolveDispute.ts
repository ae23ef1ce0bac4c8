/**
 * Resolve dispute `disputeId` after its reveal deadline or once every member revealed (anyone; DisputeGame.resolve).
 *
 * @example
 *   await resolveDispute(clients, { disputeGame, disputeId });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ResolveDisputeParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
};

export type ResolveDisputeReturnType = SendResult;

/** The call `resolveDispute` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function resolveDisputeCall(p: CallParameters<ResolveDisputeParameters>): ContractCall<typeof disputeGameAbi, "resolve"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "resolve", args: [p.disputeId] };
}

export async function resolveDispute(clients: ChainClients, p: ResolveDisputeParameters): Promise<ResolveDisputeReturnType> {
  return sendContractTx(clients, resolveDisputeCall(p), p);
}
