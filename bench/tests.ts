/**
 * bench/tests: where the test suite's time goes, and what CI costs in all. Runs, one after another in this process's
 * checkout: `hardhat build --quiet`, `hardhat test solidity` (fuzz/invariant runs as `npm test` sizes them),
 * `hardhat test mocha --no-compile` with bench/file-times-reporter.cjs (each test file's wall and CPU time, hooks
 * included, and the slowest tests), each step's CPU seconds (its process and every process under it, waited for), and
 * with --ci also the other CI steps (.ci/run): typecheck, lint, zk:check and the arm64 run under qemu (`npm run
 * test:crossarch`). The browser tests (headless Chromium: test/e2e/report.test.ts, test/dapp) are part of the Mocha
 * run.
 *
 *   node bench/tests.ts [--ci] [--skip-solidity] [--files FILE.test.ts ...]
 *
 * Prints a table and writes bench/results/test-times.json. No assertion: the targets are `npm test`
 * < 4 minutes and CI < 15 minutes on the 2-core machine. On a shared machine the figures are upper bounds: the load
 * average at start and end is recorded with them.
 */
import { spawnSync } from "node:child_process";
import { cpus, loadavg, tmpdir } from "node:os";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const args = process.argv.slice(2);
const CI = args.includes("--ci");
const SKIP_SOLIDITY = args.includes("--skip-solidity");
const filesAt = args.indexOf("--files");
const FILES = filesAt >= 0 ? args.slice(filesAt + 1) : [];
for (const a of args.slice(0, filesAt >= 0 ? filesAt : args.length)) {
  if (!["--ci", "--skip-solidity"].includes(a)) throw new Error(`bench/tests: unknown argument ${a}`);
}

type Step = { step: string; seconds: number; cpuSeconds: number; exitCode: number };
const steps: Step[] = [];
const load0 = loadavg();

/**
 * CPU seconds of this process's waited-for children (cutime + cstime of /proc/self/stat): spawnSync waits for the
 * step's process, and that process waited for its own (Mocha workers, spawned `pouw`s, solc), so the difference
 * around a step is all the CPU the step used, module loading in the Mocha workers included (the per-file figures
 * start at each file's first hook). 0 where /proc is missing.
 */
function childrenCpuSeconds(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return 0;
  }
}

function timed(step: string, cmd: string, argv: string[], env: NodeJS.ProcessEnv = {}): Step {
  const t0 = performance.now();
  const c0 = childrenCpuSeconds();
  const r = spawnSync(cmd, argv, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ...env }, maxBuffer: 1 << 28 });
  const s: Step = { step, seconds: Math.round((performance.now() - t0) / 100) / 10, cpuSeconds: Math.round((childrenCpuSeconds() - c0) * 10) / 10, exitCode: r.status ?? -1 };
  if (s.exitCode !== 0) process.stderr.write(`${step} exited ${s.exitCode}:\n${(r.stdout ?? "").slice(-4000)}\n${(r.stderr ?? "").slice(-4000)}\n`);
  process.stdout.write(`${step.padEnd(40)} ${String(s.seconds).padStart(7)} s ${String(s.cpuSeconds).padStart(7)} CPU s  exit ${s.exitCode}\n`);
  steps.push(s);
  return s;
}

const npx = join(ROOT, "node_modules/.bin/hardhat");
timed("hardhat build", npx, ["build", "--quiet"]);
if (!SKIP_SOLIDITY) timed("hardhat test solidity", npx, ["test", "solidity", "--no-compile"]);
const timesPath = join(mkdtempSync(join(tmpdir(), "pouw-bench-tests-")), "times.json");
timed("hardhat test mocha", npx, ["test", "mocha", "--no-compile", ...FILES], { POUW_TEST_TIMES: timesPath });
if (steps.at(-1)!.exitCode !== 0) process.stderr.write("bench/tests: the Mocha run failed; its times are still recorded\n");
const mocha = JSON.parse(readFileSync(timesPath, "utf8")) as {
  runSeconds: number;
  runCpuSeconds: number;
  files: { file: string; seconds: number; cpuSeconds: number; tests: number; failures: number }[];
  slowestTests: { file: string; title: string; seconds: number }[];
};
if (CI) {
  const npm = "npm";
  timed("typecheck (tsc --noEmit)", join(ROOT, "node_modules/.bin/tsc"), ["--noEmit"]);
  timed("lint (solhint)", npm, ["run", "--silent", "lint"]);
  timed("zk:check", npm, ["run", "--silent", "zk:check"]);
  timed("test:crossarch (arm64 under qemu)", npm, ["run", "--silent", "test:crossarch"]);
}

const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) * 10) / 10;
const npmTest = sum(steps.filter((s) => s.step.startsWith("hardhat")).map((s) => s.seconds));
// NOTE: sorted by CPU seconds: on a shared machine a file's wall time says more about the other users than about it
console.log(`\nMocha files by CPU time (${mocha.files.length} files, ${mocha.runSeconds} s wall, ${mocha.runCpuSeconds} CPU s in the files):`);
console.log(`${"wall s".padStart(8)} ${"CPU s".padStart(8)}  tests  file`);
for (const f of [...mocha.files].sort((a, b) => b.cpuSeconds - a.cpuSeconds).slice(0, 30)) console.log(`${String(f.seconds).padStart(8)} ${String(f.cpuSeconds).padStart(8)}  ${String(f.tests).padStart(5)}  ${f.file}`);
const npmTestCpu = sum(steps.filter((s) => s.step.startsWith("hardhat")).map((s) => s.cpuSeconds));
console.log(`\nnpm test (build + solidity + mocha): ${npmTest} s wall, ${npmTestCpu} CPU s${SKIP_SOLIDITY || FILES.length ? " (partial run)" : ""}`);
if (CI) console.log(`CI total (npm test + typecheck + lint + zk:check + crossarch; npm ci not counted): ${sum(steps.map((s) => s.seconds))} s`);

const out = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavgStart: load0.map((x) => Math.round(x * 100) / 100), loadavgEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
  note: "shared 2-core machine: upper bounds. npm ci is not counted in the CI total.",
  partial: SKIP_SOLIDITY || FILES.length > 0,
  steps,
  npmTestSeconds: npmTest,
  npmTestCpuSeconds: npmTestCpu,
  ciTotalSeconds: CI ? sum(steps.map((s) => s.seconds)) : null,
  mocha,
};
if (!out.partial) writeFileSync(join(ROOT, "bench/results/test-times.json"), JSON.stringify(out, null, 2) + "\n");
else writeFileSync(join(ROOT, "bench/results/test-times-partial.json"), JSON.stringify(out, null, 2) + "\n");
