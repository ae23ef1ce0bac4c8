/**
 * `pouw train --manifest M --out DIR [--strategy S] [--job-id N] [--salt 0x.. | --chain-id N --market 0x..]
 *   [--base-store DIR] [--step-states] [--engine pouw|cpu|wasm|webgpu] [--threads N] [--hash-worker] [--no-evaluate]`:
 * train a job (or run a cheat strategy) and write DIR/trace.json, DIR/store/<cid> checkpoints and
 * DIR/final.safetensors; with --step-states also every step's checkpoint and DIR/steps.json (what the
 * magnitude and tolerance checks ask a provider to serve). The data order derives from the job's salt
 * (salt-flags.ts; default the offline salt of --job-id), which trace.json records. Progress bar on stderr when
 * it is a terminal, plain lines otherwise. `--engine` (default: the manifest's default engine, ml/engines.ts) must be
 * one the manifest's numerics allow (bitwise: pouw or cpu; bitwise-v3: pouw or webgpu), checked before the engine is
 * loaded. `--engine webgpu` opens a WebGPU device on a worker thread (ml/webgpu/sync-kernels.ts) before training.
 */
import { join } from "node:path";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { defaultBackend, parseEngine, parseThreads } from "../../ml/engines.ts";
import { readManifestFile } from "../../ml/manifest.ts";
import { parseConfig } from "../../config/index.ts";
import { parseStrategy } from "../../ml/strategies.ts";
import type { Progress } from "../../ml/train.ts";
import { addSaltOptions, saltFromFlags, type SaltFlags } from "../salt-flags.ts";

export function registerTrain(program: Command): void {
  const cmd = program
    .command("train")
    .description("train a job manifest deterministically, committing a state hash per step (docs/engine.md)")
    .requiredOption("--manifest <file>", "job manifest JSON")
    .requiredOption("--out <dir>", "output directory (trace.json, store/, final.safetensors)")
    .option(
      "--strategy <s>",
      "honest | skip:<f> | quarter-batch | stale:<k> | fp16 | copy:<dir> | full-copy:<dir> | plant:<step> | near-zero | state-poison[:<step>] | nan-plant[:<step>] | steer:<dir> | skip-powers[:<f>] | plant-spread:<n> | plant-bounded | skip-teacher[:<step>]",
      "honest",
    )
    .option("--job-id <n>", "on-chain job id bound into every state hash", "0");
  addSaltOptions(cmd)
    .option("--base-store <dir>", "content store holding the manifest's base checkpoint (default <out>/store)")
    .option("--data-store <dir>", "content store holding a data set by content id (tabular-mlp, char-transformer on text by CID; default <state-dir>/store, env POUW_STORE_DIR, where `pouw data add` puts it)")
    .option("--step-states", "also store every step's checkpoint and write <out>/steps.json (served to the magnitude and tolerance checks; one checkpoint per step on disk)")
    .option("--engine <name>", "pouw (own wasm kernels) | cpu (tfjs-cpu) | wasm (tfjs-wasm, numerics tolerance only) | webgpu (numerics bitwise-v3 only: matmuls on a WebGPU device, VK_ICD_FILENAMES names its Vulkan driver, else SwiftShader when installed); default: the manifest's default engine (mnist-mlp and numerics bitwise-v2: pouw, other char-transformer: cpu)")
    .option("--threads <n>", "matmul threads of the pouw engine (1..64, default 1); the bits do not depend on it")
    .option("--hash-worker", "hash each state on a worker thread while the next step runs (the same hashes; default on with --threads > 1)")
    .option("--no-evaluate", "skip the held-out evaluation of the final state (trace.json then has no evaluation)")
    .action(async (opts: { manifest: string; out: string; strategy: string; jobId: string; baseStore?: string; dataStore?: string; stepStates?: boolean; engine?: string; threads?: string; hashWorker?: boolean; evaluate: boolean } & SaltFlags) => {
      if (!/^(0|[1-9][0-9]*)$/.test(opts.jobId) || BigInt(opts.jobId) >= 1n << 256n) throw new InputError(`--job-id must be a uint256 decimal, got ${JSON.stringify(opts.jobId)}`);
      const jobId = BigInt(opts.jobId);
      const { salt, source } = saltFromFlags(opts, jobId);
      const strategy = parseStrategy(opts.strategy);
      if (opts.stepStates && strategy.kind === "copy") throw new InputError("--step-states cannot be used with --strategy copy: copying trains nothing");
      const manifest = await readManifestFile(opts.manifest);
      const engine = opts.engine === undefined ? defaultBackend(manifest) : parseEngine(opts.engine, manifest);
      const threads = parseThreads(opts.threads, engine);
      // NOTE: the engine (TensorFlow.js, data loaders) is loaded only once the input is valid, so
      // `pouw --help`, other commands and bad-input exits do not pay for it.
      const [{ createRun }, { prepareOutDir, train }, { LocalDirStore }, { LayeredStore }, { writeStepStates, STEP_STATES_FILE }] = await Promise.all([
        import("../../ml/run.ts"),
        import("../../ml/train.ts"),
        import("../../store/index.ts"),
        import("../../store/layered.ts"),
        import("../../checks/step-states.ts"),
      ]);
      // the device opens before the output directory and the data: a machine without an adapter fails at once, naming VK_ICD_FILENAMES
      const webgpu = engine === "webgpu" ? await (await import("../../ml/webgpu/sync-kernels.ts")).openWebGpuKernelsV3() : undefined;
      await prepareOutDir(opts.out);
      // a data set by content id, an adapter job's frozen base and a distillation job's teacher (also read from --base-store, then cached) come from the content store
      const local = () => new LocalDirStore(parseConfig({ store: opts.dataStore }).storeDir);
      const dataStore = manifest.adapter || manifest.distill
        ? { store: opts.baseStore ? new LayeredStore(local(), [new LocalDirStore(opts.baseStore)]) : local() }
        : manifest.corpora[0]?.package === undefined ? { store: local() } : {};
      let run;
      try {
        run = await createRun(manifest, { jobId, salt, backend: engine, threads, ...dataStore, ...(webgpu ? { transformerKernels: webgpu.kernels } : {}) });
      } catch (err) {
        await webgpu?.gpu.close();
        throw err;
      }
      const report = progressReporter(manifest.training.steps);
      // Ctrl-C: show the cursor again (the bar hides it), say what is left behind, exit 130 (as `provider run` does)
      const onInterrupt = () => {
        report.stop();
        process.stderr.write(`\npouw: interrupted: ${opts.out} holds a partial run; \`pouw train\` starts again from step 1\n`);
        process.exit(130);
      };
      process.once("SIGINT", onInterrupt);
      let result;
      try {
        result = await train(run, {
          outDir: opts.out,
          strategy,
          ...(opts.baseStore ? { baseStore: new LocalDirStore(opts.baseStore) } : {}),
          onStep: report.update,
          keepStepStates: opts.stepStates === true,
          evaluate: opts.evaluate,
          ...(opts.hashWorker ? { hashWorker: true } : {}),
        });
      } finally {
        process.removeListener("SIGINT", onInterrupt);
        report.stop();
        await run.close();
        await webgpu?.gpu.close();
      }
      const t = result.trace;
      const lines = [
        `manifest ${t.manifestHash}  job ${t.jobId}  strategy ${t.strategy}  engine ${run.backend}${webgpu ? ` (${webgpu.gpu.info.description || webgpu.gpu.info.vendor}, ${webgpu.gpu.calls} matmuls on the device)` : ""}${run.threads > 1 ? ` (${run.threads} threads)` : ""}${opts.hashWorker && run.threads === 1 ? " (hash worker)" : ""}  state digest ${run.stateDigest}`,
        `salt ${t.salt} (${source === "offline" ? "offline: chain 0, no market" : source === "chain" ? `chain ${opts.chainId}, market ${opts.market}` : "--salt"})`,
        `${t.steps} steps in ${t.segments.length} segments, ${t.wallSeconds.toFixed(1)} s (${(t.steps / t.wallSeconds).toFixed(2)} steps/s)`,
        `final loss ${(t.stepLossE6[t.stepLossE6.length - 1]! / 1e6).toFixed(4)}, compute saved ${(100 * t.compute.savedFraction).toFixed(1)}%`,
      ];
      if (t.evaluation) {
        const acc = t.evaluation.accuracy === undefined ? "" : `, test accuracy ${(100 * t.evaluation.accuracy).toFixed(2)}%`;
        lines.push(`held-out loss ${t.evaluation.loss === null ? "not finite" : t.evaluation.loss.toFixed(4)}${acc} (${t.evaluation.examples} examples)`);
      }
      lines.push(`trace ${result.tracePath}`);
      if (result.stepStateCids) {
        await writeStepStates(run, opts.out, result.stepStateCids);
        lines.push(`per-step states ${join(opts.out, STEP_STATES_FILE)} (${result.stepStateCids.length} states)`);
      }
      process.stdout.write(lines.join("\n") + "\n");
    });
}

/** A cli-progress bar on a terminal; otherwise a plain line every ~5 s and at the end. */
function progressReporter(steps: number): { update: (p: Progress) => void; stop: () => void } {
  const started = performance.now();
  const rate = (step: number) => step / Math.max(1e-9, (performance.now() - started) / 1000);
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: "train [{bar}] {value}/{total} steps | {rate} steps/s | loss {loss} | eta {eta_formatted}", stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    bar.start(steps, 0, { rate: "0.00", loss: "-" });
    return {
      update: (p) => bar.update(p.step, { rate: rate(p.step).toFixed(2), loss: p.loss.toFixed(4) }),
      stop: () => bar.stop(),
    };
  }
  let lastPrint = started;
  return {
    update: (p) => {
      const now = performance.now();
      if (now - lastPrint >= 5000 || p.step === steps) {
        lastPrint = now;
        process.stderr.write(`train: step ${p.step}/${steps}, ${rate(p.step).toFixed(2)} steps/s, loss ${p.loss.toFixed(4)}\n`);
      }
    },
    stop: () => {},
  };
}
