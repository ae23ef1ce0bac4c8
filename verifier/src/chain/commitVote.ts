/**
 * Commit a panel vote: keccak256(abi.encode(uint8 vote, bytes32 salt, address member)) (DisputeGame.commitVote).
 * Persist the salt before calling (verifier/src/dispute/ballots.ts): without it the vote cannot be revealed.
 *
 * @example
 *   await commitVote(auditorClients, { disputeGame, disputeId, commitment: voteCommitment("Fault", salt, member) });
 */
import type { Address, Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type CommitVoteParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
  commitment: Hex;
};

export type CommitVoteReturnType = SendResult;

/** The call `commitVote` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function commitVoteCall(p: CallParameters<CommitVoteParameters>): ContractCall<typeof disputeGameAbi, "commitVote"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "commitVote", args: [p.disputeId, p.commitment] };
}

export async function commitVote(clients: ChainClients, p: CommitVoteParameters): Promise<CommitVoteReturnType> {
  return sendContractTx(clients, commitVoteCall(p), p);
}
