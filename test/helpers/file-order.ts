/**
 * The order `hardhat test mocha` hands the test files to Mocha when none are named (hardhat.config.ts overrides the
 * task with it). In a parallel run (the default, test/helpers/mocha-hooks.ts) Mocha gives each free worker the next
 * file in that order, so the longest files go first (longest-processing-time-first scheduling): a heavy file started
 * last would run alone on one core at the end. The weights are each file's wall and CPU seconds in the last full
 * `node bench/tests.ts` run (bench/results/test-times.json, rewritten by every full run); a test file missing there
 * (new since) goes before all measured ones, since its weight is unknown, and a helper module (no `.test.` in its
 * name: Mocha loads it, it holds no tests) after them. Without the times file the order is unchanged.
 *
 * @example
 *   heavyFirst(["/r/test/a.test.ts", "/r/test/b.test.ts"], "/r", "/r/bench/results/test-times.json")
 */
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";

export type FileTimes = { mocha?: { files?: { file: string; seconds: number; cpuSeconds: number }[] } };

/** `files` (absolute paths) with the heaviest first; ties keep their order. */
export function heavyFirst(files: readonly string[], root: string, timesPath: string): string[] {
  if (!existsSync(timesPath)) return [...files];
  let times: FileTimes;
  try {
    times = JSON.parse(readFileSync(timesPath, "utf8")) as FileTimes;
  } catch (err) {
    throw new Error(`test file order: ${timesPath} is not valid JSON (rerun node bench/tests.ts or restore it): ${String(err)}`);
  }
  const weight = new Map<string, number>();
  for (const f of times.mocha?.files ?? []) weight.set(f.file, Math.max(f.seconds, f.cpuSeconds));
  const w = (f: string) => weight.get(relative(root, f)) ?? (/\.test\.[cm]?[jt]s$/.test(f) ? Infinity : 0);
  return files.map((f, i) => ({ f, i, w: w(f) })).sort((a, b) => b.w - a.w || a.i - b.i).map((x) => x.f);
}
