/**
 * bench/threads: speed-up of the pouw engine's threaded matmul (kernels/threads.ts) on mnist-mlp's two large
 * products per step (fwd1 X.W1 64x784x128 "nn", bwdW1 X^T.dz1 784x64x128 "tn"), 1 thread vs N, interleaved in
 * rounds, median wall ms per step's pair. Checks the outputs are the same bits. Writes bench/results/threads.json.
 * The step-level figure (step + hash, threads 2) is bench:engine's threads-2 row.
 *
 *   node bench/threads.ts [--threads 2 --rounds 9]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ThreadedKernels, WasmKernels } from "../verifier/src/ml/kernels/index.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const threads = arg("threads", 2);
const rounds = arg("rounds", 9);

let seed = 1;
const rand = (n: number) => Float32Array.from({ length: n }, () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 31) - 1);
const x = rand(64 * 784), w1 = rand(784 * 128), dz = rand(64 * 128);
const base = new WasmKernels();
const tk = new ThreadedKernels(threads, base);
const pair = (k: WasmKernels | ThreadedKernels) => [k.matmul(x, w1, 64, 784, 128, "nn"), k.matmul(x, dz, 784, 64, 128, "tn")];
const a = pair(base), b = pair(tk);
const same = a.every((c, i) => Buffer.from(c.buffer).equals(Buffer.from(b[i]!.buffer)));
if (!same) throw new Error("threaded matmul differs from one thread");
const ms: Record<"one" | "many", number[]> = { one: [], many: [] };
for (let r = 0; r < rounds; r++) {
  for (const [key, k] of [["one", base], ["many", tk]] as const) {
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) pair(k);
    ms[key].push((performance.now() - t0) / 20);
  }
}
const med = (v: number[]) => [...v].sort((p, q) => p - q)[v.length >> 1]!;
const result = {
  bench: "threads",
  date: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  note: "shared 2-core machine with other engineers' jobs running: speed-ups are noisy lower bounds",
  threads,
  products: "fwd1 64x784x128 nn + bwdW1 784x64x128 tn (mnist-mlp batch 64, hidden 128)",
  sameBits: same,
  oneThreadMs: med(ms.one),
  threadedMs: med(ms.many),
  speedup: med(ms.one) / med(ms.many),
  roundsOneMs: ms.one,
  roundsThreadedMs: ms.many,
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results/threads.json"), JSON.stringify(result, null, 2) + "\n");
console.log(`| threads | ms per step's two large products (median of ${rounds} rounds) | speed-up | same bits |`);
console.log("| --- | --- | --- | --- |");
console.log(`| 1 | ${result.oneThreadMs.toFixed(2)} | 1.00x | - |`);
console.log(`| ${threads} | ${result.threadedMs.toFixed(2)} | ${result.speedup.toFixed(2)}x | ${same ? "yes" : "no"} |`);
await tk.close();
