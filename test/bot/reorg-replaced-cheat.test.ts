/**
 * Red-team probe: the bot challenged a cheating commit (approve, commitChallenge and challenge all confirmed); a reorg
 * drops those blocks and the provider commits a *different* cheating segment 0 on the new branch. The rollback keeps
 * the signed intents (keyed approveBond/commitChallenge/challenge:J:S, without the commit they were about) and the
 * outbox rebroadcasts them byte for byte; the re-audit of the new commit records the same keys, which are no-ops. The
 * expectation below is the safe behaviour: the new cheating commit is challenged.
 */
import { expect } from "chai";
import { join } from "node:path";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { botMarket, postCheatingJob } from "./fixture.ts";

describe("challenger bot across a reorg that replaces a challenged cheating commit", function () {
  it("challenges the replacing cheating commit", async () => {
    const market = await botMarket(600);
    const f = await postCheatingJob(market, "reorg-replaced-cheat", { train: false });
    const { conn, cheat, d, store, board, dir, jobId } = f;
    const branchPoint = await conn.networkHelpers.takeSnapshot();
    const provider = (tag: string, strategy: string) =>
      runProviderJob({ clients: cheat, deployment: d, store, board, stateDir: join(dir, tag) }, jobId, { strategy: parseStrategy(strategy), maxSegments: 1 });
    const untilDispute = async (bot: ReturnType<typeof f.bot>) => {
      let disputes = await f.disputes();
      for (let t = 0; t < 48 && disputes.length === 0; t++) {
        await bot.tick();
        disputes = await f.disputes();
        if (disputes.length === 0) await conn.networkHelpers.mine();
      }
      return disputes;
    };
    await provider("cheat-a", "quarter-batch");
    const bot = f.bot(0);
    try {
      await bot.startup();
      expect((await untilDispute(bot)).length, "the first cheating commit is challenged").to.equal(1);
      const stepA = bot.db.segment(jobId, 0)!.firstBadStep;

      await branchPoint.restore();
      await provider("cheat-b", "plant:2");
      const disputes = await untilDispute(bot);
      const seg = bot.db.segment(jobId, 0)!;
      console.log("first bad step: branch A", stepA, "branch B", seg.firstBadStep, "audit", seg.audit);
      console.log("intents", bot.db.allIntents().map((i) => [i.key, i.status, i.error ?? ""]));
      expect(seg.audit, "the replacing commit is audited again").to.equal("bad");
      expect(disputes.length, "the replacing cheating commit is challenged").to.equal(1);
      expect(disputes[0]!.step, "at the replacing commit's first bad step").to.equal(seg.firstBadStep);
      // nothing sent twice: the stale round (keyed by the removed commit) was replaced by no-ops, never rebroadcast
      const rows = bot.db.allIntents();
      const stale = rows.filter((i) => i.cancel !== 0);
      expect(stale.map((i) => [i.kind, i.status]), "the removed commit's round").to.deep.equal([["approveBond", "superseded"], ["commitChallenge", "superseded"], ["challenge", "superseded"]]);
      expect(rows.filter((i) => i.kind === "challenge" && i.status === "confirmed"), "one challenge confirmed").to.have.length(1);
    } finally {
      bot.close();
    }
  });
});
