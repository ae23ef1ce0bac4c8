/**
 * Ask job `jobId`'s provider to open state `step` of committed segment `segment` (StateOpenings.requestOpening):
 * caller an active auditor, once per (job, step) for everyone (a state already asked is refused: read its opening
 * instead). The provider must answer by the deadline its queue gives (`getNextAnswerBy`) or the state is withheld
 * (`getOpening(...).withheld`), disputable at step `step + 1`.
 *
 * @example
 *   await requestOpening(clients, { stateOpenings, jobId: 1n, segment: 2, step: 107 });
 */
import type { Address } from "viem";
import { stateOpeningsAbi } from "./abi/StateOpenings.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RequestOpeningParameters = SendOptions & {
  stateOpenings: Address;
  jobId: bigint;
  segment: number;
  /** Absolute state number: segment*K .. segment*K + K - 1. */
  step: number;
};

export type RequestOpeningReturnType = SendResult;

/** The call `requestOpening` sends, as data. */
export function requestOpeningCall(p: CallParameters<RequestOpeningParameters>): ContractCall<typeof stateOpeningsAbi, "requestOpening"> {
  return { address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "requestOpening", args: [p.jobId, BigInt(p.segment), BigInt(p.step)] };
}

export async function requestOpening(clients: ChainClients, p: RequestOpeningParameters): Promise<RequestOpeningReturnType> {
  return sendContractTx(clients, requestOpeningCall(p), p);
}
