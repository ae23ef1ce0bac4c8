/**
 * `pouw adapter merge --manifest FILE --base CID --adapter CID|PATH --out FILE [--store DIR] [--base-store DIR]`: an adapter job's
 * checkpoint (its deliverable, or any committed state of it) folded into its frozen base, written as a checkpoint in the
 * base's format (ml/adapters/merge.ts). The manifest gives the adapter's targets and scaling and binds the base:
 * `--base` must be the CID it names. Base and adapter are read from the content store (default <state-dir>/store) and
 * checked against their CIDs; a bad input is one line naming it, exit 2.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { configFrom, withConfig } from "../context.ts";

type Opts = { manifest: string; base: string; adapter: string; out: string; baseStore?: string; json?: boolean; store?: string; stateDir?: string };

const CID = /^b[a-z2-7]{58}$/;

export function registerAdapter(program: Command): void {
  const adapter = program.command("adapter").description("LoRA adapters on a frozen base: merge an adapter job's weights into its base (docs/data.md)");
  withConfig(
    adapter
      .command("merge")
      .description("write W + (alpha/rank) * A.B of an adapter checkpoint over its base as a char-transformer checkpoint in the base's format")
      .requiredOption("--manifest <file>", "the adapter job's manifest (targets, rank, alpha; names the base)")
      .requiredOption("--base <cid>", "the base checkpoint's CID (must be the manifest's init.checkpointCid)")
      .requiredOption("--adapter <cid|path>", "the adapter checkpoint: a CID in the store, or a file")
      .requiredOption("--out <file>", "where to write the merged checkpoint")
      .option("--base-store <dir>", "another store to read the base from when the store lacks it (copied into the store)")
      .option("--json", "print JSON"),
  ).action(async (opts: Opts) => {
    if (!CID.test(opts.base)) throw new InputError(`--base must be a CIDv1 base32 string (bafkrei...), got ${JSON.stringify(opts.base)}`);
    const [{ readManifestFile }, { mergeCheckpoint }, { LocalDirStore, cidOf }, { LayeredStore }, { CheckpointError }] = await Promise.all([
      import("../../ml/manifest.ts"),
      import("../../ml/adapters/merge.ts"),
      import("../../store/index.ts"),
      import("../../store/layered.ts"),
      import("../../ml/errors.ts"),
    ]);
    const manifest = await readManifestFile(opts.manifest);
    if (!manifest.adapter || !("checkpointCid" in manifest.init)) throw new InputError(`manifest ${opts.manifest} has no adapter block: nothing to merge`);
    if (manifest.init.checkpointCid !== opts.base) throw new InputError(`--base ${opts.base} is not the base manifest ${opts.manifest} names (${manifest.init.checkpointCid}): the adapter was trained on that one`);
    const store = new LocalDirStore(configFrom(opts).storeDir);
    const baseBytes = await (opts.baseStore ? new LayeredStore(store, [new LocalDirStore(opts.baseStore)]) : store).get(opts.base);
    let adapterBytes: Uint8Array;
    if (CID.test(opts.adapter) && !existsSync(opts.adapter)) adapterBytes = await store.get(opts.adapter);
    else {
      try {
        adapterBytes = await readFile(opts.adapter);
      } catch (err) {
        throw new InputError(`cannot read --adapter ${opts.adapter} (${(err as NodeJS.ErrnoException).code ?? "error"}): give a readable file or a CID in the store`, { cause: err });
      }
    }
    let merged;
    try {
      merged = mergeCheckpoint(manifest, baseBytes, adapterBytes);
    } catch (err) {
      // the base is checked first (AdapterBaseError, an InputError); a CheckpointError here is the adapter file's
      if (err instanceof CheckpointError) throw new InputError(`--adapter ${opts.adapter} is not a state of manifest ${opts.manifest}'s adapter: ${err.shortMessage}`, { cause: err });
      throw err;
    }
    await writeFile(opts.out, merged.bytes);
    const cid = cidOf(merged.bytes);
    if (opts.json) {
      process.stdout.write(JSON.stringify({ out: opts.out, cid, bytes: merged.bytes.length, step: merged.step, jobId: merged.jobId.toString(), matrices: merged.matrices, base: opts.base }, null, 2) + "\n");
      return;
    }
    process.stdout.write(`${opts.out}: ${merged.matrices} adapted matrices of job ${merged.jobId} step ${merged.step} merged into base ${opts.base}; ${merged.bytes.length} bytes, CID ${cid}\n`);
  });
}
