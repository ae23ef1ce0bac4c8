/**
 * The buyer's own data by content id: `addDataset` parses a file (tabular.ts rules), publishes its canonical bytes to a
 * content store and returns the CID, the schema and the manifest fragment that names them (`pouw data add`).
 *
 * @example
 *   const added = await addDataset("iris.csv", { format: "csv", label: "species" }, new LocalDirStore(".pouw/store"));
 *   console.log(added.cid, added.fragment.model); // { arch: "tabular-mlp", hidden: 32, inputs: 4, classes: 3 }
 */
import type { ContentStore } from "../store/index.ts";
import { parseTabular, readDataFile, tabularContent, type ParseOptions, type TabularSchema } from "./tabular.ts";
import { readText, textContent, type TextSchema } from "./text.ts";

export * from "./tabular.ts";
export * from "./text.ts";
export * from "./safetensors.ts";
export { decimalToFloat32 } from "./decimal.ts";
export { loadTabularCorpus, loadTextCorpus, splitTabular, TABULAR_MAX_CANONICAL_BYTES, TEXT_MAX_CANONICAL_BYTES } from "./load.ts";

/** Default shape of the char-transformer the text fragment proposes. */
export const DEFAULT_TEXT_MODEL = { layers: 2, dModel: 64, heads: 2, context: 64 } as const;

/** Default hidden width of the tabular-mlp the fragment proposes. */
export const DEFAULT_TABULAR_HIDDEN = 32;

/** The manifest parts a data set fixes; the buyer fills in licence, payout, optimizer, training and policy. */
export type ManifestFragment = {
  model: { arch: "tabular-mlp"; hidden: number; inputs: number; classes: number } | { arch: "tabular-mlp"; task: "regression"; hidden: number; inputs: number };
  corpora: [{ name: string; contentId: string; declaredTokens: number }];
  data: { seed: number };
};

export type AddedDataset = { cid: string; bytes: number; schema: TabularSchema; fragment: ManifestFragment };

/** The manifest parts a text data set fixes: the char-transformer's vocabulary, the corpus by CID. */
export type TextManifestFragment = {
  model: { arch: "char-transformer"; vocab: number; layers: number; dModel: number; heads: number; context: number };
  corpora: [{ name: string; contentId: string; declaredTokens: number }];
  data: { seed: number };
};

export type AddedText = { cid: string; bytes: number; schema: TextSchema; fragment: TextManifestFragment };

/** Reads a UTF-8 file or a folder of .txt files (text.ts rules), puts its canonical bytes into `store`, returns its CID and fragment. */
export async function addTextDataset(path: string, options: { split?: string; name?: string; maxBytes?: number }, store: ContentStore): Promise<AddedText> {
  const data = readText(path, options);
  const { bytes, cid } = textContent(data);
  const stored = await store.put(bytes);
  if (stored !== cid) throw new Error(`content store returned ${stored} for bytes whose CID is ${cid}`);
  const s = data.schema;
  return {
    cid,
    bytes: bytes.length,
    schema: s,
    fragment: {
      model: { arch: "char-transformer", vocab: s.vocabulary.length, ...DEFAULT_TEXT_MODEL },
      corpora: [{ name: options.name ?? "my-text", contentId: cid, declaredTokens: s.tokens }],
      data: { seed: 0 },
    },
  };
}

/** Parses `path`, puts its canonical bytes into `store` and returns what a manifest needs to name it. */
export async function addDataset(path: string, options: ParseOptions & { name?: string; maxBytes?: number }, store: ContentStore): Promise<AddedDataset> {
  const data = parseTabular(readDataFile(path, options.maxBytes), options, options.maxBytes);
  const { bytes, cid } = tabularContent(data);
  const stored = await store.put(bytes);
  if (stored !== cid) throw new Error(`content store returned ${stored} for bytes whose CID is ${cid}`);
  const s = data.schema;
  return {
    cid,
    bytes: bytes.length,
    schema: s,
    fragment: {
      model: s.label.type === "class"
        ? { arch: "tabular-mlp", hidden: DEFAULT_TABULAR_HIDDEN, inputs: s.columns.length, classes: s.label.classes.length }
        : { arch: "tabular-mlp", task: "regression", hidden: DEFAULT_TABULAR_HIDDEN, inputs: s.columns.length },
      corpora: [{ name: options.name ?? "my-data", contentId: cid, declaredTokens: s.rows }],
      data: { seed: 0 },
    },
  };
}
export { GENERATED_FORMAT, GENERATED_VOCAB_SIZE, decodeGenerated, generatedText, isGeneratedBytes, type GeneratedFile } from "./generated.ts";
