/**
 * `pouw auditor run --step-sampling RATE` in-process through main(argv) against a local chain: a rate outside (0, 1]
 * is refused with one line naming it (before any chain is read); a deployment file without `stateOpenings` is refused
 * with one line (exit 2: no provider could be asked for a state); `pouw deploy` writes one by default (`--no-state-openings`
 * leaves it out), and with it the bot runs a pass with step sampling on.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configureLogging } from "../../verifier/src/log/index.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";
import { runPouw as run } from "../helpers/cli.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";

describe("pouw auditor run --step-sampling (in-process)", function () {
  this.timeout(240_000);
  let node: LocalChain | undefined;
  after(async () => {
    configureLogging({ level: "warn", format: "auto" });
    await node?.stop();
  });

  it("refuses a rate outside (0, 1], naming it", async () => {
    for (const bad of ["0", "1.5", "-0.1", "abc", "0.4x"]) {
      const r = await run(["auditor", "run", "--once", "--step-sampling", bad, "--rpc", "http://127.0.0.1:9", "--private-key", DEV_KEYS[3]!]);
      expect([r.code, r.stderr]).to.deep.equal([2, `pouw: --step-sampling must be a probability per segment in (0, 1], got ${JSON.stringify(bad)}\n`]);
    }
  });

  it("refuses a deployment without StateOpenings; runs with the deployment's", async () => {
    node = await startLocalChain();
    const dir = mkdtempSync(join(tmpdir(), "pouw-step-sampling-cli-"));
    const as = (i: number) => ["--rpc", node!.url, "--state-dir", dir, "--private-key", DEV_KEYS[i]!];
    expect((await run(["deploy", "--no-state-openings", ...as(0)])).code).to.equal(0);
    expect((await run(["auditor", "bond", "100", "--mint", ...as(3)])).code).to.equal(0);
    let r = await run(["auditor", "run", "--once", "--step-sampling", "0.44", ...as(3)]);
    expect(r.code).to.equal(2);
    // after the dev-key warning, the one line
    expect(r.stderr.split("\n").filter((l) => l && !/WARNING: using a raw private key/.test(l))).to.deep.equal([
      "pouw: --step-sampling 0.44: the deployment has no stateOpenings (StateOpenings), so no provider can be asked for a state; deploy one with `pouw deploy` (it deploys StateOpenings unless --no-state-openings) or run without --step-sampling",
    ]);

    // `pouw deploy` writes the deployment's StateOpenings by default (a fresh deployment; the bond again)
    const dep = await run(["deploy", "--answer-window", "600", "--opening-replay", "60", ...as(0)]);
    expect(dep.code, dep.stderr).to.equal(0);
    expect(dep.stdout).to.match(/\nStateOpenings    0x[0-9a-fA-F]{40} \(answer window 600 s, then one opening per 60 s of each provider's queue\)\n/);
    const written = JSON.parse(readFileSync(join(dir, "deployment.json"), "utf8")) as { stateOpenings?: string };
    expect(written.stateOpenings).to.match(/^0x[0-9a-fA-F]{40}$/);
    expect((await run(["auditor", "bond", "100", "--mint", ...as(3)])).code).to.equal(0);
    r = await run(["deploy", "--answer-window", "2592001", ...as(0)]);
    expect([r.code, r.stderr.split("\n").filter((l) => l && !/WARNING/.test(l))]).to.deep.equal([2, ["pouw: --answer-window must be at most 2592000 seconds (30 days), got 2592001"]]);
    r = await run(["deploy", "--answer-window", "600", "--opening-replay", "601", ...as(0)]);
    expect([r.code, r.stderr.split("\n").filter((l) => l && !/WARNING/.test(l))]).to.deep.equal([2, ["pouw: --opening-replay must be from 1 to --answer-window (600) seconds, got 601"]]);
    r = await run(["auditor", "run", "--once", "--step-sampling", "0.44", "--log-format", "pretty", ...as(3)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^audited 0 segments/);
  });
});
