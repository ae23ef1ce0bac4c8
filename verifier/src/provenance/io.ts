/**
 * Record files: written next to the weights as the exact canonical bytes (see record.ts), read back as bytes.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { keccak256, type Hex } from "viem";
import { ProvenanceRecordError } from "./errors.ts";
import { canonicalRecordBytes, PROVENANCE_FILE, type ProvenanceRecord } from "./record.ts";

/** Writes DIR/provenance.json (canonical bytes) and returns its path and recordHash. */
export async function writeProvenance(dir: string, record: ProvenanceRecord): Promise<{ path: string; recordHash: Hex }> {
  const bytes = canonicalRecordBytes(record);
  await mkdir(dir, { recursive: true });
  const path = join(dir, PROVENANCE_FILE);
  await writeFile(path, bytes);
  return { path, recordHash: keccak256(bytes) };
}

/** Reads a file as bytes; ProvenanceRecordError naming `item` when it cannot be read. */
export async function readInputFile(path: string, item: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (err) {
    throw new ProvenanceRecordError(item, `cannot read ${item} file ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  }
}
