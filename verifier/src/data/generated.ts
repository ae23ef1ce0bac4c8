/**
 * A generate job's dataset (`pouw-generated-1`, kinds/generate.ts datasetOf) as the text a char-transformer trains on.
 * A training manifest names the dataset file by its CID as a corpus without `package`, as it names a text data set
 * (text.ts); load.ts recognises the file by its first byte (`{`: a pouw-text-1 file starts with `POUWTXT1`).
 *
 * Rules (docs/data.md "Generated datasets as training data"):
 * - The file must be its own RFC 8785 canonical JSON with exactly the fields datasetOf writes (format, model, prompts,
 *   manifestHash, samples), so one dataset has one CID.
 * - Each sample holds token ids of the generating model's fixed 96-symbol vocabulary ('\n', then printable ASCII
 *   32..126: ml/data/sotu.ts VOCAB), the only vocabulary a generate job samples from; an id of 96 or more is refused.
 * - The text is the samples' symbols as ASCII bytes, sample 0 first, with nothing between them: file j of the text is
 *   sample j, named `sample-<j, 6 digits>`. It is then tokenized by the text rules (text.ts parseText): a byte-level
 *   vocabulary of the bytes that occur, split `last:10%`.
 */
import canonicalizeModule from "canonicalize";
import type { Hex } from "viem";
import { DataFormatError } from "./tabular.ts";
import { parseText, type TextData } from "./text.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export const GENERATED_FORMAT = "pouw-generated-1";
/** Token ids of a generate job's samples index this many symbols ('\n' and ASCII 32..126). */
export const GENERATED_VOCAB_SIZE = 96;

export type GeneratedFile = { model: string; prompts: string; manifestHash: Hex; samples: Uint8Array[] };

/** Whether `bytes` are a JSON document (a generated dataset) rather than pouw-text-1 canonical bytes. */
export function isGeneratedBytes(bytes: Uint8Array): boolean {
  return bytes[0] === 0x7b; // "{"
}

const cid = /^b[a-z2-7]{58}$/;

/** Decodes a generated dataset, refusing anything datasetOf would not have written. */
export function decodeGenerated(bytes: Uint8Array): GeneratedFile {
  const bad = (why: string) => new DataFormatError("bad-canonical", `not a ${GENERATED_FORMAT} dataset: ${why}`);
  let text: string;
  let v: Record<string, unknown>;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw bad("not UTF-8 JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad("not a JSON object");
  if (v.format !== GENERATED_FORMAT) throw bad(`format is ${JSON.stringify(v.format)}`);
  const keys = Object.keys(v).sort().join(",");
  if (keys !== "format,manifestHash,model,prompts,samples") throw bad(`fields are ${keys}, not format,manifestHash,model,prompts,samples`);
  if (typeof v.model !== "string" || !cid.test(v.model)) throw bad(`model ${JSON.stringify(v.model)} is not a CIDv1 base32 string`);
  if (typeof v.prompts !== "string" || !cid.test(v.prompts)) throw bad(`prompts ${JSON.stringify(v.prompts)} is not a CIDv1 base32 string`);
  if (typeof v.manifestHash !== "string" || !/^0x[0-9a-f]{64}$/.test(v.manifestHash)) throw bad(`manifestHash ${JSON.stringify(v.manifestHash)} is not a 32-byte 0x hex string`);
  if (!Array.isArray(v.samples) || v.samples.length === 0) throw bad("samples must be a non-empty array");
  const samples = v.samples.map((s: unknown, j: number) => {
    if (typeof s !== "string" || !/^0x([0-9a-f]{2})*$/.test(s)) throw bad(`sample ${j} is not a 0x hex string`);
    const out = Uint8Array.from(Buffer.from(s.slice(2), "hex"));
    const over = out.findIndex((id) => id >= GENERATED_VOCAB_SIZE);
    if (over >= 0) throw bad(`sample ${j} token ${over} is id ${out[over]}, outside the ${GENERATED_VOCAB_SIZE}-symbol vocabulary`);
    return out;
  });
  if (canonicalize(v) !== text) throw bad("not its own canonical JSON (RFC 8785)");
  return { model: v.model, prompts: v.prompts, manifestHash: v.manifestHash as Hex, samples };
}

/** The ASCII byte of a 96-symbol id: '\n' for 0, else 31 + id (ml/data/sotu.ts VOCAB). */
const symbolByte = (id: number): number => (id === 0 ? 10 : id + 31);

/** The text of a generated dataset, tokenized by the text rules (parseText, split last:10%). */
export function generatedText(file: GeneratedFile): TextData {
  return parseText(file.samples.map((s, j) => ({ name: `sample-${String(j).padStart(6, "0")}`, bytes: s.map(symbolByte) })));
}
