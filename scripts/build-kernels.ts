/**
 * Builds every WebAssembly module of verifier/src/ml/kernels/wasm (NAME.wat -> NAME.wasm: kernels.wat, the
 * engine's kernels; transformer.wat, the bitwise-v2 char-transformer's; freivalds.wat, the Freivalds check's loops) with wabt's wat2wasm (the `wabt`
 * devDependency, pinned in package-lock.json). The .wasm files are committed so that running needs no build
 * step; the tests rebuild them and check the bytes are the committed ones.
 *
 *   node scripts/build-kernels.ts            # writes every NAME.wasm
 *   node scripts/build-kernels.ts --check    # exit 1 if a committed NAME.wasm differs from a rebuild
 *   node scripts/build-kernels.ts --wabt DIR # use the wabt package at DIR instead of node_modules/wabt
 *
 * Features: SIMD128 only. Relaxed SIMD (whose results may differ by platform) and threads are left
 * disabled, so wat2wasm refuses any such instruction in the source.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
export const KERNELS_WAT = join(ROOT, "verifier/src/ml/kernels/wasm/kernels.wat");
export const KERNELS_WASM = join(ROOT, "verifier/src/ml/kernels/wasm/kernels.wasm");
export const WASM_DIR = join(ROOT, "verifier/src/ml/kernels/wasm");

/** Every module source in WASM_DIR (sorted), with the .wasm path it builds into. */
export function wasmModules(): { wat: string; wasm: string }[] {
  return readdirSync(WASM_DIR).filter((f) => f.endsWith(".wat")).sort()
    .map((f) => ({ wat: join(WASM_DIR, f), wasm: join(WASM_DIR, f.replace(/\.wat$/, ".wasm")) }));
}
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
  let differ = 0;
  for (const { wat, wasm } of wasmModules()) {
    const bytes = buildKernels(wabt, readFileSync(wat, "utf8"), wat.slice(WASM_DIR.length + 1));
    const name = wasm.slice(WASM_DIR.length + 1);
    if (argv.includes("--check")) {
      let committed: Uint8Array;
      try {
        committed = new Uint8Array(readFileSync(wasm));
      } catch {
        committed = new Uint8Array(0);
      }
      const same = committed.length === bytes.length && committed.every((b, i) => b === bytes[i]);
      if (!same) differ++;
      process.stdout.write(same ? `${name} matches a rebuild (${bytes.length} bytes)\n` : `${name} differs from a rebuild (committed ${committed.length} bytes, rebuilt ${bytes.length})\n`);
      continue;
    }
    writeFileSync(wasm, bytes);
    process.stdout.write(`wrote ${wasm} (${bytes.length} bytes)\n`);
  }
  return differ === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
