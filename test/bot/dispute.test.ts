/**
 * The challenger bot's dispute step on the in-process network: three bots audit a stale-gradient job, one of them
 * challenges (bond approval + challenge through its intent table, the others' identical challenges superseded), the
 * other three are drawn for the panel (panel size 3; the challenger is never drawn), recompute the step, commit and reveal Fault, a bot resolves after the votes (every bot restarted between commit and reveal),
 * the provider's stake is slashed and the challenger claims its bond back and its share of the slash. A followed
 * dispute the bots cannot process does not stop their duty on the others.
 */
import { expect } from "chai";
import { parseEventLogs } from "viem";
import { getDispute, getFaultAppeal, getJob, getJobDisputes, stakeVaultAbi } from "../../verifier/src/chain/index.ts";
import { cheatingJob } from "./fixture.ts";

describe("bot dispute step: challenge, panel, resolve, claim", function () {
  this.timeout(240_000);

  it("slashes a cheating provider through the panel and never double-sends", async () => {
    const { conn, admin, cheat, auditors, d, policy, jobId, bot } = await cheatingJob("dispute", 600);
    const start = () => auditors.map((_, i) => bot(i));
    let bots = start();
    // A1 audits first and challenges every bad segment; A2..A4 find the same steps already challenged
    for (const b of bots) await b.tick();
    const opened = await getJobDisputes(admin.public, { disputeGame: d.disputeGame!, jobId, fromBlock: BigInt(d.startBlock) });
    expect(opened.length).to.be.greaterThan(0);
    expect(new Set(opened.map((o) => o.challenger))).to.deep.equal(new Set([auditors[0]!.account.address]));
    expect(opened[0]!.step).to.equal(2); // stale:2 reuses step 1's gradient at step 2
    expect(bots[1]!.summary().intents.filter((i) => i.kind === "challenge").every((i) => i.status === "superseded")).to.equal(true);

    // panel draw, commits (all committed opens the reveal phase), reveals, resolve, claims
    for (let round = 0; round < 5; round++) {
      await conn.networkHelpers.mine(2);
      // a unanimous first-round Fault waits one commit window for the provider's appeal (this cheat does not appeal)
      const appeal = await getFaultAppeal(admin.public, { disputeGame: d.disputeGame!, disputeId: opened[0]!.disputeId });
      if (appeal.deadline !== undefined) await conn.networkHelpers.time.increaseTo(appeal.deadline + 1n);
      for (const b of bots) await b.tick();
      if (round === 0) {
        // restart every bot after the commits: the reveals come from the ballots persisted before committing
        const d0 = await getDispute(admin.public, { disputeGame: d.disputeGame!, disputeId: opened[0]!.disputeId });
        expect(d0.commits).to.equal(3);
        expect(d0.validVotes + d0.faultVotes).to.equal(0);
        for (const b of bots) b.close();
        bots = start();
        // a followed dispute the bots cannot process (a corrupt row, standing in for any per-dispute failure) comes
        // first: it is logged and skipped, and the real dispute's reveals, resolve and claims still happen
        for (const b of bots) {
          const followed = JSON.parse(b.db.getMeta("disputes") ?? "[]") as { id: string }[];
          b.db.setMeta("disputes", JSON.stringify([{ ...followed[0]!, id: "not-a-dispute-id" }, ...followed]));
        }
      }
    }
    const first = await getDispute(admin.public, { disputeGame: d.disputeGame!, disputeId: opened[0]!.disputeId });
    expect(first.outcome).to.equal("PanelFault");
    expect(first.faultVotes).to.equal(3);
    expect(first.panel.map((m) => m.toLowerCase()).sort()).to.deep.equal(auditors.slice(1).map((a) => a.account.address.toLowerCase()).sort());
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Refunded");
    const logs = await admin.public.getLogs({ address: d.stakeVault, fromBlock: BigInt(d.startBlock), toBlock: "latest" });
    const slashed = parseEventLogs({ abi: stakeVaultAbi, logs, eventName: "StakeSlashed" });
    expect(slashed).to.have.length(1);
    expect(slashed[0]!.args.provider).to.equal(cheat.account.address);
    expect(slashed[0]!.args.amount).to.equal(policy.requiredStake);

    // every transaction intent was sent at most once; the challenger claimed its bond, fees and its reward (the slash's
    // challenger share, paid by the DisputeGame), and the reward did not go through the vault
    for (const b of bots) {
      const keys = b.summary().intents.map((i) => i.key);
      expect(new Set(keys).size).to.equal(keys.length);
    }
    const a1 = bots[0]!.summary().intents;
    expect(a1.filter((i) => i.kind === "challenge" && i.status === "confirmed")).to.have.length(opened.length);
    expect(a1.some((i) => i.kind === "claimDispute" && i.status === "confirmed")).to.equal(true);
    expect(a1.some((i) => i.kind === "commitChallenge" && i.status === "confirmed")).to.equal(true);
    expect(a1.some((i) => i.kind === "claimStake")).to.equal(false);
    for (const b of bots) b.close();
  });
});
