/**
 * `pouw provenance verify --weights W --record R --rpc URL [--deployment FILE] [--data-registry ADDR]
 *  [--anchor ADDR] [--corpus NAME=FILE ...] [--json]`: checks a provenance record against the chain and
 * the files (docs/data.md) and prints one line per check. Exit 0 when every check passes, 1 naming the
 * first failing item, 2 on bad input. Read-only: needs no key.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { createPublicClient, getAddress, http, isAddress, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { readDeployment, type Deployment } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
import { UnknownCorpusError } from "../../ml/index.ts";
import {
  parseProvenanceBytes,
  provenanceVerdict,
  ProvenanceMismatchError,
  readInputFile,
  verifyProvenance,
  viemProvenanceChain,
  packageCorpusBytes,
  type CorpusBytesLoader,
} from "../../provenance/index.ts";

type Opts = { weights: string; record: string; rpc: string; deployment?: string; dataRegistry?: string; anchor?: string; corpus: string[]; json?: boolean };

function addressFlag(flag: string, text: string | undefined): Address | undefined {
  if (text === undefined) return undefined;
  if (!isAddress(text)) throw new InputError(`${flag} must be an address, got ${JSON.stringify(text)}`);
  return getAddress(text);
}

function rpcUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`--rpc must be an http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InputError(`--rpc must be an http(s) URL, got ${JSON.stringify(text)}`);
  return text;
}

export function registerProvenance(program: Command): void {
  const provenance = program.command("provenance").description("provenance records of finalized jobs (docs/data.md)");
  provenance
    .command("verify")
    .description("check a provenance record against the chain and the files; names every failing item")
    .requiredOption("--weights <file>", "the job's final weights (final.safetensors)")
    .requiredOption("--record <file>", "the provenance record (provenance.json)")
    .requiredOption("--rpc <url>", "JSON-RPC URL of the chain the job ran on")
    .option("--deployment <file>", "deployment file: pins chain id and JobMarket (default: trust the JobMarket the record names)")
    .option("--data-registry <address>", "DataRegistry to check the corpora against (default: the deployment's, if any)")
    .option("--anchor <address>", "contract holding provenanceOf (default: the deployment's JobRecords, else the one the record names)")
    .option("--corpus <name=file>", "local bytes of a corpus (canonical serialisation, docs/data.md); repeatable", (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option("--json", "print a JSON report")
    .action(async (opts: Opts) => {
      const url = rpcUrl(opts.rpc);
      const recordBytes = await readInputFile(opts.record, "record");
      const weightsBytes = await readInputFile(opts.weights, "weights");
      const { record } = parseProvenanceBytes(recordBytes); // exit 2 here on a malformed record
      const corpusFiles = new Map<string, string>();
      for (const spec of opts.corpus) {
        const eq = spec.indexOf("=");
        if (eq <= 0) throw new InputError(`--corpus must be NAME=FILE, got ${JSON.stringify(spec)}`);
        const name = spec.slice(0, eq);
        if (!record.corpora.some((c) => c.name === name)) throw new UnknownCorpusError(`--corpus ${name}: unknown corpus, the record's corpora are ${record.corpora.map((c) => c.name).join(", ")}`);
        corpusFiles.set(name, spec.slice(eq + 1));
      }
      const client = createPublicClient({ transport: http(url, { retryCount: 1, timeout: 15_000 }) }) as unknown as PublicClient<Transport, Chain>;
      let deployment: (Deployment & { dataRegistry?: Address; provenanceAnchor?: Address }) | undefined;
      if (opts.deployment) deployment = await readDeployment(opts.deployment);
      const dataRegistry = addressFlag("--data-registry", opts.dataRegistry) ?? deployment?.dataRegistry;
      const jobMarket = deployment?.jobMarket ?? record.jobMarket;
      const jobRecords = deployment?.jobRecords ?? record.jobRecords;
      const anchor = addressFlag("--anchor", opts.anchor) ?? deployment?.provenanceAnchor ?? jobRecords;
      const chain = viemProvenanceChain(client, { jobMarket, jobRecords, provenanceAnchor: anchor, ...(dataRegistry ? { dataRegistry } : {}) });
      const corpusBytes: CorpusBytesLoader = async (corpus, manifest) => {
        const file = corpusFiles.get(corpus.name);
        if (file === undefined) return packageCorpusBytes(corpus, manifest);
        try {
          return new Uint8Array(await readFile(file));
        } catch (err) {
          throw new InputError(`cannot read corpus file ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
        }
      };
      const report = await verifyProvenance({ recordBytes, weightsBytes, chain, ...(deployment ? { deployment } : {}), corpusBytes });
      if (opts.json) {
        process.stdout.write(JSON.stringify(report) + "\n");
      } else {
        const lines = report.checks.map((c) => `${c.status === "ok" ? "ok  " : c.status === "fail" ? "FAIL" : "skip"}  ${c.item}: ${c.detail}`);
        lines.push(provenanceVerdict(report));
        process.stdout.write(lines.join("\n") + "\n");
      }
      if (!report.ok) throw new ProvenanceMismatchError(report.failures);
    });
}
