/**
 * An account's unclaimed JobMarket credit in a token (payments, refunds, data shares: JobMarket.creditOf), what
 * claimPayment would pay out now.
 *
 * @example
 *   const credit = await getMarketCredit(clients.public, { jobMarket, account, token });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetMarketCreditParameters = { jobMarket: Address; account: Address; token: Address };

export async function getMarketCredit(client: PublicClient<Transport, Chain>, p: GetMarketCreditParameters): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [p.account, p.token] }), { what: "creditOf" });
}
