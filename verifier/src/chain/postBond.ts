/**
 * Post (add to) the caller's auditor bond (needs a token allowance to the registry).
 *
 * @example
 *   const { hash, gasUsed } = await postBond(clients, { auditorRegistry, amount: parseEther("100") });
 */
import type { Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type PostBondParameters = SendOptions & {
  auditorRegistry: Address;
  amount: bigint;
};

export type PostBondReturnType = SendResult;

export async function postBond(clients: ChainClients, p: PostBondParameters): Promise<PostBondReturnType> {
  return sendContractTx(clients, { address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "postBond", args: [p.amount] }, p);
}
