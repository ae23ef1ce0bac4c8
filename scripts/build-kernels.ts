/**
 * Builds every wasm module of verifier/src/ml/kernels/wasm (MODULES: kernels.wat -> kernels.wasm,
 * transformer.wat -> transformer.wasm) with wabt's wat2wasm (the `wabt` devDependency, pinned in
 * package-lock.json). The .wasm files are committed so that running the engine needs no build step;
 * test/ml/kernels.test.ts and test/ml/transformer-kernels.test.ts rebuild them and check the bytes.
 *
 *   node scripts/build-kernels.ts            # writes every module's .wasm
 *   node scripts/build-kernels.ts --check    # exit 1 if any committed .wasm differs from a rebuild
 *   node scripts/build-kernels.ts --wabt DIR # use the wabt package at DIR instead of node_modules/wabt
 *
 * Features: SIMD128 only. Relaxed SIMD (whose results may differ by platform) and threads are left
 * disabled, so wat2wasm refuses any such instruction in the source.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const WASM_DIR = join(ROOT, "verifier/src/ml/kernels/wasm");
export const KERNELS_WAT = join(WASM_DIR, "kernels.wat");
export const KERNELS_WASM = join(WASM_DIR, "kernels.wasm");
/** Every module built from source: name.wat -> name.wasm in WASM_DIR. */
export const MODULES = ["kernels", "transformer"] as const;
export const watPath = (name: string) => join(WASM_DIR, `${name}.wat`);
export const wasmPath = (name: string) => join(WASM_DIR, `${name}.wasm`);

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
export function buildKernels(wabt: Wabt, watText: string = readFileSync(KERNELS_WAT, "utf8"), filename = "kernels.wat"): Uint8Array {
  const features = { simd: true, relaxed_simd: false, threads: false, multi_value: false, bulk_memory: false, reference_types: false };
  const module = wabt.parseWat(filename, watText, features);
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
  let status = 0;
  for (const name of MODULES) {
    const bytes = buildKernels(wabt, readFileSync(watPath(name), "utf8"), `${name}.wat`);
    if (argv.includes("--check")) {
      const committed = new Uint8Array(readFileSync(wasmPath(name)));
      const same = committed.length === bytes.length && committed.every((b, i) => b === bytes[i]);
      process.stdout.write(same ? `${name}.wasm matches a rebuild (${bytes.length} bytes)\n` : `${name}.wasm differs from a rebuild (committed ${committed.length} bytes, rebuilt ${bytes.length})\n`);
      if (!same) status = 1;
      continue;
    }
    writeFileSync(wasmPath(name), bytes);
    process.stdout.write(`wrote ${wasmPath(name)} (${bytes.length} bytes)\n`);
  }
  return status;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
