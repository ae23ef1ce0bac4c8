/**
 * Anchor a provenance record on chain: `anchorProvenance(jobId, recordHash, weightsCid)` on the anchor
 * contract (JobRecords, deployment.jobRecords; any contract with the same function, see provenance/chain.ts).
 *
 * @example
 *   const { recordHash } = await writeProvenance(outDir, record);
 *   await anchorProvenance(clients, { anchor: d.jobRecords, jobId, recordHash, weightsCid: record.weights.cid });
 */
import type { Address, Hex } from "viem";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type AnchorProvenanceParameters = SendOptions & { anchor: Address; jobId: bigint; recordHash: Hex; weightsCid: string };

/** The call `anchorProvenance` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function anchorProvenanceCall(p: CallParameters<AnchorProvenanceParameters>): ContractCall<typeof jobRecordsAbi, "anchorProvenance"> {
  return { address: p.anchor, abi: jobRecordsAbi, functionName: "anchorProvenance", args: [p.jobId, p.recordHash, p.weightsCid] };
}

export async function anchorProvenance(clients: ChainClients, p: AnchorProvenanceParameters): Promise<SendResult> {
  return sendContractTx(clients, anchorProvenanceCall(p), p);
}
