/**
 * A reorg cannot hide a cheater: an honest segment commit the bot audited (clean, receipt signed) is reorged out and
 * replaced by a cheating commit of the same segment at the same height; the bot sees that its last processed block is
 * no longer canonical, rolls back to the common ancestor (the stale audit and receipt go), re-indexes, audits the new
 * commit and challenges it. And the bot's own challenge, reorged out, is sent again with the same signed bytes. The reorg
 * is Hardhat's snapshot/revert: the chain goes back to the snapshot and grows a
 * different branch.
 */
import { expect } from "chai";
import { join } from "node:path";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { botMarket, postCheatingJob } from "./fixture.ts";

describe("challenger bot across a reorg", function () {
  it("re-audits and challenges a cheating commit that replaced an audited honest one", async () => {
    const market = await botMarket(600);
    const f = await postCheatingJob(market, "reorg", { train: false });
    const { conn, cheat, d, store, board, dir, jobId } = f;
    const branchPoint = await conn.networkHelpers.takeSnapshot();
    const provider = (tag: string, strategy: string) =>
      runProviderJob({ clients: cheat, deployment: d, store, board, stateDir: join(dir, tag) }, jobId, { strategy: parseStrategy(strategy), maxSegments: 1 });

    await provider("honest", "honest");
    const bot = f.bot(0);
    try {
      await bot.startup();
      await bot.tick();
      const before = bot.summary();
      expect(before.audits.map((a) => [a.segment, a.ok]), "the honest segment 0 is audited clean").to.deep.equal([[0, true]]);
      expect(before.receipts).to.equal(1);
      const honestBlock = bot.db.segment(jobId, 0)!.block;

      // the reorg: the honest branch is dropped and the provider commits a cheating segment 0 on the new branch
      await branchPoint.restore();
      await provider("cheat", "quarter-batch");
      const replaced = bot.db.segment(jobId, 0)!;
      expect(replaced.audit, "before the bot's next scan it still holds the stale clean audit").to.equal("ok");

      let disputes = await f.disputes();
      for (let t = 0; t < 12 && disputes.length === 0; t++) {
        await bot.tick();
        disputes = await f.disputes();
        if (disputes.length === 0) await conn.networkHelpers.mine();
      }
      const seg = bot.db.segment(jobId, 0)!;
      expect(seg.block, "the commit on the new branch is at the honest commit's height").to.equal(honestBlock);
      expect(seg.audit, "the replacing commit is audited again").to.equal("bad");
      expect(seg.firstBadStep).to.not.equal(null);
      expect(bot.db.receipts().length, "the orphaned commit's receipt is gone").to.equal(0);
      expect(disputes.length, "the cheating commit is challenged").to.equal(1);
      const challenges = bot.db.allIntents().filter((i) => i.kind === "challenge");
      expect(challenges.map((i) => i.status), "one challenge, sent once").to.deep.equal(["confirmed"]);
    } finally {
      bot.close();
    }
  });

  it("sends its own challenge again, byte for byte, when the blocks that mined it are reorged out", async () => {
    const market = await botMarket(600);
    const f = await postCheatingJob(market, "reorg-own", { train: false });
    const { conn, cheat, d, store, board, dir, jobId } = f;
    await runProviderJob({ clients: cheat, deployment: d, store, board, stateDir: join(dir, "cheat") }, jobId, { strategy: parseStrategy("quarter-batch"), maxSegments: 1 });
    // the branch point: the cheating commit is on chain, none of the bot's transactions yet
    const branchPoint = await conn.networkHelpers.takeSnapshot();
    const bot = f.bot(0);
    const sent = () => bot.db.allIntents().filter((i) => i.status === "confirmed").map((i) => [i.key, i.tx_hash]);
    const untilDispute = async () => {
      let disputes = await f.disputes();
      for (let t = 0; t < 12 && disputes.length === 0; t++) {
        await bot.tick();
        disputes = await f.disputes();
        if (disputes.length === 0) await conn.networkHelpers.mine();
      }
      return disputes;
    };
    try {
      await bot.startup();
      expect((await untilDispute()).length, "the bot challenges the cheating commit").to.equal(1);
      const first = sent();
      expect(first.map(([k]) => k).some((k) => k!.startsWith("challenge"))).to.equal(true);

      // the reorg drops every block the bot's transactions were mined in; the new branch has one empty block
      await branchPoint.restore();
      await conn.networkHelpers.mine();
      expect((await f.disputes()).length, "the dispute is gone with its blocks").to.equal(0);

      expect((await untilDispute()).length, "the bot's challenge is back on chain").to.equal(1);
      expect(sent(), "the same transactions, confirmed again: nothing signed twice").to.deep.equal(first);
      expect(bot.db.allIntents().filter((i) => i.kind === "challenge").length).to.equal(1);
    } finally {
      bot.close();
    }
  });
});
