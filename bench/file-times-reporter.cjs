// A Mocha reporter for bench/tests.ts: the spec reporter's output, plus the wall time of each test file (its top-level
// suites from start to end, hooks included) and of each test, written as JSON to the path in POUW_TEST_TIMES when the
// run ends. CPU seconds are this process's and its reaped children's (spawned `pouw` processes, `hardhat node`s), read
// from /proc/self/stat: unlike wall time they hardly change with the load other users put on a shared machine. CommonJS because Mocha loads reporters with require(). Enabled from hardhat.config.ts only when
// POUW_TEST_TIMES is set, so `npm test` keeps the plain spec reporter.
"use strict";
const { existsSync, readFileSync, writeFileSync } = require("node:fs");
const { relative } = require("node:path");
const Mocha = require("mocha");
const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END, EVENT_RUN_END } = Mocha.Runner.constants;

const TICKS = 100; // getconf CLK_TCK on Linux
/** utime + stime + cutime + cstime of this process, seconds; 0 where /proc is missing. */
function cpuSeconds() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS;
  } catch {
    return 0;
  }
}

class FileTimesReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map();
    const tests = [];
    const started = new Map();
    const t0 = Date.now();
    const cpu0 = cpuSeconds();
    const rel = (f) => relative(process.cwd(), f);
    const entry = (f) => {
      let e = files.get(f);
      if (!e) files.set(f, (e = { file: f, seconds: 0, cpuSeconds: 0, tests: 0, failures: 0 }));
      return e;
    };
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent && suite.parent.root) started.set(suite, [Date.now(), cpuSeconds()]);
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const s = started.get(suite);
      if (s === undefined) return;
      const e = entry(rel(suite.file));
      e.seconds += (Date.now() - s[0]) / 1000;
      e.cpuSeconds += cpuSeconds() - s[1];
    });
    runner.on(EVENT_TEST_END, (test) => {
      if (!test.file) return;
      const e = entry(rel(test.file));
      e.tests += 1;
      if (test.state === "failed") e.failures += 1;
      tests.push({ file: rel(test.file), title: test.fullTitle(), seconds: (test.duration ?? 0) / 1000, state: test.state });
    });
    runner.once(EVENT_RUN_END, () => {
      const out = process.env.POUW_TEST_TIMES;
      if (!out) return;
      const round = (x) => Math.round(x * 100) / 100;
      // A parallel run (POUW_TEST_JOBS > 1): each worker wrote its files' wall and CPU seconds (test/helpers/mocha-hooks.ts);
      // the events here came in a burst as each file finished, so only the test counts are taken from them. The run's CPU
      // is this process's own plus the files' (a worker's start-up outside its files is not counted).
      const workerLines = existsSync(`${out}.files.jsonl`) ? readFileSync(`${out}.files.jsonl`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
      const workers = new Set(workerLines.map((l) => l.pid));
      for (const l of workerLines) {
        const e = entry(l.file);
        e.seconds = l.seconds;
        e.cpuSeconds = l.cpuSeconds;
      }
      let runCpu = cpuSeconds() - cpu0;
      // NOTE: not cpuSeconds() here: its reaped-children part already holds the workers that exited, files included
      if (workerLines.length > 0) {
        const own = process.cpuUsage();
        runCpu = (own.user + own.system) / 1e6 + workerLines.reduce((a, l) => a + l.cpuSeconds, 0);
      }
      const rows = [...files.values()].map((e) => ({ ...e, seconds: round(e.seconds), cpuSeconds: round(e.cpuSeconds) })).sort((a, b) => b.seconds - a.seconds);
      const slowest = tests.sort((a, b) => b.seconds - a.seconds).slice(0, 40).map((t) => ({ ...t, seconds: round(t.seconds) }));
      writeFileSync(out, JSON.stringify({ runSeconds: round((Date.now() - t0) / 1000), runCpuSeconds: round(runCpu), workers: workers.size || 1, files: rows, slowestTests: slowest }, null, 2) + "\n");
    });
  }
}
module.exports = FileTimesReporter;
