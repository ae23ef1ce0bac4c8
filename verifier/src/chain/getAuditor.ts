/**
 * An auditor's AuditorRegistry record (bond, status, exit time) and whether it is active now.
 *
 * @example
 *   const { bond } = await getAuditor(clients.public, { auditorRegistry, auditor });
 *   const active = await getAuditorActive(clients.public, { auditorRegistry, auditor });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { withRetry } from "./retry.ts";

type P = { auditorRegistry: Address; auditor: Address };

function readAuditor(client: PublicClient<Transport, Chain>, p: P) {
  return client.readContract({ address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "auditorOf", args: [p.auditor] });
}

export type AuditorRecord = Awaited<ReturnType<typeof readAuditor>>;

export async function getAuditor(client: PublicClient<Transport, Chain>, p: P): Promise<AuditorRecord> {
  return withRetry(() => readAuditor(client, p), { what: "AuditorRegistry.auditorOf" });
}

export async function getAuditorActive(client: PublicClient<Transport, Chain>, p: P): Promise<boolean> {
  return withRetry(() => client.readContract({ address: p.auditorRegistry, abi: auditorRegistryAbi, functionName: "isActive", args: [p.auditor] }), { what: "AuditorRegistry.isActive" });
}
