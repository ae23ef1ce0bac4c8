/**
 * Leave the active auditor set; the bond can be taken back after the exit delay.
 *
 * @example
 *   const { hash, gasUsed } = await requestExit(clients, { auditorRegistry });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RequestExitParameters = SendOptions & {
  auditorRegistry: Address;
};

export type RequestExitReturnType = SendResult;

/** The call `requestExit` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function requestExitCall(p: CallParameters<RequestExitParameters>): ContractCall<typeof auditorRegistryAbi, "requestExit"> {
  return { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "requestExit", args: [] };
}

export async function requestExit(clients: ChainClients, p: RequestExitParameters): Promise<RequestExitReturnType> {
  return sendContractTx(clients, requestExitCall(p), p);
}
