import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseManifest, type Manifest } from "../../verifier/src/ml/index.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;
export { CLI, NODE } from "../helpers/cli.ts";

export function exampleJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(ROOT, "examples", name), "utf8")) as Record<string, unknown>;
}

export const tinyManifest = (): Manifest => parseManifest(exampleJson("tiny.json"));

/** A very small char-transformer job on one address (2001), for fast tests. */
export function tinyTransformerJson(): Record<string, unknown> {
  const m = exampleJson("sotu.json");
  return {
    ...m,
    model: { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 },
    corpora: [{ ...(m.corpora as object[])[0], contentId: "bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey" }],
    data: { seed: 3, years: [2001, 2001], holdoutFraction: 0.1 },
    training: { batchSize: 2, steps: 4, stepsPerSegment: 2 },
  };
}

export async function tempDir(label: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `pouw-${label}-`));
}

// the spawned `pouw` helpers live in test/helpers/cli.ts (the one CLI helper); re-exported for existing callers
export { pouw, pouwAsync } from "../helpers/cli.ts";
