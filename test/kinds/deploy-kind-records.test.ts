/**
 * `pouw deploy` deploys KindRecords by default, in-process through main(argv) against a local chain: its address goes
 * into the deployment file as `kindRecords` (where `buyer create`, `provider claim`, the bot, `buyer fetch` and the
 * dApp read it), wired to the deployment's JobMarket with the `--kind-min-stake` given; `--no-kind-records` leaves it
 * out; a bad `--kind-min-stake` is refused by name before anything is deployed. `pouw quote --kind-min-stake` floors a
 * kind job's stake the same way.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, getAddress, http, parseEther, type Address } from "viem";
import { kindRecordsAbi } from "../../verifier/src/chain/index.ts";
import { configureLogging } from "../../verifier/src/log/index.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";
import { runPouw as run } from "../helpers/cli.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";
import { ROOT } from "../ml/helpers.ts";

describe("pouw deploy: KindRecords (in-process)", function () {
  this.timeout(300_000);
  let node: LocalChain | undefined;
  after(async () => {
    configureLogging({ level: "warn", format: "auto" });
    await node?.stop();
  });

  it("deploys KindRecords by default and writes kindRecords; --no-kind-records leaves it out", async () => {
    node = await startLocalChain();
    const dir = mkdtempSync(join(tmpdir(), "pouw-deploy-kind-records-"));
    const as = ["--rpc", node.url, "--state-dir", dir, "--private-key", DEV_KEYS[0]!];
    const errLines = (s: string) => s.split("\n").filter((l) => l && !/WARNING/.test(l));
    let r = await run(["deploy", "--kind-min-stake", "abc", ...as]);
    expect([r.code, errLines(r.stderr)]).to.deep.equal([2, [`pouw: --kind-min-stake must be a decimal token amount like 10 or 0.5, got "abc"`]]);
    r = await run(["deploy", "--kind-min-stake", "2.5", ...as]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/\nKindRecords      0x[0-9a-fA-F]{40} \(results of finalized evaluate and generate jobs; least lock 2\.5\)\n/);
    const written = JSON.parse(readFileSync(join(dir, "deployment.json"), "utf8")) as { jobMarket: Address; kindRecords?: Address };
    expect(written.kindRecords).to.match(/^0x[0-9a-fA-F]{40}$/);
    const client = createPublicClient({ transport: http(node.url) });
    expect(await client.readContract({ address: written.kindRecords!, abi: kindRecordsAbi, functionName: "market" })).to.equal(getAddress(written.jobMarket));
    expect(await client.readContract({ address: written.kindRecords!, abi: kindRecordsAbi, functionName: "minStake" })).to.equal(parseEther("2.5"));
    r = await run(["deploy", "--no-kind-records", ...as]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/\nKindRecords      not deployed \(--no-kind-records\)/);
    expect((JSON.parse(readFileSync(join(dir, "deployment.json"), "utf8")) as { kindRecords?: Address }).kindRecords).to.equal(undefined);
  });

  it("pouw quote --kind-min-stake floors a kind job's stake at KindRecords' minStake and says so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-quote-kind-min-"));
    const m = JSON.parse(readFileSync(join(ROOT, "examples/evaluate-tiny.json"), "utf8")) as object;
    const path = join(dir, "e.json");
    writeFileSync(path, JSON.stringify(m));
    let r = await run(["quote", "--manifest", path, "--pay", "2", "--json"]);
    expect(r.code, r.stderr).to.equal(0);
    const plain = JSON.parse(r.stdout) as { stakeWei: string; kindRecords: unknown };
    expect(plain.kindRecords).to.equal(null);
    r = await run(["quote", "--manifest", path, "--pay", "2", "--kind-min-stake", "50"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^stake S {13}100 tokens: the least stake whose best-tier lock reaches KindRecords' minStake 50 tokens/m);
    expect(r.stdout).to.match(/^KindRecords {9}minStake 50 tokens: a stake of at least 100 tokens/m);
    expect(BigInt(plain.stakeWei) < parseEther("100")).to.equal(true);
  });
});
