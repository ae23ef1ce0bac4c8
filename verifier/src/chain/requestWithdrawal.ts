/**
 * Start unbonding free stake; withdrawable after the vault's unbonding delay.
 *
 * @example
 *   const { hash, gasUsed } = await requestWithdrawal(clients, { stakeVault, amount: parseEther("10") });
 */
import type { Address } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RequestWithdrawalParameters = SendOptions & {
  stakeVault: Address;
  amount: bigint;
};

export type RequestWithdrawalReturnType = SendResult;

/** The call `requestWithdrawal` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function requestWithdrawalCall(p: CallParameters<RequestWithdrawalParameters>): ContractCall<typeof stakeVaultAbi, "requestWithdrawal"> {
  return { address: p.stakeVault, abi: stakeVaultAbi, functionName: "requestWithdrawal", args: [p.amount] };
}

export async function requestWithdrawal(clients: ChainClients, p: RequestWithdrawalParameters): Promise<RequestWithdrawalReturnType> {
  return sendContractTx(clients, requestWithdrawalCall(p), p);
}
