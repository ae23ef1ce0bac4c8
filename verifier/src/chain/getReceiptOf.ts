/**
 * The EIP-712 digest of the receipt `auditor` anchored for (job, segment) (JobMarket.receiptOf), zeroHash when it has
 * anchored none.
 *
 * @example
 *   const anchored = (await getReceiptOf(clients.public, { jobMarket, jobId, segment: 2, auditor })) !== zeroHash;
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetReceiptOfParameters = { jobMarket: Address; jobId: bigint; segment: number; auditor: Address };

export async function getReceiptOf(client: PublicClient<Transport, Chain>, p: GetReceiptOfParameters): Promise<Hex> {
  return withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "receiptOf", args: [p.jobId, BigInt(p.segment), p.auditor] }), { what: "JobMarket.receiptOf" });
}
