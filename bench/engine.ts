/**
 * bench/engine: training steps per second (step + state hash) of both models on each engine, the
 * state hash's share of that time, and whether each engine is bit-reproducible across runs (two
 * separate processes each) and bitwise equal to tfjs-cpu (every state hash of the run):
 *
 *   pouw       the kernel layer (verifier/src/ml/kernels: wasm SIMD128, JS reference bits): mnist-mlp (tfjs-cpu's
 *              bits) and char-transformer under numerics "bitwise-v2" (examples/sotu-v2.json: sotu.json's job in
 *              the pouw kernels' own order, so its `bitwise` is reproducibility across the two runs, not equality
 *              with tfjs-cpu, whose bits it does not have by design)
 *   tfjs-cpu   @tensorflow/tfjs-backend-cpu (the bits' oracle)
 *   tfjs-wasm  @tensorflow/tfjs-backend-wasm (XNNPACK; tolerance mode only)
 *
 * and, per row, the state digest (verifier/src/trace/digest.ts): every engine runs mnist.json (keccak256, the
 * original digest); pouw also runs examples/mnist-fast.json (the same job with stateDigest "sha256-v2"), so the
 * two pouw rows show the hash share under each digest. Each worker also computes the other digest's hashes of
 * every state outside the timed region, so "bitwise = tfjs-cpu" compares every state under the row's digest.
 *
 *   npm run bench:engine [-- --mnist-steps N --sotu-steps N --gpt-steps N --gpt-threads N --reps N --only mnist,sotu,gpt]
 *
 * `--gpt-threads N` (default 2; 1 skips): the GPT-class model also runs on N matmul threads + the hash worker (as `pouw
 * train --threads N`), interleaved with the 1-thread runs; its states must equal the 1-thread run's (`gptThreads`).
 *
 * `--sotu-warmup N` (default 5): char-transformer steps run untimed before its --sotu-steps timed ones (every engine).
 * `--only` runs a subset (`--only mnist,sotu` skips the GPT-class run, ~3 of the ~5 minutes of a quiet full run);
 * `--reps` (default 2) repeats every variant, interleaved; each row reports its best repeat, and the speed-up over
 * tfjs-cpu per repeat (`speedupVsCpuRuns`, the two runs minutes apart at most) and their median.
 *
 * torch (optional): with a python that imports torch (`--torch-python PATH`, default python3; the row is skipped, with a
 * line saying why, when it cannot), bench/torch_mnist.py trains mnist-mlp on ONE torch thread on the batches this script
 * exports from examples/mnist-fast.json's own Run (same initial weights, same data order), hashing its weights and Adam
 * moments with sha256 after every step, interleaved with the other mnist-mlp rows; `torchRatio` in engine.json is pouw
 * (mnist-fast.json, 1 thread) steps/s over torch's in the same run (the issue's acceptance: >= 0.5).
 *
 * The GPT-class model in numerics bitwise-v3 (examples/gpt-sotu-v3.json: 6 layers, d_model 384, context 256, 10.8M
 * parameters, batch 4) runs --gpt-steps steps (default 4, >= 3; steps 1 and 2 untimed for pouw, step 1 for torch, 0 to skip) per repeat, interleaved with
 * bench/torch_gpt.py (the same architecture, shapes, batch and Adam in torch on ONE thread, sha256 of weights and
 * moments per step) when torch imports; `gptVsTorch` in engine.json is pouw time over torch time for step + hash
 * (wall, best repeat of each, and process CPU), the issue's acceptance: <= 2.5. The pouw repeats' state hashes are
 * compared (bit-reproducible across runs). `node bench/engine-profile.ts` splits a step by kernel.
 *
 * The dense matmul of numerics "bitwise-v3" (`--only matmul`, part of the default set): GFLOP/s (2 n^3 / wall time, the
 * best of --reps rounds of 5 calls each, every (n, engine) its own process, interleaved) of the wasm SIMD128 kernel
 * (kernels/wasm/matmul-v3.wat through WasmMatmulV3, 1 thread; ThreadedKernels.matmulV3, 2 threads) at n = 256, 512,
 * 1024 (`--matmul-sizes`), beside OpenBLAS sgemm on one thread (numpy float32 `a @ b` with OPENBLAS_NUM_THREADS=1)
 * and torch.mm on one thread when that python imports them, and the engine's existing dense kernel (kernels.wasm, f64x2
 * sums in tfjs-cpu's order) on one thread; `ratio` = pouw 1 thread / sgemm. The 1- and 2-thread
 * results are checked to be the same bits (sha256 of C). Written under `matmulV3` in engine.json; a run of
 * `--only matmul` alone keeps the file's other rows and replaces that key only.
 *
 * Writes bench/results/engine.json and prints a table. `hashShare` is wall time (as before); `hashShareCpu` the same
 * share in process CPU time, which other jobs on a shared machine move less. Each run is its own OS process (the
 * parent spawns `node bench/engine.ts --worker ...`), so nothing is shared between repeats.
 * tfjs-wasm runs use a copy of the manifest with numerics "tolerance" (bitwise manifests refuse wasm).
 * Every engine runs one thread (tfjs-wasm in Node has no worker threads; docs/determinism.md), and pouw also runs
 * mnist-fast.json pipelined: `threads` in a row is the threads in use. threads 2 = one step thread + the hash worker
 * (`pouw train --hash-worker`: h(t) hashed on a worker while step t+1 runs); threads 3 = 2 matmul threads + the hash
 * worker (`pouw train --threads 2`: the large matmuls split by output rows). A pipelined row's `hashShare` is the
 * time the step loop waits for the hash (the copy of the state into the worker's buffer, plus any wait), and its CPU
 * shares count every thread.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

type Backend = "cpu" | "wasm" | "pouw" | "torch";
const ENGINE_NAME: Record<Backend, string> = { pouw: "pouw", cpu: "tfjs-cpu", wasm: "tfjs-wasm", torch: "torch" };

type Digest = "keccak256" | "sha256-v1" | "sha256-v2";

type WorkerResult = {
  model: string;
  stateDigest: Digest;
  /** bytes hashed per state (weights + optimizer state). */
  stateBytes: number;
  backend: string;
  kernels: string | null;
  steps: number;
  /** steps/s (step + state hash) over steps warmup+1..N (the warm-up steps include JIT and kernel tier-up; warmup 1 unless told). */
  stepsPerSecond: number;
  /** Share of steps 2..N's time spent in run.stateHashOf. */
  hashShare: number;
  stepMs: number;
  hashMs: number;
  /** process CPU time per step and per hash (steps 2..N): less moved by other jobs on a shared machine than wall time. */
  stepCpuMs: number;
  hashCpuMs: number;
  hashShareCpu: number;
  firstStepSeconds: number;
  hashes: string[];
  /** h(0..N) under each digest (the run's own one timed, the other computed outside the timed region). */
  hashesByDigest: Record<Digest, string[]>;
  losses: number[];
  finalCheckpoint: string;
};

async function worker(example: string, backend: Exclude<Backend, "torch">, steps: number, outFile: string, threads: number, hashWorker: boolean, warmup: number, freshStates = false): Promise<void> {
  const { createRun, offlineSalt, parseManifest } = await import("../verifier/src/ml/index.ts");
  const { HashPipeline } = await import("../verifier/src/ml/hash-pipeline.ts");
  const { float32Chunks } = await import("../verifier/src/ml/tensors.ts");
  const { tensorStateHash } = await import("../verifier/src/trace/index.ts");
  const json = JSON.parse(readFileSync(join(ROOT, "examples", example), "utf8")) as Record<string, unknown>;
  if (backend === "wasm") json.numerics = "tolerance";
  const run = await createRun(parseManifest(json), { jobId: 1n, salt: offlineSalt(1n), backend, threads });
  // threads > 1: as `pouw train --threads`, h(t) on a worker overlapped with step t+1; the timed "hash" is then
  // what the step loop waits for (the copy into the worker's buffer, plus any wait for h(t-1))
  const pipe = threads > 1 || hashWorker ? new HashPipeline(run.stateDigest, run.jobId) : null;
  pipe?.waitReady(); // module loading of the worker is start-up, not per-step cost
  let state = run.initState();
  const other: Digest = run.stateDigest === "keccak256" ? "sha256-v1" : "keccak256";
  const otherHash = (s: typeof state) => tensorStateHash(other, run.jobId, s.step, float32Chunks(s.params), float32Chunks(s.opt));
  const hashes = [run.stateHashOf(state)];
  const otherHashes = [otherHash(state)];
  const losses: number[] = [];
  let firstStepSeconds = 0;
  let stepMs = 0;
  let hashMs = 0;
  let stepCpuMs = 0;
  let hashCpuMs = 0;
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  // the segment loop's state hand-back (ml/segments.ts): step t writes into state t-2, hashed (or copied into the hash
  // worker's buffer) by its own iteration; `fresh-states` turns it off (a fresh state per step, for comparison)
  let older: typeof state | null = null;
  let newer: typeof state | null = null;
  for (let t = 1; t <= steps; t++) {
    const c0 = cpuMs();
    const t0 = performance.now();
    const r = run.step(state, t, older && !freshStates ? { into: older } : {});
    const t1 = performance.now();
    const c1 = cpuMs();
    state = r.state;
    older = newer;
    newer = state;
    losses.push(r.loss);
    if (pipe) {
      if (pipe.pending > 0) hashes.push(pipe.next());
      pipe.submit(state);
    } else hashes.push(run.stateHashOf(state));
    const t2 = performance.now();
    const c2 = cpuMs();
    if (t === 1) firstStepSeconds = (t2 - t0) / 1000;
    if (t > warmup) {
      stepMs += t1 - t0;
      hashMs += t2 - t1;
      stepCpuMs += c1 - c0;
      hashCpuMs += c2 - c1;
    }
    otherHashes.push(otherHash(state));
  }
  if (pipe) {
    hashes.push(pipe.next());
    await pipe.close();
  }
  await run.close();
  const elapsed = (stepMs + hashMs) / 1000;
  writeFileSync(outFile, run.checkpointBytes(state));
  const result: WorkerResult = {
    model: run.model.arch,
    stateDigest: run.stateDigest,
    stateBytes: state.params.reduce((n, a) => n + a.byteLength, 0) + state.opt.reduce((n, a) => n + a.byteLength, 0),
    backend,
    kernels: run.kernels?.name ?? null,
    steps,
    stepsPerSecond: (steps - warmup) / elapsed,
    hashShare: hashMs / (stepMs + hashMs),
    stepMs: stepMs / (steps - warmup),
    hashMs: hashMs / (steps - warmup),
    stepCpuMs: stepCpuMs / (steps - warmup),
    hashCpuMs: hashCpuMs / (steps - warmup),
    hashShareCpu: hashCpuMs / (stepCpuMs + hashCpuMs),
    firstStepSeconds,
    hashes,
    hashesByDigest: { [run.stateDigest]: hashes, [other]: otherHashes } as Record<Digest, string[]>,
    losses,
    finalCheckpoint: outFile,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

/**
 * `--export-torch EXAMPLE STEPS FILE`: writes what bench/torch_mnist.py trains on (its docstring has the layout): the
 * Run's initial weights, Adam settings and the batches of steps 1..STEPS, so torch trains the same job on the same data.
 */
async function exportForTorch(example: string, steps: number, file: string): Promise<void> {
  const { createRun, offlineSalt, parseManifest } = await import("../verifier/src/ml/index.ts");
  const manifest = parseManifest(JSON.parse(readFileSync(join(ROOT, "examples", example), "utf8")));
  if (manifest.model.arch !== "mnist-mlp" || manifest.optimizer.name !== "adam") throw new Error(`the torch row trains mnist-mlp with Adam, not ${example}`);
  const run = await createRun(manifest, { jobId: 1n, salt: offlineSalt(1n), backend: "pouw" });
  const opt = manifest.optimizer;
  const header = { hidden: manifest.model.hidden, batch: manifest.training.batchSize, steps, lr: opt.lr, beta1: opt.beta1, beta2: opt.beta2, epsilon: opt.epsilon };
  const parts: Uint8Array[] = [Buffer.from(JSON.stringify(header) + "\n")];
  const f32 = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  for (const p of run.initState().params) parts.push(f32(p));
  for (let t = 1; t <= steps; t++) {
    const b = run.batchFor(t);
    if (b.kind !== "images") throw new Error("mnist-mlp batch expected");
    parts.push(f32(b.x), b.y);
  }
  await run.close();
  writeFileSync(file, Buffer.concat(parts));
}

/** Whether `python` imports torch (the torch row is optional); the reason when not. */
function torchAvailable(python: string): { ok: true; version: string } | { ok: false; why: string } {
  const r = spawnSync(python, ["-c", "import torch; print(torch.__version__)"], { encoding: "utf8" });
  if (r.error) return { ok: false, why: `${python}: ${r.error.message}` };
  if (r.status !== 0) return { ok: false, why: `${python} cannot import torch: ${r.stderr.trim().split("\n").at(-1)}` };
  return { ok: true, version: r.stdout.trim() };
}

type TorchResult = Omit<WorkerResult, "hashesByDigest" | "model" | "stateDigest" | "backend" | "kernels"> & { torch: string; finalWeights: string };

function spawnTorch(python: string, exportFile: string): WorkerResult & { torch: string } {
  const r = spawnSync(python, [join(ROOT, "bench/torch_mnist.py"), exportFile], { encoding: "utf8", cwd: ROOT, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`torch worker failed: ${r.stderr}`);
  const t = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as TorchResult;
  return { ...t, model: "mnist-mlp", stateDigest: "sha256-v2", backend: "torch", kernels: null, hashesByDigest: {} as Record<Digest, string[]>, finalCheckpoint: t.finalWeights };
}

/** The float32 data section of a checkpoint (weights || optimizer state). */
function checkpointData(path: string, paramBytes: number): Float32Array {
  const b = readFileSync(path);
  const n = Number(b.readBigUInt64LE(0));
  const data = new Float32Array(paramBytes / 4);
  for (let i = 0; i < data.length; i++) data[i] = b.readFloatLE(8 + n + 4 * i);
  return data;
}

function weightsBytesOf(path: string): number {
  const b = readFileSync(path);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString("utf8")) as Record<string, { data_offsets?: [number, number] }>;
  return Math.max(...Object.entries(header).filter(([k]) => k.startsWith("param.")).map(([, v]) => v.data_offsets![1]));
}

function spawnWorker(example: string, backend: string, steps: number, out: string, threads: number, hashWorker = false, warmup = 1): WorkerResult {
  const r = spawnSync(process.execPath, [join(ROOT, "bench/engine.ts"), "--worker", example, backend, String(steps), out, String(threads), hashWorker ? "hash-worker" : "inline", String(warmup)], { encoding: "utf8", cwd: ROOT, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`worker ${example} ${backend} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as WorkerResult;
}

function firstDivergence(a: string[], b: string[]): number | null {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return null;
}

/**
 * One (n, threads) of the bitwise-v3 matmul rows: `calls` timed products after one untimed, in this process. threads 0:
 * the engine's existing dense kernel instead (kernels.wasm, tfjs-cpu's f64x2 order), 1 thread, for comparison.
 */
async function matmulWorker(n: number, threads: number, calls: number): Promise<void> {
  const { ThreadedKernels, WasmKernels, WasmMatmulV3 } = await import("../verifier/src/ml/kernels/index.ts");
  const { createHash } = await import("node:crypto");
  let seed = 12345;
  const rand = (len: number) => Float32Array.from({ length: len }, () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 31) - 1);
  const a = rand(n * n), b = rand(n * n);
  const pool = threads > 1 ? new ThreadedKernels(threads, new WasmKernels(), { minMacs: 0 }) : null;
  const one = pool ? null : new WasmMatmulV3();
  const f64x2 = threads === 0 ? new WasmKernels() : null;
  const mm = () => (f64x2 ? f64x2.matmul(a, b, n, n, n) : pool ? pool.matmulV3(a, b, n, n, n) : one!.matmul(a, b, n, n, n));
  const c = mm();
  const ms: number[] = [];
  const cpuMs: number[] = [];
  for (let i = 0; i < calls; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    mm();
    ms.push(performance.now() - t0);
    const c1 = process.cpuUsage(c0);
    cpuMs.push((c1.user + c1.system) / 1000);
  }
  await pool?.close();
  process.stdout.write(JSON.stringify({ ms, cpuMs, sha256: createHash("sha256").update(new Uint8Array(c.buffer)).digest("hex") }) + "\n");
}

/** OpenBLAS sgemm (numpy float32) and torch.mm, each on ONE thread: best-of-`calls` ms per size, or why not. */
const SGEMM_PY = `
import json, os, sys, time
n_list = [int(x) for x in sys.argv[1].split(",")]; calls = int(sys.argv[2]); out = {}
def bench(mm, a, b):
    mm(a, b); ms = []
    for _ in range(calls):
        t0 = time.perf_counter(); mm(a, b); ms.append((time.perf_counter() - t0) * 1000)
    return ms
try:
    import numpy as np
    rng = np.random.default_rng(1)
    out["numpy"] = {"version": np.__version__, "ms": {str(n): bench(np.matmul, *(rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2))) for n in n_list}}
except Exception as e:
    out["numpy"] = {"error": repr(e)}
try:
    import torch
    torch.set_num_threads(1)
    out["torch"] = {"version": torch.__version__, "ms": {str(n): bench(torch.mm, torch.rand(n, n) * 2 - 1, torch.rand(n, n) * 2 - 1) for n in n_list}}
except Exception as e:
    out["torch"] = {"error": repr(e)}
print(json.dumps(out))
`;

type MatmulV3Bench = Record<string, unknown>;

/** The bitwise-v3 matmul rows (see the header): pouw 1 and 2 threads, sgemm and torch 1 thread, `reps` interleaved rounds. */
function matmulV3Rows(sizes: number[], reps: number, python: string): MatmulV3Bench {
  const calls = 5;
  const pouw: Record<string, { ms: number[]; cpuMs: number[]; sha256: string[] }> = {};
  const blas: Record<string, Record<string, number[]>> = { numpy: {}, torch: {} };
  const versions: Record<string, string> = {};
  const absent: Record<string, string> = {};
  for (let rep = 0; rep < reps; rep++) {
    for (const n of sizes) {
      for (const threads of [1, 2, 0]) {
        process.stderr.write(`bench:engine matmul ${threads === 0 ? "f64x2 (kernels.wasm)" : "bitwise-v3"} n=${n} ${threads || 1} thread(s) round ${rep + 1}/${reps}\n`);
        const r = spawnSync(process.execPath, [join(ROOT, "bench/engine.ts"), "--matmul-worker", String(n), String(threads), String(calls)], { encoding: "utf8", cwd: ROOT });
        if (r.status !== 0) throw new Error(`matmul worker n=${n} threads=${threads} failed: ${r.stderr}`);
        const w = JSON.parse(r.stdout) as { ms: number[]; cpuMs: number[]; sha256: string };
        const key = `${n}/${threads}`;
        (pouw[key] ??= { ms: [], cpuMs: [], sha256: [] }).ms.push(...w.ms);
        pouw[key].cpuMs.push(...w.cpuMs);
        pouw[key].sha256.push(w.sha256);
      }
    }
    process.stderr.write(`bench:engine matmul sgemm (numpy) / torch, 1 thread, round ${rep + 1}/${reps}\n`);
    const one = { ...process.env, OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
    const py = spawnSync(python, ["-c", SGEMM_PY, sizes.join(","), String(calls)], { encoding: "utf8", env: one });
    if (py.status !== 0 || py.error) {
      absent.numpy = absent.torch = `${python}: ${py.error?.message ?? py.stderr.trim().split("\n").at(-1)}`;
      continue;
    }
    const out = JSON.parse(py.stdout) as Record<string, { version?: string; ms?: Record<string, number[]>; error?: string }>;
    for (const lib of ["numpy", "torch"]) {
      const o = out[lib]!;
      if (o.error) absent[lib] = o.error;
      else {
        versions[lib] = o.version!;
        for (const [n, ms] of Object.entries(o.ms!)) (blas[lib]![n] ??= []).push(...ms);
      }
    }
  }
  const gf = (n: number, ms: number) => (2 * n ** 3) / (ms / 1000) / 1e9;
  const best = (v: number[] | undefined) => (v && v.length ? Math.min(...v) : null);
  const rows = sizes.map((n) => {
    const p1 = pouw[`${n}/1`]!, p2 = pouw[`${n}/2`]!, p0 = pouw[`${n}/0`]!;
    const b1 = best(p1.ms)!, b2 = best(p2.ms)!, b0 = best(p0.ms)!;
    const np = best(blas.numpy![String(n)]), th = best(blas.torch![String(n)]);
    return {
      n,
      pouw1Ms: b1, pouw1Gflops: gf(n, b1),
      // process CPU time of the 1-thread calls: what other jobs on a shared machine move less than wall time
      pouw1CpuGflops: gf(n, best(p1.cpuMs)!),
      pouw2Ms: b2, pouw2Gflops: gf(n, b2),
      twoThreadSpeedup: b1 / b2,
      // the engine's existing dense kernel (kernels.wasm: tfjs-cpu's order, f64x2 sums), 1 thread
      f64x2Ms: b0, f64x2Gflops: gf(n, b0), f64x2CpuGflops: gf(n, best(p0.cpuMs)!), v3OverF64x2: b0 / b1,
      sameBits1vs2: [...p1.sha256, ...p2.sha256].every((h) => h === p1.sha256[0]),
      sgemmMs: np, sgemmGflops: np === null ? null : gf(n, np),
      ratioVsSgemm: np === null ? null : np / b1,
      torchMs: th, torchGflops: th === null ? null : gf(n, th),
      ratioVsTorch: th === null ? null : th / b1,
      pouw1MsRuns: p1.ms, pouw1CpuMsRuns: p1.cpuMs, pouw2MsRuns: p2.ms, sgemmMsRuns: blas.numpy![String(n)] ?? null, torchMsRuns: blas.torch![String(n)] ?? null,
    };
  });
  return {
    kernel: "kernels/wasm/matmul-v3.wat (4x8 f32x4 tiles, bf16 operands packed once, k sequential per element), nn layout, uniform [-1, 1) operands",
    timing: `best of ${reps} rounds x ${calls} calls, wall time; every (n, engine) its own process; GFLOP/s = 2 n^3 / time`,
    sgemm: versions.numpy ? `numpy ${versions.numpy} float32 matmul, OPENBLAS_NUM_THREADS=1` : `absent: ${absent.numpy ?? "not run"}`,
    torch: versions.torch ? `torch ${versions.torch} mm, set_num_threads(1)` : `absent: ${absent.torch ?? "not run"}`,
    loadAverage: loadavg(),
    rows,
  };
}

function matmulTable(m: MatmulV3Bench): string {
  const f = (x: number | null, d = 1) => (x === null ? "-" : x.toFixed(d));
  const rows = m.rows as { n: number; f64x2Gflops: number; f64x2CpuGflops: number; pouw1Gflops: number; pouw1CpuGflops: number; pouw2Gflops: number; twoThreadSpeedup: number; sameBits1vs2: boolean; sgemmGflops: number | null; ratioVsSgemm: number | null; torchGflops: number | null; ratioVsTorch: number | null }[];
  return [
    "| n | pouw v3 1 thread GFLOP/s | (per CPU second) | f64x2 kernel 1 thread (per CPU second) | pouw v3 2 threads GFLOP/s | 2 threads / 1 | same bits | sgemm 1 thread GFLOP/s | pouw / sgemm | torch 1 thread GFLOP/s | pouw / torch |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.n} | ${f(r.pouw1Gflops)} | ${f(r.pouw1CpuGflops)} | ${f(r.f64x2Gflops)} (${f(r.f64x2CpuGflops)}) | ${f(r.pouw2Gflops)} | ${f(r.twoThreadSpeedup, 2)}x | ${r.sameBits1vs2 ? "yes" : "NO"} | ${f(r.sgemmGflops)} | ${f(r.ratioVsSgemm, 2)} | ${f(r.torchGflops)} | ${f(r.ratioVsTorch, 2)} |`),
    `sgemm: ${m.sgemm as string}; torch: ${m.torch as string}; target: pouw v3 >= 25 GFLOP/s on one thread at n=1024`,
  ].join("\n");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--matmul-worker") {
    await matmulWorker(Number(args[1]), Number(args[2]), Number(args[3]));
    return;
  }
  if (args[0] === "--worker") {
    await worker(args[1]!, args[2] as Exclude<Backend, "torch">, Number(args[3]), args[4]!, Number(args[5] ?? 1), args[6] === "hash-worker", Number(args[7] ?? 1), args[8] === "fresh-states");
    return;
  }
  if (args[0] === "--export-torch") {
    await exportForTorch(args[1]!, Number(args[2]), args[3]!);
    return;
  }
  const flag = (name: string, dflt: number) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const pyAt = args.indexOf("--torch-python");
  const python = pyAt >= 0 ? args[pyAt + 1]! : "python3";
  const torch = torchAvailable(python);
  if (!torch.ok) process.stderr.write(`bench:engine: no torch row (optional): ${torch.why}\n`);
  // pouw runs mnist-mlp (tfjs-cpu's bits) and char-transformer under bitwise-v2 (sotu-v2.json, its own bits). The first variant of
  // each model must be tfjs-cpu's: the other rows are compared with it.
  // threads: matmul threads of the pouw engine; hashWorker: h(t) on one more thread (HashPipeline), as `pouw train --hash-worker`
  type Variant = { backend: Backend; example: string; threads?: number; hashWorker?: boolean };
  const onlyAt = args.indexOf("--only");
  const only = new Set((onlyAt >= 0 ? args[onlyAt + 1]! : "mnist,sotu,gpt,matmul").split(","));
  for (const o of only) if (!["mnist", "sotu", "gpt", "matmul"].includes(o)) throw new Error(`--only takes a comma list of mnist, sotu, gpt, matmul; got ${o}`);
  const reps = flag("--reps", 2);
  if (!Number.isInteger(reps) || reps < 2) throw new Error(`--reps must be an integer >= 2 (reproducibility compares two runs), got ${reps}`);
  const mnistSteps = flag("--mnist-steps", 60);
  // warmup: the first steps of every run, untimed (mnist 1, as torch_mnist.py; sotu 5: the pouw char-transformer's JS
  // elementwise kernels and wasm tiers are still warming up over its first ~5 steps, 140-290 ms against ~45 ms after)
  type Plan = { name: string; steps: number; warmup: number; batchSize: number; variants: Variant[] };
  const fullPlan: Plan[] = [
    {
      name: "mnist",
      steps: mnistSteps,
      warmup: 1,
      batchSize: 64,
      variants: [
        { backend: "cpu", example: "mnist.json" },
        { backend: "pouw", example: "mnist.json" },
        { backend: "pouw", example: "mnist-fast.json" },
        { backend: "pouw", example: "mnist-fast.json", hashWorker: true },
        { backend: "pouw", example: "mnist-fast.json", threads: 2 },
        { backend: "wasm", example: "mnist.json" },
        ...(torch.ok ? [{ backend: "torch" as const, example: "mnist-fast.json" }] : []),
      ],
    },
    {
      name: "sotu",
      steps: flag("--sotu-steps", 4),
      warmup: flag("--sotu-warmup", 5),
      batchSize: 8,
      // pouw right after tfjs-cpu in each repeat: the char-transformer speed-up is taken per repeat from these two
      // adjacent runs (same model and batches: sotu-v2.json is sotu.json with numerics bitwise-v2 and sha256-v1)
      variants: [{ backend: "cpu", example: "sotu.json" }, { backend: "pouw", example: "sotu-v2.json" }, { backend: "wasm", example: "sotu.json" }],
    },
  ];
  const plan = fullPlan.filter((p) => only.has(p.name));
  const gptSteps = only.has("gpt") ? flag("--gpt-steps", 4) : 0;
  // --gpt-threads N: also run the GPT-class model on N matmul threads (default 2; 1 skips), interleaved with 1 thread
  const gptThreadCount = flag("--gpt-threads", 2);
  if (!Number.isInteger(gptThreadCount) || gptThreadCount < 1 || gptThreadCount > 64) throw new Error(`--gpt-threads takes an integer in [1, 64]; got ${gptThreadCount}`);
  if (gptSteps === 1 || gptSteps === 2) throw new Error("--gpt-steps must be 0 (skip) or >= 3 (pouw's steps 1 and 2 are untimed)");
  const sizesAt = args.indexOf("--matmul-sizes");
  const matmulSizes = (sizesAt >= 0 ? args[sizesAt + 1]! : "256,512,1024").split(",").map(Number);
  for (const n of matmulSizes) if (!Number.isInteger(n) || n < 1 || n > 4096) throw new Error(`--matmul-sizes takes a comma list of integers in [1, 4096]; got ${n}`);
  if (only.size === 1 && only.has("matmul")) {
    // the matmul rows alone: the rest of engine.json (the model rows of an earlier run) is kept
    const m = matmulV3Rows(matmulSizes, reps, python);
    const file = join(ROOT, "bench/results/engine.json");
    const old = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...old, matmulV3: { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, ...m } }, null, 2) + "\n");
    process.stdout.write(matmulTable(m) + `\nload average at the end ${loadavg().map((x) => x.toFixed(2)).join(" ")}\nwrote bench/results/engine.json (matmulV3)\n`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), "pouw-bench-engine-"));
  const rows: Record<string, unknown>[] = [];
  let gptVsTorch: Record<string, unknown> | null = null;
  let gptThreads: Record<string, unknown> | null = null;
  const matmulV3 = only.has("matmul") ? matmulV3Rows(matmulSizes, reps, python) : null;
  try {
    for (const { steps: timed, warmup, batchSize, variants } of plan) {
      // mnist: --mnist-steps counts step 1 (the torch row's convention); sotu: the timed steps come after the warm-up
      const steps = warmup > 1 ? warmup + timed : timed;
      const runs: WorkerResult[][] = [];
      // the repeats are interleaved (variant order, then again), so a change of machine load hits every variant
      for (let rep = 0; rep < reps; rep++) {
        for (const [vi, { backend, example, threads = 1, hashWorker = false }] of variants.entries()) {
          process.stderr.write(`bench:engine ${example} ${backend} threads ${threads}${hashWorker ? " + hash worker" : ""} run ${rep + 1}/${reps} (${steps} steps)\n`);
          if (backend === "torch") {
            const exportFile = join(tmp, `torch-${example}-${steps}.bin`);
            if (rep === 0) {
              const e = spawnSync(process.execPath, [join(ROOT, "bench/engine.ts"), "--export-torch", example, String(steps), exportFile], { encoding: "utf8", cwd: ROOT });
              if (e.status !== 0) throw new Error(`torch export failed: ${e.stderr}`);
            }
            (runs[vi] ??= []).push(spawnTorch(python, exportFile));
          } else (runs[vi] ??= []).push(spawnWorker(example, backend, steps, join(tmp, `${vi}-${example}-${backend}-${rep}.safetensors`), threads, hashWorker, warmup));
        }
      }
      const cpu = runs[0]!;
      const paramBytes = weightsBytesOf(cpu[0]!.finalCheckpoint);
      const wCpu = checkpointData(cpu[0]!.finalCheckpoint, paramBytes);
      for (const [vi, { backend, example, threads = 1, hashWorker = false }] of variants.entries()) {
        const r = runs[vi]!;
        const wOther = backend === "torch" ? new Float32Array(readFileSync(r[0]!.finalCheckpoint).buffer.slice(0)) : checkpointData(r[0]!.finalCheckpoint, paramBytes);
        let maxAbs = 0;
        let diff2 = 0;
        let norm2 = 0;
        for (let i = 0; i < wCpu.length; i++) {
          const d = wCpu[i]! - wOther[i]!;
          maxAbs = Math.max(maxAbs, Math.abs(d));
          diff2 += d * d;
          norm2 += wCpu[i]! * wCpu[i]!;
        }
        const best = r.reduce((a, b) => (b.stepsPerSecond > a.stepsPerSecond ? b : a));
        const digest = r[0]!.stateDigest;
        const cpuHashes = cpu[0]!.hashesByDigest[digest];
        const numerics = backend === "torch" ? "torch float32" : example === "sotu-v2.json" ? "bitwise-v2" : backend === "wasm" ? "tolerance" : "bitwise";
        // bitwise-v2 has its own bits: reproducible across runs is what "bitwise" means for it
        const bitwise =
          backend === "torch" ? false : numerics === "bitwise-v2" ? firstDivergence(r[0]!.hashes, r[1]!.hashes) === null : r.every((x) => firstDivergence(cpuHashes, x.hashes) === null);
        // speed-up over tfjs-cpu per repeat (the runs of one repeat are minutes apart at most), and their median
        const vsCpuRuns = r.map((x, i) => x.stepsPerSecond / cpu[i]!.stepsPerSecond);
        const vsCpuMedian = [...vsCpuRuns].sort((a, b) => a - b)[Math.floor(vsCpuRuns.length / 2)]!;
        rows.push({
          model: r[0]!.model,
          engine: ENGINE_NAME[backend],
          // threads in use: the matmul threads, plus the hash worker
          threads: threads + (threads > 1 || hashWorker ? 1 : 0),
          matmulThreads: threads,
          hashMode: threads > 1 || hashWorker ? `pipelined (${threads} matmul thread${threads > 1 ? "s" : ""} + hash worker)` : "inline",
          stepsPerSecond: best.stepsPerSecond,
          hashShare: best.hashShare,
          bitwise,
          stateDigest: digest,
          numerics,
          manifest: `examples/${example}`,
          backend,
          kernels: r[0]!.kernels,
          batchSize,
          steps,
          warmupSteps: warmup,
          stepMs: best.stepMs,
          hashMs: best.hashMs,
          stepCpuMs: best.stepCpuMs,
          hashCpuMs: best.hashCpuMs,
          hashShareCpu: best.hashShareCpu,
          hashShareCpuRuns: r.map((x) => x.hashShareCpu),
          stateBytes: best.stateBytes,
          hashMBPerSecond: best.stateBytes / 1e6 / (best.hashMs / 1000),
          stepsPerSecondRuns: r.map((x) => x.stepsPerSecond),
          hashShareRuns: r.map((x) => x.hashShare),
          speedupVsCpuRuns: vsCpuRuns,
          speedupVsCpuMedian: vsCpuMedian,
          firstStepSeconds: r[0]!.firstStepSeconds,
          reproducibleAcrossRuns: firstDivergence(r[0]!.hashes, r[1]!.hashes) === null,
          firstDivergentStateAcrossRuns: firstDivergence(r[0]!.hashes, r[1]!.hashes),
          matchesCpu: bitwise,
          firstDivergentStateVsCpu: firstDivergence(cpuHashes, r[0]!.hashes),
          finalWeightsMaxAbsDiffVsCpu: maxAbs,
          finalWeightsRelL2DiffVsCpu: Math.sqrt(diff2 / norm2),
          lossAtLastStep: r[0]!.losses.at(-1),
        });
      }
    }
    if (gptSteps > 0) {
      // the GPT-class model in numerics bitwise-v3 (examples/gpt-sotu-v3.json) against torch on one thread (the same
      // architecture, shapes, batch and Adam: bench/torch_gpt.py), repeats interleaved; step 1 of each run untimed
      const manifest = JSON.parse(readFileSync(join(ROOT, "examples/gpt-sotu-v3.json"), "utf8")) as { model: { layers: number; dModel: number; heads: number; context: number }; training: { batchSize: number }; optimizer: { lr: number } };
      const { layers, dModel, heads, context } = manifest.model;
      const gptBatch = manifest.training.batchSize;
      const pouwRuns: WorkerResult[] = [];
      const pouwThreadRuns: WorkerResult[] = [];
      const torchRuns: { stepsPerSecond: number; stepMs: number; hashMs: number; stepCpuMs: number; hashCpuMs: number; torch: string; params: number }[] = [];
      for (let rep = 0; rep < reps; rep++) {
        if (torch.ok) {
          process.stderr.write(`bench:engine gpt-sotu torch 1 thread (${gptSteps} steps), round ${rep + 1}/${reps}\n`);
          const t = spawnSync(python, [join(ROOT, "bench/torch_gpt.py"), ...[layers, dModel, heads, context, 4 * dModel, 96, gptBatch, gptSteps].map(String), String(manifest.optimizer.lr)], { encoding: "utf8", cwd: ROOT, maxBuffer: 1 << 26 });
          if (t.status !== 0) throw new Error(`torch_gpt.py failed: ${t.stderr}`);
          torchRuns.push(JSON.parse(t.stdout.trim().split("\n").at(-1)!));
        }
        process.stderr.write(`bench:engine gpt-sotu-v3.json pouw (${gptSteps} steps), round ${rep + 1}/${reps}\n`);
        // steps 1 and 2 untimed: from step 3 on every step writes into a handed-back state (the segment loop's steady
        // state, as torch's in-place Adam), steps 1 and 2 into fresh memory
        pouwRuns.push(spawnWorker("gpt-sotu-v3.json", "pouw", gptSteps, join(tmp, `gpt-${rep}.safetensors`), 1, false, 2));
        if (gptThreadCount > 1) {
          // the same run on N matmul threads (units claimed by every thread) + the hash worker, as `pouw train --threads N`
          process.stderr.write(`bench:engine gpt-sotu-v3.json pouw ${gptThreadCount} threads (${gptSteps} steps), round ${rep + 1}/${reps}\n`);
          pouwThreadRuns.push(spawnWorker("gpt-sotu-v3.json", "pouw", gptSteps, join(tmp, `gpt-t-${rep}.safetensors`), gptThreadCount, false, 2));
        }
      }
      const bestOf = <T extends { stepsPerSecond: number }>(xs: T[]): T => xs.reduce((a, b) => (b.stepsPerSecond > a.stepsPerSecond ? b : a));
      const g = bestOf(pouwRuns);
      const cpuPerStep = (x: { stepCpuMs: number; hashCpuMs: number }) => x.stepCpuMs + x.hashCpuMs;
      // one row of the pouw GPT-class runs `runs` (best repeat `best`); the threaded runs were checked equal to 1 thread above
      const gptRow = (runs: WorkerResult[], threadFields: Record<string, unknown>) => {
        const best = bestOf(runs);
        const divergence = runs.map((r) => firstDivergence(pouwRuns[0]!.hashes, r.hashes)).find((x) => x !== null) ?? null;
        return {
          model: "gpt-sotu", engine: "pouw", ...threadFields, stepsPerSecond: best.stepsPerSecond, hashShare: best.hashShare,
          bitwise: null, stateDigest: best.stateDigest, numerics: "bitwise-v3", manifest: "examples/gpt-sotu-v3.json", backend: "pouw", kernels: best.kernels,
          batchSize: gptBatch, steps: gptSteps, stepMs: best.stepMs, hashMs: best.hashMs, stepCpuMs: best.stepCpuMs, hashCpuMs: best.hashCpuMs, hashShareCpu: best.hashShareCpu,
          stateBytes: best.stateBytes, hashMBPerSecond: best.stateBytes / 1e6 / (best.hashMs / 1000), firstStepSeconds: best.firstStepSeconds,
          stepsPerSecondRuns: runs.map((r) => r.stepsPerSecond), cpuMsPerStepRuns: runs.map(cpuPerStep),
          reproducibleAcrossRuns: divergence === null, firstDivergentStateAcrossRuns: divergence, lossAtLastStep: best.losses.at(-1),
        };
      };
      rows.push(gptRow(pouwRuns, { threads: 1 }));
      if (pouwThreadRuns.length > 0) {
        const gt = bestOf(pouwThreadRuns);
        // INVARIANT: the thread count never changes the bits; a run whose states differ from the 1-thread run fails the bench
        const divergent = pouwThreadRuns.map((r) => firstDivergence(pouwRuns[0]!.hashes, r.hashes)).find((x) => x !== null) ?? null;
        if (divergent !== null) throw new Error(`gpt-sotu on ${gptThreadCount} threads diverges from 1 thread at state ${divergent}`);
        rows.push({ ...gptRow(pouwThreadRuns, { threads: gptThreadCount + 1, matmulThreads: gptThreadCount, hashMode: `pipelined (${gptThreadCount} matmul threads + hash worker)` }), sameBitsAsOneThread: true });
        gptThreads = {
          note: `step + hash time of 1 thread over ${gptThreadCount} matmul threads (+ the hash worker), best repeat of each and per interleaved repeat; the states of every run equal the 1-thread run's (checked)`,
          threads: gptThreadCount,
          speedup: gt.stepsPerSecond / g.stepsPerSecond,
          speedupRuns: pouwThreadRuns.map((r, i) => r.stepsPerSecond / pouwRuns[i]!.stepsPerSecond),
          sameBits: true,
          loadAverage: loadavg(),
        };
      }
      if (torchRuns.length > 0) {
        const t = bestOf(torchRuns);
        rows.push({
          model: "gpt-sotu", engine: "torch", threads: 1, stepsPerSecond: t.stepsPerSecond, hashShare: t.hashMs / (t.stepMs + t.hashMs),
          bitwise: null, stateDigest: "sha256 of weights + Adam moments", numerics: "torch float32", manifest: "bench/torch_gpt.py (the shapes of examples/gpt-sotu-v3.json)", backend: "torch",
          batchSize: gptBatch, steps: gptSteps, stepMs: t.stepMs, hashMs: t.hashMs, stepCpuMs: t.stepCpuMs, hashCpuMs: t.hashCpuMs, hashShareCpu: t.hashCpuMs / (t.stepCpuMs + t.hashCpuMs),
          stateBytes: g.stateBytes, hashMBPerSecond: g.stateBytes / 1e6 / (t.hashMs / 1000), params: t.params, torch: t.torch,
          stepsPerSecondRuns: torchRuns.map((r) => r.stepsPerSecond), cpuMsPerStepRuns: torchRuns.map(cpuPerStep), reproducibleAcrossRuns: null,
        });
        gptVsTorch = {
          note: "pouw time over torch time for step + state hash, one thread each, same model shapes and batch; best repeat of each (wall) and per repeat; CPU: process CPU per step, which other jobs on the machine move less",
          wallRatio: 1 / g.stepsPerSecond / (1 / t.stepsPerSecond),
          wallRatioRuns: pouwRuns.map((r, i) => torchRuns[i]!.stepsPerSecond / r.stepsPerSecond),
          cpuRatio: Math.min(...pouwRuns.map(cpuPerStep)) / Math.min(...torchRuns.map(cpuPerStep)),
          cpuRatioRuns: pouwRuns.map((r, i) => cpuPerStep(r) / cpuPerStep(torchRuns[i]!)),
          target: "<= 2.5",
        };
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  // the issue's acceptance: pouw (mnist-fast.json, sha256-v1, 1 thread) >= 50% of torch 1-thread, step + hash, same run
  const pouwFast = rows.find((r) => r.engine === "pouw" && r.manifest === "examples/mnist-fast.json" && r.threads === 1);
  const torchRow = rows.find((r) => r.engine === "torch");
  const torchRatio = pouwFast && torchRow ? (pouwFast.stepsPerSecond as number) / (torchRow.stepsPerSecond as number) : null;
  const pouwPiped = rows.find((r) => r.engine === "pouw" && r.manifest === "examples/mnist-fast.json" && r.matmulThreads === 1 && r.threads === 2);
  const torchRatioHashWorker = pouwPiped && torchRow ? (pouwPiped.stepsPerSecond as number) / (torchRow.stepsPerSecond as number) : null;
  const torchRatioRuns = pouwFast && torchRow ? (pouwFast.stepsPerSecondRuns as number[]).map((x, i) => x / (torchRow.stepsPerSecondRuns as number[])[i]!) : null;
  const sotuPouw = rows.find((r) => r.engine === "pouw" && r.manifest === "examples/sotu-v2.json");
  const tfjsVersion = (JSON.parse(readFileSync(join(ROOT, "node_modules/@tensorflow/tfjs-core/package.json"), "utf8")) as { version: string }).version;
  const result = {
    bench: "engine",
    date: new Date().toISOString(),
    node: process.version,
    tfjs: tfjsVersion,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    loadAverageNote: "shared 2-core build machine: other jobs ran at the same time, so absolute steps/s are lower bounds",
    torch: torch.ok ? torch.version : `absent: ${torch.why}`,
    loadAverage: loadavg(),
    torchRatio,
    torchRatioRuns,
    torchRatioHashWorker,
    charTransformerSpeedupVsCpu: sotuPouw ? sotuPouw.speedupVsCpuMedian : null,
    gptVsTorch,
    gptThreads,
    rows,
    ...(matmulV3 ? { matmulV3 } : {}),
  };
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  const file = join(ROOT, "bench/results/engine.json");
  if (only.size < 4 && existsSync(file)) {
    // a subset run (--only) replaces the rows of the models it ran and keeps the rest of the previous file, each kept
    // row and figure marked with the date of the run that measured it
    const old = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown> & { rows?: Record<string, unknown>[]; date?: string };
    const ran = new Set(rows.map((r) => r.model));
    const kept = (old.rows ?? []).filter((r) => !ran.has(r.model)).map((r) => ({ ...r, measuredInRunOf: r.measuredInRunOf ?? old.date }));
    result.rows = [...rows, ...kept];
    const r = result as Record<string, unknown>;
    for (const key of ["torchRatio", "torchRatioRuns", "torchRatioHashWorker", "charTransformerSpeedupVsCpu", "gptVsTorch", "gptThreads", "matmulV3"]) {
      if ((r[key] === null || r[key] === undefined) && old[key] !== null && old[key] !== undefined) r[key] = old[key];
    }
    r.subsetRun = `--only ${[...only].join(",")}: rows of other models (measuredInRunOf) and their figures kept from the previous file`;
  }
  writeFileSync(file, JSON.stringify(result, null, 2) + "\n");

  const table = [
    "| model | engine | numerics | state digest | threads | steps | steps/s (step + hash) | ms/step | ms/hash | hash MB/s | hash share (wall) | hash share (CPU) | bit-reproducible across runs | bitwise = tfjs-cpu | max abs weight diff vs cpu |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.model} (batch ${r.batchSize}) | ${r.engine} | ${r.numerics} | ${r.stateDigest} | ${r.threads}${r.hashMode && r.hashMode !== "inline" ? ` (${r.hashMode})` : ""} | ${r.steps} | ${(r.stepsPerSecond as number).toFixed(2)} | ${(r.stepMs as number).toFixed(1)} | ${(r.hashMs as number).toFixed(2)} | ${(r.hashMBPerSecond as number).toFixed(0)} | ${((r.hashShare as number) * 100).toFixed(1)}% | ${((r.hashShareCpu as number) * 100).toFixed(1)}% | ${r.reproducibleAcrossRuns === null ? "not measured (one run)" : r.reproducibleAcrossRuns ? "yes" : `no (state ${r.firstDivergentStateAcrossRuns})`} | ${r.numerics === "bitwise-v2" || r.numerics === "bitwise-v3" ? "n/a (own bits)" : r.engine === "torch" ? "no (torch's own float32 order)" : r.bitwise ? "yes" : `no (from state ${r.firstDivergentStateVsCpu})`} | ${r.finalWeightsMaxAbsDiffVsCpu === undefined ? "n/a" : (r.finalWeightsMaxAbsDiffVsCpu as number).toExponential(2)} |`,
    ),
  ];
  const ratioLine =
    torchRatio === null
      ? `no torch row (${torch.ok ? "not run" : torch.why})`
      : `mnist-mlp batch 64, step + hash, 1 thread: pouw ${(pouwFast!.stepsPerSecond as number).toFixed(1)} steps/s = ${(100 * torchRatio).toFixed(0)}% of torch ${torch.ok ? torch.version : ""} ${(torchRow!.stepsPerSecond as number).toFixed(1)} steps/s (target >= 50%)`;
  const sotuLine = sotuPouw ? `char-transformer batch 8: pouw (sotu-v2.json) / tfjs-cpu (sotu.json) per repeat ${(sotuPouw.speedupVsCpuRuns as number[]).map((x) => x.toFixed(1) + "x").join(", ")}, median ${(sotuPouw.speedupVsCpuMedian as number).toFixed(1)}x (target >= 10x)\n` : "";
  const pipedLine = torchRatioHashWorker === null ? "" : `with the hash on a worker (2 threads): pouw ${(pouwPiped!.stepsPerSecond as number).toFixed(1)} steps/s = ${(100 * torchRatioHashWorker).toFixed(0)}% of torch, the step thread waits ${(100 * (pouwPiped!.hashShare as number)).toFixed(1)}% of its time for the hash (target <= 10%)\n`;
  const gptThreadsLine = gptThreads === null ? "" : `gpt-sotu bitwise-v3, step + hash: ${gptThreads.threads} matmul threads (+ hash worker) / 1 thread speed-up ${(gptThreads.speedup as number).toFixed(2)}x (per repeat ${(gptThreads.speedupRuns as number[]).map((x) => x.toFixed(2)).join(", ")}), the same state hashes\n`;
  const gptLine = gptVsTorch === null ? "" : `gpt-sotu (10.8M, batch 4) bitwise-v3, step + hash, 1 thread: pouw / torch time ${(gptVsTorch.wallRatio as number).toFixed(2)}x wall (per repeat ${(gptVsTorch.wallRatioRuns as number[]).map((x) => x.toFixed(2)).join(", ")}), ${(gptVsTorch.cpuRatio as number).toFixed(2)}x process CPU (per repeat ${(gptVsTorch.cpuRatioRuns as number[]).map((x) => x.toFixed(2)).join(", ")}) (target <= 2.5x)\n`;
  process.stdout.write(table.join("\n") + `\n\n${matmulV3 ? matmulTable(matmulV3) + "\n\n" : ""}${ratioLine}\n${pipedLine}${sotuLine}${gptLine}${gptThreadsLine}load average at the end ${loadavg().map((x) => x.toFixed(2)).join(" ")}\nwrote bench/results/engine.json\n`);
}

await main();
