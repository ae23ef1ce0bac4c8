/**
 * bench/freivalds: cost of Freivalds-checking a float32 product versus computing it.
 *
 * For an n x n x n product (default 1024) measures: tf.matMul on the cpu backend, a plain float32
 * JS triple loop (i-k-j order, Float32Array accumulators) and checkProduct for k = 1, 2, 4, 8
 * vectors. Prints a table and writes bench/results/freivalds.json. Target: check <= 1% of compute.
 *
 * Usage: npm run bench:freivalds [-- --n 1024 --reps 5]
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as tf from "@tensorflow/tfjs";
import { checkProduct, generalDetectionFactor, rowBounds, type Matrix } from "../verifier/src/checks/freivalds.ts";

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const n = arg("n", 1024);
const reps = arg("reps", 5);

function randMatrix(rows: number, cols: number, seed: number): Matrix {
  let a = seed >>> 0;
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    data[i] = a / 2 ** 31 - 1;
  }
  return { data, shape: [rows, cols] };
}

function loopMatmul(A: Matrix, B: Matrix): Matrix {
  const [m, k] = A.shape;
  const p = B.shape[1];
  const a = A.data, b = B.data;
  const c = new Float32Array(m * p);
  for (let i = 0; i < m; i++) {
    const ci = i * p;
    for (let l = 0; l < k; l++) {
      const v = a[i * k + l]!;
      const bl = l * p;
      for (let j = 0; j < p; j++) c[ci + j] = c[ci + j]! + v * b[bl + j]!;
    }
  }
  return { data: c, shape: [m, p] };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Median process CPU time (user + system) of `times` runs, and median wall time. Ratios use CPU time:
 * everything measured is single-threaded JavaScript, and CPU time is what stays stable when other
 * processes share the machine (wall time is reported too).
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

async function main(): Promise<void> {
  await tf.setBackend("cpu");
  await tf.ready();
  const A = randMatrix(n, n, 1);
  const B = randMatrix(n, n, 2);
  const tA = tf.tensor2d(A.data, [n, n]);
  const tB = tf.tensor2d(B.data, [n, n]);

  const computeReps = Math.max(1, Math.min(reps, 3));
  const tfRun = time(() => {
    const c = tf.matMul(tA, tB);
    const d = c.dataSync() as Float32Array;
    c.dispose();
    return { data: d, shape: [n, n] as [number, number] };
  }, computeReps);
  const loopRun = time(() => loopMatmul(A, B), computeReps);
  const C = tfRun.value;

  const rows: Record<string, unknown>[] = [];
  for (const k of [1, 2, 4, 8]) {
    checkProduct({ name: "warm", A, B, C }, { vectors: k }); // JIT warm-up
    const run = time(() => checkProduct({ name: "bench", A, B, C }, { vectors: k }), Math.max(reps, 5));
    if (!run.value.ok) throw new Error(`honest product rejected at k=${k}`);
    const loopCheck = checkProduct({ name: "bench", A, B, C: loopRun.value }, { vectors: k });
    if (!loopCheck.ok) throw new Error(`honest loop product rejected at k=${k}`);
    rows.push({
      vectors: k,
      checkMs: run.ms,
      checkWallMs: run.wallMs,
      ratioVsTfCpu: run.ms / tfRun.ms,
      ratioVsLoop: run.ms / loopRun.ms,
      worstResidualOverThreshold: run.value.worstRatio,
      // null: no corruption size reaches 2^-40 with this many vectors
      generalFactorFor2pow40: Number.isFinite(generalDetectionFactor(k, 21)) ? generalDetectionFactor(k, 21) : null,
    });
  }
  const beta = rowBounds({ name: "bench", A, B, C });
  let betaMax = 0, betaMin = Infinity, cAbsMean = 0;
  for (const b of beta) { betaMax = Math.max(betaMax, b); betaMin = Math.min(betaMin, b); }
  for (const c of C.data) cAbsMean += Math.abs(c) / C.data.length;

  const result = {
    bench: "freivalds",
    date: new Date().toISOString(),
    node: process.version,
    n,
    timing: "median process CPU time (user + system); wall time alongside",
    computeMs: { tfMatMulCpu: tfRun.ms, float32TripleLoop: loopRun.ms },
    computeWallMs: { tfMatMulCpu: tfRun.wallMs, float32TripleLoop: loopRun.wallMs },
    checks: rows,
    singleEntryBound: { min: betaMin, max: betaMax, meanAbsEntryOfC: cAbsMean },
    target: "check <= 1% of compute",
  };
  const here = dirname(fileURLToPath(import.meta.url));
  mkdirSync(join(here, "results"), { recursive: true });
  writeFileSync(join(here, "results", "freivalds.json"), JSON.stringify(result, null, 2) + "\n");

  console.log(`Freivalds check vs compute, ${n}x${n}x${n} float32 (median CPU time of runs)`);
  console.log(`compute: tf.matMul cpu ${tfRun.ms.toFixed(1)} ms, float32 triple loop ${loopRun.ms.toFixed(1)} ms (wall ${tfRun.wallMs.toFixed(0)} / ${loopRun.wallMs.toFixed(0)} ms)`);
  console.log("| k | check ms | vs tf cpu | vs loop | worst resid/tau | general factor (2^-40) |");
  console.log("|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.vectors} | ${(r.checkMs as number).toFixed(2)} | ${((r.ratioVsTfCpu as number) * 100).toFixed(3)}% | ${((r.ratioVsLoop as number) * 100).toFixed(3)}% | ${(r.worstResidualOverThreshold as number).toExponential(2)} | ${r.generalFactorFor2pow40 === null ? "none" : (r.generalFactorFor2pow40 as number).toExponential(2)} |`,
    );
  }
  console.log(`single-entry bound beta_i: ${betaMin.toExponential(3)} .. ${betaMax.toExponential(3)} (mean |C_ij| ${cAbsMean.toExponential(3)})`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
