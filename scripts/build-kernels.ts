/**
 * Builds verifier/src/ml/kernels/wasm/kernels.wasm from kernels.wat with wabt's wat2wasm (the `wabt`
 * devDependency, pinned in package-lock.json). The .wasm is committed so that running the engine needs
 * no build step; test/ml/kernels.test.ts rebuilds it and checks the bytes are the committed ones.
 *
 *   node scripts/build-kernels.ts            # writes kernels.wasm
 *   node scripts/build-kernels.ts --check    # exit 1 if the committed kernels.wasm differs from a rebuild
 *   node scripts/build-kernels.ts --wabt DIR # use the wabt package at DIR instead of node_modules/wabt
 *
 * Features: SIMD128 only. Relaxed SIMD (whose results may differ by platform) and threads are left
 * disabled, so wat2wasm refuses any such instruction in the source.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
export const KERNELS_WAT = join(ROOT, "verifier/src/ml/kernels/wasm/kernels.wat");
export const KERNELS_WASM = join(ROOT, "verifier/src/ml/kernels/wasm/kernels.wasm");

type Wabt = {
  parseWat(filename: string, text: string, features?: Record<string, boolean>): {
    validate(): void;
    toBinary(options: { log?: boolean; write_debug_names?: boolean; canonicalize_lebs?: boolean }): { buffer: Uint8Array };
    destroy(): void;
  };
};

/** Loads wabt from `dir` (a package directory) or from the repository's node_modules; null when absent. */
export async function loadWabt(dir?: string): Promise<Wabt | null> {
  const require = createRequire(join(ROOT, "package.json"));
  let entry: string;
  try {
    entry = require.resolve(dir ?? "wabt");
  } catch {
    return null;
  }
  const mod = (await import(entry)) as { default: () => Promise<Wabt> };
  return mod.default();
}

/** wat2wasm of kernels.wat: the bytes are a function of the source and the pinned wabt version. */
export function buildKernels(wabt: Wabt, watText: string = readFileSync(KERNELS_WAT, "utf8")): Uint8Array {
  const features = { simd: true, relaxed_simd: false, threads: false, multi_value: false, bulk_memory: false, reference_types: false };
  const module = wabt.parseWat("kernels.wat", watText, features);
  try {
    module.validate();
    return Uint8Array.from(module.toBinary({ log: false, write_debug_names: false, canonicalize_lebs: true }).buffer);
  } finally {
    module.destroy();
  }
}

async function main(argv: string[]): Promise<number> {
  const wabtIndex = argv.indexOf("--wabt");
  const wabt = await loadWabt(wabtIndex >= 0 ? argv[wabtIndex + 1] : undefined);
  if (!wabt) {
    process.stderr.write("build-kernels: the wabt package is not installed (npm install; it is a devDependency)\n");
    return 2;
  }
  const bytes = buildKernels(wabt);
  if (argv.includes("--check")) {
    const committed = new Uint8Array(readFileSync(KERNELS_WASM));
    const same = committed.length === bytes.length && committed.every((b, i) => b === bytes[i]);
    process.stdout.write(same ? `kernels.wasm matches a rebuild (${bytes.length} bytes)\n` : `kernels.wasm differs from a rebuild (committed ${committed.length} bytes, rebuilt ${bytes.length})\n`);
    return same ? 0 : 1;
  }
  writeFileSync(KERNELS_WASM, bytes);
  process.stdout.write(`wrote ${KERNELS_WASM} (${bytes.length} bytes)\n`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
