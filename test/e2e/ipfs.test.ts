/**
 * End to end over IPFS: buyer, provider and auditor each have their own state directory and share nothing but the
 * chain and libp2p on loopback: no --source URL and no --ipfs-peer anywhere: every party finds the others' nodes
 * from the chain (PeerDirectory, docs/content.md). The buyer and the provider run `pouw serve --ipfs` (a Helia node
 * over their store and board); the buyer's node is announced under the buyer's account; `provider run --ipfs`
 * announces the provider's serve node (from its addresses file) and fetches the manifest from the buyer's announced
 * node over bitswap; the challenger bot audits with `--ipfs` (checkpoints from the job provider's announced node), and
 * the buyer fetches the final weights and provenance record with `--ipfs` (the board pointer over
 * /pouw/board/1.0.0), verified against the chain.
 *
 * NOTE: what must be a process of its own is one: the two `pouw serve --ipfs` nodes (each holds its state dir's key
 * and pid lock, so `provider run` beside it must run on a temporary key and announce the serve node) and the bot.
 * The chain is Hardhat's in-process network served over HTTP, and `provider run`, `provider claim` and `buyer
 * fetch` run through main(argv) in this process (their IPFS nodes are still separate libp2p nodes on loopback TCP):
 * each spawn costs seconds of module loading (the file took 75 s under npm test with a `hardhat node` and six
 * spawns, nearly all of it start-up, none of it waiting on the network).
 */
import { expect } from "chai";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { acceptJob, announcePeers, approveToken, deployMarket, getAnnouncedPeers, getSegmentCommits, httpClients, mintTestToken, postBond, stakeDeposit, writeDeployment, type Deployment } from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { parseManifest } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { runPouw } from "../cli/in-process.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";
import { DEV_KEYS, increaseTime, ROOT, startCli, type CliRun } from "./helpers.ts";

type Party = "chain" | "buyer" | "provider" | "auditor";

/** Starts `pouw serve --ipfs --port 0` for a party and resolves with the multiaddr its IPFS node prints. */
async function startIpfsServe(stateDir: string): Promise<{ addr: string; run: CliRun }> {
  const run = startCli(["serve", "--port", "0", "--ipfs", "--state-dir", stateDir]);
  const addr = await new Promise<string>((resolve, reject) => {
    let out = "";
    run.child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /\nipfs \S+ at (\/ip4\/127\.0\.0\.1\/tcp\/[0-9]+\/p2p\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void run.done.then((r) => reject(new Error(`pouw serve --ipfs exited ${r.code}: ${r.stderr.slice(-1000)}`)));
  });
  return { addr, run };
}

describe("e2e: parties exchange content over IPFS only (Helia on loopback, no --source)", function () {
  this.timeout(300_000);
  const root = mkdtempSync(join(tmpdir(), "pouw-ipfs-"));
  const dir = (p: Party) => join(root, p);
  const deploymentPath = join(dir("chain"), "deployment.json");
  let node: ServedProvider;
  let d: Deployment;
  const children: CliRun[] = [];
  let buyerClients: ReturnType<typeof httpClients>;

  before(async () => {
    node = await serveProvider((await network.create()).provider);
    const clients = (i: number) => httpClients(node.url, 31337, { account: privateKeyToAccount(DEV_KEYS[i]!), pollingIntervalMs: 100 });
    const [admin, buyer, provider, auditor] = [clients(0), clients(1), clients(2), clients(3)];
    buyerClients = buyer;
    const { gasUsed: _gas, ...deployment } = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n, registries: false });
    d = deployment;
    await writeDeployment(deploymentPath, d);
    const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8"));
    const manifest = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } });
    const { policy, payment } = await jobPolicyFor(manifest, { overrides: { challengeWindow: 100 } });
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: payment });
    // the manifest goes into the buyer's store only: the provider must fetch it over bitswap
    await postJob(buyer, d, new LocalDirStore(join(dir("buyer"), "store")), manifest, policy, payment);
    await mintTestToken(provider, { token: d.token, to: provider.account.address, amount: policy.requiredStake });
    await approveToken(provider, { token: d.token, spender: d.stakeVault, amount: policy.requiredStake });
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: policy.requiredStake });
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId: 1n });
    await mintTestToken(auditor, { token: d.token, to: auditor.account.address, amount: parseEther("1") });
    await approveToken(auditor, { token: d.token, spender: d.auditorRegistry, amount: parseEther("1") });
    await postBond(auditor, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
  });

  after(async () => {
    // INVARIANT: the serve processes (each a Helia node writing into its state dir) have exited before the dirs go:
    // SIGTERM lets each stop its node; SIGKILL after 10 s
    await Promise.all(
      children.map(async (c) => {
        if (c.child.exitCode !== null || c.child.signalCode !== null) return;
        const killer = setTimeout(() => c.child.kill("SIGKILL"), 10_000);
        c.child.kill("SIGTERM");
        await c.done;
        clearTimeout(killer);
      }),
    );
    await node?.close();
    await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });

  const pouwOk = async (args: string[]) => {
    const r = await runPouw(args);
    if (r.code !== 0) throw new Error(`pouw ${args.join(" ")} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    return r.stdout;
  };
  const as = (p: Party, key: number) => ["--rpc", node.url, "--state-dir", dir(p), "--deployment", deploymentPath, "--private-key", DEV_KEYS[key]!, "--poll-interval", "200"];

  it("the bot audits from the provider's IPFS node and the buyer fetches and verifies the result from it", async () => {
    const [buyerServe, providerServe] = await Promise.all([startIpfsServe(dir("buyer")), startIpfsServe(dir("provider"))]);
    children.push(buyerServe.run, providerServe.run);
    // the buyer posted before its node ran (its manifest is in its store only): it announces its serve node now
    // (`buyer post --ipfs` does the same through cli/context.ts announceStateNode)
    await announcePeers(buyerClients, { peerDirectory: d.peerDirectory!, multiaddrs: [buyerServe.addr] });

    // the provider's own `serve --ipfs` holds the state dir's key: this run's node gets a temporary one
    // and announces that serve node (its peer id and port, from <state dir>/ipfs.addrs), not its own short-lived one
    const providerRun = pouwOk(["provider", "run", "1", ...as("provider", 2), "--ipfs"]);
    const providerAccount = privateKeyToAccount(DEV_KEYS[2]!).address;
    const announcedNow = () => getAnnouncedPeers(buyerClients.public, { peerDirectory: d.peerDirectory!, account: providerAccount, fromBlock: BigInt(d.startBlock) });
    // the bot starts once the provider has announced (before its first commit), so its first read of the directory
    // finds the node (a reader re-reads an account at most every 15 s) while the provider trains
    let runSettled = false;
    providerRun.then(
      () => (runSettled = true),
      () => (runSettled = true),
    );
    while (!runSettled && (await announcedNow()) === undefined) await new Promise((r) => setTimeout(r, 100));

    const bot = startCli(["auditor", "run", ...as("auditor", 3), "--ipfs", "--log-level", "info"]);
    children.push(bot);
    let audits = 0;
    const allAudited = new Promise<void>((resolve, reject) => {
      bot.onStderrLine((l) => /"msg":"audit (ok|FAILED)/.test(l) && ++audits === 3 && resolve());
      setTimeout(() => reject(new Error(`the bot audited ${audits} of 3 segments in 150 s`)), 150_000).unref();
    });
    const botExit = bot.done.then((r) => {
      if (audits < 3) throw new Error(`bot exited early (${r.code}): ${r.stderr.slice(-2000)}`);
      return r;
    });

    expect(await providerRun).to.match(/committed segments 0\.\.2/);
    expect((await announcedNow())?.multiaddrs).to.deep.equal([providerServe.addr]);
    await Promise.race([allAudited, botExit]);
    bot.child.kill("SIGTERM");
    const botResult = await botExit;
    expect(botResult.code, botResult.stderr.slice(-2000)).to.equal(0);
    expect(botResult.stdout).to.match(/audited 3 segments \(0 failed\)/);

    // every checkpoint the bot audited came over bitswap into its own store
    const client = httpClients(node.url, 31337, { account: privateKeyToAccount(DEV_KEYS[3]!) });
    const commits = await getSegmentCommits(client.public, { jobMarket: d.jobMarket, jobId: 1n, fromBlock: BigInt(d.startBlock) });
    const cached = readdirSync(join(dir("auditor"), "store"));
    for (const c of commits) expect(cached).to.include(c.checkpointCid);

    await increaseTime(node.url, 101);
    expect(await pouwOk(["provider", "claim", "1", ...as("provider", 2)])).to.match(/job 1: provenance anchored/);
    const out = join(root, "result");
    expect(await pouwOk(["buyer", "fetch", "1", "--out", out, ...as("buyer", 1), "--ipfs"])).to.match(/^job 1 \(Finalized\): provenance verified \(record 0x/);
    expect(JSON.parse(readFileSync(join(out, "provenance.json"), "utf8")).format).to.equal("pouw-provenance-1");
    expect(existsSync(join(out, "final.safetensors"))).to.equal(true);

    for (const s of [buyerServe, providerServe]) s.run.child.kill("SIGTERM");
    for (const r of await Promise.all([buyerServe.run.done, providerServe.run.done])) {
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(/\nstopped\n$/);
    }
  });
});
