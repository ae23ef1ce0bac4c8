/**
 * `pouw auditor run --step-sampling RATE` in-process through main(argv) against a local chain: a rate outside (0, 1]
 * is refused with one line naming it (before any chain is read); a deployment file without `stateOpenings` is refused
 * with one line (exit 2: no provider could be asked for a state); with the deployment's StateOpenings the bot runs a
 * pass with step sampling on.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { httpClients } from "../../verifier/src/chain/clients.ts";
import { deployStateOpenings } from "../../verifier/src/chain/index.ts";
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
    expect((await run(["deploy", ...as(0)])).code).to.equal(0);
    expect((await run(["auditor", "bond", "100", "--mint", ...as(3)])).code).to.equal(0);
    let r = await run(["auditor", "run", "--once", "--step-sampling", "0.44", ...as(3)]);
    expect(r.code).to.equal(2);
    // after the dev-key warning, the one line
    expect(r.stderr.split("\n").filter((l) => l && !/WARNING: using a raw private key/.test(l))).to.deep.equal([
      "pouw: --step-sampling 0.44: the deployment has no stateOpenings (StateOpenings), so no provider can be asked for a state; deploy one with `pouw deploy` or run without --step-sampling",
    ]);

    // the deployment's StateOpenings, written into its file as `pouw deploy` writes it
    const path = join(dir, "deployment.json");
    const d = JSON.parse(readFileSync(path, "utf8")) as { jobMarket: `0x${string}`; chainId: number };
    const admin = httpClients(node.url, 31337, { account: privateKeyToAccount(DEV_KEYS[0]!) });
    const { stateOpenings } = await deployStateOpenings(admin, { jobMarket: d.jobMarket, answerWindowSeconds: 600, maxOpeningsPerAuditor: 8 });
    writeFileSync(path, JSON.stringify({ ...d, stateOpenings }, null, 2));
    r = await run(["auditor", "run", "--once", "--step-sampling", "0.44", "--log-format", "pretty", ...as(3)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^audited 0 segments/);
  });
});
