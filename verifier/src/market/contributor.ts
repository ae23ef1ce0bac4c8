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
import {
  claimPayment,
  findCorpus,
  getCorpusRegistration,
  getDataShareCredits,
  getMarketCredit,
  getRegistries,
  registerCorpus,
  txRef,
  type ChainClients,
  type DataShareCredit,
  type Deployment,
  type TxRef,
} from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import { checkCorpusBytes, corpusBytes, corpusSpecOf } from "../ml/data/corpus.ts";
import type { Manifest } from "../ml/index.ts";
import { contentDigestOf } from "../provenance/chain.ts";
import { ContentNotFoundError, LocalDirStore } from "../store/index.ts";

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
    const registered = await getCorpusRegistration(clients.public, { dataRegistry, contentDigest, registrant: clients.account.address });
    if (registered) {
      const [mine, r] = [registered.corpusId, registered.corpus];
      throw new InputError(
        `corpus ${c.name}: you registered ${c.contentId} already, as DataRegistry corpus ${mine} (payout ${r.payout}, licence ${JSON.stringify(r.licence)}${r.retired ? ", retired" : ""}), which buyers paying ${payout} under ${JSON.stringify(c.licence)} do not attach; register from another account or fix the manifest`,
      );
    }
    const r = await registerCorpus(clients, { dataRegistry, contentDigest, contentCid: c.contentId, licence: c.licence, payout, termsHash: opts.termsHash ?? keccak256(toHex(c.licence)) });
    out.push({ name: c.name, contentId: c.contentId, corpusId: r.corpusId, status: "registered", payout, owner: clients.account.address, gasUsed: r.gasUsed, tx: txRef("registerCorpus", r) });
  }
  return out;
}

/** Throws InputError unless `store` holds each corpus's bytes under its contentId (the store checks the CID). */
async function checkStoredCorpora(corpora: readonly { name: string; contentId: string }[], storeDir: string): Promise<void> {
  const store = new LocalDirStore(storeDir);
  for (const c of corpora) {
    try {
      await store.get(c.contentId);
    } catch (err) {
      if (err instanceof ContentNotFoundError) throw new InputError(`corpus ${c.name}: ${c.contentId} is not in the content store ${store.dir} (pouw data add puts it there)`, { cause: err });
      throw err;
    }
  }
}

/**
 * `pouw corpus register`: checks that this contributor holds every corpus it registers (a data set by content id in
 * the content store at `storeDir`, a package's bytes under the manifest's id), then `connect`s to the market and
 * registers them in the JobMarket's DataRegistry (registerManifestCorpora). InputError for an unknown `only`, a corpus
 * not held, or a market without a DataRegistry; nothing is sent before every check holds.
 */
export async function registerCorpora(
  manifest: Manifest,
  o: RegisterCorporaOptions & { storeDir: string },
  connect: () => Promise<{ clients: ChainClients; deployment: Pick<Deployment, "jobMarket"> }>,
): Promise<{ dataRegistry: Address; registrations: CorpusRegistration[] }> {
  const only = o.only;
  if (only !== undefined && !manifest.corpora.some((c) => c.name === only))
    throw new InputError(`--corpus ${only}: unknown corpus, the manifest has ${manifest.corpora.map((c) => c.name).join(", ")}`);
  // INVARIANT: a contributor registers only content it holds: the local bytes must have the manifest's id.
  // a data set by content id (no package) must be in the content store, which checks its CID (pouw data add puts it there)
  const held = manifest.corpora.filter((c) => c.package === undefined && (only === undefined || c.name === only));
  if (held.length > 0) await checkStoredCorpora(held, o.storeDir);
  manifest.corpora.forEach((c, i) => {
    if (c.package !== undefined && (only === undefined || c.name === only)) checkCorpusBytes(c, corpusBytes(corpusSpecOf(manifest, i)).bytes, `package ${c.package}`);
  });
  const { clients, deployment } = await connect();
  const dataRegistry = (await getRegistries(clients.public, { jobMarket: deployment.jobMarket })).data;
  if (dataRegistry === undefined) throw new InputError(`JobMarket ${deployment.jobMarket} has no DataRegistry (it was deployed with --no-registries)`);
  const { storeDir: _storeDir, ...opts } = o;
  return { dataRegistry, registrations: await registerManifestCorpora(clients, dataRegistry, manifest, opts) };
}

export type ContributorClaim = {
  account: Address;
  /** JobMarket credit claimed now (0: nothing to claim, no transaction sent). */
  claimed: bigint;
  /** Every data share JobMarket ever credited to this payout address (finalized jobs naming its corpora). */
  dataShares: DataShareCredit[];
  /** The claim transaction, when one was sent. */
  tx?: TxRef;
};

/**
 * The data contributor's pay: JobMarket credits each corpus's payout address its data share at finalize (pull
 * payments); this claims the account's whole JobMarket credit in the deployment's token and lists the data shares that
 * made it up. NOTE: the credit is one balance per (account, token): a payout address that is also a buyer or provider
 * claims its refunds and pay with it, as `pouw buyer claim` would.
 *
 * @example
 *   const r = await claimContributorCredit(clients, deployment);   // r.claimed, r.tx?.hash, r.dataShares
 */
export async function claimContributorCredit(clients: ChainClients, d: Pick<Deployment, "jobMarket" | "token" | "startBlock">): Promise<ContributorClaim> {
  const account = getAddress(clients.account.address);
  const [credit, dataShares] = await Promise.all([
    getMarketCredit(clients.public, { jobMarket: d.jobMarket, account, token: d.token }),
    getDataShareCredits(clients.public, { jobMarket: d.jobMarket, payout: account, fromBlock: BigInt(d.startBlock) }),
  ]);
  if (credit === 0n) return { account, claimed: 0n, dataShares };
  const r = await claimPayment(clients, { jobMarket: d.jobMarket, token: d.token });
  return { account, claimed: credit, dataShares, tx: txRef("claimPayment", r) };
}
