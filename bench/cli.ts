/**
 * bench/cli: wall time of `pouw` start-up, each run its own OS process (what a user pays per command): `pouw --help`,
 * `pouw --version`, and a read-only chain command (`pouw buyer status 1`, against a `hardhat node` this bench starts,
 * with a deployment and one job made first by `pouw deploy` and `pouw buyer create`). Also records which heavy packages
 * each command loaded (a module-resolution hook: TensorFlow.js, snarkjs, HiGHS, viem), so that a regression in the
 * lazy loading (verifier/src/cli/commands/index.ts) shows as a package, not only as seconds.
 *
 *   npm run bench:cli [-- --runs N] [--baseline DIR] [--help-only]
 *
 * Also `pouw <family> --help` for each family with chain handlers (provider, auditor, dispute, jobs, data, corpus,
 * buyer): the family files define commands and flags only and load their handlers (commands/*-run.ts) when one runs.
 * `--help-only`: only the help rows (no hardhat node, no chain command).
 *
 * `--baseline DIR`: also time `pouw --help` and `pouw buyer status --help` of another checkout (e.g. `git archive <commit> verifier package.json | tar
 * -x -C DIR`, with node_modules linked), under the same load, for a before/after pair.
 *
 * Prints a table and writes bench/results/cli.json. No assertion: the target is `pouw --help` < 1 s on
 * the 2-core machine.
 */
import { spawnSync } from "node:child_process";
import { cpus, loadavg, tmpdir } from "node:os";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEV_KEYS, pouwLoading, ROOT, startHardhatNode } from "../test/e2e/helpers.ts";

const POUW = join(ROOT, "verifier/src/cli/pouw.ts");
const HEAVY = ["@tensorflow/tfjs-core", "@tensorflow/tfjs-backend-cpu", "@tensorflow/tfjs-backend-wasm", "snarkjs", "circomlibjs", "highs", "viem"];

const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;
const baselineArg = process.argv.indexOf("--baseline");
const BASELINE = baselineArg > 0 ? process.argv[baselineArg + 1] : undefined;
const HELP_ONLY = process.argv.includes("--help-only");
const FAMILIES = ["provider", "auditor", "dispute", "jobs", "data", "corpus", "buyer"];
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error("--runs must be a whole number >= 1");

const dir = mkdtempSync(join(tmpdir(), "pouw-bench-cli-"));

type Row = { command: string; runs: number; medianSeconds: number; minSeconds: number; maxSeconds: number; exitCode: number; heavyLoaded: string[] };

function time(args: string[], expectCode = 0, pouw = POUW, label?: string): Row {
  const walls: number[] = [];
  let loaded: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = pouwLoading(dir, args, pouw);
    walls.push((performance.now() - t0) / 1000);
    if (r.status !== expectCode) throw new Error(`pouw ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    loaded = r.loaded;
  }
  const sorted = [...walls].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    command: label ?? `pouw ${args.filter((a) => !a.startsWith("http") && !a.startsWith(dir) && !DEV_KEYS.includes(a as never) && !["--rpc", "--state-dir", "--private-key"].includes(a)).join(" ")}`,
    runs: RUNS,
    medianSeconds: round(sorted[Math.floor(sorted.length / 2)]!),
    minSeconds: round(sorted[0]!),
    maxSeconds: round(sorted[sorted.length - 1]!),
    exitCode: expectCode,
    heavyLoaded: HEAVY.filter((h) => loaded.includes(h)),
  };
}

const rows: Row[] = [time(["--help"]), time(["--version"])];
if (BASELINE) rows.push(time(["--help"], 0, join(BASELINE, "verifier/src/cli/pouw.ts"), "pouw --help (baseline)"));
for (const f of FAMILIES) {
  rows.push(time([f, "--help"]));
  if (BASELINE) rows.push(time([f, "--help"], 0, join(BASELINE, "verifier/src/cli/pouw.ts"), `pouw ${f} --help (baseline)`));
}
const node = HELP_ONLY ? undefined : await startHardhatNode();
if (node) {
  try {
    const as = (key: number) => ["--rpc", node.url, "--state-dir", dir, "--private-key", DEV_KEYS[key]!];
    const setup = (args: string[]) => {
      const r = spawnSync(process.execPath, [POUW, ...args], { cwd: ROOT, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`pouw ${args[0]} exited ${r.status}: ${r.stderr}`);
    };
    setup(["deploy", ...as(0)]);
    setup(["buyer", "create", "--manifest", join(ROOT, "examples/tiny.json"), "--mint", ...as(1)]);
    rows.push(time(["buyer", "status", "1", ...as(1)]));
    rows.push(time(["buyer", "status", "--help"]));
    if (BASELINE) rows.push(time(["buyer", "status", "--help"], 0, join(BASELINE, "verifier/src/cli/pouw.ts"), "pouw buyer status --help (baseline)"));
  } finally {
    await node.stop();
  }
} else {
  process.stdout.write("--help-only: no chain command timed\n");
}

const pad = (s: string, n: number) => s.padEnd(n);
process.stdout.write(`${pad("command", 36)} ${pad("median s", 9)} ${pad("min s", 7)} ${pad("max s", 7)} heavy packages loaded\n`);
for (const r of rows) process.stdout.write(`${pad(r.command, 36)} ${pad(r.medianSeconds.toFixed(3), 9)} ${pad(r.minSeconds.toFixed(3), 7)} ${pad(r.maxSeconds.toFixed(3), 7)} ${r.heavyLoaded.join(", ") || "-"}\n`);
// the machine is shared: the load average says how much of a row's time is other people's work
const result = { bench: "cli", ...(BASELINE ? { baseline: BASELINE } : {}), node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", loadAverage: loadavg().map((x) => Math.round(x * 100) / 100), date: new Date().toISOString(), runs: RUNS, rows };
writeFileSync(join(ROOT, HELP_ONLY ? "bench/results/cli-help.json" : "bench/results/cli.json"), JSON.stringify(result, null, 2) + "\n");
process.stdout.write(`load average ${result.loadAverage.join(", ")}; wrote bench/results/${HELP_ONLY ? "cli-help.json" : "cli.json"}\n`);
