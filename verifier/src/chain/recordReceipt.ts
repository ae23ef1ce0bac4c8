/**
 * Anchor a signed AuditReceipt (EIP-712, receipts/) on JobRecords: `recordReceipt(receipt, endStateHash, signature)`.
 * The challenger bot records the encoded call as an intent before it signs (`encodeCall(recordReceiptCall(p))`).
 *
 * @example
 *   await recordReceipt(clients, { jobRecords, receipt, endStateHash, signature });
 */
import type { Address, ContractFunctionArgs, Hex } from "viem";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

type RecordReceiptArgs = ContractFunctionArgs<typeof jobRecordsAbi, "nonpayable", "recordReceipt">;

export type RecordReceiptParameters = SendOptions & {
  jobRecords: Address;
  /** The receipt struct as JobRecords takes it. */
  receipt: RecordReceiptArgs[0];
  /** The audited segment's committed end state hash. */
  endStateHash: Hex;
  /** The auditor's EIP-712 signature over the receipt. */
  signature: Hex;
};

export type RecordReceiptReturnType = SendResult;

/** The call `recordReceipt` sends, as data (`encodeCall` gives its `{ to, data }`). */
export function recordReceiptCall(p: CallParameters<RecordReceiptParameters>): ContractCall<typeof jobRecordsAbi, "recordReceipt"> {
  return { address: p.jobRecords, abi: jobRecordsAbi, functionName: "recordReceipt", args: [p.receipt, p.endStateHash, p.signature] };
}

export async function recordReceipt(clients: ChainClients, p: RecordReceiptParameters): Promise<RecordReceiptReturnType> {
  return sendContractTx(clients, recordReceiptCall(p), p);
}
