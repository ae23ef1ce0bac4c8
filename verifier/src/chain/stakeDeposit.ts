/**
 * Deposit stake (needs a token allowance to the vault).
 *
 * @example
 *   const { hash, gasUsed } = await stakeDeposit(clients, { stakeVault, amount: parseEther("10") });
 */
import type { Address } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type StakeDepositParameters = SendOptions & {
  stakeVault: Address;
  amount: bigint;
};

export type StakeDepositReturnType = SendResult;

export async function stakeDeposit(clients: ChainClients, p: StakeDepositParameters): Promise<StakeDepositReturnType> {
  return sendContractTx(clients, { address: p.stakeVault, abi: stakeVaultAbi, functionName: "deposit", args: [p.amount] }, p);
}
