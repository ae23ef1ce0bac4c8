/**
 * Open a dispute on one step (DisputeGame.challenge, one ChallengeParams struct): the provider's leaves h(step-1) and
 * h(step) with Merkle proofs against the segment's committed (traceRoot, endStateHash). The deposit `DisputeGame.requiredDeposit(jobId)` (the bond
 * `requiredBond(jobId)` plus panelSize * panelFee) is pulled from the caller in one transfer: approve the DisputeGame
 * for it first, and commit to the challenge (commitChallenge.ts) in an earlier block with the same salt
 * (verifier/src/dispute/challenge.ts does all three; DisputeGameDepositNotApproved / DisputeGameChallengeNotCommitted
 * otherwise). A step already under dispute reverts DisputeGameDisputeOpen: the first valid challenge holds it.
 *
 * @example
 *   const { disputeId } = await challengeStep(clients, { disputeGame, jobId, segment: 1, step: 7, traceRoot, endStateHash,
 *     hPrev, proofPrev, hStep, proofStep, salt });
 */
import { parseEventLogs, type Address, type Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { ChainError } from "./errors.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ChallengeStepParameters = SendOptions & {
  disputeGame: Address;
  jobId: bigint;
  segment: number;
  step: number;
  traceRoot: Hex;
  endStateHash: Hex;
  hPrev: Hex;
  proofPrev: readonly Hex[];
  hStep: Hex;
  proofStep: readonly Hex[];
  /** The salt of the caller's earlier commitChallenge. */
  salt: Hex;
};

export type ChallengeStepReturnType = SendResult & { disputeId: bigint; bond: bigint; fees: bigint; seedBlock: bigint };

/** The call `challengeStep` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function challengeStepCall(p: CallParameters<ChallengeStepParameters>): ContractCall<typeof disputeGameAbi, "challenge"> {
  return {
    address: p.disputeGame,
    abi: disputeGameAbi,
    functionName: "challenge",
    args: [
      {
        jobId: p.jobId,
        segment: BigInt(p.segment),
        step: BigInt(p.step),
        traceRoot: p.traceRoot,
        endStateHash: p.endStateHash,
        prevStateHash: p.hPrev,
        prevStateProof: p.proofPrev,
        stateHash: p.hStep,
        stateProof: p.proofStep,
        salt: p.salt,
      },
    ],
  };
}

export async function challengeStep(clients: ChainClients, p: ChallengeStepParameters): Promise<ChallengeStepReturnType> {
  const r = await sendContractTx(clients, challengeStepCall(p), p);
  const [ev] = parseEventLogs({ abi: disputeGameAbi, logs: r.receipt.logs, eventName: "Challenged" });
  if (!ev) throw new ChainError(`challenge ${r.hash} emitted no Challenged event`);
  return { ...r, disputeId: ev.args.disputeId, bond: ev.args.bond, fees: ev.args.fees, seedBlock: ev.args.seedBlock };
}
