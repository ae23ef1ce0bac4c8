/**
 * `pouw --version`, `pouw --help` and the lazy command table (verifier/src/cli/commands/index.ts): the help listing names
 * every family with its own description, `--version` prints package.json's version, and one spawned smoke test checks that
 * `pouw --help` resolves no heavy package, and `pouw <family> --help` (and `pouw buyer status --help`) no viem, engine,
 * prover or LP solver: the family files define commands and flags only, their handlers (*-run.ts) load when one runs
 * (timings are bench/cli.ts's, never asserted here).
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildProgram } from "../../verifier/src/cli/pouw.ts";
import { COMMAND_FAMILIES, invokedFamily } from "../../verifier/src/cli/commands/index.ts";
import { DEFAULT_MAX_CHALLENGE_ROUNDS_CLI } from "../../verifier/src/cli/commands/auditor.ts";
import { DEFAULT_MAX_CHALLENGE_ROUNDS } from "../../verifier/src/bot/index.ts";
import { DATASETS, DEFAULT_SOTU_YEARS } from "../../verifier/src/ml/data/corpus.ts";
import { runPouw } from "./in-process.ts";
import { ROOT } from "../e2e/helpers.ts";

/**
 * `pouw ARGS` for each ARGS in `runs`, in order, through main(argv) in ONE child process with a module-resolution hook
 * (one process start instead of one per command: each costs ~2 s of module loading here). Per run: its exit code and
 * what the process had resolved by its end, npm packages and verifier/src modules. What the process has loaded only
 * grows, so "run k loads no X" holds when X is absent after run k, and "run k loads X" when X first appears at run k.
 */
function pouwLoadingEach(runs: string[][]): { code: number; packages: string[]; modules: string[] }[] {
  const dir = mkdtempSync(join(tmpdir(), "pouw-startup-"));
  const hook = join(dir, "hook.mjs");
  const driver = join(dir, "driver.mjs");
  const out = join(dir, "out.json");
  writeFileSync(
    hook,
    `import { registerHooks } from "node:module";
globalThis.__seen = { packages: new Set(), modules: new Set() };
registerHooks({ resolve(s, c, next) { const r = next(s, c); const p = /node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(r.url); if (p) globalThis.__seen.packages.add(p[1]); const m = /verifier\\/src\\/(.*)$/.exec(r.url); if (m) globalThis.__seen.modules.add(m[1]); return r; } });\n`,
  );
  writeFileSync(
    driver,
    `import { writeFileSync } from "node:fs";
const { main } = await import(${JSON.stringify(join(ROOT, "verifier/src/cli/pouw.ts"))});
const results = [];
for (const argv of ${JSON.stringify(runs)}) {
  process.exitCode = undefined;
  const code = await main(argv);
  results.push({ code, packages: [...globalThis.__seen.packages], modules: [...globalThis.__seen.modules] });
}
writeFileSync(${JSON.stringify(out)}, JSON.stringify(results));
process.exit(0);\n`,
  );
  const r = spawnSync(process.execPath, ["--import", hook, driver], { cwd: ROOT, encoding: "utf8" });
  expect(r.status, r.stderr).to.equal(0);
  return JSON.parse(readFileSync(out, "utf8")) as { code: number; packages: string[]; modules: string[] }[];
}

const packageVersion = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("pouw start-up: --version, --help, lazy command families", function () {
  this.timeout(60_000);

  it("--version and -V print package.json's version, exit 0", async () => {
    for (const flag of ["--version", "-V"]) {
      const r = await runPouw([flag]);
      expect(r).to.deep.equal({ code: 0, stdout: `${packageVersion}\n`, stderr: "" });
    }
  });

  it("--help lists every family with the description its own file gives it", async () => {
    const full = await buildProgram();
    const loaded = new Map(full.commands.map((c) => [c.name(), c.description()]));
    expect([...loaded.keys()].sort()).to.deep.equal(COMMAND_FAMILIES.map((f) => f.name).sort());
    for (const f of COMMAND_FAMILIES) expect(f.summary, f.name).to.equal(loaded.get(f.name));
    const r = await runPouw(["--help"]);
    expect(r.code).to.equal(0);
    for (const f of COMMAND_FAMILIES) expect(r.stdout, f.name).to.match(new RegExp(`^  ${f.name}\\b`, "m"));
    expect(r.stdout).to.match(/-V, --version +print the pouw version/);
  });

  it("the family argv invokes is the one loaded; help of a family works", async () => {
    expect(invokedFamily(["buyer", "status", "1", "--json"])?.name).to.equal("buyer");
    expect(invokedFamily(["help", "provider"])?.name).to.equal("provider");
    expect(invokedFamily(["--help"])).to.equal(undefined);
    expect(invokedFamily(["nosuch"])).to.equal(undefined);
    const r = await runPouw(["help", "buyer"]);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^  status \[options\] <job>/m);
    const bad = await runPouw(["buyr"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/unknown command 'buyr'/).and.to.match(/Did you mean buyer\?/);
  });

  it("the auditor help's default --max-challenge-rounds is the bot's", () => {
    expect(DEFAULT_MAX_CHALLENGE_ROUNDS_CLI).to.equal(DEFAULT_MAX_CHALLENGE_ROUNDS);
  });

  // one spawned process for the two smoke tests below (pouwLoadingEach): the help of the top level, of buyer status
  // and of every family with chain handlers; last, a handler that reaches for the chain
  const families = ["provider", "auditor", "dispute", "jobs", "data", "corpus", "buyer"];
  let helpRuns: ReturnType<typeof pouwLoadingEach> | undefined;
  const helpLoading = () =>
    (helpRuns ??= pouwLoadingEach([["--help"], ["buyer", "status", "--help"], ...families.map((f) => [f, "--help"]), ["buyer", "status", "1", "--rpc", "http://127.0.0.1:9"]]));

  it("smoke (spawned): --help loads no heavy package; buyer status --help no engine, prover or LP solver", () => {
    const runs = helpLoading();
    const [top, status] = [runs[0]!, runs[1]!];
    expect(top.code).to.equal(0);
    expect(top.packages.sort()).to.deep.equal(["commander"]);
    expect(status.code).to.equal(0);
    expect(status.packages.filter((p) => /viem|tensorflow|snarkjs|circomlibjs|highs|mnist/.test(p))).to.deep.equal([]);
    // the hook does see the chain stack when a handler runs (the same command with a job id and an unreachable RPC)
    const run = runs[runs.length - 1]!;
    expect(run.code).to.equal(2);
    expect(run.packages).to.include("viem");
  });

  it("smoke (spawned): <family> --help of every family with chain handlers loads no viem, hardhat, engine, prover or LP solver", () => {
    const runs = helpLoading();
    families.forEach((family, i) => {
      const r = runs[2 + i]!;
      expect(r.code, family).to.equal(0);
      expect(r.packages.filter((p) => /viem|hardhat|tensorflow|snarkjs|circomlibjs|highs|helia|libp2p/.test(p)), family).to.deep.equal([]);
    });
  });

  it("pouw corpus id's help names the data sets and default years the handler uses (written out in corpus.ts)", async () => {
    const r = await runPouw(["corpus", "id", "--help"]);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.include(`data set: ${Object.keys(DATASETS).join(" | ")}`);
    expect(r.stdout).to.include(`(default ${DEFAULT_SOTU_YEARS.join("-")})`);
  });

  it("smoke (spawned): help and argument errors of a chain command load no chain action (cli/context.ts and the handlers import them)", () => {
    const chainActions = (m: string[]) => m.filter((x) => x === "chain/index.ts" || x === "market/standing.ts" || x === "market/panel-pool.ts");
    // the check sees the chain actions when a handler needs them: a status that reaches for the RPC (last)
    const [help, nope, create, rpc] = pouwLoadingEach([["buyer", "status", "--help"], ["buyer", "status", "nope"], ["buyer", "create"], ["buyer", "status", "1", "--rpc", "http://127.0.0.1:9"]]);
    expect([help!.code, nope!.code, create!.code, rpc!.code]).to.deep.equal([0, 2, 2, 2]);
    expect(help!.modules).to.include("cli/commands/buyer.ts");
    // the definitions import their flags from options.ts; context.ts (viem) loads with a handler
    expect(help!.modules).to.include("cli/options.ts");
    expect(help!.modules).to.not.include("cli/context.ts");
    expect(help!.modules).to.not.include("cli/commands/buyer-run.ts");
    expect(chainActions(help!.modules)).to.deep.equal([]);
    expect(chainActions(nope!.modules)).to.deep.equal([]);
    expect(chainActions(create!.modules)).to.deep.equal([]);
    expect(rpc!.modules).to.include("chain/index.ts");
  });
});
