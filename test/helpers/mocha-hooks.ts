/**
 * Root hooks of the Mocha run (a Mocha "root hook plugin"). In a serial run hardhat.config.ts calls `silenceLogs`
 * once through `rootHooks`; in a parallel run (POUW_TEST_JOBS > 1) each worker loads this file with `require`, and
 * Mocha runs these hooks around every test file the worker runs.
 *
 * - Module loggers are silent in tests (POUW_TEST_LOG_LEVEL=warn shows them); tests that check log lines pass their
 *   own logger or stream.
 * - With POUW_TEST_TIMES set (bench/tests.ts), each worker appends one JSON line per test file, its wall and CPU
 *   seconds (the worker's own and its reaped children's: spawned `pouw` processes, `hardhat node`s), to
 *   `${POUW_TEST_TIMES}.files.jsonl`; the reporter (bench/file-times-reporter.cjs) runs in the main process, where a
 *   parallel run's per-file events all arrive at once when the file is done, so it takes the figures from there.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";

/**
 * NOTE: a dynamic import: Mocha's `require` may load this file as CommonJS, and a static import would then silence a
 * CommonJS copy of the log module while the test files (ES modules) log through their own.
 */
export async function silenceLogs(): Promise<void> {
  const { configureLogging } = await import("../../verifier/src/log/index.ts");
  configureLogging({ level: process.env.POUW_TEST_LOG_LEVEL ?? "silent" });
}

/** utime + stime + cutime + cstime of this process in seconds (Linux /proc; 0 elsewhere). */
export function processCpuSeconds(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return 0;
  }
}

// NOTE: Hardhat starts parallel workers with NODE_OPTIONS=--import tsx/esm; the processes the tests spawn (`pouw`,
// `hardhat node`) must start as users start them (Node's own type stripping), not with tsx preloaded.
if (process.env.NODE_OPTIONS?.includes("tsx")) process.env.NODE_OPTIONS = process.env.NODE_OPTIONS.replace(/--import\s+"?[^"\s]*tsx[^"\s]*"?/g, "").trim();

type Ctx = { test?: { parent?: { suites?: { file?: string }[] } } };
let started: { file: string; t0: number; cpu0: number } | undefined;

export const mochaHooks = {
  async beforeAll(this: Ctx): Promise<void> {
    await silenceLogs();
    const file = this.test?.parent?.suites?.find((s) => s.file)?.file;
    if (process.env.POUW_TEST_TIMES && file) started = { file: relative(process.cwd(), file), t0: Date.now(), cpu0: processCpuSeconds() };
  },
  afterAll(): void {
    const out = process.env.POUW_TEST_TIMES;
    if (!out || !started) return;
    const line = { file: started.file, seconds: (Date.now() - started.t0) / 1000, cpuSeconds: processCpuSeconds() - started.cpu0, pid: process.pid };
    appendFileSync(`${out}.files.jsonl`, JSON.stringify(line) + "\n");
    started = undefined;
  },
};
