/**
 * Text data sets by content id (docs/data.md "Your own text"): a UTF-8 file, or a folder of .txt files, turned into
 * canonical bytes `pouw-text-1` over a byte-level vocabulary derived from the data, whose CIDv1 a char-transformer
 * manifest names.
 *
 * Rules:
 * - Input: one regular file, or a folder whose regular files ending in ".txt" (not recursive; other entries are
 *   ignored) are read in the byte order of their UTF-8 names. The text is the files' bytes as given, concatenated
 *   with nothing between them: no normalisation (NFC or other), no line-end change, a BOM is kept as bytes.
 * - Every file must be valid UTF-8 (WHATWG decoder rules: no overlong forms, no surrogates, nothing above U+10FFFF);
 *   the first invalid sequence is an error naming the file and its byte offset. An empty total is an error; so are
 *   inputs over DATA_MAX_FILE_BYTES in total.
 * - Vocabulary: the distinct byte values of the text, ascending (2 to 256 of them); token id of a byte = its index
 *   there. Byte-level, so the vocabulary needs no tokenizer rules and every text has one.
 * - Split: `last:N` or `last:P%` of the tokens (default last:10%): the last tokens are the held-out tail.
 *
 * Canonical bytes:
 *   8 bytes   ASCII "POUWTXT1"
 *   uint32    L (little-endian), length of the schema
 *   L bytes   the schema as RFC 8785 canonical JSON, UTF-8 (TextSchema)
 *   tokens x uint8 token id
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import canonicalizeModule from "canonicalize";
import { z } from "zod";
import { InputError } from "../errors/index.ts";
import { cidOf } from "../store/index.ts";
import { DATA_MAX_FILE_BYTES, DataFormatError, DEFAULT_SPLIT, parseSplit, readDataFile } from "./tabular.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export const TEXT_FORMAT = "pouw-text-1";
const MAGIC = new TextEncoder().encode("POUWTXT1");

export const TextSchema = z.strictObject({
  format: z.literal(TEXT_FORMAT),
  /** The input files in reading order with their byte counts (a single file: its base name). */
  files: z.array(z.strictObject({ name: z.string().min(1), bytes: z.number().int().positive() })).min(1),
  /** The byte value of each token id, strictly ascending. */
  vocabulary: z.array(z.number().int().min(0).max(255)).min(2).max(256),
  tokens: z.number().int().positive(),
  split: z.strictObject({ rule: z.literal("last"), testTokens: z.number().int().positive() }),
});
export type TextSchema = z.infer<typeof TextSchema>;

export type TextData = { schema: TextSchema; /** token ids, the vocabulary's indices */ ids: Uint8Array };

/** The offset of the first byte that does not start or continue a valid UTF-8 sequence, or -1 (WHATWG rules). */
export function invalidUtf8Offset(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0; // no overlong 3-byte form
      if (c === 0xed) hi = 0x9f; // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90; // no overlong 4-byte form
      if (c === 0xf4) hi = 0x8f; // nothing above U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** The input files of `path` in reading order: the file itself, or a folder's .txt files by the byte order of their names. */
export function textFiles(path: string): { name: string; path: string }[] {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    throw new InputError(`cannot read text data ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  }
  if (st.isFile()) return [{ name: path.split(/[\\/]/).pop()!, path }];
  if (!st.isDirectory()) throw new InputError(`text data ${path} is neither a file nor a folder`);
  const names = readdirSync(path).filter((n) => n.endsWith(".txt") && statSync(join(path, n)).isFile());
  names.sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
  if (names.length === 0) throw new DataFormatError("empty-set", `folder ${path} has no .txt files`);
  return names.map((name) => ({ name, path: join(path, name) }));
}

/** Parses named file contents (in reading order) under the rules above. */
export function parseText(files: readonly { name: string; bytes: Uint8Array }[], options: { split?: string; maxBytes?: number } = {}): TextData {
  const maxBytes = options.maxBytes ?? DATA_MAX_FILE_BYTES;
  let total = 0;
  for (const f of files) {
    total += f.bytes.length;
    if (total > maxBytes) throw new DataFormatError("oversize", `text data is over the ${maxBytes}-byte cap (at file ${JSON.stringify(f.name)})`);
    const bad = invalidUtf8Offset(f.bytes);
    if (bad >= 0) throw new DataFormatError("not-utf8", `file ${JSON.stringify(f.name)}: invalid UTF-8 at byte offset ${bad} (0x${f.bytes[bad]!.toString(16).padStart(2, "0")})`);
  }
  const nonEmpty = files.filter((f) => f.bytes.length > 0);
  if (total === 0) throw new DataFormatError("empty-set", "the text is empty");
  const text = new Uint8Array(total);
  let at = 0;
  for (const f of nonEmpty) {
    text.set(f.bytes, at);
    at += f.bytes.length;
  }
  const seen = new Uint8Array(256);
  for (const b of text) seen[b] = 1;
  const vocabulary = [...seen.keys()].filter((b) => seen[b] === 1);
  if (vocabulary.length < 2) throw new DataFormatError("too-few-classes", `the text has ${vocabulary.length} distinct byte; a vocabulary needs at least 2`);
  const index = new Uint8Array(256);
  vocabulary.forEach((b, i) => (index[b] = i));
  const ids = text.map((b) => index[b]!);
  const testTokens = parseSplit(options.split ?? DEFAULT_SPLIT, total, "tokens");
  const schema: TextSchema = { format: TEXT_FORMAT, files: nonEmpty.map((f) => ({ name: f.name, bytes: f.bytes.length })), vocabulary, tokens: total, split: { rule: "last", testTokens } };
  return { schema, ids };
}

/** Reads and parses a file or a folder of .txt files (textFiles, parseText). */
export function readText(path: string, options: { split?: string; maxBytes?: number } = {}): TextData {
  const maxBytes = options.maxBytes ?? DATA_MAX_FILE_BYTES;
  let left = maxBytes;
  const files = textFiles(path).map((f) => {
    const bytes = readDataFile(f.path, left);
    left -= bytes.length;
    return { name: f.name, bytes };
  });
  return parseText(files, { ...options, maxBytes });
}

/** The canonical bytes of a parsed text (layout in the header). */
export function encodeText(data: TextData): Uint8Array {
  const schemaBytes = new TextEncoder().encode(canonicalize(data.schema)!);
  const out = new Uint8Array(MAGIC.length + 4 + schemaBytes.length + data.ids.length);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.length, schemaBytes.length, true);
  out.set(schemaBytes, MAGIC.length + 4);
  out.set(data.ids, MAGIC.length + 4 + schemaBytes.length);
  return out;
}

/**
 * Decodes canonical bytes, refusing anything encodeText would not have written: wrong magic or length, a schema that
 * does not parse or is not canonical, a vocabulary not strictly ascending, a token id outside it, a vocabulary byte
 * no token uses, file sizes that do not sum to the tokens, text that is not UTF-8.
 */
export function decodeText(bytes: Uint8Array): TextData {
  const bad = (why: string) => new DataFormatError("bad-canonical", `not ${TEXT_FORMAT} canonical bytes: ${why}`);
  if (bytes.length < MAGIC.length + 4 || !MAGIC.every((b, i) => bytes[i] === b)) throw bad("no POUWTXT1 header");
  const len = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(MAGIC.length, true);
  if (MAGIC.length + 4 + len > bytes.length) throw bad("schema length beyond the end");
  let schemaValue: unknown;
  let schemaText: string;
  try {
    schemaText = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(MAGIC.length + 4, MAGIC.length + 4 + len));
    schemaValue = JSON.parse(schemaText);
  } catch {
    throw bad("schema is not UTF-8 JSON");
  }
  const parsed = TextSchema.safeParse(schemaValue);
  if (!parsed.success) throw bad(`schema: ${parsed.error.issues[0]!.path.join(".")} ${parsed.error.issues[0]!.message}`);
  const schema = parsed.data;
  if (canonicalize(schema) !== schemaText) throw bad("schema is not canonical JSON");
  const v = schema.vocabulary;
  for (let i = 1; i < v.length; i++) if (v[i]! <= v[i - 1]!) throw bad("vocabulary is not strictly ascending");
  if (schema.files.reduce((a, f) => a + f.bytes, 0) !== schema.tokens) throw bad("file sizes do not sum to the tokens");
  if (schema.split.testTokens >= schema.tokens) throw bad("split holds out every token");
  const start = MAGIC.length + 4 + len;
  if (bytes.length !== start + schema.tokens) throw bad(`length ${bytes.length} does not fit ${schema.tokens} tokens`);
  const ids = bytes.slice(start);
  const used = new Uint8Array(v.length);
  for (let i = 0; i < ids.length; i++) {
    if (ids[i]! >= v.length) throw bad(`token ${i} has id ${ids[i]}, outside the vocabulary of ${v.length}`);
    used[ids[i]!] = 1;
  }
  const unused = used.indexOf(0);
  if (unused >= 0) throw bad(`vocabulary byte ${v[unused]} is used by no token`);
  if (invalidUtf8Offset(ids.map((id) => v[id]!)) >= 0) throw bad("the text is not UTF-8");
  return { schema, ids };
}

/** A parsed text's canonical bytes and CID (what `pouw data add --format text` publishes). */
export function textContent(data: TextData): { bytes: Uint8Array; cid: string } {
  const bytes = encodeText(data);
  return { bytes, cid: cidOf(bytes) };
}
