/**
 * bench/threads: speed-up of the pouw engine's threaded matmul (kernels/threads.ts) on mnist-mlp's two large
 * products per step (fwd1 X.W1 64x784x128 "nn", bwdW1 X^T.dz1 784x64x128 "tn"), 1 thread vs N, interleaved in
 * rounds, median wall ms per step's pair. Checks the outputs are the same bits. Writes bench/results/threads.json.
 * The step-level figure (step + hash, threads 2) is bench:engine's threads-2 row.
 *
 * Then the same for numerics bitwise-v3 (ThreadedKernels.matmulV3, units claimed by every thread) on one
 * GPT-class step's product shapes (examples/gpt-sotu-v3.json: B*T = 1024, d = 384, F = 1536, 24 attention products
 * of 256x256x64): a forward d x d, a forward d x 4d, a weight gradient ("tn") and a batched attention product, 1
 * thread vs N interleaved, the same bits checked, and the share of units the workers took. `uptime`'s load is in the
 * output: on a shared machine a second thread gains only the CPU the other jobs leave.
 *
 *   node bench/threads.ts [--threads 2 --rounds 9 --v3-rounds 5]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { ThreadedKernels, WasmKernels } from "../verifier/src/ml/kernels/index.ts";
import { withScratch } from "../verifier/src/ml/kernels/scratch.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const threads = arg("threads", 2);
const rounds = arg("rounds", 9);
const v3Rounds = arg("v3-rounds", 5);
const loadBefore = loadavg();

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
// bitwise-v3 on the GPT-class step's shapes
const v3Products: [string, number, number, number, "nn" | "tn" | "nt", number][] = [
  ["q/k/v/o fwd 1024x384x384 nn", 1024, 384, 384, "nn", 1],
  ["ff1 fwd 1024x384x1536 nn", 1024, 384, 1536, "nn", 1],
  ["ff1 dW 384x1024x1536 tn", 384, 1024, 1536, "tn", 1],
  ["scores 24 x 256x64x256 nt", 256, 64, 256, "nt", 24],
];
const v3Ops = v3Products.map(([, M, K, N, , count]) => ({ a: rand(count * M * K), b: rand(count * K * N) }));
const v3One = new ThreadedKernels(1, base), v3Many = new ThreadedKernels(threads, base);
// inside withScratch as in a transformer pass (outputs in mapped scratch memory); copies only when kept
const v3Pass = (k: ThreadedKernels, keep = false) =>
  withScratch(() => v3Products.map(([, M, K, N, layout, count], i) => {
    const c = k.matmulV3(v3Ops[i]!.a, v3Ops[i]!.b, M, K, N, layout, count);
    return keep ? c.slice() : c;
  }));
const v3Same = (() => {
  const x1 = v3Pass(v3One, true), x2 = v3Pass(v3Many, true);
  return x1.every((c, i) => Buffer.from(c.buffer).equals(Buffer.from(x2[i]!.buffer)));
})();
if (!v3Same) throw new Error("threaded bitwise-v3 matmul differs from one thread");
const v3Ms: Record<"one" | "many", number[]> = { one: [], many: [] };
const v3Cpu: Record<"one" | "many", number[]> = { one: [], many: [] };
v3Many.unitsByWorkers = 0;
v3Many.unitsTotal = 0;
for (let r = 0; r < v3Rounds; r++) {
  for (const [key, k] of [["one", v3One], ["many", v3Many]] as const) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    v3Pass(k);
    v3Ms[key].push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    v3Cpu[key].push((c.user + c.system) / 1000);
  }
}
const macs = v3Products.reduce((n, [, M, K, N, , count]) => n + count * M * K * N, 0);

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
  loadAverageBefore: loadBefore,
  loadAverageAfter: loadavg(),
  v3: {
    products: v3Products.map((p) => p[0]),
    sameBits: v3Same,
    oneThreadMs: med(v3Ms.one),
    threadedMs: med(v3Ms.many),
    speedup: med(v3Ms.one) / med(v3Ms.many),
    gflopsOne: (2 * macs) / med(v3Ms.one) / 1e6,
    gflopsThreaded: (2 * macs) / med(v3Ms.many) / 1e6,
    processCpuMsOne: med(v3Cpu.one),
    processCpuMsThreaded: med(v3Cpu.many),
    workerUnitShare: v3Many.unitsByWorkers / Math.max(1, v3Many.unitsTotal),
    roundsOneMs: v3Ms.one,
    roundsThreadedMs: v3Ms.many,
  },
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results/threads.json"), JSON.stringify(result, null, 2) + "\n");
console.log(`| threads | ms per step's two large products (median of ${rounds} rounds) | speed-up | same bits |`);
console.log("| --- | --- | --- | --- |");
console.log(`| 1 | ${result.oneThreadMs.toFixed(2)} | 1.00x | - |`);
console.log(`| ${threads} | ${result.threadedMs.toFixed(2)} | ${result.speedup.toFixed(2)}x | ${same ? "yes" : "no"} |`);
console.log("");
console.log(`bitwise-v3, one GPT-class step's product shapes (${result.v3.products.join("; ")}), median of ${v3Rounds} rounds:`);
console.log(`| threads | ms per pass of the four | GFLOP/s | process CPU ms | speed-up | workers' share of units | same bits |`);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
console.log(`| 1 | ${result.v3.oneThreadMs.toFixed(1)} | ${result.v3.gflopsOne.toFixed(1)} | ${result.v3.processCpuMsOne.toFixed(0)} | 1.00x | - | - |`);
console.log(`| ${threads} | ${result.v3.threadedMs.toFixed(1)} | ${result.v3.gflopsThreaded.toFixed(1)} | ${result.v3.processCpuMsThreaded.toFixed(0)} | ${result.v3.speedup.toFixed(2)}x | ${(100 * result.v3.workerUnitShare).toFixed(0)}% | ${v3Same ? "yes" : "no"} |`);
console.log(`load average before ${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${result.loadAverageAfter.map((x) => x.toFixed(2)).join(" ")}`);
await Promise.all([tk.close(), v3One.close(), v3Many.close()]);
