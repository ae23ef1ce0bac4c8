/**
 * Draw and store a statement dispute's panel (anyone; ProviderRegistry.drawDisputePanel) once its seed block is mined,
 * and return it (the stored one when already drawn). Reverts with ProviderRegistryDisputeSeedNotReady before the seed
 * block and ProviderRegistryDisputeSeedExpired 256 blocks after it.
 *
 * @example
 *   const { panel } = await drawStatementDisputePanel(clients, { providerRegistry, disputeId });
 */
import { parseEventLogs, type Address } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type DrawStatementDisputePanelParameters = SendOptions & { providerRegistry: Address; disputeId: bigint };

export type DrawStatementDisputePanelReturnType = SendResult & { panel: readonly Address[] };

export async function drawStatementDisputePanel(clients: ChainClients, p: DrawStatementDisputePanelParameters): Promise<DrawStatementDisputePanelReturnType> {
  const r = await sendContractTx(clients, { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "drawDisputePanel", args: [p.disputeId] }, p);
  const [ev] = parseEventLogs({ abi: providerRegistryAbi, logs: r.receipt.logs, eventName: "DisputePanelDrawn" });
  const panel = ev ? ev.args.panel : await clients.public.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "panelOf", args: [p.disputeId] });
  return { ...r, panel };
}
