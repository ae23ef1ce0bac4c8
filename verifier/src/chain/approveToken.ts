/**
 * ERC-20 approve (any ERC-20; the ABI is the dev token's, which is a plain OpenZeppelin ERC20).
 *
 * @example
 *   const { hash, gasUsed } = await approveToken(clients, { token, spender: jobMarket, amount: maxUint256 });
 */
import type { Address } from "viem";
import { testTokenAbi } from "./abi/TestToken.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ApproveTokenParameters = SendOptions & {
  token: Address;
  spender: Address;
  amount: bigint;
};

export type ApproveTokenReturnType = SendResult;

/** The call `approveToken` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function approveTokenCall(p: CallParameters<ApproveTokenParameters>): ContractCall<typeof testTokenAbi, "approve"> {
  return { address: p.token, abi: testTokenAbi, functionName: "approve", args: [p.spender, p.amount] };
}

export async function approveToken(clients: ChainClients, p: ApproveTokenParameters): Promise<ApproveTokenReturnType> {
  return sendContractTx(clients, approveTokenCall(p), p);
}
