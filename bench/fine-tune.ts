/**
 * bench/fine-tune: false alarms of the state screen and the magnitude check on HONEST fine-tuning jobs, under the
 * fine-tuning rule of this engine (h(0) = the base's weights + a fresh optimizer state, init.optimizerState "fresh")
 * and under the rule before it (h(0) = the base's whole state, its Adam moments and the powers of its last step),
 * interleaved run by run in one process. Writes bench/results/fine-tune.json and prints a table.
 *
 *   npm run bench:finetune [-- --runs 50]
 *
 * Method: per run r and Adam variant, a base is trained honestly from init.seed (examples/tiny.json shape, 12 steps,
 * data seed 3000 + r), then a fine-tuning job of it (data seed 4000 + r, 12 steps, K = 4) is stepped with the engine
 * from each rule's h(0). Every state t = 0..12 is screened alone, after state t-1 (what magnitude and tolerance run)
 * and after state t-K (what the bot runs on committed states): 13 + 12 + 9 = 34 screens per job; every step also goes
 * through the magnitude check's update bound and power counter (updateRatio). A screen or step that fails is an alarm:
 * every one is a false alarm, the runs are honest. The machine is shared (2 cores): times are upper bounds.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { screenConfigOf, screenState, updateRatio } from "../verifier/src/checks/index.ts";
import { decodeCheckpoint } from "../verifier/src/ml/checkpoint.ts";
import { createRun, offlineSalt, parseManifest, type Run, type TrainState } from "../verifier/src/ml/index.ts";
import { LocalDirStore } from "../verifier/src/store/index.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "50" } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
const tiny = JSON.parse(readFileSync("examples/tiny.json", "utf8"));
const VARIANTS: { label: string; optimizer: object; batchSize?: number }[] = [
  { label: "Adam lr 0.01 (tiny.json)", optimizer: tiny.optimizer },
  { label: "Adam lr 0.01, batch 1", optimizer: tiny.optimizer, batchSize: 1 },
  { label: "Adam lr 0.1, betas 0.5/0.9", optimizer: { name: "adam", lr: 0.1, beta1: 0.5, beta2: 0.9 } },
];
const K = 4;
const work = join(tmpdir(), `pouw-bench-finetune-${process.pid}`);
await mkdir(work, { recursive: true });

type Tally = { screens: number; screenAlarms: number; steps: number; stepAlarms: number; kinds: Record<string, number> };
const tally = (): Tally => ({ screens: 0, screenAlarms: 0, steps: 0, stepAlarms: 0, kinds: {} });
const rows = VARIANTS.map((v) => ({ label: v.label, fresh: tally(), carried: tally() }));

function stepsFrom(run: Run, s0: TrainState): TrainState[] {
  const out = [s0];
  for (let t = 1; t <= run.manifest.training.steps; t++) out.push(run.step(out[t - 1]!, t).state);
  return out;
}

function audit(run: Run, states: TrainState[], into: Tally): void {
  const config = screenConfigOf(run);
  for (let t = 0; t < states.length; t++) {
    for (const prev of [undefined, states[t - 1], states[t - K]].filter((p, i) => i === 0 || p !== undefined)) {
      const v = screenState(config, states[t]!, prev);
      into.screens++;
      if (!v.ok) {
        into.screenAlarms++;
        into.kinds[v.failure.kind] = (into.kinds[v.failure.kind] ?? 0) + 1;
      }
    }
    if (t === 0) continue;
    const { ratio, counterOk } = updateRatio(run, states[t - 1]!, states[t]!);
    into.steps++;
    if (!counterOk || !(ratio <= 1)) {
      into.stepAlarms++;
      const kind = counterOk ? "magnitude-exceeded" : "optimizer-state-invalid";
      into.kinds[`step:${kind}`] = (into.kinds[`step:${kind}`] ?? 0) + 1;
    }
  }
}

const started = performance.now();
for (let r = 0; r < RUNS; r++) {
  for (const [i, v] of VARIANTS.entries()) {
    const training = { ...tiny.training, stepsPerSegment: K, ...(v.batchSize ? { batchSize: v.batchSize } : {}) };
    const baseRun = await createRun(parseManifest({ ...tiny, optimizer: v.optimizer, training, data: { ...tiny.data, seed: 3000 + r } }), { jobId: 1n, salt: offlineSalt(1n) });
    const baseFinal = stepsFrom(baseRun, baseRun.initState()).at(-1)!;
    const store = new LocalDirStore(join(work, `base-${r}-${i}`));
    const cid = await store.put(baseRun.checkpointBytes(baseFinal));
    const run = await createRun(parseManifest({ ...tiny, optimizer: v.optimizer, training, data: { ...tiny.data, seed: 4000 + r }, init: { checkpointCid: cid, optimizerState: "fresh" } }), { jobId: 2n, salt: offlineSalt(2n) });
    // this engine's rule ...
    audit(run, stepsFrom(run, await run.initFromStore(store)), rows[i]!.fresh);
    // ... and the rule before: the base's whole state at step 0
    const base = decodeCheckpoint(await store.get(cid), run.paramSpecs, run.optSpecs);
    audit(run, stepsFrom(run, { step: 0, params: base.params, opt: base.opt }), rows[i]!.carried);
  }
}
const seconds = (performance.now() - started) / 1000;
await rm(work, { recursive: true, force: true });

const cell = (t: Tally) => `${t.screenAlarms}/${t.screens} screens, ${t.stepAlarms}/${t.steps} steps`;
const lines = ["| variant | h(0) = base weights + fresh optimizer (now) | h(0) = base's whole state (before) |", "|---|---|---|"];
for (const row of rows) lines.push(`| ${row.label} | ${cell(row.fresh)} | ${cell(row.carried)} |`);
process.stdout.write(`${lines.join("\n")}\n${RUNS} honest fine-tuning jobs per variant, ${seconds.toFixed(1)} s (shared 2-core machine)\n`);
await mkdir("bench/results", { recursive: true });
await writeFile(
  "bench/results/fine-tune.json",
  JSON.stringify({ manifest: "examples/tiny.json (12 steps, K = 4) fine-tuning its own 12-step honest run", runs: RUNS, screensPerJob: 34, stepsPerJob: 12, seconds, measured: new Date().toISOString(), rows }, null, 2) + "\n",
);
