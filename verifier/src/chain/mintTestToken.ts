/**
 * Dev chain only: mint the TestToken (contracts/mocks) to `to`.
 *
 * @example
 *   const { hash, gasUsed } = await mintTestToken(clients, { token, to: account.address, amount: parseEther("1000") });
 */
import type { Address } from "viem";
import { testTokenAbi } from "./abi/TestToken.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type MintTestTokenParameters = SendOptions & {
  token: Address;
  to: Address;
  amount: bigint;
};

export type MintTestTokenReturnType = SendResult;

export async function mintTestToken(clients: ChainClients, p: MintTestTokenParameters): Promise<MintTestTokenReturnType> {
  return sendContractTx(clients, { address: p.token, abi: testTokenAbi, functionName: "mint", args: [p.to, p.amount] }, p);
}
