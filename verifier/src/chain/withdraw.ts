/**
 * Withdraw the whole unbonded pending amount.
 *
 * @example
 *   const { hash, gasUsed } = await withdraw(clients, { stakeVault });
 */
import type { Address } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type WithdrawParameters = SendOptions & {
  stakeVault: Address;
};

export type WithdrawReturnType = SendResult;

export async function withdraw(clients: ChainClients, p: WithdrawParameters): Promise<WithdrawReturnType> {
  return sendContractTx(clients, { address: p.stakeVault, abi: stakeVaultAbi, functionName: "withdraw", args: [] }, p);
}
