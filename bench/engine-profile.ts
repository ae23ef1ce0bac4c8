/**
 * Where a bitwise-v3 char-transformer step spends its time: `node bench/engine-profile.ts [EXAMPLE] [STEPS]`
 * (default examples/gpt-sotu-v3.json, 3 steps, the first untimed). Wraps the run's kernels so every product,
 * softmax, layer norm and the rest of the pass (the JS glue: head split/merge, bias adds, column sums, cross-entropy),
 * the optimizer update and the state hash are timed apart (wall ms and process CPU ms per step). Prints JSON.
 * Timing only: the kernels are the run's own, so the bits are those of `pouw train`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRun, offlineSalt, parseManifest } from "../verifier/src/ml/index.ts";
import type { TransformerKernels } from "../verifier/src/ml/kernels/transformer.ts";

const ROOT = join(import.meta.dirname, "..");
const example = process.argv[2] ?? "gpt-sotu-v3.json";
const steps = Number(process.argv[3] ?? 3);
const run = await createRun(parseManifest(JSON.parse(readFileSync(join(ROOT, "examples", example), "utf8"))), { jobId: 1n, salt: offlineSalt(1n), backend: "pouw", threads: Number(process.argv[4] ?? 1) });
const model = (run as unknown as { model: { kernels?: TransformerKernels } }).model;
const k = model.kernels;
if (!k) throw new Error(`${example}: not a kernel-layer model`);
const wall: Record<string, number> = {};
const cpu: Record<string, number> = {};
let timing = false;
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
function timed<F extends (...a: never[]) => unknown>(name: string, fn: F): F {
  return ((...a: never[]) => {
    const t0 = performance.now(), c0 = cpuNow();
    const r = fn(...a);
    if (timing) { wall[name] = (wall[name] ?? 0) + performance.now() - t0; cpu[name] = (cpu[name] ?? 0) + cpuNow() - c0; }
    return r;
  }) as F;
}
const raw = { ...k };
const mut = k as { -readonly [P in keyof TransformerKernels]: TransformerKernels[P] };
const mmShape: Record<string, { cpuMs: number; flop: number }> = {};
const rawMatmul = raw.matmul.bind(k);
mut.matmul = timed("matmul", (a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: "nn" | "tn" | "nt", count: number) => {
  const c0 = cpuNow();
  const c = rawMatmul(a, b, M, K, N, layout, count);
  if (timing) {
    const key = `${layout} ${count} x ${M}x${K}x${N}`;
    const e = (mmShape[key] ??= { cpuMs: 0, flop: 0 });
    e.cpuMs += cpuNow() - c0;
    e.flop += 2 * M * K * N * count;
  }
  return c;
});
if (raw.quantize) mut.quantize = timed("quantize", raw.quantize.bind(k));
mut.causalSoftmax = timed("causalSoftmax", raw.causalSoftmax.bind(k));
mut.causalSoftmaxBack = timed("causalSoftmaxBack", raw.causalSoftmaxBack.bind(k));
mut.layerNorm = timed("layerNorm", raw.layerNorm.bind(k));
mut.layerNormBack = timed("layerNormBack", raw.layerNormBack.bind(k));
const m = model as unknown as { lossAndGrads: (...a: unknown[]) => unknown };
m.lossAndGrads = timed("pass (total)", m.lossAndGrads.bind(model));
let state = run.initState();
for (let t = 1; t <= steps; t++) {
  timing = t > 1;
  const t0 = performance.now(), c0 = cpuNow();
  state = run.step(state, t).state;
  const t1 = performance.now(), c1 = cpuNow();
  run.stateHashOf(state);
  if (timing) {
    wall["step (total)"] = (wall["step (total)"] ?? 0) + t1 - t0; cpu["step (total)"] = (cpu["step (total)"] ?? 0) + c1 - c0;
    wall.hash = (wall.hash ?? 0) + performance.now() - t1; cpu.hash = (cpu.hash ?? 0) + cpuNow() - c1;
  }
}
await run.close();
const n = steps - 1;
const kern = ["matmul", "quantize", "causalSoftmax", "causalSoftmaxBack", "layerNorm", "layerNormBack"];
const sum = (o: Record<string, number>, ks: string[]) => ks.reduce((s, x) => s + (o[x] ?? 0), 0);
wall["pass glue (rest of the pass)"] = wall["pass (total)"]! - sum(wall, kern);
cpu["pass glue (rest of the pass)"] = cpu["pass (total)"]! - sum(cpu, kern);
wall["outside the pass (batch, optimizer)"] = wall["step (total)"]! - wall["pass (total)"]!;
cpu["outside the pass (batch, optimizer)"] = cpu["step (total)"]! - cpu["pass (total)"]!;
const out: Record<string, { wallMs: number; cpuMs: number }> = {};
for (const key of Object.keys(wall)) out[key] = { wallMs: Math.round(wall[key]! / n), cpuMs: Math.round(cpu[key]! / n) };
const matmulShapes = Object.fromEntries(Object.entries(mmShape).map(([key, e]) => [key, { cpuMsPerStep: Math.round(e.cpuMs / n), gflopPerCpuS: Math.round(e.flop / e.cpuMs / 1e5) / 10 }]));
process.stdout.write(JSON.stringify({ example, timedSteps: n, kernels: k.name, perStep: out, matmulShapes }, null, 2) + "\n");
