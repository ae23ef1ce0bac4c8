/**
 * Open a requested state (StateOpenings.answerOpening, the job's provider, by the deadline, once per state: the one
 * answer serves every auditor): the CID of the state's checkpoint, and the state hash with its Merkle proof against
 * the committed trace root of the segment the opening was asked in.
 *
 * @example
 *   await answerOpening(clients, { stateOpenings, jobId, step, checkpointCid, traceRoot, endStateHash, stateHash, proof });
 */
import type { Address, Hex } from "viem";
import { stateOpeningsAbi } from "./abi/StateOpenings.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type AnswerOpeningParameters = SendOptions & {
  stateOpenings: Address;
  jobId: bigint;
  step: number;
  /** Content id of the checkpoint file of state `step`. */
  checkpointCid: string;
  /** The segment's committed trace root and end state hash (its SegmentCommitted event). */
  traceRoot: Hex;
  endStateHash: Hex;
  /** h(step) and its proof in the segment's tree (trace/SegmentTree.proof). */
  stateHash: Hex;
  proof: readonly Hex[];
};

export type AnswerOpeningReturnType = SendResult;

/** The call `answerOpening` sends, as data. */
export function answerOpeningCall(p: CallParameters<AnswerOpeningParameters>): ContractCall<typeof stateOpeningsAbi, "answerOpening"> {
  return {
    address: p.stateOpenings,
    abi: stateOpeningsAbi,
    functionName: "answerOpening",
    args: [p.jobId, BigInt(p.step), p.checkpointCid, p.traceRoot, p.endStateHash, p.stateHash, p.proof],
  };
}

export async function answerOpening(clients: ChainClients, p: AnswerOpeningParameters): Promise<AnswerOpeningReturnType> {
  return sendContractTx(clients, answerOpeningCall(p), p);
}
