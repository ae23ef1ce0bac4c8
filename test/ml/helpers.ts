import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { parseManifest, type Manifest } from "../../verifier/src/ml/index.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;
export const NODE = join(ROOT, "node_modules/.bin/node");
export const CLI = join(ROOT, "verifier/src/cli/pouw.ts");

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

/** Runs `pouw <args>` in a separate OS process. */
export function pouw(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(NODE, [CLI, ...args], { encoding: "utf8", cwd: ROOT, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `pouw <args>` in a separate OS process without blocking (to run several at once). */
export function pouwAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI, ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}
