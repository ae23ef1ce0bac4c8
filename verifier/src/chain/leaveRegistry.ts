/**
 * Withdraw the whole auditor bond after the exit delay.
 *
 * @example
 *   const { hash, gasUsed } = await leaveRegistry(clients, { auditorRegistry });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type LeaveRegistryParameters = SendOptions & {
  auditorRegistry: Address;
};

export type LeaveRegistryReturnType = SendResult;

/** The call `leaveRegistry` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function leaveRegistryCall(p: CallParameters<LeaveRegistryParameters>): ContractCall<typeof auditorRegistryAbi, "leave"> {
  return { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "leave", args: [] };
}

export async function leaveRegistry(clients: ChainClients, p: LeaveRegistryParameters): Promise<LeaveRegistryReturnType> {
  return sendContractTx(clients, leaveRegistryCall(p), p);
}
