/**
 * The audit receipts anchored for a job (JobRecords' ReceiptRecorded events), oldest first, each with the auditor's
 * EIP-712 signature when it can be read back: the event carries the receipt's fields and digest but not the signature,
 * which lives only in the recordReceipt calldata. With `signatures: true` every receipt's transaction is read and
 * decoded; a receipt recorded through another contract (not a direct recordReceipt call) has `signature: undefined`.
 *
 * NOTE: the signature read back is not trusted here: the caller recovers it against the receipt (receipts/) before
 * relying on it. JobRecords only anchored receipts whose signature recovered to a bonded auditor, so a mismatch means
 * the calldata was not the recordReceipt that emitted the event.
 *
 * @example
 *   const receipts = await getReceiptsRecorded(clients.public, { jobRecords: d.jobRecords, jobId: 1n, fromBlock: BigInt(d.startBlock), signatures: true });
 *   const audited = new Set(receipts.map((r) => r.segment)).size;
 */
import { decodeFunctionData, getAddress, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import { withRetry } from "./retry.ts";

export type GetReceiptsRecordedParameters = {
  jobRecords: Address;
  jobId: bigint;
  fromBlock: bigint;
  toBlock?: bigint;
  /** Read each receipt's transaction for its signature (one eth_getTransactionByHash per receipt). Default false. */
  signatures?: boolean;
};

export type RecordedReceipt = {
  jobId: bigint;
  segment: number;
  /** EIP-55; the signer JobRecords recovered. */
  auditor: Address;
  /** EIP-712 digest JobRecords stored (receiptOf). */
  digest: Hex;
  traceRoot: Hex;
  checks: number;
  sampledSteps: number;
  verdict: number;
  /** The recordReceipt calldata's signature; undefined when not asked for or not decodable. */
  signature: Hex | undefined;
  blockNumber: bigint;
  transactionHash: Hex;
};

export type GetReceiptsRecordedReturnType = RecordedReceipt[];

export async function getReceiptsRecorded(client: PublicClient<Transport, Chain>, p: GetReceiptsRecordedParameters): Promise<GetReceiptsRecordedReturnType> {
  const logs = await withRetry(
    () =>
      client.getContractEvents({
        address: p.jobRecords,
        abi: jobRecordsAbi,
        eventName: "ReceiptRecorded",
        args: { jobId: p.jobId },
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "ReceiptRecorded logs" },
  );
  const out: RecordedReceipt[] = [];
  for (const l of logs) {
    const r: RecordedReceipt = {
      jobId: l.args.jobId,
      segment: Number(l.args.segment),
      auditor: getAddress(l.args.auditor),
      digest: l.args.digest,
      traceRoot: l.args.traceRoot,
      checks: l.args.checks,
      sampledSteps: l.args.sampledSteps,
      verdict: l.args.verdict,
      signature: undefined,
      blockNumber: l.blockNumber,
      transactionHash: l.transactionHash,
    };
    if (p.signatures) r.signature = await signatureOf(client, r);
    out.push(r);
  }
  return out.sort((a, b) => (a.blockNumber === b.blockNumber ? a.segment - b.segment : a.blockNumber < b.blockNumber ? -1 : 1));
}

async function signatureOf(client: PublicClient<Transport, Chain>, r: RecordedReceipt): Promise<Hex | undefined> {
  const tx = await withRetry(() => client.getTransaction({ hash: r.transactionHash }), { what: "getTransaction" });
  try {
    const call = decodeFunctionData({ abi: jobRecordsAbi, data: tx.input });
    if (call.functionName !== "recordReceipt") return undefined;
    const [receipt, , signature] = call.args;
    // the calldata must be the receipt the event names (not another call in the same transaction)
    if (receipt.jobId !== r.jobId || receipt.segment !== r.segment || receipt.traceRoot.toLowerCase() !== r.traceRoot.toLowerCase()) return undefined;
    return signature;
  } catch {
    return undefined; // not a direct JobMarket call (a wrapper contract or a multicall)
  }
}
