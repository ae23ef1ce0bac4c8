/**
 * Reveal a committed panel vote (DisputeGame.revealVote); `vote` 1 = Valid, 2 = Fault.
 *
 * @example
 *   await revealVote(auditorClients, { disputeGame, disputeId, vote: 2, salt });
 */
import type { Address, Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RevealVoteParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
  vote: 1 | 2;
  salt: Hex;
};

export type RevealVoteReturnType = SendResult;

export async function revealVote(clients: ChainClients, p: RevealVoteParameters): Promise<RevealVoteReturnType> {
  return sendContractTx(clients, { address: p.disputeGame, abi: disputeGameAbi, functionName: "revealVote", args: [p.disputeId, p.vote, p.salt] }, p);
}
