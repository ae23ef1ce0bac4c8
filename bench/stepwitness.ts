/**
 * bench/stepwitness: verifying one whole mnist-mlp training step (784-128-10, batch 128, Adam) from
 * its step witness with Freivalds (checks/stepwitness.ts) against recomputing the step with the
 * engine (Run.step). Target: verification <= 10% of recompute.
 *
 *   npm run bench:stepwitness [-- --steps 30 --vectors 2]
 *
 * Both sides must also hash the new state to compare it with the committed h(t) (keccak256 over
 * weights and Adam state, ~1.2 MB); that cost is the same for both and is reported separately:
 * the headline ratio excludes it, the second ratio includes it. Times are process CPU time
 * (robust on a shared machine) per step, median over the measured steps; the witness itself is
 * produced by the provider and not counted.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { verifyStepWitness } from "../verifier/src/checks/stepwitness.ts";
import { createRun, offlineSalt, parseManifest } from "../verifier/src/ml/index.ts";

const { values } = parseArgs({ options: { steps: { type: "string", default: "30" }, vectors: { type: "string", default: "2" }, batch: { type: "string", default: "128" } } });
const STEPS = Number(values.steps);
const VECTORS = Number(values.vectors);
const BATCH = Number(values.batch);

const base = JSON.parse(readFileSync("examples/mnist.json", "utf8")) as Record<string, unknown> & { training: object };
const manifest = parseManifest({ ...base, training: { ...base.training, batchSize: BATCH } });
const run = await createRun(manifest, { jobId: 1n, salt: offlineSalt(1n) });

const cpuMs = (f: () => void): number => {
  const a = process.cpuUsage();
  f();
  const d = process.cpuUsage(a);
  return (d.user + d.system) / 1000;
};
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

let state = run.initState();
// warm-up: JIT and tfjs kernels, for both sides (the verifier's plain-JS loops need a few calls to be optimised)
for (let t = 1; t <= 3; t++) state = run.step(state, t).state;
{
  const t = state.step + 1;
  const w = run.step(state, t, { witness: true });
  const h = run.stateHashOf(w.state);
  for (let i = 0; i < 8; i++) verifyStepWitness(run, state, t, w.witness!, h, { vectors: VECTORS });
}

const rows = { recompute: [] as number[], recomputeHash: [] as number[], verify: [] as number[], products: [] as number[], elementwise: [] as number[], update: [] as number[], hash: [] as number[] };
for (let i = 0; i < STEPS; i++) {
  const t = state.step + 1;
  let next = state;
  rows.recompute.push(cpuMs(() => (next = run.step(state, t).state)));
  let h = "";
  rows.recomputeHash.push(cpuMs(() => (h = run.stateHashOf(next))));
  const witness = run.step(state, t, { witness: true }).witness!;
  let r: ReturnType<typeof verifyStepWitness> | undefined;
  const total = cpuMs(() => (r = verifyStepWitness(run, state, t, witness, h as `0x${string}`, { vectors: VECTORS })));
  if (!r || !r.ok) throw new Error(`honest step ${t} failed verification: ${r && !r.ok ? r.failure.message : "?"}`);
  // the verifier's own state hash costs what the recompute's does (same bytes): subtract the measured one
  rows.verify.push(total - rows.recomputeHash[rows.recomputeHash.length - 1]!);
  rows.products.push(r.timings.productsMs);
  rows.elementwise.push(r.timings.elementwiseMs);
  rows.update.push(r.timings.updateMs);
  rows.hash.push(r.timings.hashMs);
  state = next;
}

const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)])) as Record<keyof typeof rows, number>;
const result = {
  model: `mnist-mlp 784-${manifest.model.arch === "mnist-mlp" ? manifest.model.hidden : "?"}-10`,
  batch: BATCH,
  optimizer: manifest.optimizer.name,
  vectors: VECTORS,
  steps: STEPS,
  timeBasis: "process CPU ms per step, median",
  recomputeMs: m.recompute,
  verifyMs: m.verify,
  breakdownMs: { products: m.products, elementwise: m.elementwise, update: m.update },
  stateHashMs: m.recomputeHash,
  ratio: m.verify / m.recompute,
  ratioWithStateHash: (m.verify + m.recomputeHash) / (m.recompute + m.recomputeHash),
  target: 0.1,
};
await mkdir("bench/results", { recursive: true });
await writeFile("bench/results/stepwitness.json", JSON.stringify(result, null, 2) + "\n");
process.stdout.write(
  [
    `| mnist-mlp step, batch ${BATCH}, k = ${VECTORS} | CPU ms |`,
    "|---|---|",
    `| recompute (Run.step: forward, backward, Adam) | ${m.recompute.toFixed(2)} |`,
    `| verify from witness (Freivalds + elementwise + update) | ${m.verify.toFixed(2)} |`,
    `|   Freivalds, 5 products (CPU ms) | ${m.products.toFixed(2)} |`,
    `|   elementwise ops (CPU ms) | ${m.elementwise.toFixed(2)} |`,
    `|   optimizer update (CPU ms) | ${m.update.toFixed(2)} |`,
    `| state hash h(t), paid by both | ${m.recomputeHash.toFixed(2)} |`,
    `| ratio verify / recompute | ${(100 * result.ratio).toFixed(1)}% (target <= 10%) |`,
    `| ratio including the state hash | ${(100 * result.ratioWithStateHash).toFixed(1)}% |`,
  ].join("\n") + "\n",
);
