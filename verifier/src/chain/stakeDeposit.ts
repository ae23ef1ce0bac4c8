/**
 * Deposit stake (needs a token allowance to the vault).
 *
 * @example
 *   const { hash, gasUsed } = await stakeDeposit(clients, { stakeVault, amount: parseEther("10") });
 */
import type { Address } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type StakeDepositParameters = SendOptions & {
  stakeVault: Address;
  amount: bigint;
};

export type StakeDepositReturnType = SendResult;

/** The call `stakeDeposit` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function stakeDepositCall(p: CallParameters<StakeDepositParameters>): ContractCall<typeof stakeVaultAbi, "deposit"> {
  return { address: p.stakeVault, abi: stakeVaultAbi, functionName: "deposit", args: [p.amount] };
}

export async function stakeDeposit(clients: ChainClients, p: StakeDepositParameters): Promise<StakeDepositReturnType> {
  return sendContractTx(clients, stakeDepositCall(p), p);
}
