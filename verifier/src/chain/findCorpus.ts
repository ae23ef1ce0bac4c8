/**
 * Find the DataRegistry registration a buyer may attach for one corpus (IDataRegistry, attachment rule;
 * docs/governance.md): among the registrations listed under (contentDigest, payout), where `payout` is the
 * address the buyer means to pay (its manifest's `payoutAddress`), the first unretired one whose CID string and
 * licence equal the manifest's. Every listed registration pays `payout` or an address `payout` moved it to,
 * and only `payout` can move it, so a squatter's registration of the same bytes (listed under its own payout)
 * is never returned, and a copy of the contributor's registration pays the contributor.
 *
 * @example
 *   const { match } = await findCorpus(clients.public, { dataRegistry, contentDigest, payout, contentCid, licence });
 *   if (match) terms.corpora.push({ corpusId: match.corpusId, tokens });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { getCorpus, getCorpusIds } from "./getCorpusRegistration.ts";

export type FindCorpusParameters = {
  dataRegistry: Address;
  /** sha2-256 digest of the content id (contentDigestOf in provenance/chain.ts). */
  contentDigest: Hex;
  /** The address the buyer means to pay (the manifest corpus's payoutAddress). */
  payout: Address;
  contentCid: string;
  licence: string;
};

export type RegisteredCorpus = {
  corpusId: bigint;
  registrant: Address;
  /** Current payout: `payout` itself, or an address `payout` moved it to. */
  payout: Address;
  retired: boolean;
  contentCid: string;
  licence: string;
  termsHash: Hex;
};

export type FindCorpusReturnType = {
  /** The first (lowest listed) unretired registration with the manifest's CID and licence; undefined if none. */
  match: RegisteredCorpus | undefined;
  /** Every registration listed under (contentDigest, payout), in listing order, duplicates removed. */
  listed: RegisteredCorpus[];
};

export async function findCorpus(client: PublicClient<Transport, Chain>, p: FindCorpusParameters): Promise<FindCorpusReturnType> {
  const ids = await getCorpusIds(client, p);
  const listed: RegisteredCorpus[] = [];
  for (const corpusId of [...new Set(ids)]) {
    const c = await getCorpus(client, { dataRegistry: p.dataRegistry, corpusId });
    listed.push({ corpusId, registrant: c.registrant, payout: c.payout, retired: c.retired, contentCid: c.contentCid, licence: c.licence, termsHash: c.termsHash });
  }
  const match = listed.find((c) => !c.retired && c.contentCid === p.contentCid && c.licence === p.licence);
  return { match, listed };
}
