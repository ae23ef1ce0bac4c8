/**
 * Settle a dispute of a circuit-class job for the provider with a Groth16 proof of the step (DisputeGame.prove).
 * `proof` is zk's VerifierArgs (proveStep().calldata): [pA, pB, pC, pubSignals]; pubSignals[0..2] are commitW,
 * commitWNext, commitBatch.
 *
 * @example
 *   await proveDisputedStep(clients, { disputeGame, disputeId, proof: calldata, batchProof });
 */
import type { Address, Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";
import type { VerifierArgs } from "../zk/prove.ts";

export type ProveDisputedStepParameters = SendOptions & {
  disputeGame: Address;
  disputeId: bigint;
  proof: VerifierArgs;
  batchProof: readonly Hex[];
};

export type ProveDisputedStepReturnType = SendResult;

/** The call `proveDisputedStep` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function proveDisputedStepCall(p: CallParameters<ProveDisputedStepParameters>): ContractCall<typeof disputeGameAbi, "prove"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "prove", args: [p.disputeId, p.proof[3][0], p.proof[3][1], p.proof[3][2], p.batchProof, p.proof[0], p.proof[1], p.proof[2]] };
}

export async function proveDisputedStep(clients: ChainClients, p: ProveDisputedStepParameters): Promise<ProveDisputedStepReturnType> {
  return sendContractTx(clients, proveDisputedStepCall(p), p);
}
