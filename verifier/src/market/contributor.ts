/**
 * The data contributor's side: register a manifest's corpora in DataRegistry (content digest, CID,
 * licence, payout address), so that jobs training on them carry data terms and pay the corpus its share
 * at finalize (market/data-terms.ts). Idempotent per corpus: content already registered is reported with
 * its id, not registered twice (the registry allows one corpus per content digest).
 */
import { getAddress, keccak256, toHex, type Address, type Hex } from "viem";
import { dataRegistryAbi, registerCorpus, withRetry, type ChainClients } from "../chain/index.ts";
import type { Manifest } from "../ml/index.ts";
import { contentDigestOf } from "../provenance/chain.ts";

export type CorpusRegistration = {
  name: string;
  contentId: string;
  corpusId: bigint;
  /** registered: by this call; existing: the content was registered before (by anyone). */
  status: "registered" | "existing";
  payout: Address;
  owner: Address;
  gasUsed: bigint;
};

export type RegisterCorporaOptions = {
  /** Payout address for every corpus (default: each corpus's manifest payoutAddress). */
  payout?: Address;
  /** Hash of the contributor's terms document (default: keccak256 of the licence text). */
  termsHash?: Hex;
  /** Only the corpus with this manifest name (default: all). */
  only?: string;
};

/**
 * Registers the manifest's corpora in `dataRegistry`, skipping content that is already registered.
 *
 * @example
 *   const regs = await registerManifestCorpora(clients, d.dataRegistry!, manifest);
 */
export async function registerManifestCorpora(clients: ChainClients, dataRegistry: Address, manifest: Manifest, opts: RegisterCorporaOptions = {}): Promise<CorpusRegistration[]> {
  const out: CorpusRegistration[] = [];
  for (const c of manifest.corpora) {
    if (opts.only !== undefined && c.name !== opts.only) continue;
    const contentDigest = contentDigestOf(c.contentId);
    const existing = await withRetry(() => clients.public.readContract({ address: dataRegistry, abi: dataRegistryAbi, functionName: "corpusIdOf", args: [contentDigest] }), { what: "corpusIdOf" });
    if (existing !== 0n) {
      const r = await withRetry(() => clients.public.readContract({ address: dataRegistry, abi: dataRegistryAbi, functionName: "corpusOf", args: [existing] }), { what: "corpusOf" });
      out.push({ name: c.name, contentId: c.contentId, corpusId: existing, status: "existing", payout: r.payout, owner: r.owner, gasUsed: 0n });
      continue;
    }
    const payout = getAddress(opts.payout ?? c.payoutAddress);
    const r = await registerCorpus(clients, { dataRegistry, contentDigest, contentCid: c.contentId, licence: c.licence, payout, termsHash: opts.termsHash ?? keccak256(toHex(c.licence)) });
    out.push({ name: c.name, contentId: c.contentId, corpusId: r.corpusId, status: "registered", payout, owner: clients.account.address, gasUsed: r.gasUsed });
  }
  return out;
}
