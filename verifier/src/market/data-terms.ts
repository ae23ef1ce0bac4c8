/**
 * The data terms a buyer's job carries on chain (IJobMarket.Terms, `createJobWithTerms`): the manifest's
 * corpora as their DataRegistry ids with the declared tokens, the manifest's minimum attestation tier,
 * and a data share of the payment credited to the corpora's payout addresses at finalize.
 *
 * Rule (what `pouw buyer create` does, docs/data.md, docs/governance.md):
 * - a corpus's registration is looked up by (content digest, the manifest's payoutAddress), never by
 *   content alone (chain/findCorpus.ts): the buyer names whom it pays, so a squatter who registered the
 *   same bytes first under its own payout is never attached, and a copy of the contributor's registration
 *   pays the contributor (only a payout address can move its payout);
 * - terms are attached when JobMarket has a DataRegistry (`registries()`) and every corpus of the
 *   manifest has an unretired registration for its payout there with the manifest's CID and licence
 *   (all or nothing: a job's terms that left out one of its corpora would fail that corpus's provenance
 *   check);
 * - otherwise the job is created without terms (`createJob`: no contributor share, no tier floor) and
 *   the reason comes back as one line; with `mode: "require"` that is a DataTermsError instead;
 * - registrations for the payout that all differ from the manifest's CID string or licence are always an
 *   error: the job's provenance record (built from the manifest) would fail the registry check (the payout
 *   address can retire registrations listed under it that it disowns).
 */
import { getAddress, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { findCorpus, getRegistries, type JobTerms } from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import type { Manifest } from "../ml/index.ts";
import { contentDigestOf } from "../provenance/chain.ts";
import { DEFAULT_DATA_SHARE_BPS } from "./data-share.ts";

// NOTE: defined in data-share.ts, which imports nothing, so `pouw buyer --help` prints it without loading the chain actions
export { DEFAULT_DATA_SHARE_BPS };

/** auto: attach when every corpus is registered; require: fail otherwise; off: never attach. */
export type DataTermsMode = "auto" | "require" | "off";

export type TermsCorpus = { name: string; contentId: string; corpusId: bigint; tokens: bigint; payout: Address };

export type DataTermsDecision =
  | { attached: true; terms: JobTerms; corpora: TermsCorpus[]; dataRegistry: Address }
  | { attached: false; reason: string };

/** Data terms cannot be attached as asked, or the registry contradicts the manifest. CLI exit 2. */
export class DataTermsError extends InputError {
  override name = "DataTermsError";
  override readonly code: string = "DATA_TERMS";
}


export type DataTermsOptions = { dataShareBps?: number; mode?: DataTermsMode };

/**
 * Decides the job's data terms from the manifest and the chain (reads only).
 *
 * @example
 *   const t = await dataTermsFor(clients.public, { jobMarket }, manifest, { dataShareBps: 1_000 });
 *   if (t.attached) await createJob(clients, { ...job, terms: t.terms });
 */
export async function dataTermsFor(client: PublicClient<Transport, Chain>, d: { jobMarket: Address }, manifest: Manifest, opts: DataTermsOptions = {}): Promise<DataTermsDecision> {
  const mode = opts.mode ?? "auto";
  const dataShareBps = opts.dataShareBps ?? DEFAULT_DATA_SHARE_BPS;
  if (!Number.isInteger(dataShareBps) || dataShareBps < 0 || dataShareBps > 10_000) throw new DataTermsError(`--data-share-bps must be 0..10000, got ${dataShareBps}`);
  if (mode === "off") return { attached: false, reason: "data terms turned off (--no-data-terms)" };
  const without = (reason: string): DataTermsDecision => {
    if (mode === "require") throw new DataTermsError(`cannot attach data terms: ${reason}`);
    return { attached: false, reason };
  };

  const dataRegistry = (await getRegistries(client, { jobMarket: d.jobMarket })).data;
  if (dataRegistry === undefined) return without(`JobMarket ${d.jobMarket} has no DataRegistry (deployed with --no-registries)`);

  const corpora: TermsCorpus[] = [];
  const missing: string[] = [];
  for (const c of manifest.corpora) {
    const payout = getAddress(c.payoutAddress);
    const { match, listed } = await findCorpus(client, { dataRegistry, contentDigest: contentDigestOf(c.contentId), payout, contentCid: c.contentId, licence: c.licence });
    if (!match) {
      const live = listed.filter((r) => !r.retired);
      if (listed.length === 0) {
        missing.push(`corpus ${c.name} (${c.contentId}) is not registered in DataRegistry ${dataRegistry} for payout ${payout}`);
      } else if (live.length === 0) {
        missing.push(`corpus ${c.name} is DataRegistry corpus ${listed.map((r) => r.corpusId).join(", ")}, retired`);
      } else {
        const r = live[0]!;
        // INVARIANT: terms never point at a registry entry that contradicts the manifest (provenance would reject the job's record).
        throw new DataTermsError(
          `corpus ${c.name}: DataRegistry corpus ${r.corpusId} is registered with CID ${r.contentCid} and licence ${JSON.stringify(r.licence)}, the manifest says ${c.contentId} and ${JSON.stringify(c.licence)}`,
        );
      }
      continue;
    }
    const corpusId = match.corpusId;
    if (corpora.some((u) => u.corpusId === corpusId)) throw new DataTermsError(`the manifest lists corpus ${corpusId} (${c.contentId}) twice`);
    corpora.push({ name: c.name, contentId: c.contentId, corpusId, tokens: BigInt(c.declaredTokens), payout: match.payout });
  }
  if (missing.length > 0) return without(missing.join("; "));
  corpora.sort((a, b) => (a.corpusId < b.corpusId ? -1 : 1));
  const terms: JobTerms = { minTier: manifest.policy.minTier, dataShareBps, corpora: corpora.map(({ corpusId, tokens }) => ({ corpusId, tokens })) };
  return { attached: true, terms, corpora, dataRegistry };
}
