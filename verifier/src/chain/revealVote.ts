/**
 * Reveal a committed panel vote (DisputeGame.revealVote); `vote` 1 = Valid, 2 = Fault.
 *
 * @example
 *   await revealVote(auditorClients, { disputeGame, disputeId, vote: 2, salt });
 */
import type { Address, Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RevealVoteParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
  vote: 1 | 2;
  salt: Hex;
};

export type RevealVoteReturnType = SendResult;

/** The call `revealVote` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function revealVoteCall(p: CallParameters<RevealVoteParameters>): ContractCall<typeof disputeGameAbi, "revealVote"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "revealVote", args: [p.disputeId, p.vote, p.salt] };
}

export async function revealVote(clients: ChainClients, p: RevealVoteParameters): Promise<RevealVoteReturnType> {
  return sendContractTx(clients, revealVoteCall(p), p);
}
