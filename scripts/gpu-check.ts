/**
 * npm run gpu:check — the WebGPU kernels (verifier/src/ml/webgpu) against their CPU references on whatever
 * adapter Dawn finds: a real GPU on a machine that has one, SwiftShader (a CPU emulator) otherwise. Two parts:
 *   exact   the mnist-mlp matmul of numerics "bitwise" (webgpu/matmul-wgsl.ts) against kernels/reference.ts matmulRef
 *   v3      numerics bitwise-v3 (reference-v3.ts): the tiled matmul on differential shapes (random, wide,
 *           adversarial with -0, subnormals, Inf, NaN, the 2^-56 and 2^48 bounds) and on the char-transformer/GPT
 *           step's sizes, a summation-order vector, and the soft-float elementwise ops and row kernels
 * Prints the adapter, one row per case (bits equal or the first differing element; time on the adapter, the JS
 * reference and, for the exact matmul, the wasm kernel) and a verdict:
 *   exit 0  PASS        every element of every product equals kernels/reference.ts matmulRef bit for bit
 *   exit 1  FAIL        some element differs (the row names it)
 *   exit 2  NO VERDICT  the adapter process died or errored before all products ran (none differed so far)
 *   exit 3  NO ADAPTER  Dawn found no adapter (set-up: docs/gpu.md)
 * Each group of products runs in its own child process, so a driver crash is reported as such, never as a pass.
 *
 *   node scripts/gpu-check.ts [--quick]      (--quick: the differential groups only, no realistic sizes)
 * On SwiftShader the times are a CPU emulator's; on a GPU the same rows are the GPU's (docs/gpu.md).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WasmKernels } from "../verifier/src/ml/kernels/index.ts";
import { matmulRef, type MatmulLayout } from "../verifier/src/ml/kernels/reference.ts";
import { GpuMatmul, useSwiftShaderWhenNoIcd, WebGpuUnavailableError } from "../verifier/src/ml/webgpu/device.ts";
import { causalSoftmaxBackV3Ref, causalSoftmaxV3Ref, exp32V3, layerNormBackV3Ref, layerNormV3Ref, log32V3, matmulV3Ref, softmaxXentV3Ref } from "../verifier/src/ml/kernels/reference-v3.ts";
import { firstBitDifference, operands, rng, specialsOnlyIn, type InputKind } from "../verifier/src/ml/webgpu/operands.ts";
import { GpuV3 } from "../verifier/src/ml/webgpu/v3-device.ts";

type Product = { name: string; M: number; K: number; N: number; layout: MatmulLayout; kind: InputKind; seed: number; v3?: boolean; count?: number };
type Row = { name: string; shape: string; layout: MatmulLayout; kind: InputKind; diff: number; gpuMs: number; refMs: number; wasmMs: number };

const LAYOUTS: MatmulLayout[] = ["nn", "tn", "nt"];
const KINDS: InputKind[] = ["random", "wide", "adversarial", "cancel", "subnormal"];

/** Group g's products: groups 0..4 are the differential shapes of one input kind; group 5 the realistic sizes. */
function groups(): Product[][] {
  const out: Product[][] = KINDS.map((kind, g) => {
    const rand = rng(0x6c00 + g);
    return LAYOUTS.flatMap((layout) => [1, 47, 48, 49, 130].map((K, i) => ({
      name: `diff-${kind}`, M: 1 + Math.floor(rand() * 16), K, N: 1 + Math.floor(rand() * 16), layout, kind, seed: g * 100 + i,
    })));
  });
  // the mnist-fast step's products (batch 64, 784 pixels, 128 hidden, 10 classes) and one square size
  out.push([
    { name: "mnist fwd1 X.W1", M: 64, K: 784, N: 128, layout: "nn", kind: "random", seed: 1 },
    { name: "mnist bwdW1 X^T.dz1", M: 784, K: 64, N: 128, layout: "tn", kind: "random", seed: 2 },
    { name: "mnist bwdA1 dz2.W2^T", M: 64, K: 10, N: 128, layout: "nt", kind: "random", seed: 3 },
    { name: "square 256", M: 256, K: 256, N: 256, layout: "nn", kind: "wide", seed: 4 },
  ]);
  return out;
}

const V3_KINDS: InputKind[] = ["random", "wide", "adversarial", "v3-edges"];

/** The v3 matmul groups: one per input kind of differential shapes, then the realistic sizes (not with --quick). */
function v3Groups(): Product[][] {
  const out: Product[][] = V3_KINDS.map((kind, g) => {
    const rand = rng(0x7300 + g);
    return LAYOUTS.flatMap((layout) => [1, 16, 17, 130].map((K, i) => ({
      name: "v3 matmul", M: 1 + Math.floor(rand() * 40), K, N: 1 + Math.floor(rand() * 40), layout, kind, seed: 0x7300 + g * 100 + i, v3: true, count: 1 + (i & 1),
    })));
  });
  // the char-transformer step (batch x context 256 rows, d_model 128, ff 512, vocab 65), its attention batch (8 heads of
  // 64x64 scores) and a square 512 (the GPT-class d_model)
  out.push([
    { name: "v3 ff1 X.W1", M: 256, K: 128, N: 512, layout: "nn", kind: "random", seed: 11, v3: true },
    { name: "v3 bwdW X^T.dU", M: 128, K: 256, N: 512, layout: "tn", kind: "random", seed: 12, v3: true },
    { name: "v3 logits H.Wout", M: 256, K: 128, N: 65, layout: "nn", kind: "wide", seed: 13, v3: true },
    { name: "v3 scores Q.K^T x8", M: 64, K: 16, N: 64, layout: "nt", kind: "random", seed: 14, v3: true, count: 8 },
    { name: "v3 square 512", M: 512, K: 512, N: 512, layout: "nn", kind: "random", seed: 15, v3: true },
  ]);
  return out;
}

type V3Case = { name: string; shape: string; run: (gpu: GpuV3) => Promise<Uint32Array>; ref: () => Float32Array };

/** The v3 elementwise cases: each soft-float op on edge values and random bit patterns, and the row kernels. */
function v3Elementwise(): V3Case[] {
  const f = Math.fround;
  const rand = rng(0x7400);
  const n = 20_000;
  const x = new Float32Array(n), y = new Float32Array(n);
  const xb = new Uint32Array(x.buffer), yb = new Uint32Array(y.buffer);
  for (let i = 0; i < n; i++) {
    if (i < n / 2) {
      xb[i] = Math.floor(rand() * 2 ** 32) >>> 0;
      yb[i] = Math.floor(rand() * 2 ** 32) >>> 0;
    } else {
      x[i] = (rand() * 2 - 1) * 2 ** Math.floor(rand() * 14 - 7);
      y[i] = (rand() * 2 - 1) * 2 ** Math.floor(rand() * 14 - 7);
    }
  }
  const ops: [string, (a: number, b: number) => number][] = [
    ["add", (a, b) => f(a + b)], ["sub", (a, b) => f(a - b)], ["mul", (a, b) => f(a * b)], ["div", (a, b) => f(a / b)],
    ["sqrt", (a) => f(Math.sqrt(a))], ["exp32", (a) => exp32V3(a)], ["log32", (a) => log32V3(a)],
  ];
  const cases: V3Case[] = ops.map(([op, fn]) => ({
    name: `v3 ${op}`, shape: `${n}`,
    run: (gpu) => gpu.op(op as never, xb, yb),
    ref: () => Float32Array.from(x, (v, i) => fn(v, y[i]!)),
  }));
  const T = 64, heads = 8;
  const s = Float32Array.from({ length: heads * T * T }, () => (rand() * 2 - 1) * 8);
  cases.push({ name: "v3 causal softmax", shape: `${heads}x${T}x${T}`, run: (gpu) => gpu.rows("causalSoftmax", [new Uint32Array(s.buffer)], heads * T, T, heads * T * T), ref: () => causalSoftmaxV3Ref(s, T, heads) });
  const rows = 256, d = 128;
  const lx = Float32Array.from({ length: rows * d }, () => rand() * 4 - 2), gam = Float32Array.from({ length: d }, () => rand() + 0.5), bet = Float32Array.from({ length: d }, () => rand() - 0.5);
  cases.push({
    name: "v3 layer norm", shape: `${rows}x${d}`,
    run: (gpu) => gpu.rows("layerNorm", [lx, gam, bet].map((t) => new Uint32Array(t.buffer)), rows, d, 2 * rows * d + rows),
    ref: () => {
      const r = layerNormV3Ref(lx, gam, bet, rows, d);
      const out = new Float32Array(2 * rows * d + rows);
      out.set(r.y);
      out.set(r.xhat, rows * d);
      out.set(r.rstd, 2 * rows * d);
      return out;
    },
  });
  const p = causalSoftmaxV3Ref(s, T, heads);
  const dp = Float32Array.from({ length: heads * T * T }, () => rand() * 2 - 1);
  cases.push({ name: "v3 causal softmax bwd", shape: `${heads}x${T}x${T}`, run: (gpu) => gpu.rows("causalSoftmaxBack", [p, dp].map((t) => new Uint32Array(t.buffer)), heads * T, T, heads * T * T), ref: () => causalSoftmaxBackV3Ref(p, dp, T, heads) });
  const ln = layerNormV3Ref(lx, gam, bet, rows, d);
  const dy = Float32Array.from({ length: rows * d }, () => rand() * 2 - 1);
  cases.push({
    name: "v3 layer norm bwd", shape: `${rows}x${d}`,
    run: (gpu) => gpu.rows("layerNormBack", [dy, ln.xhat, ln.rstd, gam].map((t) => new Uint32Array(t.buffer)), rows, d, rows * d + 2 * d),
    ref: () => {
      const r = layerNormBackV3Ref(dy, ln.xhat, ln.rstd, gam, rows, d);
      const out = new Float32Array(rows * d + 2 * d);
      out.set(r.dx);
      out.set(r.dg, rows * d);
      out.set(r.db, rows * d + d);
      return out;
    },
  });
  const V = 65;
  const z = Float32Array.from({ length: rows * V }, () => rand() * 8 - 4);
  const targets = Uint32Array.from({ length: rows }, () => Math.floor(rand() * V));
  cases.push({
    name: "v3 softmax xent", shape: `${rows}x${V}`,
    run: async (gpu) => (await gpu.rows("softmaxXent", [new Uint32Array(z.buffer), targets], rows, V, rows * V + 2 * rows, [new Uint32Array(Float32Array.of(rows).buffer)[0]!])).subarray(0, rows * V + rows),
    ref: () => {
      const rowLoss = new Float32Array(rows);
      const r = softmaxXentV3Ref(z, targets, rows, V, rowLoss);
      const out = new Float32Array(rows * V + rows);
      out.set(r.dz);
      out.set(rowLoss, rows * V);
      return out;
    },
  });
  return cases;
}

/** The summation-order vector: C = 0 only when each output adds its products in ascending k (reference-v3.ts rule 4). */
function orderVector(): { a: Float32Array; b: Float32Array; M: number; K: number; N: number } {
  const M = 16, K = 100, N = 16;
  const a = new Float32Array(M * K).fill(1), b = new Float32Array(K * N).fill(1);
  for (let i = 0; i < M; i++) {
    a[i * K] = 2 ** 24;
    a[i * K + K - 1 - 3 * i] = -(2 ** 24);
  }
  return { a, b, M, K, N };
}

/** A child's device, its adapter reported on stdout; no adapter is reported and ends the child (exit 0). */
async function openOrExit<T extends { info: unknown }>(open: () => Promise<T>): Promise<T> {
  useSwiftShaderWhenNoIcd();
  try {
    const gpu = await open();
    console.log(JSON.stringify({ adapter: gpu.info }));
    return gpu;
  } catch (err) {
    if (err instanceof WebGpuUnavailableError) {
      console.log(JSON.stringify({ noAdapter: err.message }));
      process.exit(0);
    }
    throw err;
  }
}

async function childV3(g: number, quick: boolean): Promise<void> {
  const gpu = await openOrExit(() => GpuV3.create());
  const emit = (name: string, shape: string, layout: string, kind: string, want: Float32Array, got: Uint32Array, gpuMs: number, refMs: number) => {
    const nonCanonical = got.findIndex((v) => (v & 0x7fffffff) > 0x7f800000 && v !== 0x7fc00000);
    const diff = nonCanonical >= 0 ? nonCanonical : firstBitDifference(want, new Float32Array(got.buffer, got.byteOffset, got.length));
    console.log(JSON.stringify({ row: { name, shape, layout, kind, diff, gpuMs, refMs, wasmMs: NaN } }));
  };
  const compile = async (kernel: Parameters<GpuV3["pipeline"]>[0]) => {
    const t = performance.now();
    await gpu.pipeline(kernel);
    console.log(JSON.stringify({ compiled: { kernel, ms: performance.now() - t } }));
  };
  const mm = v3Groups();
  if (g < mm.length) {
    await compile("matmul");
    const products = g === mm.length - 1 && quick ? [] : mm[g]!;
    for (const p of products) {
      const rand = rng(p.seed);
      const count = p.count ?? 1;
      const a = operands(count * p.M * p.K, p.kind, rand), b = operands(count * p.K * p.N, p.kind, rand);
      specialsOnlyIn(a, count * (p.layout === "tn" ? p.K : p.M), p.layout === "tn" ? p.M : p.K, [0, 3]);
      specialsOnlyIn(b, count * (p.layout === "nt" ? p.N : p.K), p.layout === "nt" ? p.K : p.N, [1]);
      let t = performance.now();
      const want = matmulV3Ref(a, b, p.M, p.K, p.N, p.layout, count);
      const refMs = performance.now() - t;
      t = performance.now();
      const got = await gpu.matmul(new Uint32Array(a.buffer), new Uint32Array(b.buffer), p.M, p.K, p.N, p.layout, count);
      emit(p.name, `${count > 1 ? `${count}x` : ""}${p.M}x${p.K}x${p.N}`, p.layout, p.kind, want, got, performance.now() - t, refMs);
    }
    if (g === mm.length - 1) {
      const o = orderVector();
      const want = matmulV3Ref(o.a, o.b, o.M, o.K, o.N);
      const t = performance.now();
      const got = await gpu.matmul(new Uint32Array(o.a.buffer), new Uint32Array(o.b.buffer), o.M, o.K, o.N);
      emit("v3 summation order", `${o.M}x${o.K}x${o.N}`, "nn", "crafted", want, got, performance.now() - t, NaN);
    }
  } else {
    for (const k of ["ops", "causalSoftmax", "causalSoftmaxBack", "layerNorm", "layerNormBack", "softmaxXent"] as const) await compile(k);
    for (const c of v3Elementwise()) {
      let t = performance.now();
      const want = c.ref();
      const refMs = performance.now() - t;
      t = performance.now();
      const got = await c.run(gpu);
      emit(c.name, c.shape, "-", "mixed", want, got, performance.now() - t, refMs);
    }
  }
  gpu.destroy();
}

async function child(g: number): Promise<void> {
  const gpu = await openOrExit(() => GpuMatmul.create());
  const wasm = new WasmKernels();
  for (const p of groups()[g]!) {
    const rand = rng(p.seed);
    const a = operands(p.M * p.K, p.kind, rand);
    const b = operands(p.K * p.N, p.kind, rand);
    let t = performance.now();
    const want = matmulRef(a, b, p.M, p.K, p.N, p.layout);
    const refMs = performance.now() - t;
    t = performance.now();
    wasm.matmul(a, b, p.M, p.K, p.N, p.layout);
    const wasmMs = performance.now() - t;
    t = performance.now();
    const got = new Float32Array((await gpu.matmulBits(new Uint32Array(a.buffer), new Uint32Array(b.buffer), p.M, p.K, p.N, p.layout)).buffer);
    const gpuMs = performance.now() - t;
    const row: Row = { name: p.name, shape: `${p.M}x${p.K}x${p.N}`, layout: p.layout, kind: p.kind, diff: firstBitDifference(want, got), gpuMs, refMs, wasmMs };
    console.log(JSON.stringify({ row }));
  }
  gpu.destroy();
}

function parent(quick: boolean): number {
  const self = fileURLToPath(import.meta.url);
  const exact = groups();
  // the v3 groups run after the exact ones: the matmul kinds, the realistic sizes (+ order vector), the elementwise ops
  const v3 = [...v3Groups().map((ps) => ps.length > 0 ? ps : []), [] as Product[]];
  const all = [...(quick ? exact.slice(0, -1) : exact), ...v3];
  const count = all.length;
  const v3Start = count - v3.length;
  const rows: Row[] = [];
  const died: string[] = [];
  let adapter: unknown = null;
  for (let g = 0; g < count; g++) {
    const args = g < v3Start ? ["--child", String(g)] : ["--child-v3", String(g - v3Start), ...(quick ? ["--quick"] : [])];
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [self, ...args], { encoding: "utf8", timeout: 300_000 });
    const groupRows = rows.length;
    for (const line of r.stdout.split("\n")) {
      if (!line.startsWith("{")) continue;
      const msg = JSON.parse(line) as { adapter?: unknown; noAdapter?: string; row?: Row; compiled?: { kernel: string; ms: number } };
      if (msg.compiled) console.log(`        compiled v3 ${msg.compiled.kernel.padEnd(14)} ${msg.compiled.ms.toFixed(0).padStart(8)} ms`);
      if (msg.noAdapter) {
        console.log(`NO ADAPTER: ${msg.noAdapter}`);
        return 3;
      }
      if (msg.adapter && !adapter) {
        adapter = msg.adapter;
        console.log(`adapter: ${JSON.stringify(adapter)}`);
      }
      if (msg.row) {
        rows.push(msg.row);
        const x = msg.row;
        const ms = (v: number | null, w: number) => (v === null || !Number.isFinite(v) ? "-" : v.toFixed(1)).padStart(w);
        console.log(`${x.diff === -1 ? "equal " : `DIFF@${x.diff}`}  ${x.name.padEnd(22)} ${x.shape.padEnd(14)} ${x.layout.padEnd(2)} ${x.kind.padEnd(11)} gpu ${ms(x.gpuMs, 8)} ms  js-ref ${ms(x.refMs, 7)} ms  wasm ${ms(x.wasmMs, 7)} ms`);
      }
    }
    // a v3 group's row count: its products (+ the order vector after the sizes), or the elementwise cases
    const v3g = g - v3Start;
    const expected = g < v3Start ? all[g]!.length
      : v3g === v3.length - 1 ? v3Elementwise().length
      : v3g === v3.length - 2 ? (quick ? 0 : all[g]!.length) + 1
      : all[g]!.length;
    const got = rows.length - groupRows;
    console.log(`        group ${g}: ${got} rows, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (r.status !== 0 || got < expected) {
      const how = r.signal ? `signal ${r.signal}` : r.error ? r.error.message : `exit ${r.status}`;
      const tail = (r.stderr ?? "").split("\n").filter((l) => l && !l.includes("XDG_RUNTIME_DIR")).slice(-2).join(" | ");
      died.push(`group ${g} (${all[g]![0]?.name ?? "v3 elementwise"}): ${how} after ${got} of ${expected} rows${tail ? `: ${tail}` : ""}`);
    }
  }
  const diffs = rows.filter((x) => x.diff !== -1);
  const sw = (adapter as { isSoftware?: boolean } | null)?.isSoftware;
  console.log(`\n${rows.length} cases compared${sw ? " (software adapter: times are a CPU emulator's, not a GPU's)" : ""}`);
  if (sw) {
    console.log("On a GPU adapter the same rows run on the hardware's driver: PASS there means its compiler (FMA contraction,");
    console.log("flush-to-zero, fast division) left the bits of both numerics intact, and the gpu column times the GPU.");
  }
  for (const d of died) console.log(`died: ${d}`);
  if (diffs.length > 0) {
    console.log(`FAIL: ${diffs.length} products differ from the CPU reference`);
    return 1;
  }
  if (died.length > 0) {
    console.log("NO VERDICT: the adapter process died before every product ran; no product differed so far");
    return 2;
  }
  console.log("PASS: every element of every case equals its CPU reference bit for bit (exact matmul and numerics bitwise-v3)");
  return 0;
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") await child(Number(argv[1]));
else if (argv[0] === "--child-v3") await childV3(Number(argv[1]), argv.includes("--quick"));
else process.exit(parent(argv.includes("--quick")));
