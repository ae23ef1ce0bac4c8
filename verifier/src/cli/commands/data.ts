/**
 * `pouw data add PATH --format csv|jsonl|text [--task classification|regression] [--label COL] [--columns A,B:float32,...]
 *   [--split last:N|last:P%] [--name NAME] [--store DIR] [--json]`: parse the buyer's own file (text: a UTF-8 file or
 * a folder of .txt files) into canonical bytes (docs/data.md "Your own data"), put them into the content store (default <state-dir>/store, what `pouw serve` and `--ipfs` serve) and
 * print the CID, the schema and the manifest fragment naming it. Bad input: one line naming the row and column, exit 2.
 */
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { configFrom, withConfig } from "../context.ts";

type Opts = { format?: string; task?: string; label?: string; columns?: string; split?: string; name?: string; json?: boolean; store?: string; stateDir?: string };

export function registerData(program: Command): void {
  const data = program.command("data").description("the buyer's own data sets by content id: parse, publish, print the manifest fragment (docs/data.md)");
  withConfig(
    data
      .command("add <path>")
      .description("parse a CSV or JSONL file (pouw-tabular-1) or a UTF-8 text file or folder of .txt files (pouw-text-1) into canonical bytes, store them under their CID and print the manifest fragment")
      .requiredOption("--format <format>", "csv | jsonl | text")
      .option("--label <column>", "label column (classes, or the float32 value with --task regression)", "label")
      .option("--task <task>", "classification (the label names classes) | regression (the label is a float32 decimal)", "classification")
      .option("--columns <list>", "feature columns, comma-separated, each NAME or NAME:float32 (default: every column but the label)")
      .option("--split <rule>", "held-out rows (text: tokens): last:N or last:P% (P in 1..99)", "last:10%")
      .option("--name <name>", "corpus name in the manifest fragment (default my-data, text my-text)")
      .option("--json", "print JSON"),
  ).action(async (path: string, opts: Opts) => {
    if (opts.format !== "csv" && opts.format !== "jsonl" && opts.format !== "text") throw new InputError(`--format must be csv, jsonl or text, got ${JSON.stringify(opts.format)}`);
    if (opts.format === "text") {
      const config = configFrom(opts);
      const [{ addTextDataset }, { LocalDirStore }] = await Promise.all([import("../../data/index.ts"), import("../../store/index.ts")]);
      const added = await addTextDataset(path, { split: opts.split, ...(opts.name !== undefined ? { name: opts.name } : {}) }, new LocalDirStore(config.storeDir));
      if (opts.json) {
        process.stdout.write(JSON.stringify({ cid: added.cid, bytes: added.bytes, store: config.storeDir, schema: added.schema, fragment: added.fragment }, null, 2) + "\n");
        return;
      }
      const s = added.schema;
      process.stdout.write(
        [
          `${added.cid}`,
          `${s.tokens} tokens (${s.tokens - s.split.testTokens} train, ${s.split.testTokens} held out) from ${s.files.length} file${s.files.length === 1 ? "" : "s"}, a byte vocabulary of ${s.vocabulary.length}; ${added.bytes} canonical bytes in ${config.storeDir}`,
          "manifest fragment (add licence and payoutAddress to the corpus, then optimizer, training, numerics, policy):",
          JSON.stringify(added.fragment, null, 2),
        ].join("\n") + "\n",
      );
      return;
    }
    if (opts.task !== "classification" && opts.task !== "regression") throw new InputError(`--task must be classification or regression, got ${JSON.stringify(opts.task)}`);
    const config = configFrom(opts);
    const [{ addDataset }, { LocalDirStore }] = await Promise.all([import("../../data/index.ts"), import("../../store/index.ts")]);
    const columns = opts.columns === undefined ? undefined : opts.columns.split(",");
    const added = await addDataset(path, { format: opts.format, task: opts.task, label: opts.label, split: opts.split, name: opts.name ?? "my-data", ...(columns ? { columns } : {}) }, new LocalDirStore(config.storeDir));
    if (opts.json) {
      process.stdout.write(JSON.stringify({ cid: added.cid, bytes: added.bytes, store: config.storeDir, schema: added.schema, fragment: added.fragment }, null, 2) + "\n");
      return;
    }
    const s = added.schema;
    process.stdout.write(
      [
        `${added.cid}`,
        `${s.rows} rows (${s.rows - s.split.testRows} train, ${s.split.testRows} held out), ${s.columns.length} features, label ${JSON.stringify(s.label.name)} ${s.label.type === "class" ? `with ${s.label.classes.length} classes` : "a float32 value (regression)"}; ${added.bytes} canonical bytes in ${config.storeDir}`,
        "manifest fragment (add licence and payoutAddress to the corpus, then optimizer, training, numerics, policy):",
        JSON.stringify(added.fragment, null, 2),
      ].join("\n") + "\n",
    );
  });
}
