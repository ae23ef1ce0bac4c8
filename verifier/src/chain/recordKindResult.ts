/**
 * Record a finalized inference job's result on KindRecords: `recordResult(jobId, traceRoot, end, modelCid,
 * resultCid)`, where `end` is the preimage of the job's last committed leaf h(N) (kinds/state.ts), so the recorded
 * aggregate is the one the examples give. Anyone may send it.
 *
 * @example
 *   await recordKindResult(clients, { kindRecords, jobId, traceRoot, end, modelCid, resultCid });
 */
import type { Address, Hex } from "viem";
import { kindRecordsAbi } from "./abi/KindRecords.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

/** h(N)'s preimage less jobId, N and the model's CID (IKindRecords.EndState). */
export type KindEndState = { kind: number; item: Hex; score: bigint; hit: bigint; total: bigint; hits: bigint; chain: Hex };

export type RecordKindResultParameters = SendOptions & {
  kindRecords: Address;
  jobId: bigint;
  /** The last segment's committed root. */
  traceRoot: Hex;
  end: KindEndState;
  modelCid: string;
  /** The outputs file (evaluate) or the generated dataset (generate). */
  resultCid: string;
};

export type RecordKindResultReturnType = SendResult;

/** The call `recordKindResult` sends, as data (`encodeCall` gives its `{ to, data }`). */
export function recordKindResultCall(p: CallParameters<RecordKindResultParameters>): ContractCall<typeof kindRecordsAbi, "recordResult"> {
  return { address: p.kindRecords, abi: kindRecordsAbi, functionName: "recordResult", args: [p.jobId, p.traceRoot, p.end, p.modelCid, p.resultCid] };
}

export async function recordKindResult(clients: ChainClients, p: RecordKindResultParameters): Promise<RecordKindResultReturnType> {
  return sendContractTx(clients, recordKindResultCall(p), p);
}
