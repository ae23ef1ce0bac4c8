/**
 * `pouw data add PATH --format csv|jsonl|text|safetensors [--arch JSON | --manifest FILE] [--task classification|regression] [--label COL] [--columns A,B:float32,...]
 *   [--split last:N|last:P%] [--name NAME] [--store DIR] [--json]`: parse the buyer's own file (text: a UTF-8 file or
 * a folder of .txt files) into canonical bytes (docs/data.md "Your own data"), put them into the content store (default <state-dir>/store, what `pouw serve` and `--ipfs` serve) and
 * print the CID, the schema and the manifest fragment naming it. Bad input: one line naming the row and column, exit 2.
 * safetensors: a base model from outside the market, checked against the declared char-transformer (--arch or the
 * manifest's model block) and stored as the checkpoint an adapter or distillation manifest names by CID.
 */
import type { Command } from "commander";
import { withConfig } from "../options.ts";
import { lazyAction } from "../lazy-action.ts";

export function registerData(program: Command): void {
  const data = program.command("data").description("the buyer's own data sets by content id: parse, publish, print the manifest fragment (docs/data.md)");
  withConfig(
    data
      .command("add <path>")
      .description(
        "parse a CSV or JSONL file (pouw-tabular-1), a UTF-8 text file or folder of .txt files (pouw-text-1), or a safetensors base model (checked against --arch or --manifest) into canonical bytes, store them under their CID and print the manifest fragment",
      )
      .requiredOption("--format <format>", "csv | jsonl | text | safetensors")
      .option("--arch <json>", 'safetensors: the char-transformer the file must be, as a manifest model block (e.g. \'{"arch":"char-transformer","layers":1,"dModel":16,"heads":2,"context":16}\')')
      .option("--manifest <file>", "safetensors: take the declared char-transformer from this manifest's model block")
      .option("--label <column>", "label column (classes, or the float32 value with --task regression)", "label")
      .option("--task <task>", "classification (the label names classes) | regression (the label is a float32 decimal)", "classification")
      .option("--columns <list>", "feature columns, comma-separated, each NAME or NAME:float32 (default: every column but the label)")
      .option("--split <rule>", "held-out rows (text: tokens): last:N or last:P% (P in 1..99)", "last:10%")
      .option("--name <name>", "corpus name in the manifest fragment (default my-data, text my-text)")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./data-run.ts"), "add"));
}
