/**
 * A receipt for a job that already ended pays nothing: the bot signs and keeps it, but records no recordReceipt
 * intent (no gas spent on it). The honest job is finalized before the bot's first audit.
 */
import { expect } from "chai";
import { finalize, getJob } from "../../verifier/src/chain/index.ts";
import { cheatingJob } from "./fixture.ts";

describe("bot receipts: none anchored for a job already finalized", function () {
  this.timeout(240_000);

  it("signs the clean audit of a finalized job but sends no recordReceipt", async () => {
    const f = await cheatingJob("finalized-receipt", 600, { strategy: "honest" });
    await f.conn.networkHelpers.time.increase(f.policy.challengeWindow + 1);
    await finalize(f.cheat, { jobMarket: f.d.jobMarket, jobId: f.jobId });
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Finalized");
    const bot = f.bot(0);
    try {
      await bot.startup();
      await bot.tick();
      const s = bot.summary();
      expect(s.audits.length, "the segments are audited").to.be.greaterThan(0);
      expect(s.audits.every((a) => a.ok)).to.equal(true);
      expect(s.receipts, "receipts are signed and kept").to.equal(s.audits.length);
      expect(bot.db.allIntents().filter((i) => i.kind === "recordReceipt"), "no receipt anchored for a finalized job").to.deep.equal([]);
    } finally {
      bot.close();
    }
  });
});
