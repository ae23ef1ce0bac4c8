/**
 * A reorg cannot hide a cheater: an honest segment commit the bot audited (clean, receipt signed) is reorged out and
 * replaced by a cheating commit of the same segment at the same height; the bot sees that its last processed block is
 * no longer canonical, rolls back to the common ancestor (the stale audit and receipt go), re-indexes, audits the new
 * commit and challenges it. The reorg is Hardhat's snapshot/revert: the chain goes back to the snapshot and grows a
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
});
