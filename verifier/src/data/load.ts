/**
 * A training run's view of a data set by content id: fetch the canonical bytes from the content store by the
 * manifest's contentId, check them, decode them (tabular.ts) and split them by the schema's rule.
 *
 * INVARIANT: a run never trains or audits on bytes whose CID differs from the manifest's contentId: the store's `get`
 * verifies the CID (CidMismatchError), and the bytes are checked again by checkCorpusBytes (CorpusMismatchError).
 */
import { ManifestError } from "../ml/errors.ts";
import { checkCorpusBytes } from "../ml/data/corpus.ts";
import type { LabelledImages } from "../ml/data/mnist.ts";
import type { ContentStore } from "../store/index.ts";
import { DATA_MAX_FILE_BYTES, decodeTabular, taskOf, type TabularSchema } from "./tabular.ts";
import { decodeGenerated, generatedText, isGeneratedBytes } from "./generated.ts";
import { decodeText, type TextSchema } from "./text.ts";

/**
 * Largest canonical data set fetched: a 64 MiB CSV of one-character cells ("0,") has at most 32 Mi cells, stored as
 * 4 bytes each, plus the schema and labels.
 */
export const TABULAR_MAX_CANONICAL_BYTES = 2 * DATA_MAX_FILE_BYTES + 16 * 1024 * 1024;

export type TabularSplit = { train: LabelledImages; test: LabelledImages; canonicalBytes: Uint8Array; width: number; schema: TabularSchema };

/**
 * Splits decoded rows: the last `split.testRows` rows are held out, the others train, each in file order; a regression
 * data set's `targets` are split with them.
 */
export function splitTabular(schema: TabularSchema, features: Float32Array, labels: Uint8Array, canonicalBytes: Uint8Array, targets?: Float32Array): TabularSplit {
  const width = schema.columns.length;
  const trainCount = schema.rows - schema.split.testRows;
  const part = (from: number, to: number): LabelledImages => {
    const p: LabelledImages = { images: features.subarray(from * width, to * width), labels: labels.subarray(from, to), count: to - from };
    if (targets) p.targets = targets.subarray(from, to);
    return p;
  };
  return { train: part(0, trainCount), test: part(trainCount, schema.rows), canonicalBytes, width, schema };
}

/**
 * The data set of a tabular-mlp manifest's corpus, fetched by contentId and checked; ManifestError when the model's
 * task, inputs or classes are not the data set's.
 */
export async function loadTabularCorpus(corpus: { name: string; contentId: string }, store: ContentStore, model: { inputs: number; classes?: number | undefined; task?: "classification" | "regression" | undefined }): Promise<TabularSplit> {
  const bytes = await store.get(corpus.contentId, { maxBytes: TABULAR_MAX_CANONICAL_BYTES });
  checkCorpusBytes(corpus, bytes, "the content store");
  const d = decodeTabular(bytes);
  if (d.schema.columns.length !== model.inputs) {
    throw new ManifestError(`manifest field model.inputs: ${model.inputs}, but data set ${corpus.contentId} has ${d.schema.columns.length} feature columns`);
  }
  const task = model.task ?? "classification";
  if (taskOf(d.schema) !== task) {
    throw new ManifestError(`manifest field model.task: ${task}, but data set ${corpus.contentId} is a ${taskOf(d.schema)} set (label ${JSON.stringify(d.schema.label.name)} of type ${d.schema.label.type})`);
  }
  if (d.schema.label.type === "class" && d.schema.label.classes.length !== model.classes) {
    throw new ManifestError(`manifest field model.classes: ${model.classes}, but data set ${corpus.contentId} has ${d.schema.label.classes.length} classes`);
  }
  return splitTabular(d.schema, d.features, d.labels, bytes, d.targets);
}

/** Largest canonical text fetched: one byte per input byte, plus the schema. */
export const TEXT_MAX_CANONICAL_BYTES = DATA_MAX_FILE_BYTES + 16 * 1024 * 1024;

export type TextSplit = { train: Uint8Array; test: Uint8Array; canonicalBytes: Uint8Array; schema: TextSchema };

/**
 * The text of a char-transformer manifest's corpus by content id (a pouw-text-1 data set, or a generate job's
 * pouw-generated-1 dataset: generated.ts), fetched and checked, split into the training head
 * and the held-out tail (the schema's `split.testTokens`); ManifestError when model.vocab is not the data's vocabulary.
 */
export async function loadTextCorpus(corpus: { name: string; contentId: string }, store: ContentStore, model: { vocab?: number | undefined }): Promise<TextSplit> {
  const bytes = await store.get(corpus.contentId, { maxBytes: TEXT_MAX_CANONICAL_BYTES });
  checkCorpusBytes(corpus, bytes, "the content store");
  // a generate job's dataset by its CID: its samples' text under the text rules (generated.ts)
  const d = isGeneratedBytes(bytes) ? generatedText(decodeGenerated(bytes)) : decodeText(bytes);
  if (d.schema.vocabulary.length !== model.vocab) {
    throw new ManifestError(`manifest field model.vocab: ${model.vocab}, but data set ${corpus.contentId} has a vocabulary of ${d.schema.vocabulary.length} bytes`);
  }
  const cut = d.schema.tokens - d.schema.split.testTokens;
  return { train: d.ids.subarray(0, cut), test: d.ids.subarray(cut), canonicalBytes: bytes, schema: d.schema };
}
