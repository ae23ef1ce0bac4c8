/**
 * The handlers of `pouw corpus` (corpus.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import { isHex, type Hex } from "viem";
import { getRegistries } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
import { DATASETS, DEFAULT_SOTU_YEARS, parseDatasetName, type CorpusSpec } from "../../ml/data/corpus.ts";
import { fmt, marketContext, parseAddress, txJson, txLines } from "../context.ts";

/** `--years`: YEAR or FIRST-LAST. */
export function parseYears(text: string): [number, number] {
  const m = /^(\d{4})(?:[-:](\d{4}))?$/.exec(text);
  if (!m) throw new InputError(`--years must be YEAR or FIRST-LAST (e.g. 1990-2021), got ${JSON.stringify(text)}`);
  const first = Number(m[1]);
  const last = Number(m[2] ?? m[1]);
  if (first > last) throw new InputError(`--years ${text}: first year is after last year`);
  return [first, last];
}

/** Throws InputError unless the configured content store holds each corpus's bytes under its contentId (CID-checked). */
async function checkStoredCorpora(corpora: readonly { name: string; contentId: string }[], flags: Record<string, unknown>): Promise<void> {
  const [{ configFrom }, { ContentNotFoundError, LocalDirStore }] = await Promise.all([import("../context.ts"), import("../../store/index.ts")]);
  const store = new LocalDirStore(configFrom(flags as never).storeDir);
  for (const c of corpora) {
    try {
      await store.get(c.contentId);
    } catch (err) {
      if (err instanceof ContentNotFoundError) throw new InputError(`corpus ${c.name}: ${c.contentId} is not in the content store ${store.dir} (pouw data add puts it there)`, { cause: err });
      throw err;
    }
  }
}

/** `id`'s handler (the definitions and flags are in corpus.ts). */
export const id = async (opts: { dataset: string; years?: string; package?: string; json?: boolean }) => {
  const { corpusId } = await import("../../ml/data/corpus.ts");
  const dataset = parseDatasetName(opts.dataset);
  if (dataset !== "sotu" && opts.years !== undefined) throw new InputError(`--years applies to sotu only, not ${dataset}`);
  const pkg = opts.package ? { package: opts.package } : {};
  const spec: CorpusSpec = dataset === "sotu" ? { dataset, years: opts.years ? parseYears(opts.years) : DEFAULT_SOTU_YEARS, ...pkg } : { dataset, ...pkg };
  const id = corpusId(spec);
  const packageName = opts.package ?? DATASETS[dataset].package;
  if (opts.json) {
    process.stdout.write(JSON.stringify({ dataset, package: packageName, ...(spec.dataset === "sotu" ? { years: spec.years } : {}), ...id }) + "\n");
    return;
  }
  process.stdout.write(`${id.contentId}\n`);
  process.stderr.write(`${dataset} (${packageName}${spec.dataset === "sotu" ? `, years ${spec.years.join("-")}` : ""}): ${id.bytes} canonical bytes, ${id.tokens} ${id.tokenUnit}\n`);
};

/** `register`'s handler (the definitions and flags are in corpus.ts). */
export const register = async (opts: Record<string, string | boolean | undefined>) => {
  const [{ readManifestFile }, { checkCorpusBytes, corpusBytes, corpusSpecOf }, { registerManifestCorpora }] = await Promise.all([
    import("../../ml/manifest.ts"),
    import("../../ml/data/corpus.ts"),
    import("../../market/contributor.ts"),
  ]);
  const manifest = await readManifestFile(opts.manifest as string);
  const only = opts.corpus as string | undefined;
  if (only !== undefined && !manifest.corpora.some((c) => c.name === only))
    throw new InputError(`--corpus ${only}: unknown corpus, the manifest has ${manifest.corpora.map((c) => c.name).join(", ")}`);
  const payout = opts.payout !== undefined ? parseAddress("--payout", opts.payout as string) : undefined;
  const termsHash = opts.termsHash as string | undefined;
  if (termsHash !== undefined && !(isHex(termsHash) && termsHash.length === 66)) throw new InputError(`--terms-hash must be a 0x-prefixed 32-byte hash, got ${JSON.stringify(termsHash)}`);
  // INVARIANT: a contributor registers only content it holds: the local bytes must have the manifest's id.
  // a data set by content id (no package) must be in the content store, which checks its CID (pouw data add puts it there)
  const held = manifest.corpora.filter((c) => c.package === undefined && (only === undefined || c.name === only));
  if (held.length > 0) await checkStoredCorpora(held, opts);
  manifest.corpora.forEach((c, i) => {
    if (c.package !== undefined && (only === undefined || c.name === only)) checkCorpusBytes(c, corpusBytes(corpusSpecOf(manifest, i)).bytes, `package ${c.package}`);
  });
  const ctx = await marketContext(opts as never);
  const dataRegistry = (await getRegistries(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket })).data;
  if (dataRegistry === undefined) throw new InputError(`JobMarket ${ctx.deployment.jobMarket} has no DataRegistry (it was deployed with --no-registries)`);
  const regs = await registerManifestCorpora(ctx.clients, dataRegistry, manifest, { ...(payout ? { payout } : {}), ...(termsHash ? { termsHash: termsHash as Hex } : {}), ...(only ? { only } : {}) });
  if (opts.json) {
    process.stdout.write(
      JSON.stringify({ dataRegistry, corpora: regs.map(({ tx, ...r }) => ({ ...r, corpusId: r.corpusId.toString(), gasUsed: r.gasUsed.toString(), tx: tx ? txJson(tx) : null })) }) + "\n",
    );
    return;
  }
  for (const r of regs) {
    process.stdout.write(
      r.status === "registered"
        ? `corpus ${r.name} (${r.contentId}) registered as DataRegistry corpus ${r.corpusId}, payout ${r.payout}\n${txLines(r.tx ? [r.tx] : [])}`
        : `corpus ${r.name} (${r.contentId}) is already DataRegistry corpus ${r.corpusId} (registered by ${r.owner}, payout ${r.payout})\n`,
    );
  }
};

/** `claim`'s handler (the definitions and flags are in corpus.ts). */
export const claim = async (opts: Record<string, string | boolean | undefined>) => {
  const { claimContributorCredit } = await import("../../market/contributor.ts");
  const ctx = await marketContext(opts as never);
  const r = await claimContributorCredit(ctx.clients, ctx.deployment);
  const total = r.dataShares.reduce((s, c) => s + c.amount, 0n);
  if (opts.json) {
    process.stdout.write(
      JSON.stringify({
        account: r.account,
        claimed: r.claimed.toString(),
        symbol: ctx.symbol,
        dataShares: r.dataShares.map((c) => ({
          jobId: c.jobId.toString(),
          corpusId: c.corpusId.toString(),
          amount: c.amount.toString(),
          blockNumber: c.blockNumber.toString(),
          tx: c.transactionHash,
        })),
        txs: r.tx ? [txJson(r.tx)] : [],
      }) + "\n",
    );
    return;
  }
  const shares = r.dataShares.map((c) => `  job ${c.jobId}, corpus ${c.corpusId}: ${fmt(c.amount)} ${ctx.symbol} credited in block ${c.blockNumber} (tx ${c.transactionHash})\n`).join("");
  process.stdout.write(
    `${r.account}: ${r.dataShares.length} data share${r.dataShares.length === 1 ? "" : "s"} credited, ${fmt(total)} ${ctx.symbol} in all\n${shares}` +
      (r.tx ? `claimed ${fmt(r.claimed)} ${ctx.symbol}\n${txLines([r.tx])}` : "nothing to claim\n"),
  );
};
