/**
 * Register a job as circuit class (buyer, while Open): learning rate (16 fraction bits) and the Merkle root of its
 * per-step batch commitments (verifier/src/dispute/circuit.ts builds both). DisputeGame.setCircuitTerms. The job must
 * have been created with manifestHash = circuitManifestHash(manifestBody, { lr, batchRoot }) (dispute/terms.ts), else
 * the contract refuses with DisputeGameTermsNotInManifest.
 *
 * @example
 *   await setCircuitTerms(buyerClients, { disputeGame, jobId, lr: toFixed(0.05), batchRoot, manifestBody });
 */
import type { Address, Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type SetCircuitTermsParameters = SendOptions & {
  disputeGame: Address;
  jobId: bigint;
  lr: bigint;
  batchRoot: Hex;
  /** keccak256 of the manifest document (the first word of the circuit manifest hash). */
  manifestBody: Hex;
};

export type SetCircuitTermsReturnType = SendResult;

/** The call `setCircuitTerms` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function setCircuitTermsCall(p: CallParameters<SetCircuitTermsParameters>): ContractCall<typeof disputeGameAbi, "setCircuitTerms"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "setCircuitTerms", args: [p.jobId, p.lr, p.batchRoot, p.manifestBody] };
}

export async function setCircuitTerms(clients: ChainClients, p: SetCircuitTermsParameters): Promise<SetCircuitTermsReturnType> {
  return sendContractTx(clients, setCircuitTermsCall(p), p);
}
