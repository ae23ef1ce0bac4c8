/**
 * The evidence bundle a statement dispute carries: the `bundle` of ProviderRegistry's StatementEvidence event, read from
 * the one block the dispute was opened in (`openedBlock`: its seed block less the registry's `seedDelayBlocks`,
 * `getSeedDelayBlocks`). Undefined when that block holds no such event (an unknown dispute, or a node that pruned its
 * logs); the caller says what to do then.
 *
 * @example
 *   const opened = (await getStatementDispute(client, { providerRegistry, disputeId })).seedBlock - (await getSeedDelayBlocks(client, { providerRegistry }));
 *   const bundle = await getStatementEvidence(client, { providerRegistry, disputeId, openedBlock: opened });
 */
import { hexToBytes, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import { withRetry } from "./retry.ts";

export async function getSeedDelayBlocks(client: PublicClient<Transport, Chain>, p: { providerRegistry: Address }): Promise<bigint> {
  return BigInt(await withRetry(() => client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "seedDelayBlocks" }), { what: "ProviderRegistry.seedDelayBlocks" }));
}

export async function getStatementEvidence(client: PublicClient<Transport, Chain>, p: { providerRegistry: Address; disputeId: bigint; openedBlock: bigint }): Promise<Uint8Array | undefined> {
  const logs = await withRetry(
    () => client.getContractEvents({ address: p.providerRegistry, abi: providerRegistryAbi, eventName: "StatementEvidence", args: { disputeId: p.disputeId }, fromBlock: p.openedBlock, toBlock: p.openedBlock, strict: true }),
    { what: "ProviderRegistry StatementEvidence logs" },
  );
  const [ev] = logs;
  return ev === undefined ? undefined : hexToBytes(ev.args.bundle);
}
