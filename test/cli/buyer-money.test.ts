/**
 * What a buyer and a provider see of a job's money and checking, in-process through main(argv) against the bot
 * fixture's market (test/bot/fixture.ts: a stale:2 provider committed all 3 segments of examples/tiny.json, audit rate
 * 1). Before any auditor looked, `buyer status` warns that 0 of 3 segments were audited against the 3 promised, and a
 * job finalized that way (a snapshot past the challenge window, reverted) carries the same warning. Then bot 0 challenges the bad step, the
 * provider concedes: `buyer status` shows the buyer's slash share (policy buyerBps of the lock, a StakeVault credit)
 * and the refund, `provider status` names the slash in words, and `buyer claim` collects both credits (the JobMarket
 * refund and the StakeVault share) in one command.
 */
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress } from "viem";
import { concede, finalize, getCredits, writeDeployment } from "../../verifier/src/chain/index.ts";
import { cheatingJob, type CheatingJob } from "../bot/fixture.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";
import { runPouw } from "./in-process.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

type Coverage = { auditedSegments: number; committed: number; auditors: number; auditRate: number | null; promisedSegments: number | null; warning: string | null; disputes: { outcome: string; step: number }[] };
type Money = { buyerSlashShare: string; buyerRefund: string; providerPay: string; slashes: { reason: string; amount: string; toChallengers: string; toBuyer: string; burned: string; tx: string }[] };

describe("buyer and provider money and audit coverage (in-process)", function () {
  this.timeout(240_000);
  let job: CheatingJob;
  let rpc: ServedProvider;
  let dir: string;
  const as = (key?: number) => ["--rpc", rpc.url, "--state-dir", dir, "--store", join(job.dir, "store"), ...(key === undefined ? [] : ["--private-key", DEV_KEYS[key]!])];
  const BUYER = 1;

  before(async () => {
    job = await cheatingJob("buyer-money", 600);
    rpc = await serveProvider(job.conn.provider);
    dir = mkdtempSync(join(tmpdir(), "pouw-cli-money-"));
    const { gasUsed: _gas, ...deployment } = job.d as typeof job.d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
  });
  after(async () => {
    await rpc?.close();
  });

  it("a committed job nobody audited: buyer status warns 0 of 3 audited against the 3 its audit rate promised", async () => {
    const r = await runPouw(["buyer", "status", "1", "--json", ...as()]);
    expect(r.code, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout) as { status: string; coverage: Coverage };
    expect(s.status).to.equal("Committed");
    expect(s.coverage).to.include({ auditedSegments: 0, committed: 3, auditors: 0, auditRate: 1, promisedSegments: 3 });
    expect(s.coverage.warning).to.match(/^WARNING: 0 of 3 committed segments audited \(its policy's audit rate 1 promised 3\): nobody independently checked/);
    const text = await runPouw(["buyer", "status", "1", ...as()]);
    expect(text.stdout).to.match(/^audit coverage: 0 of 3 committed segments audited; 0 receipts; no disputes$/m);
    expect(text.stdout).to.match(/^WARNING: 0 of 3 committed segments audited/m);
  });

  it("the same job finalized with zero audits keeps the warning, and the provider's pay is named", async () => {
    const snap = await job.conn.networkHelpers.takeSnapshot();
    try {
      await job.conn.networkHelpers.time.increase(job.policy.challengeWindow + 1);
      await finalize(job.admin, { jobMarket: job.d.jobMarket, jobId: job.jobId });
      const r = await runPouw(["buyer", "status", "1", ...as()]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^job 1: Finalized/m);
      expect(r.stdout).to.match(/^WARNING: 0 of 3 committed segments audited .*nobody independently checked this result/m);
      expect(r.stdout).to.match(/^outcome: the provider was paid \d/m);
      expect(r.stderr).to.match(/WARNING: 0 of 3/);
    } finally {
      await snap.restore();
    }
  });

  it("after a conceded fault: the buyer's slash share and refund in status, the slash in words for the provider, and buyer claim collects both", async () => {
    const bot = job.bot(0);
    await bot.tick();
    bot.close();
    const [dispute] = await job.disputes();
    expect(dispute, "bot 0 challenged the stale step").to.not.equal(undefined);
    await concede(job.cheat, { disputeGame: job.d.disputeGame!, disputeId: dispute!.disputeId });

    const lock = job.policy.requiredStake;
    const toBuyer = (lock * BigInt(job.policy.buyerBps)) / 10_000n;
    const toChallengers = (lock * BigInt(job.policy.challengerBps)) / 10_000n;
    expect(toBuyer > 0n, "the fixture's policy gives the buyer a share").to.equal(true);
    const buyer = getAddress(job.buyer.account.address);

    let r = await runPouw(["buyer", "status", "1", "--json", ...as(), "--address", buyer]);
    expect(r.code, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout) as { status: string; money: Money; coverage: Coverage; myCredits: { jobMarket: string; stakeVault: string } };
    expect(s.status).to.equal("Refunded");
    expect(s.money.buyerSlashShare).to.equal(toBuyer.toString());
    expect(s.money.buyerRefund).to.equal(job.payment.toString());
    expect(s.money.slashes.map(({ tx: _tx, ...x }) => x)).to.deep.equal([{ reason: "fault", amount: lock.toString(), toChallengers: toChallengers.toString(), toBuyer: toBuyer.toString(), burned: (lock - toChallengers - toBuyer).toString() }]);
    expect(s.myCredits).to.deep.equal({ jobMarket: job.payment.toString(), stakeVault: toBuyer.toString() });
    expect(s.coverage.disputes.map((d) => d.outcome)).to.deep.equal(["Conceded"]);
    // the challenged segment counts as audited (by its challenger), though no receipt was signed for it
    expect(s.coverage.auditedSegments).to.be.at.least(1);
    expect(s.coverage.auditors).to.be.at.least(1);
    expect(s.coverage.warning, "a faulted job: the check that mattered happened").to.equal(null);

    r = await runPouw(["buyer", "status", "1", ...as(), "--address", buyer]);
    expect(r.stdout).to.match(/^outcome: the provider was slashed [\d.]+ \w+ of its stake because a dispute proved a wrong training step: [\d.]+ \w+ to the challengers, [\d.]+ \w+ to the buyer/m);
    expect(r.stdout).to.match(/^buyer's slash share: [\d.]+ \w+ \(a StakeVault credit; pouw buyer claim collects it\)$/m);
    expect(r.stdout).to.match(/^outcome: the buyer was refunded [\d.]+ \w+ of the [\d.]+ \w+ escrowed$/m);

    r = await runPouw(["provider", "status", "--json", ...as(), "--address", getAddress(job.cheat.account.address)]);
    expect(r.code, r.stderr).to.equal(0);
    const p = JSON.parse(r.stdout) as { jobs: { jobId: string; status: string; slashed?: string; buyerRefund?: string }[] };
    expect(p.jobs.find((j) => j.jobId === "1")).to.include({ status: "Refunded", slashed: lock.toString(), buyerRefund: job.payment.toString() });
    r = await runPouw(["provider", "status", ...as(), "--address", getAddress(job.cheat.account.address)]);
    expect(r.stdout).to.match(/^job 1 Refunded: the provider was slashed .* because a dispute proved a wrong training step: .*; the buyer was refunded/m);

    r = await runPouw(["buyer", "claim", "--json", ...as(BUYER)]);
    expect(r.code, r.stderr).to.equal(0);
    const c = JSON.parse(r.stdout) as { claimed: string; jobMarket: string; stakeVault: string; txs: unknown[] };
    expect(c).to.include({ claimed: (job.payment + toBuyer).toString(), jobMarket: job.payment.toString(), stakeVault: toBuyer.toString() });
    expect(c.txs).to.have.length(2);
    const left = await getCredits(job.admin.public, { deployment: job.d, account: buyer });
    expect([left.jobMarket, left.stakeVault]).to.deep.equal([0n, 0n]);
    r = await runPouw(["buyer", "claim", ...as(BUYER)]);
    expect(r.stdout).to.equal("nothing to claim\n");
  });
});
