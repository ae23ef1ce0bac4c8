/**
 * bench/freivalds: cost of Freivalds-checking a float32 product versus the engine computing it.
 *
 * For n x n x n products, n = 256, 512, 1024, 2048, 4096 (--sizes), measures in one process, interleaved:
 *   - the engine's own fast matmul (the pouw engine's wasm SIMD128 kernel, kernels/wasm.ts, in tfjs-cpu's
 *     summation order), and tf.matMul on tfjs-cpu up to --tf-max (default 1024; minutes beyond);
 *   - checkProduct with k = 2 vectors on the wasm loops (checks/freivalds-wasm.ts, the default) and on the
 *     JS loops; k = 1, 4, 8 on the wasm loops at n = 1024;
 *   - the memory-bandwidth floor of the check: the bytes it must read (A, B and C once, 12 n^2 bytes) over
 *     the machine's copy bandwidth measured here (Float32Array.set of a 256 MiB array: read + write bytes / s).
 * Prints a table and writes bench/results/freivalds.json. Targets: check <= 10% of the
 * engine's matmul at n = 1024, <= 3% at n = 4096.
 *
 * Usage: npm run bench:freivalds [-- --sizes 256,1024 --reps 5 --tf-max 1024]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as tf from "@tensorflow/tfjs";
import { checkProduct, generalDetectionFactor, rowBounds, type Matrix } from "../verifier/src/checks/freivalds.ts";
import { fastestKernels } from "../verifier/src/ml/kernels/index.ts";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
}

const sizes = arg("sizes", "256,512,1024,2048,4096").split(",").map(Number);
const reps = Number(arg("reps", "5"));
const tfMax = Number(arg("tf-max", "1024"));

function randMatrix(rows: number, cols: number, seed: number): Matrix {
  let a = seed >>> 0;
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    data[i] = a / 2 ** 31 - 1;
  }
  return { data, shape: [rows, cols] };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Median process CPU time (user + system) of `times` runs, and median wall time. Ratios use CPU time:
 * everything measured is single-threaded, and CPU time is what stays stable when other processes share the
 * machine (wall time is reported too).
 */
function time<T>(fn: () => T, times: number): { ms: number; wallMs: number; value: T } {
  const cpu: number[] = [];
  const wall: number[] = [];
  let value!: T;
  for (let i = 0; i < times; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    value = fn();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { ms: median(cpu), wallMs: median(wall), value };
}

/** Copy bandwidth in bytes/s (read + written), best of 5 copies of a 256 MiB Float32Array. */
function copyBandwidth(): number {
  const src = new Float32Array(64 << 20).fill(1);
  const dst = new Float32Array(src.length);
  dst.set(src); // touch the pages
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    dst.set(src);
    best = Math.min(best, performance.now() - t0);
  }
  return (2 * src.byteLength) / (best / 1000);
}

async function main(): Promise<void> {
  await tf.setBackend("cpu");
  await tf.ready();
  const engine = fastestKernels();
  const bandwidth = copyBandwidth();
  const rows: Record<string, unknown>[] = [];
  const kRows: Record<string, unknown>[] = [];
  for (const n of sizes) {
    const A = randMatrix(n, n, 1);
    const B = randMatrix(n, n, 2);
    const computeReps = n >= 2048 ? 1 : Math.max(1, Math.min(reps, 3));
    const mm = time(() => engine.matmul(A.data, B.data, n, n, n, "nn"), computeReps);
    const C: Matrix = { data: mm.value, shape: [n, n] };
    let tfMs: number | null = null;
    if (n <= tfMax) {
      const tA = tf.tensor2d(A.data, [n, n]);
      const tB = tf.tensor2d(B.data, [n, n]);
      const run = time(() => {
        const c = tf.matMul(tA, tB);
        const d = c.dataSync() as Float32Array;
        c.dispose();
        return d;
      }, computeReps);
      tA.dispose();
      tB.dispose();
      // the engine's kernel is tfjs-cpu's order: the same bits
      if (!Buffer.from(run.value.buffer).equals(Buffer.from(C.data.buffer))) throw new Error(`n=${n}: engine matmul differs from tf.matMul`);
      tfMs = run.ms;
    }
    const claim = { name: "bench", A, B, C };
    const checkReps = Math.max(reps, 5);
    const results: Record<string, { ms: number; wallMs: number }> = {};
    for (const loops of ["wasm", "js"] as const) {
      checkProduct(claim, { vectors: 2, loops }); // JIT warm-up
      const run = time(() => checkProduct(claim, { vectors: 2, loops }), checkReps);
      if (!run.value.ok) throw new Error(`honest product rejected at n=${n} (${loops})`);
      results[loops] = { ms: run.ms, wallMs: run.wallMs };
    }
    const bytesRead = 3 * 4 * n * n;
    const floorMs = (bytesRead / bandwidth) * 1000;
    rows.push({
      n,
      engineMatmulMs: mm.ms,
      engineMatmulWallMs: mm.wallMs,
      engineMatmulGflops: (2 * n ** 3) / (mm.ms / 1000) / 1e9,
      tfCpuMatmulMs: tfMs,
      checkMs: results.wasm!.ms,
      checkWallMs: results.wasm!.wallMs,
      checkJsMs: results.js!.ms,
      ratioVsEngine: results.wasm!.ms / mm.ms,
      ratioJsVsEngine: results.js!.ms / mm.ms,
      bytesRead,
      bandwidthFloorMs: floorMs,
      checkOverFloor: results.wasm!.ms / floorMs,
    });
    if (n === 1024) {
      for (const k of [1, 2, 4, 8]) {
        checkProduct(claim, { vectors: k });
        const run = time(() => checkProduct(claim, { vectors: k }), checkReps);
        if (!run.value.ok) throw new Error(`honest product rejected at k=${k}`);
        kRows.push({
          vectors: k,
          checkMs: run.ms,
          ratioVsEngine: run.ms / mm.ms,
          ratioVsTfCpu: tfMs === null ? null : run.ms / tfMs,
          worstResidualOverThreshold: run.value.worstRatio,
          // null: no corruption size reaches 2^-40 with this many vectors
          generalFactorFor2pow40: Number.isFinite(generalDetectionFactor(k, 21)) ? generalDetectionFactor(k, 21) : null,
        });
      }
      const beta = rowBounds(claim);
      let betaMax = 0, betaMin = Infinity;
      for (const b of beta) { betaMax = Math.max(betaMax, b); betaMin = Math.min(betaMin, b); }
      kRows.push({ singleEntryBoundMin: betaMin, singleEntryBoundMax: betaMax });
    }
    process.stderr.write(`n=${n} done\n`);
  }
  const acceptance = {
    n1024: rows.find((r) => r.n === 1024)?.ratioVsEngine ?? null,
    n4096: rows.find((r) => r.n === 4096)?.ratioVsEngine ?? null,
    targets: "check <= 10% of the engine's matmul at n = 1024, <= 3% at n = 4096 (k = 2)",
  };
  const result = {
    bench: "freivalds",
    date: new Date().toISOString(),
    node: process.version,
    engineKernels: engine.name,
    timing: "median process CPU time (user + system); wall time alongside; one run of the matmul at n >= 2048",
    copyBandwidthBytesPerSecond: bandwidth,
    sizes: rows,
    vectorsAt1024: kRows,
    acceptance,
  };
  const here = dirname(fileURLToPath(import.meta.url));
  mkdirSync(join(here, "results"), { recursive: true });
  writeFileSync(join(here, "results", "freivalds.json"), JSON.stringify(result, null, 2) + "\n");

  const f = (x: number, d = 1) => x.toFixed(d);
  console.log(`Freivalds k = 2 vs the engine's matmul (${engine.name}), n x n x n float32, median CPU ms; copy bandwidth ${f(bandwidth / 1e9, 2)} GB/s`);
  console.log("| n | engine matmul ms (GFLOP/s) | tf-cpu ms | check wasm ms | check js ms | wasm vs engine | bandwidth floor ms | wasm / floor |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const tfv = r.tfCpuMatmulMs as number | null;
    console.log(
      `| ${r.n} | ${f(r.engineMatmulMs as number)} (${f(r.engineMatmulGflops as number, 2)}) | ${tfv === null ? "-" : f(tfv)} | ${f(r.checkMs as number, 2)} | ${f(r.checkJsMs as number, 2)} | ${f((r.ratioVsEngine as number) * 100, 3)}% | ${f(r.bandwidthFloorMs as number, 2)} | ${f(r.checkOverFloor as number, 1)}x |`,
    );
  }
  for (const r of kRows) if ("vectors" in r) console.log(`n=1024 k=${r.vectors}: ${f(r.checkMs as number, 2)} ms, ${f((r.ratioVsEngine as number) * 100, 3)}% of the engine's matmul`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
