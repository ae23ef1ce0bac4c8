/**
 * DataRegistry reads by id and by registrant: the corpus a registration id names (DataRegistry.corpusOf) and the
 * registration an account made for a content digest (DataRegistry.registrationOf; undefined when it made none).
 *
 * @example
 *   const mine = await getCorpusRegistration(clients.public, { dataRegistry, contentDigest, registrant: me });
 *   if (mine) console.log(mine.corpusId, mine.corpus.payout);
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { dataRegistryAbi } from "./abi/DataRegistry.ts";
import { withRetry } from "./retry.ts";

function readCorpus(client: PublicClient<Transport, Chain>, p: { dataRegistry: Address; corpusId: bigint }) {
  return client.readContract({ address: p.dataRegistry, abi: dataRegistryAbi, functionName: "corpusOf", args: [p.corpusId] });
}

export type CorpusRecord = Awaited<ReturnType<typeof readCorpus>>;

export async function getCorpus(client: PublicClient<Transport, Chain>, p: { dataRegistry: Address; corpusId: bigint }): Promise<CorpusRecord> {
  return withRetry(() => readCorpus(client, p), { what: "DataRegistry.corpusOf" });
}

/** The ids registered under (contentDigest, payout), in listing order (DataRegistry.corpusIdsOf). */
export async function getCorpusIds(client: PublicClient<Transport, Chain>, p: { dataRegistry: Address; contentDigest: Hex; payout: Address }): Promise<readonly bigint[]> {
  return withRetry(() => client.readContract({ address: p.dataRegistry, abi: dataRegistryAbi, functionName: "corpusIdsOf", args: [p.contentDigest, p.payout] }), { what: "DataRegistry.corpusIdsOf" });
}

export async function getCorpusRegistration(
  client: PublicClient<Transport, Chain>,
  p: { dataRegistry: Address; contentDigest: Hex; registrant: Address },
): Promise<{ corpusId: bigint; corpus: CorpusRecord } | undefined> {
  const id = await withRetry(() => client.readContract({ address: p.dataRegistry, abi: dataRegistryAbi, functionName: "registrationOf", args: [p.contentDigest, p.registrant] }), { what: "DataRegistry.registrationOf" });
  if (id === 0n) return undefined;
  return { corpusId: id, corpus: await getCorpus(client, { dataRegistry: p.dataRegistry, corpusId: id }) };
}
