/**
 * The payment/stake token's balance of an account and its allowance to a spender (ERC-20 reads).
 *
 * @example
 *   const short = price - (await getTokenBalance(clients.public, { token, account }));
 *   const allowed = await getTokenAllowance(clients.public, { token, owner: account, spender: jobMarket });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { testTokenAbi } from "./abi/TestToken.ts";
import { withRetry } from "./retry.ts";

export async function getTokenBalance(client: PublicClient<Transport, Chain>, p: { token: Address; account: Address }): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.token, abi: testTokenAbi, functionName: "balanceOf", args: [p.account] }), { what: "token.balanceOf" });
}

export async function getTokenAllowance(client: PublicClient<Transport, Chain>, p: { token: Address; owner: Address; spender: Address }): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.token, abi: testTokenAbi, functionName: "allowance", args: [p.owner, p.spender] }), { what: "token.allowance" });
}
