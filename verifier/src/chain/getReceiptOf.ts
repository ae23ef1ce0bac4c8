/**
 * The EIP-712 digest of the receipt `auditor` anchored for (job, segment) (JobRecords.receiptOf), zeroHash when it has
 * anchored none. Receipts live in JobRecords (deployment.jobRecords).
 *
 * @example
 *   const anchored = (await getReceiptOf(clients.public, { jobRecords: d.jobRecords, jobId, segment: 2, auditor })) !== zeroHash;
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import { withRetry } from "./retry.ts";

export type GetReceiptOfParameters = { jobRecords: Address; jobId: bigint; segment: number; auditor: Address };

export async function getReceiptOf(client: PublicClient<Transport, Chain>, p: GetReceiptOfParameters): Promise<Hex> {
  return withRetry(() => client.readContract({ address: p.jobRecords, abi: jobRecordsAbi, functionName: "receiptOf", args: [p.jobId, BigInt(p.segment), p.auditor] }), { what: "JobRecords.receiptOf" });
}
