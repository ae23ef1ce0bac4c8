/**
 * `pouw generate --manifest M (--out DIR | --prompts-id) [--weights FILE | --store DIR] [--json]`: a generate job's
 * samples offline (docs/kinds.md). --out draws every sample with the exact sampler and writes DIR/dataset.json (the
 * dataset: provenance naming the model, the prompts and the manifest hash, and every sample), printing its CID and
 * the chain of sample hashes the job's last leaf binds; --prompts-id prints the CID the manifest's prompts.contentId
 * must have. Exit 2 on bad input.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { EVALUATE_KIND, evalSetIdOf, parseEvaluateManifest } from "../../evaluate/index.ts";
import { generatedDataset, generateJob, parseGenerateManifest, type GenerateManifest } from "../../kinds/index.ts";
import { ManifestError } from "../../ml/errors.ts";
import { LocalDirStore } from "../../store/index.ts";

type Opts = { manifest: string; out?: string; promptsId?: boolean; weights?: string; store?: string; json?: boolean };

async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (err) {
    throw new InputError(`cannot read ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  }
}

async function weightsOf(m: GenerateManifest, opts: Opts): Promise<Uint8Array> {
  if (opts.weights && opts.store) throw new InputError("give --weights or --store, not both");
  if (opts.weights) return readBytes(opts.weights, "weights file");
  if (opts.store) return new LocalDirStore(opts.store).get(m.weightsCid);
  throw new InputError("give the model as --weights FILE or --store DIR (holding the manifest's weightsCid)");
}

export function registerGenerate(program: Command): void {
  program
    .command("generate")
    .description("run a generate job offline: exact seeded sampling from a committed char-transformer, one sample per prompt, the dataset and its CID (docs/kinds.md)")
    .requiredOption("--manifest <file>", "generate manifest JSON (kind pouw/generate-job)")
    .option("--out <dir>", "draw every sample; write dataset.json here")
    .option("--prompts-id", "print the content id of the manifest's prompt windows")
    .option("--weights <file>", "the model file (must hash to weightsCid)")
    .option("--store <dir>", "content store holding weightsCid")
    .option("--json", "print JSON")
    .action(async (opts: Opts) => {
      if ([opts.out, opts.promptsId].filter((x) => x !== undefined).length !== 1) throw new InputError("give exactly one of --out DIR, --prompts-id");
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder().decode(await readBytes(opts.manifest, "manifest")));
      } catch (err) {
        if (err instanceof InputError) throw err;
        throw new ManifestError(`generate manifest is not valid JSON: ${(err as Error).message}`, { cause: err });
      }
      const manifest = parseGenerateManifest(json);
      if (opts.promptsId) {
        const m = manifest;
        process.stdout.write(`${await evalSetIdOf(parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, model: m.model, weightsCid: m.weightsCid, corpus: m.corpus, data: m.data, evalSet: { split: "test", examples: m.prompts.examples, contentId: m.prompts.contentId }, harness: m.harness }))}\n`);
        return;
      }
      const d = generatedDataset(await generateJob(manifest, await weightsOf(manifest, opts), { jobId: 0n, examplesPerSegment: 1 }));
      await mkdir(opts.out!, { recursive: true });
      const path = join(opts.out!, "dataset.json");
      await writeFile(path, d.bytes);
      const r = { samples: d.samples.length, tokens: manifest.sampling.tokens, datasetCid: d.cid, chain: d.chain, path };
      process.stdout.write(opts.json ? JSON.stringify(r) + "\n" : `${r.samples} samples of ${r.tokens} tokens\ndataset ${r.datasetCid}\nchain ${r.chain}\n${path}\n`);
    });
}
