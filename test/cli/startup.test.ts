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
import { pouwLoading, ROOT } from "../e2e/helpers.ts";

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

  it("smoke (spawned): --help loads no heavy package; buyer status --help no engine, prover or LP solver", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-startup-"));
    const loaded = (args: string[]) => {
      const r = pouwLoading(dir, args);
      expect(r.status, r.stderr).to.equal(0);
      return r.loaded;
    };
    expect(loaded(["--help"]).sort()).to.deep.equal(["commander"]);
    const status = loaded(["buyer", "status", "--help"]);
    expect(status.filter((p) => /viem|tensorflow|snarkjs|circomlibjs|highs|mnist/.test(p))).to.deep.equal([]);
    // the hook does see the chain stack when a handler runs (the same command with a job id and an unreachable RPC)
    const dir2 = mkdtempSync(join(tmpdir(), "pouw-startup-"));
    const run = pouwLoading(dir2, ["buyer", "status", "1", "--rpc", "http://127.0.0.1:9"]);
    expect(run.status).to.equal(2);
    expect(run.loaded).to.include("viem");
  });

  it("smoke (spawned): <family> --help of every family with chain handlers loads no viem, hardhat, engine, prover or LP solver", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-startup-"));
    for (const family of ["provider", "auditor", "dispute", "jobs", "data", "corpus", "buyer"]) {
      const r = pouwLoading(dir, [family, "--help"]);
      expect(r.status, r.stderr).to.equal(0);
      expect(r.loaded.filter((p) => /viem|hardhat|tensorflow|snarkjs|circomlibjs|highs|helia|libp2p/.test(p)), family).to.deep.equal([]);
    }
  });

  it("pouw corpus id's help names the data sets and default years the handler uses (written out in corpus.ts)", async () => {
    const r = await runPouw(["corpus", "id", "--help"]);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.include(`data set: ${Object.keys(DATASETS).join(" | ")}`);
    expect(r.stdout).to.include(`(default ${DEFAULT_SOTU_YEARS.join("-")})`);
  });

  it("smoke (spawned): help and argument errors of a chain command load no chain action (cli/context.ts and the handlers import them)", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-startup-"));
    const hook = join(dir, "modules.mjs");
    const out = join(dir, "modules.json");
    // every project module the process resolves, relative to verifier/src
    writeFileSync(
      hook,
      `import { registerHooks } from "node:module"; import { writeFileSync } from "node:fs";
const seen = new Set();
registerHooks({ resolve(s, c, next) { const r = next(s, c); const m = /verifier\\/src\\/(.*)$/.exec(r.url); if (m) seen.add(m[1]); return r; } });
process.on("exit", () => writeFileSync(${JSON.stringify(out)}, JSON.stringify([...seen])));\n`,
    );
    const modules = (args: string[], code: number) => {
      const r = spawnSync(process.execPath, ["--import", hook, join(ROOT, "verifier/src/cli/pouw.ts"), ...args], { cwd: ROOT, encoding: "utf8" });
      expect(r.status, r.stderr).to.equal(code);
      return JSON.parse(readFileSync(out, "utf8")) as string[];
    };
    const chainActions = (m: string[]) => m.filter((x) => x === "chain/index.ts" || x === "market/standing.ts" || x === "market/panel-pool.ts");
    const help = modules(["buyer", "status", "--help"], 0);
    expect(help).to.include("cli/commands/buyer.ts");
    // the definitions import their flags from options.ts; context.ts (viem) loads with a handler
    expect(help).to.include("cli/options.ts");
    expect(help).to.not.include("cli/context.ts");
    expect(help).to.not.include("cli/commands/buyer-run.ts");
    expect(chainActions(help)).to.deep.equal([]);
    expect(chainActions(modules(["buyer", "status", "nope"], 2))).to.deep.equal([]);
    expect(chainActions(modules(["buyer", "create"], 2))).to.deep.equal([]);
    // the check sees the chain actions when a handler needs them: a status that reaches for the RPC
    expect(modules(["buyer", "status", "1", "--rpc", "http://127.0.0.1:9"], 2)).to.include("chain/index.ts");
  });
});
