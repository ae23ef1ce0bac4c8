/**
 * bench/engine: training steps per second of both models on the tfjs CPU backend and on
 * @tensorflow/tfjs-backend-wasm, and whether each backend is bit-reproducible across runs (two
 * separate processes each) and across backends (wasm vs cpu).
 *
 *   npm run bench:engine [-- --mnist-steps N --sotu-steps N]
 *
 * Writes bench/results/engine.json and prints a table. Each run is its own OS process (the
 * parent spawns `node bench/engine.ts --worker ...`), so nothing is shared between repeats.
 * wasm runs use a copy of the manifest with numerics "tolerance" (bitwise manifests refuse wasm).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

type WorkerResult = {
  model: string;
  backend: string;
  steps: number;
  /** steps/s over steps 2..N (step 1 includes JIT and kernel warm-up). */
  stepsPerSecond: number;
  firstStepSeconds: number;
  hashes: string[];
  losses: number[];
  finalCheckpoint: string;
};

async function worker(example: string, backend: "cpu" | "wasm", steps: number, outFile: string): Promise<void> {
  const { createRun, offlineSalt, parseManifest } = await import("../verifier/src/ml/index.ts");
  const json = JSON.parse(readFileSync(join(ROOT, "examples", example), "utf8")) as Record<string, unknown>;
  if (backend === "wasm") json.numerics = "tolerance";
  const run = await createRun(parseManifest(json), { jobId: 1n, salt: offlineSalt(1n), backend });
  let state = run.initState();
  const hashes = [run.stateHashOf(state)];
  const losses: number[] = [];
  let t0 = performance.now();
  let firstStepSeconds = 0;
  for (let t = 1; t <= steps; t++) {
    const r = run.step(state, t);
    state = r.state;
    losses.push(r.loss);
    hashes.push(run.stateHashOf(state));
    if (t === 1) {
      firstStepSeconds = (performance.now() - t0) / 1000;
      t0 = performance.now();
    }
  }
  const elapsed = (performance.now() - t0) / 1000;
  writeFileSync(outFile, run.checkpointBytes(state));
  const result: WorkerResult = {
    model: run.model.arch,
    backend,
    steps,
    stepsPerSecond: (steps - 1) / elapsed,
    firstStepSeconds,
    hashes,
    losses,
    finalCheckpoint: outFile,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
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

function spawnWorker(example: string, backend: string, steps: number, out: string): WorkerResult {
  const r = spawnSync(process.execPath, [join(ROOT, "bench/engine.ts"), "--worker", example, backend, String(steps), out], { encoding: "utf8", cwd: ROOT, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`worker ${example} ${backend} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as WorkerResult;
}

function firstDivergence(a: string[], b: string[]): number | null {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return null;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--worker") {
    await worker(args[1]!, args[2] as "cpu" | "wasm", Number(args[3]), args[4]!);
    return;
  }
  const flag = (name: string, dflt: number) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const plan = [
    { example: "mnist.json", steps: flag("--mnist-steps", 12) },
    { example: "sotu.json", steps: flag("--sotu-steps", 4) },
  ];
  const tmp = mkdtempSync(join(tmpdir(), "pouw-bench-engine-"));
  const rows: Record<string, unknown>[] = [];
  try {
    for (const { example, steps } of plan) {
      const runs: Record<string, WorkerResult[]> = { cpu: [], wasm: [] };
      for (const backend of ["cpu", "wasm"] as const) {
        for (let rep = 0; rep < 2; rep++) {
          process.stderr.write(`bench:engine ${example} ${backend} run ${rep + 1}/2 (${steps} steps)\n`);
          runs[backend]!.push(spawnWorker(example, backend, steps, join(tmp, `${example}-${backend}-${rep}.safetensors`)));
        }
      }
      const cpu = runs.cpu!;
      const wasm = runs.wasm!;
      const paramBytes = weightsBytesOf(cpu[0]!.finalCheckpoint);
      const wCpu = checkpointData(cpu[0]!.finalCheckpoint, paramBytes);
      const wWasm = checkpointData(wasm[0]!.finalCheckpoint, paramBytes);
      let maxAbs = 0;
      let diff2 = 0;
      let norm2 = 0;
      for (let i = 0; i < wCpu.length; i++) {
        const d = wCpu[i]! - wWasm[i]!;
        maxAbs = Math.max(maxAbs, Math.abs(d));
        diff2 += d * d;
        norm2 += wCpu[i]! * wCpu[i]!;
      }
      for (const backend of ["cpu", "wasm"] as const) {
        const r = runs[backend]!;
        rows.push({
          model: r[0]!.model,
          manifest: `examples/${example}`,
          backend,
          steps,
          stepsPerSecond: Math.max(r[0]!.stepsPerSecond, r[1]!.stepsPerSecond),
          stepsPerSecondRuns: r.map((x) => x.stepsPerSecond),
          firstStepSeconds: r[0]!.firstStepSeconds,
          reproducibleAcrossRuns: firstDivergence(r[0]!.hashes, r[1]!.hashes) === null,
          firstDivergentStateAcrossRuns: firstDivergence(r[0]!.hashes, r[1]!.hashes),
          matchesCpu: backend === "cpu" ? true : firstDivergence(cpu[0]!.hashes, r[0]!.hashes) === null,
          firstDivergentStateVsCpu: backend === "cpu" ? null : firstDivergence(cpu[0]!.hashes, r[0]!.hashes),
          finalWeightsMaxAbsDiffVsCpu: backend === "cpu" ? 0 : maxAbs,
          finalWeightsRelL2DiffVsCpu: backend === "cpu" ? 0 : Math.sqrt(diff2 / norm2),
          lossAtLastStep: r[0]!.losses.at(-1),
        });
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const tfjsVersion = (JSON.parse(readFileSync(join(ROOT, "node_modules/@tensorflow/tfjs-core/package.json"), "utf8")) as { version: string }).version;
  const result = {
    bench: "engine",
    date: new Date().toISOString(),
    node: process.version,
    tfjs: tfjsVersion,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    loadAverageNote: "shared 2-core build machine: other jobs ran at the same time, so absolute steps/s are lower bounds",
    rows,
  };
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results/engine.json"), JSON.stringify(result, null, 2) + "\n");

  const table = [
    "| model | backend | steps | steps/s | bit-reproducible across runs | matches cpu | max abs weight diff vs cpu |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.model} | ${r.backend} | ${r.steps} | ${(r.stepsPerSecond as number).toFixed(2)} | ${r.reproducibleAcrossRuns ? "yes" : `no (state ${r.firstDivergentStateAcrossRuns})`} | ${r.matchesCpu ? "yes" : `no (from state ${r.firstDivergentStateVsCpu})`} | ${(r.finalWeightsMaxAbsDiffVsCpu as number).toExponential(2)} |`,
    ),
  ];
  process.stdout.write(table.join("\n") + "\n\nwrote bench/results/engine.json\n");
}

await main();
