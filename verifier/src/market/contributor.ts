/**
 * The data contributor's side: register a manifest's corpora in DataRegistry (content digest, CID,
 * licence, payout address), so that jobs training on them carry data terms and pay the corpus its share
 * at finalize (market/data-terms.ts). Idempotent per corpus: when a registration that buyers of this
 * manifest would attach already exists (listed under the payout address, same CID and licence, unretired;
 * chain/findCorpus.ts), it is reported with its id and nothing is sent. A registration by this account of the
 * same bytes that buyers would not attach (another payout, licence or CID, or retired) is an error: the
 * registry takes one registration per (content, registrant).
 */
import { getAddress, keccak256, toHex, type Address, type Hex } from "viem";
import { dataRegistryAbi, findCorpus, registerCorpus, txRef, withRetry, type ChainClients, type TxRef } from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import type { Manifest } from "../ml/index.ts";
import { contentDigestOf } from "../provenance/chain.ts";

export type CorpusRegistration = {
  name: string;
  contentId: string;
  corpusId: bigint;
  /** registered: by this call; existing: a registration buyers attach existed already (by anyone). */
  status: "registered" | "existing";
  payout: Address;
  /** The registering account (may retire the registration; cannot move its payout). */
  owner: Address;
  gasUsed: bigint;
  /** The registerCorpus transaction, when this call registered it. */
  tx?: TxRef;
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
 * Registers the manifest's corpora in `dataRegistry`, skipping those buyers can already attach.
 *
 * @example
 *   const regs = await registerManifestCorpora(clients, d.dataRegistry!, manifest);
 */
export async function registerManifestCorpora(clients: ChainClients, dataRegistry: Address, manifest: Manifest, opts: RegisterCorporaOptions = {}): Promise<CorpusRegistration[]> {
  const out: CorpusRegistration[] = [];
  for (const c of manifest.corpora) {
    if (opts.only !== undefined && c.name !== opts.only) continue;
    const contentDigest = contentDigestOf(c.contentId);
    const payout = getAddress(opts.payout ?? c.payoutAddress);
    const { match } = await findCorpus(clients.public, { dataRegistry, contentDigest, payout, contentCid: c.contentId, licence: c.licence });
    if (match) {
      out.push({ name: c.name, contentId: c.contentId, corpusId: match.corpusId, status: "existing", payout: match.payout, owner: match.registrant, gasUsed: 0n });
      continue;
    }
    const mine = await withRetry(() => clients.public.readContract({ address: dataRegistry, abi: dataRegistryAbi, functionName: "registrationOf", args: [contentDigest, clients.account.address] }), { what: "registrationOf" });
    if (mine !== 0n) {
      const r = await withRetry(() => clients.public.readContract({ address: dataRegistry, abi: dataRegistryAbi, functionName: "corpusOf", args: [mine] }), { what: "corpusOf" });
      throw new InputError(
        `corpus ${c.name}: you registered ${c.contentId} already, as DataRegistry corpus ${mine} (payout ${r.payout}, licence ${JSON.stringify(r.licence)}${r.retired ? ", retired" : ""}), which buyers paying ${payout} under ${JSON.stringify(c.licence)} do not attach; register from another account or fix the manifest`,
      );
    }
    const r = await registerCorpus(clients, { dataRegistry, contentDigest, contentCid: c.contentId, licence: c.licence, payout, termsHash: opts.termsHash ?? keccak256(toHex(c.licence)) });
    out.push({ name: c.name, contentId: c.contentId, corpusId: r.corpusId, status: "registered", payout, owner: clients.account.address, gasUsed: r.gasUsed, tx: txRef("registerCorpus", r) });
  }
  return out;
}
