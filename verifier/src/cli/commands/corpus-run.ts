/**
 * The handlers of `pouw corpus` (corpus.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls one flow (ml/data/
 * corpus.ts, market/contributor.ts) and renders its result as text or --json.
 */
import { isHex, type Hex } from "viem";
import { InputError } from "../../errors/index.ts";
import { DATASETS, DEFAULT_SOTU_YEARS, parseDatasetName, type CorpusSpec } from "../../ml/data/corpus.ts";
import { configFrom, fmt, marketContext, parseAddress, txJson, txLines } from "../context.ts";

/** `--years`: YEAR or FIRST-LAST. */
export function parseYears(text: string): [number, number] {
  const m = /^(\d{4})(?:[-:](\d{4}))?$/.exec(text);
  if (!m) throw new InputError(`--years must be YEAR or FIRST-LAST (e.g. 1990-2021), got ${JSON.stringify(text)}`);
  const first = Number(m[1]);
  const last = Number(m[2] ?? m[1]);
  if (first > last) throw new InputError(`--years ${text}: first year is after last year`);
  return [first, last];
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
  const [{ readManifestFile }, { registerCorpora }] = await Promise.all([import("../../ml/manifest.ts"), import("../../market/contributor.ts")]);
  const manifest = await readManifestFile(opts.manifest as string);
  const only = opts.corpus as string | undefined;
  const payout = opts.payout !== undefined ? parseAddress("--payout", opts.payout as string) : undefined;
  const termsHash = opts.termsHash as string | undefined;
  if (termsHash !== undefined && !(isHex(termsHash) && termsHash.length === 66)) throw new InputError(`--terms-hash must be a 0x-prefixed 32-byte hash, got ${JSON.stringify(termsHash)}`);
  const { dataRegistry, registrations: regs } = await registerCorpora(
    manifest,
    { ...(payout ? { payout } : {}), ...(termsHash ? { termsHash: termsHash as Hex } : {}), ...(only ? { only } : {}), storeDir: configFrom(opts as never).storeDir },
    () => marketContext(opts as never),
  );
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
