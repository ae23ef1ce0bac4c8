/**
 * The handlers of `pouw data` (data.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import { InputError } from "../../errors/index.ts";
import { configFrom } from "../context.ts";

type Opts = { arch?: string; manifest?: string; format?: string; task?: string; label?: string; columns?: string; split?: string; name?: string; json?: boolean; store?: string; stateDir?: string };

/** `add`'s handler (the definitions and flags are in data.ts). */
export const add = async (path: string, opts: Opts) => {
  if (opts.format === "safetensors") return addBase(path, opts);
  if (opts.format !== "csv" && opts.format !== "jsonl" && opts.format !== "text") throw new InputError(`--format must be csv, jsonl or text (or safetensors, a base model), got ${JSON.stringify(opts.format)}`);
  if (opts.arch !== undefined || opts.manifest !== undefined) throw new InputError(`--arch and --manifest apply to --format safetensors only, not ${opts.format}`);
  const format = opts.format;
  if (format !== "text" && opts.task !== "classification" && opts.task !== "regression") throw new InputError(`--task must be classification or regression, got ${JSON.stringify(opts.task)}`);
  const config = configFrom(opts);
  const [{ addDataset, addTextDataset }, { LocalDirStore }] = await Promise.all([import("../../data/index.ts"), import("../../store/index.ts")]);
  const store = new LocalDirStore(config.storeDir);
  const added =
    format === "text"
      ? await addTextDataset(path, { split: opts.split, ...(opts.name !== undefined ? { name: opts.name } : {}) }, store)
      : await addDataset(
          path,
          { format, task: opts.task as "classification" | "regression", label: opts.label, split: opts.split, name: opts.name ?? "my-data", ...(opts.columns === undefined ? {} : { columns: opts.columns.split(",") }) },
          store,
        );
  if (opts.json) {
    process.stdout.write(JSON.stringify({ cid: added.cid, bytes: added.bytes, store: config.storeDir, schema: added.schema, fragment: added.fragment }, null, 2) + "\n");
    return;
  }
  const s = added.schema;
  const summary =
    "tokens" in s
      ? `${s.tokens} tokens (${s.tokens - s.split.testTokens} train, ${s.split.testTokens} held out) from ${s.files.length} file${s.files.length === 1 ? "" : "s"}, a byte vocabulary of ${s.vocabulary.length}`
      : `${s.rows} rows (${s.rows - s.split.testRows} train, ${s.split.testRows} held out), ${s.columns.length} features, label ${JSON.stringify(s.label.name)} ${s.label.type === "class" ? `with ${s.label.classes.length} classes` : "a float32 value (regression)"}`;
  process.stdout.write(
    [
      added.cid,
      `${summary}; ${added.bytes} canonical bytes in ${config.storeDir}`,
      "manifest fragment (add licence and payoutAddress to the corpus, then optimizer, training, numerics, policy):",
      JSON.stringify(added.fragment, null, 2),
    ].join("\n") + "\n",
  );
};

/** `add --format safetensors`: a base model from outside the market, checked against the declared char-transformer. */
async function addBase(path: string, opts: Opts): Promise<void> {
  const config = configFrom(opts);
  const [{ addSafetensorsFile }, { LocalDirStore }] = await Promise.all([import("../../data/index.ts"), import("../../store/index.ts")]);
  const added = await addSafetensorsFile(path, { ...(opts.arch !== undefined ? { arch: opts.arch } : {}), ...(opts.manifest !== undefined ? { manifest: opts.manifest } : {}) }, new LocalDirStore(config.storeDir));
  if (opts.json) {
    process.stdout.write(JSON.stringify({ cid: added.cid, bytes: added.bytes, store: config.storeDir, weights: added.weights, tensors: added.tensors, sourceDtypes: added.sourceDtypes, fragment: added.fragment }, null, 2) + "\n");
    return;
  }
  process.stdout.write(
    [
      added.cid,
      `a char-transformer base: ${added.tensors} tensors, ${added.weights} weights (from ${added.sourceDtypes.join(", ")}, exact in float32); ${added.bytes} canonical bytes in ${config.storeDir}`,
      "manifest fragment (add the corpora, data, adapter or distill block, optimizer, training, numerics bitwise-v2, policy):",
      JSON.stringify(added.fragment, null, 2),
    ].join("\n") + "\n",
  );
}
