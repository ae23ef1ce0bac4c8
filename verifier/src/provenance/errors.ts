/**
 * Typed errors of provenance records. Every error names the item it is about (`item`), the same name
 * the verifier prints for a failing check ("weights", "record hash", "segment 2 trace root", ...).
 */
import { InputError, PouwError, type PouwErrorOptions } from "../errors/index.ts";

/** A record file is unreadable, not JSON, or not a valid pouw-provenance-1 record. CLI exit 2. */
export class ProvenanceRecordError extends InputError {
  override name = "ProvenanceRecordError";
  override readonly code: string = "PROVENANCE_RECORD";
  readonly item: string;
  constructor(item: string, message: string, options: PouwErrorOptions = {}) {
    super(message, options);
    this.item = item;
  }
}

/** The inputs of a record disagree (missing segments, weights that are not the committed final state). */
export class ProvenanceBuildError extends PouwError {
  override name = "ProvenanceBuildError";
  override readonly code: string = "PROVENANCE_BUILD";
}

/** A provenance check failed. `item` names the first failing check; `failures` lists all of them. CLI exit 1. */
export class ProvenanceMismatchError extends PouwError {
  override name = "ProvenanceMismatchError";
  override readonly code: string = "PROVENANCE_MISMATCH";
  readonly item: string;
  readonly failures: readonly { item: string; detail: string }[];
  constructor(failures: readonly { item: string; detail: string }[]) {
    const first = failures[0]!;
    super(`provenance check failed: ${first.item}: ${first.detail}${failures.length > 1 ? ` (and ${failures.length - 1} more: ${failures.slice(1).map((f) => f.item).join(", ")})` : ""}`);
    this.item = first.item;
    this.failures = failures;
  }
}
