/**
 * Dev chain only: mint the TestToken (contracts/mocks) to `to`.
 *
 * @example
 *   const { hash, gasUsed } = await mintTestToken(clients, { token, to: account.address, amount: parseEther("1000") });
 */
import type { Address } from "viem";
import { testTokenAbi } from "./abi/TestToken.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type MintTestTokenParameters = SendOptions & {
  token: Address;
  to: Address;
  amount: bigint;
};

export type MintTestTokenReturnType = SendResult;

/** The call `mintTestToken` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function mintTestTokenCall(p: CallParameters<MintTestTokenParameters>): ContractCall<typeof testTokenAbi, "mint"> {
  return { address: p.token, abi: testTokenAbi, functionName: "mint", args: [p.to, p.amount] };
}

export async function mintTestToken(clients: ChainClients, p: MintTestTokenParameters): Promise<MintTestTokenReturnType> {
  return sendContractTx(clients, mintTestTokenCall(p), p);
}
