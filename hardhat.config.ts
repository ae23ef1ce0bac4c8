import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { defineConfig, overrideTask } from "hardhat/config";
import hardhatViem from "@nomicfoundation/hardhat-viem";
import hardhatViemAssertions from "@nomicfoundation/hardhat-viem-assertions";
import hardhatMocha from "@nomicfoundation/hardhat-mocha";
import hardhatNetworkHelpers from "@nomicfoundation/hardhat-network-helpers";
import hardhatIgnitionViem from "@nomicfoundation/hardhat-ignition-viem";
import hardhatKeystore from "@nomicfoundation/hardhat-keystore";

// NOTE: no network access on build machines, so solc comes from the npm `solc` package (soljson)
// instead of Hardhat's downloader. The version must match the package pinned in package.json.
const require = createRequire(import.meta.url);
const soljson = require.resolve("solc/soljson.js");

// Fuzz depth: modest for `npm test`, deep for `npm run test:deep` (POUW_FUZZ_DEEP=1); POUW_FUZZ_RUNS,
// POUW_INVARIANT_RUNS and POUW_INVARIANT_DEPTH override either (a positive integer each), e.g. for a bounded deep run.
const deep = process.env.POUW_FUZZ_DEEP === "1";
// The dispute tests compile in their own solc run (see splitTestsCompilation below): one object, so one run.
const secondTestRun = { version: "0.8.28", path: soljson, settings: { optimizer: { enabled: true, runs: 200 }, viaIR: false } };
const disputeTests = ["DisputeGame.t.sol", "DisputeGame.invariant.t.sol", "DisputeGameAttacks.t.sol", "DisputeGameAbandon.t.sol", "DrawGuard.t.sol", "DisputePanel.t.sol", "AppealSmallPool.t.sol", "JobMarketReopens.t.sol"].map((f) => `contracts/${f}`);

function runsFromEnv(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  if (!/^[1-9][0-9]*$/.test(v)) throw new Error(`${name}=${v}: expected a positive integer`);
  return Number(v);
}

// Mocha runs its files on this many worker processes (default 2, or 1 on a 1-core machine; POUW_TEST_JOBS=1 runs them
// serially in one process). A run of a single named file is serial whatever the setting (a worker would only add its
// start-up). IMPORTANT: in a parallel run `.only` applies within its file only (a Mocha limitation).
const jobs = runsFromEnv("POUW_TEST_JOBS", Math.min(2, availableParallelism()));
const silenceLogs = { beforeAll: async () => (await import("./test/helpers/mocha-hooks.ts")).silenceLogs() };
const ROOT = import.meta.dirname;

export default defineConfig({
  plugins: [
    hardhatViem,
    hardhatViemAssertions,
    hardhatMocha,
    hardhatNetworkHelpers,
    hardhatIgnitionViem,
    hardhatKeystore,
  ],
  solidity: {
    // NOTE: contracts and Solidity tests compile in separate solc runs, the tests in two (the dispute tests below): in
    // one run the wasm solc (soljson) ran out of its memory ("memory access out of bounds", HHE908) once the sources
    // outgrew it together.
    splitTestsCompilation: true,
    profiles: {
      default: {
        compilers: [{ version: "0.8.28", path: soljson, settings: { optimizer: { enabled: true, runs: 200 }, viaIR: false } }],
        overrides: {
          // DisputeGame (with DisputeSettlement, which it deploys and delegates to) is optimized for size (runs 1), so
          // that the room under the >= 10% headroom test/contracts/sizes.test.ts demands goes to features, at a small
          // gas cost on its calls (bench:gas)
          "contracts/DisputeGame.sol": { version: "0.8.28", path: soljson, settings: { optimizer: { enabled: true, runs: 1 }, viaIR: false } },
          // the same settings as the default, in a second solc run (Hardhat merges the jobs of one config object)
          ...Object.fromEntries(disputeTests.map((f) => [f, secondTestRun])),
        },
      },
    },
  },
  paths: {
    // NOTE: the Solidity tests are the `.t.sol` files beside the contracts (Hardhat takes `.t.sol` under the sources
    // as tests); `solidity` names a folder with no .sol file. Named "contracts", its tests scope took every contract as
    // a test root too (`splitTestsCompilation`): each build compiled the contracts twice, and the two scopes' cache
    // entries for the same paths overwrote each other, so every `hardhat build` (and `npm test`) recompiled it all.
    tests: { mocha: "test", solidity: "test" },
  },
  test: {
    solidity: {
      fuzz: { runs: runsFromEnv("POUW_FUZZ_RUNS", deep ? 10_000 : 64) },
      invariant: {
        runs: runsFromEnv("POUW_INVARIANT_RUNS", deep ? 10_000 : 32),
        depth: runsFromEnv("POUW_INVARIANT_DEPTH", deep ? 32 : 16),
      },
    },
    mocha: {
      // 120 s: a case that needs longer (a suite of spawned processes, a SIGKILL restart) says so with this.timeout
      timeout: 120_000,
      // bench/tests.ts sets POUW_TEST_TIMES to a JSON path: the spec output plus each test file's wall time
      ...(process.env.POUW_TEST_TIMES ? { reporter: "./bench/file-times-reporter.cjs" } : {}),
      // module loggers are silent in tests (POUW_TEST_LOG_LEVEL=warn shows them); tests that check log lines pass their
      // own logger or stream
      // NOTE: the `test mocha` override below turns a parallel run serial for a single file
      ...(jobs > 1 ? { parallel: true, jobs, require: ["./test/helpers/mocha-hooks.ts"] } : { rootHooks: silenceLogs }),
    },
  },
  tasks: [
    // every test file, heaviest first (test/helpers/file-order.ts), when none are named; the files Hardhat's Mocha
    // runner would find (every .js/.cjs/.mjs/.ts/.cts/.mts under test/)
    overrideTask(["test", "mocha"])
      .setInlineAction(async (args, hre, runSuper) => {
        const mocha = hre.config.test.mocha;
        let testFiles = (args.testFiles ?? []) as string[];
        if (testFiles.length === 0) {
          const { heavyFirst } = await import("./test/helpers/file-order.ts");
          const all = (readdirSync(join(ROOT, "test"), { recursive: true }) as string[]).filter((f) => /\.(c|m)?(j|t)s$/i.test(f)).map((f) => join(ROOT, "test", f));
          testFiles = heavyFirst(all.sort(), ROOT, join(ROOT, "bench/results/test-times.json"));
        }
        if (mocha.parallel === true && testFiles.length === 1) {
          mocha.parallel = false;
          mocha.require = [];
          mocha.rootHooks = silenceLogs;
        }
        return runSuper({ ...args, testFiles });
      })
      .build(),
  ],
  networks: {
    localhost: { type: "http", chainType: "l1", url: "http://127.0.0.1:8545" },
  },
});
