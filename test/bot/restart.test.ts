/**
 * The challenger bot as a separate process against a local chain (the in-process network served over JSON-RPC by
 * the test process: test/helpers/chain.ts; a spawned `hardhat node` cost ~8 CPU s more), killed with SIGKILL twice: once in
 * the middle of an audit, once right after it signed a transaction (reportTimeout for a provider that
 * missed its deadline). After each restart it resumes from its SQLite state: every sampled segment is
 * audited exactly once to completion, and exactly one reportTimeout transaction is ever sent.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { maxUint256, parseEther, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BotDb } from "../../verifier/src/bot/db.ts";
import {
  acceptJob,
  approveToken,
  deployMarket,
  httpClients,
  jobMarketAbi,
  mintTestToken,
  stakeDeposit,
  writeDeployment,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { DEV_KEYS, increaseTime, ROOT, startCli, type CliResult } from "../e2e/helpers.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";

describe("bot: SIGKILL and restart", function () {
  this.timeout(300_000);
  let node: LocalChain;
  after(async () => node?.stop());

  it("misses no audit and sends no duplicate transaction across two SIGKILLs", async () => {
    node = await startLocalChain();
    const dir = mkdtempSync(join(tmpdir(), "pouw-restart-"));
    const store = new LocalDirStore(join(dir, "store"));
    const board = new SegmentBoard(join(dir, "board"), store);
    const mk = (i: number): ChainClients => httpClients(node.url, 31337, { account: privateKeyToAccount(DEV_KEYS[i]!), pollingIntervalMs: 50 });
    const [admin, buyer, provider, quitter] = [mk(0), mk(1), mk(2), mk(4)];
    const auditor = privateKeyToAccount(DEV_KEYS[3]!).address;
    const full = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n }); // exit delay >= the 1-day attestation request window
    const { gasUsed: _g, ...d } = full;
    await writeDeployment(join(dir, "deployment.json"), d);
    for (const c of [provider, quitter]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("10") });
      await approveToken(c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
      await stakeDeposit(c, { stakeVault: d.stakeVault, amount: parseEther("10") });
    }
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("10") });
    const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8"));
    const manifest = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } });
    const { policy, payment } = await jobPolicyFor(manifest, { overrides: { segmentTimeout: 600 } });
    const honestJob = (await postJob(buyer, d, store, manifest, policy, payment)).jobId;
    const quitJob = (await postJob(buyer, d, store, manifest, policy, payment)).jobId;
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId: honestJob });
    await acceptJob(quitter, { jobMarket: d.jobMarket, jobId: quitJob });
    await runProviderJob({ clients: provider, deployment: d, store, board, stateDir: join(dir, "p") }, honestJob, { strategy: parseStrategy("honest") });
    await increaseTime(node.url, 601); // the quitter missed its first deadline

    const dbPath = join(dir, "bot.sqlite");
    const args = ["auditor", "run", "--rpc", node.url, "--state-dir", dir, "--private-key", DEV_KEYS[3]!, "--db", dbPath, "--log-level", "info", "--log-format", "json", "--poll-interval", "100"];
    const killOn = async (needle: string): Promise<CliResult> => {
      const bot = startCli(args);
      bot.onStderrLine((l) => {
        if (l.includes(needle)) bot.child.kill("SIGKILL");
      });
      return bot.done;
    };
    const first = await killOn('"msg":"audit started"');
    expect(first.signal).to.equal("SIGKILL");
    const second = await killOn('"msg":"intent signed; broadcasting"');
    expect(second.signal).to.equal("SIGKILL");
    const third = startCli([...args.filter((a) => a !== "--log-level" && a !== "info"), "--once"]);
    const r = await third.done;
    expect(r.code, r.stderr).to.equal(0);

    const db = new BotDb(dbPath);
    try {
      const segs = db.segmentsOf(honestJob.toString());
      expect(segs.map((s) => s.audit)).to.deep.equal(["ok", "ok", "ok"]);
      expect(db.receipts()).to.have.length(3);
      const intents = db.allIntents();
      expect(intents.map((i) => [i.kind, i.status])).to.deep.equal([["reportTimeout", "confirmed"]]);
    } finally {
      db.close();
    }
    // on chain: the auditor sent exactly one transaction, and the job timed out exactly once
    const nonce = await provider.public.getTransactionCount({ address: auditor });
    expect(nonce).to.equal(1);
    const logs = await provider.public.getLogs({ address: d.jobMarket, fromBlock: 0n, toBlock: "latest" });
    const timedOut = parseEventLogs({ abi: jobMarketAbi, logs, eventName: "JobTimedOut" });
    expect(timedOut).to.have.length(1);
    expect(timedOut[0]!.args.jobId).to.equal(quitJob);
  });
});
