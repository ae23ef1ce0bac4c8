/**
 * `pouw evaluate --manifest M (--out DIR | --verify DIR | --eval-set-id) [--weights FILE | --store DIR]`:
 * an evaluate job (docs/data.md). --out runs it and writes DIR/outputs.bin and DIR/evaluation.json;
 * --verify recomputes and compares byte for byte with DIR's files (exit 1 naming the first differing
 * example, with its Merkle proof); --eval-set-id prints the CID the manifest's evalSet.contentId must have.
 * Exit 2 on bad input.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import type { Hex } from "viem";
import { InputError } from "../../errors/index.ts";
import { EvaluationMismatchError, evalSetIdOf, parseEvaluateManifestJson, runEvaluation, verifyEvaluation, writeEvaluation, type EvaluateManifest } from "../../evaluate/index.ts";
import { LocalDirStore } from "../../store/index.ts";

type Opts = { manifest: string; out?: string; verify?: string; evalSetId?: boolean; weights?: string; store?: string; json?: boolean };

async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (err) {
    throw new InputError(`cannot read ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  }
}

async function weightsOf(m: EvaluateManifest, opts: Opts): Promise<Uint8Array> {
  if (opts.weights && opts.store) throw new InputError("give --weights or --store, not both");
  if (opts.weights) return readBytes(opts.weights, "weights file");
  if (opts.store) return new LocalDirStore(opts.store).get(m.weightsCid);
  throw new InputError("give the model as --weights FILE or --store DIR (holding the manifest's weightsCid)");
}

export function registerEvaluate(program: Command): void {
  program
    .command("evaluate")
    .description("run or verify an evaluate job: per-example outputs of a committed model on a content-addressed set, Merkle root (docs/data.md)")
    .requiredOption("--manifest <file>", "evaluate manifest JSON (kind pouw/evaluate-job)")
    .option("--out <dir>", "run the job; write outputs.bin and evaluation.json here")
    .option("--verify <dir>", "recompute and compare with the outputs.bin and evaluation.json in this directory")
    .option("--eval-set-id", "print the content id of the manifest's evaluation set")
    .option("--weights <file>", "the committed model file (must hash to weightsCid)")
    .option("--store <dir>", "content store holding weightsCid")
    .option("--json", "print JSON")
    .action(async (opts: Opts) => {
      const modes = [opts.out, opts.verify, opts.evalSetId].filter((x) => x !== undefined).length;
      if (modes !== 1) throw new InputError("give exactly one of --out DIR, --verify DIR, --eval-set-id");
      const manifest = parseEvaluateManifestJson(new TextDecoder().decode(await readBytes(opts.manifest, "manifest")));
      if (opts.evalSetId) {
        process.stdout.write(`${await evalSetIdOf(manifest)}\n`);
        return;
      }
      const weights = await weightsOf(manifest, opts);
      if (opts.out) {
        const r = await runEvaluation(manifest, weights);
        const paths = await writeEvaluation(opts.out, r);
        const e = r.evaluation;
        process.stdout.write(opts.json ? JSON.stringify(e) + "\n" : `${e.examples} examples: mean loss ${e.meanLoss.toFixed(6)}, accuracy ${(100 * e.accuracy).toFixed(2)}%\noutputs root ${e.outputsRoot}\n${paths.evaluationPath}\n`);
        return;
      }
      const dir = opts.verify!;
      let claimed: { outputsRoot?: unknown };
      try {
        claimed = JSON.parse(new TextDecoder().decode(await readBytes(join(dir, "evaluation.json"), "evaluation"))) as { outputsRoot?: unknown };
      } catch (err) {
        if (err instanceof InputError) throw err;
        throw new InputError(`${join(dir, "evaluation.json")} is not valid JSON`, { cause: err });
      }
      if (typeof claimed.outputsRoot !== "string" || !/^0x[0-9a-f]{64}$/.test(claimed.outputsRoot)) throw new InputError("evaluation.json has no outputsRoot");
      const outputsBytes = await readBytes(join(dir, "outputs.bin"), "outputs");
      const check = await verifyEvaluation(manifest, weights, { root: claimed.outputsRoot as Hex, outputsBytes });
      if (opts.json) process.stdout.write(JSON.stringify(check, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) + "\n");
      if (check.ok) {
        if (!opts.json) process.stdout.write(`evaluation verified: ${check.examples} examples byte-equal, root ${check.root}\n`);
        return;
      }
      if (!opts.json && check.claim) process.stdout.write(`challenge: example ${check.claim.index}, claimed leaf proven against the root with ${check.claim.proof.length} siblings\n`);
      throw new EvaluationMismatchError(`evaluation rejected (${check.reason}): ${check.detail}`);
    });
}
