/**
 * End to end across "machines": the buyer, the provider and the auditor each have their own state directory
 * (store, board, bot database) and share nothing but the chain and HTTP. The buyer and the provider each run
 * `pouw serve`; the provider trains with `--source <buyer>` (the manifest), the challenger bot audits with
 * `--source <unreachable> --source <provider>` (checkpoints, segment leaves), and the buyer fetches the
 * final weights and provenance record with `--source <provider>`. One of two jobs plants a weight delta at
 * step 6: the bot names the step, which needs the provider's leaves from its remote board.
 *
 * The chain is the in-process network served over JSON-RPC by the test process (test/helpers/chain.ts: a spawned
 * `hardhat node` costs ~8 CPU s more), and the chain set-up (deploy, post, stake, accept, bond) is done in this process
 * over JSON-RPC to save process start-ups; every party that serves or trains content (the two `pouw serve`s, the bot,
 * the two provider runs) is its own `pouw` process; the provider's claim and the buyer's fetch after them run
 * in-process through main(argv) (test/helpers/cli.ts), each with its own state directory, its party's only link
 * to the others HTTP.
 */
import { expect } from "chai";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { acceptJob, approveToken, deployMarket, getSegmentCommits, httpClients, mintTestToken, postBond, stakeDeposit, writeDeployment, type Deployment } from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { parseManifest } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { runPouw } from "../helpers/cli.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";
import { cliOk, DEV_KEYS, freePort, increaseTime, ROOT, startCli, type CliRun } from "./helpers.ts";

/** `pouw ARGS` in-process; fails the test with its stderr unless it exits 0. */
async function pouwOk(args: string[]): Promise<string> {
  const r = await runPouw(args);
  if (r.code !== 0) throw new Error(`pouw ${args.join(" ")} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

type Party = "chain" | "buyer" | "provider" | "auditor";

/** Starts `pouw serve --port 0` for a party and resolves with the URL it prints. */
async function startServe(stateDir: string): Promise<{ url: string; run: CliRun }> {
  const run = startCli(["serve", "--port", "0", "--state-dir", stateDir]);
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    run.child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = / at (http:\/\/127\.0\.0\.1:[0-9]+) /.exec(out);
      if (m) resolve(m[1]!);
    });
    void run.done.then((r) => reject(new Error(`pouw serve exited ${r.code}: ${r.stderr.slice(-1000)}`)));
  });
  return { url, run };
}

describe("e2e: parties on separate machines exchange content over `pouw serve`", function () {
  this.timeout(240_000);
  const root = mkdtempSync(join(tmpdir(), "pouw-net-"));
  const dir = (p: Party) => join(root, p);
  const deploymentPath = join(dir("chain"), "deployment.json");
  let node: LocalChain;
  let d: Deployment;
  /** Long-running children, stopped after the test whatever happens. */
  const children: CliRun[] = [];

  before(async () => {
    node = await startLocalChain();
    const clients = (i: number) => httpClients(node.url, 31337, { account: privateKeyToAccount(DEV_KEYS[i]!), pollingIntervalMs: 100 });
    const [admin, buyer, provider, auditor, planter] = [clients(0), clients(1), clients(2), clients(3), clients(4)];
    const { gasUsed: _gas, ...deployment } = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n, registries: false });
    d = deployment;
    await writeDeployment(deploymentPath, d);
    const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8"));
    const manifest = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } });
    const { policy, payment } = await jobPolicyFor(manifest, { overrides: { challengeWindow: 100 } });
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: 2n * payment });
    // the manifest goes into the buyer's store only: the provider and the bot must fetch it over HTTP
    const buyerStore = new LocalDirStore(join(dir("buyer"), "store"));
    for (let i = 0; i < 2; i++) await postJob(buyer, d, buyerStore, manifest, policy, payment);
    // two provider keys on the provider's machine (one directory, one `pouw serve`); the second one cheats
    for (const [p, jobId] of [[provider, 1n], [planter, 2n]] as const) {
      await mintTestToken(p, { token: d.token, to: p.account.address, amount: policy.requiredStake });
      await approveToken(p, { token: d.token, spender: d.stakeVault, amount: policy.requiredStake });
      await stakeDeposit(p, { stakeVault: d.stakeVault, amount: policy.requiredStake });
      await acceptJob(p, { jobMarket: d.jobMarket, jobId });
    }
    await mintTestToken(auditor, { token: d.token, to: auditor.account.address, amount: parseEther("1") });
    await approveToken(auditor, { token: d.token, spender: d.auditorRegistry, amount: parseEther("1") });
    await postBond(auditor, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
  });

  after(async () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
    await node?.stop();
  });

  const as = (p: Party, key: number) => ["--rpc", node.url, "--state-dir", dir(p), "--deployment", deploymentPath, "--private-key", DEV_KEYS[key]!, "--poll-interval", "200"];

  it("the bot audits from the provider's server and the buyer fetches from it, with no shared directory", async () => {
    const [buyerServe, providerServe] = await Promise.all([startServe(dir("buyer")), startServe(dir("provider"))]);
    children.push(buyerServe.run, providerServe.run);
    const dead = `http://127.0.0.1:${await freePort()}`;

    // the bot: its own directory; the first source is unreachable and must fall through to the provider's
    const bot = startCli(["auditor", "run", ...as("auditor", 3), "--source", dead, "--source", providerServe.url, "--log-level", "info"]);
    children.push(bot);
    let audits = 0;
    const allAudited = new Promise<void>((resolve, reject) => {
      bot.onStderrLine((l) => /"msg":"audit (ok|FAILED)/.test(l) && ++audits === 6 && resolve());
      setTimeout(() => reject(new Error(`the bot audited ${audits} of 6 segments in 120 s`)), 120_000).unref();
    });
    const botExit = bot.done.then((r) => {
      if (audits < 6) throw new Error(`bot exited early (${r.code}): ${r.stderr.slice(-2000)}`);
      return r;
    });

    const runs = await Promise.all([
      cliOk(["provider", "run", "1", ...as("provider", 2), "--source", buyerServe.url]),
      cliOk(["provider", "run", "2", "--strategy", "plant:6", ...as("provider", 4), "--source", buyerServe.url]),
    ]);
    for (const r of runs) expect(r).to.match(/committed segments 0\.\.2/);
    await Promise.race([allAudited, botExit]);
    bot.child.kill("SIGTERM");
    const botResult = await botExit;
    expect(botResult.code, botResult.stderr.slice(-2000)).to.equal(0);
    // step 6 is named only from the provider's leaves, which the bot read from the provider's remote board
    // segment 2 of the planter's job is right from its start, but that start carries the planted weights: the state
    // screen fails there, so it gets no receipt (4, not 5)
    expect(botResult.stdout).to.match(/audited 6 segments \(1 failed: job 2 segment 1 step 6\), 0 not sampled, 4 receipts signed/);

    // the auditor cached every checkpoint it audited (verified) in its own store; it has no board of its own
    const client = httpClients(node.url, 31337, { account: privateKeyToAccount(DEV_KEYS[3]!) });
    const commits = await getSegmentCommits(client.public, { jobMarket: d.jobMarket, jobId: 1n, fromBlock: BigInt(d.startBlock) });
    const cached = readdirSync(join(dir("auditor"), "store"));
    for (const c of commits) expect(cached).to.include(c.checkpointCid);
    expect(existsSync(join(dir("auditor"), "board"))).to.equal(false);

    await increaseTime(node.url, 101);
    expect(await pouwOk(["provider", "claim", "1", ...as("provider", 2)])).to.match(/job 1: provenance anchored/).and.to.match(/claimed 0\.1\n/);
    const out = join(root, "result");
    expect(await pouwOk(["buyer", "fetch", "1", "--out", out, ...as("buyer", 1), "--source", providerServe.url])).to.match(/^job 1 \(Finalized\): provenance verified \(record 0x/);
    expect(JSON.parse(readFileSync(join(out, "provenance.json"), "utf8")).format).to.equal("pouw-provenance-1");
    expect(existsSync(join(out, "final.safetensors"))).to.equal(true);
    expect(existsSync(join(dir("buyer"), "board"))).to.equal(false);

    for (const s of [buyerServe, providerServe]) s.run.child.kill("SIGTERM");
    for (const r of await Promise.all([buyerServe.run.done, providerServe.run.done])) {
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(/\nstopped\n$/);
    }
  });
});
