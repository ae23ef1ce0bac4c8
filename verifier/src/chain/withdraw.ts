/**
 * Withdraw the whole unbonded pending amount.
 *
 * @example
 *   const { hash, gasUsed } = await withdraw(clients, { stakeVault });
 */
import type { Address } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type WithdrawParameters = SendOptions & {
  stakeVault: Address;
};

export type WithdrawReturnType = SendResult;

/** The call `withdraw` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function withdrawCall(p: CallParameters<WithdrawParameters>): ContractCall<typeof stakeVaultAbi, "withdraw"> {
  return { address: p.stakeVault, abi: stakeVaultAbi, functionName: "withdraw", args: [] };
}

export async function withdraw(clients: ChainClients, p: WithdrawParameters): Promise<WithdrawReturnType> {
  return sendContractTx(clients, withdrawCall(p), p);
}
