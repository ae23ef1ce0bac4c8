/**
 * Commit to a challenge before opening it (DisputeGame.commitChallenge(jobId, segment, commitment)): the commitment is
 * challengeCommitment(jobId, step, challenger, salt) = keccak256(abi.encode(jobId, step, challenger, salt)) and names
 * the committed segment `segment` of an existing job in the clear (the step stays hidden). The challenge
 * (`challengeStep` with the same salt and segment) must be mined in a later block, so a copy of it taken from the
 * mempool has no commitment and reverts (DisputeGameChallengeNotCommitted), and within
 * CHALLENGE_COMMITMENT_TTL_BLOCKS blocks (DisputeGameChallengeCommitmentExpired: commit again). The first valid
 * challenge of a step holds it.
 *
 * @example
 *   const salt = newChallengeSalt();
 *   await commitChallenge(clients, { disputeGame, jobId, segment: 1, step: 7, salt });
 *   await challengeStep(clients, { disputeGame, jobId, segment: 1, step: 7, ..., salt });
 */
import { encodeAbiParameters, keccak256, toHex, type Address, type Hex } from "viem";
import { randomBytes } from "node:crypto";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type CommitChallengeParameters = SendOptions & { disputeGame: Address; jobId: bigint; segment: number; step: number; salt: Hex };

export type CommitChallengeReturnType = SendResult & { commitment: Hex };

/** A fresh 32-byte salt; keep it (the challenge reveals it) and never reuse it. */
export function newChallengeSalt(): Hex {
  return toHex(randomBytes(32));
}

/** The commitment DisputeGame.challengeCommitment computes (same encoding). */
export function challengeCommitment(jobId: bigint, step: number | bigint, challenger: Address, salt: Hex): Hex {
  return keccak256(
    encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }, { type: "address" }, { type: "bytes32" }], [jobId, BigInt(step), challenger, salt]),
  );
}

export type CommitChallengeCallParameters = { disputeGame: Address; jobId: bigint; segment: number; commitment: Hex };

/** The call `commitChallenge` sends, as data, for a commitment already computed with `challengeCommitment`. */
export function commitChallengeCall(p: CommitChallengeCallParameters): ContractCall<typeof disputeGameAbi, "commitChallenge"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "commitChallenge", args: [p.jobId, BigInt(p.segment), p.commitment] };
}

export async function commitChallenge(clients: ChainClients, p: CommitChallengeParameters): Promise<CommitChallengeReturnType> {
  const commitment = challengeCommitment(p.jobId, p.step, clients.account.address, p.salt);
  const r = await sendContractTx(clients, commitChallengeCall({ ...p, commitment }), p);
  return { ...r, commitment };
}
