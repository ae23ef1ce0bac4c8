/**
 * The provider runner and the challenger bot on the in-process network: an honest job passes every
 * audit with signed receipts, anchored on chain with recordReceipt; a stale-gradient job is caught at its first bad step with proofs of the
 * provider's own leaves; a provider that stops committing is reported once, after its deadline.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { maxUint256, parseEther, zeroHash } from "viem";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import {
  acceptJob,
  approveToken,
  deployMarket,
  devAccount,
  getJob,
  jobMarketAbi,
  jobRecordsAbi,
  mintTestToken,
  postBond,
  providerClients,
  stakeDeposit,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { verifyTraceProof } from "../../verifier/src/trace/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
const manifest = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } });

describe("bot + provider on the in-process network", function () {
  this.timeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), "pouw-bot-"));
  const store = new LocalDirStore(join(dir, "store"));
  const board = new SegmentBoard(join(dir, "board"), store);
  let admin: ChainClients, buyer: ChainClients, honest: ChainClients, cheat: ChainClients, quitter: ChainClients, auditor: ChainClients;
  let d: Awaited<ReturnType<typeof deployMarket>>;
  let time: { increase: (s: number) => Promise<unknown> };

  before(async () => {
    const conn = await network.create();
    time = conn.networkHelpers.time;
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    [admin, buyer, honest, cheat, quitter, auditor] = [mk(0), mk(1), mk(2), mk(3), mk(4), mk(5)];
    d = await deployMarket(admin!, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n }); // exit delay >= the 1-day attestation request window
    for (const c of [buyer!, honest!, cheat!, quitter!]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("100") });
      await approveToken(c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
      if (c !== buyer) await stakeDeposit(c, { stakeVault: d.stakeVault, amount: parseEther("10") });
    }
    // a bonded auditor: its receipts can be anchored (recordReceipt checks AuditorRegistry.isActive)
    await mintTestToken(auditor!, { token: d.token, to: auditor!.account.address, amount: parseEther("1") });
    await approveToken(auditor!, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
    await postBond(auditor!, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
  });

  it("audits every sampled segment, catches the cheat at its first bad step, reports the quitter once", async () => {
    const { policy, payment } = await jobPolicyFor(manifest, { overrides: { segmentTimeout: 600 } });
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push((await postJob(buyer!, d, store, manifest, policy, payment)).jobId);
    const [jHonest, jCheat, jQuit] = jobs as [bigint, bigint, bigint];
    await acceptJob(honest!, { jobMarket: d.jobMarket, jobId: jHonest });
    await acceptJob(cheat!, { jobMarket: d.jobMarket, jobId: jCheat });
    await acceptJob(quitter!, { jobMarket: d.jobMarket, jobId: jQuit });
    const ctx = (c: ChainClients) => ({ clients: c, deployment: d, store, board, stateDir: join(dir, "state") });
    await runProviderJob(ctx(honest!), jHonest, { strategy: parseStrategy("honest") });
    await runProviderJob(ctx(cheat!), jCheat, { strategy: parseStrategy("stale:2") });

    const bot = new ChallengerBot({ clients: auditor!, deployment: d, store, board, dbPath: join(dir, "bot.sqlite") });
    await bot.tick();
    let s = bot.summary();
    const of = (j: bigint) => s.audits.filter((a) => a.jobId === j.toString());
    expect(of(jHonest).map((a) => a.ok)).to.deep.equal([true, true, true]);
    expect(of(jCheat).every((a) => !a.ok)).to.equal(true);
    expect(of(jCheat)[0]!.firstBadStep).to.equal(2); // stale:2 reuses step 1's gradient at step 2
    expect(s.receipts).to.equal(3);
    // deployMarket set JobMarket's registries: every clean segment's receipt is anchored with recordReceipt, once
    expect(s.intents.filter((i) => i.kind === "recordReceipt" && i.status === "confirmed")).to.have.length(3);
    for (let seg = 0n; seg < 3n; seg++) {
      const digest = await auditor!.public.readContract({ address: d.jobRecords, abi: jobRecordsAbi, functionName: "receiptOf", args: [jHonest, seg, auditor!.account.address] });
      expect(digest).to.not.equal(zeroHash);
    }
    const row = bot.db.segment(jCheat.toString(), 0)!;
    expect(row.detail).to.match(/^state-divergence/);

    // the quitter misses its first deadline: reported exactly once, even over repeated ticks
    await time.increase(601);
    await bot.tick();
    await bot.tick();
    s = bot.summary();
    const reports = s.intents.filter((i) => i.kind === "reportTimeout");
    expect(reports).to.have.length(1);
    expect(reports[0]!.status).to.equal("confirmed");
    expect((await getJob(auditor!.public, { jobMarket: d.jobMarket, jobId: jQuit })).status).to.equal("Open");
    bot.close();
  });

  it("the step claim proves the provider's own leaves against the committed root", async () => {
    let claim: unknown;
    const b2 = new ChallengerBot({
      clients: auditor!,
      deployment: d,
      store,
      board,
      dbPath: join(dir, "bot2.sqlite"),
      onAudit: (e) => {
        if (!e.verdict.ok && e.jobId === 2n && e.segment === 0) claim = e.verdict.proof;
      },
    });
    await b2.tick();
    const c = claim as { step: number; prevStateHash: `0x${string}`; prevProof: `0x${string}`[]; stateHash: `0x${string}`; proof: `0x${string}`[]; expectedStateHash: `0x${string}` };
    const root = b2.db.segment(2n, 0)!.traceRoot;
    expect(verifyTraceProof(root, c.step - 1, c.prevStateHash, c.prevProof)).to.equal(true);
    expect(verifyTraceProof(root, c.step, c.stateHash, c.proof)).to.equal(true);
    expect(c.expectedStateHash).to.not.equal(c.stateHash);
    b2.close();
  });
});
