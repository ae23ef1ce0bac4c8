/**
 * Anchor a provenance record on chain: `anchorProvenance(jobId, recordHash, weightsCid)` on the anchor
 * contract (see chain.ts for the interface).
 *
 * @example
 *   const { recordHash } = await writeProvenance(outDir, record);
 *   await anchorProvenance(clients, { anchor: d.jobMarket, jobId, recordHash, weightsCid: record.weights.cid });
 */
import type { Address, Hex } from "viem";
import type { ChainClients } from "../chain/clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "../chain/send.ts";
import { provenanceAnchorAbi } from "./chain.ts";

export type AnchorProvenanceParameters = SendOptions & { anchor: Address; jobId: bigint; recordHash: Hex; weightsCid: string };

export async function anchorProvenance(clients: ChainClients, p: AnchorProvenanceParameters): Promise<SendResult> {
  return sendContractTx(clients, { address: p.anchor, abi: provenanceAnchorAbi, functionName: "anchorProvenance", args: [p.jobId, p.recordHash, p.weightsCid] }, p);
}
