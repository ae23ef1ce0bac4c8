/**
 * Leave the active auditor set; the bond can be taken back after the exit delay.
 *
 * @example
 *   const { hash, gasUsed } = await requestExit(clients, { auditorRegistry });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RequestExitParameters = SendOptions & {
  auditorRegistry: Address;
};

export type RequestExitReturnType = SendResult;

export async function requestExit(clients: ChainClients, p: RequestExitParameters): Promise<RequestExitReturnType> {
  return sendContractTx(clients, { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "requestExit", args: [] }, p);
}
