/**
 * Post (add to) the caller's auditor bond (needs a token allowance to the registry).
 *
 * @example
 *   const { hash, gasUsed } = await postBond(clients, { auditorRegistry, amount: parseEther("100") });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type PostBondParameters = SendOptions & {
  auditorRegistry: Address;
  amount: bigint;
};

export type PostBondReturnType = SendResult;

/** The call `postBond` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function postBondCall(p: CallParameters<PostBondParameters>): ContractCall<typeof auditorRegistryAbi, "postBond"> {
  return { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "postBond", args: [p.amount] };
}

export async function postBond(clients: ChainClients, p: PostBondParameters): Promise<PostBondReturnType> {
  return sendContractTx(clients, postBondCall(p), p);
}
