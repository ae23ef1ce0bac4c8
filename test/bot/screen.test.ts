/**
 * The state screen on every committed segment: a state-poison:2 provider writes huge Adam moments at step
 * 2 of segment 0 (weights honest) and takes every later step with zero compute, bit-exact from its committed state.
 * The job's audit rate is 0.05 and every bot's sampling secret is chosen so that no segment is sampled: without the
 * screen nobody would recompute anything and the cheater would be paid. The screen of segment 1's start checkpoint
 * (state 4) fails the moment bound, the bot recomputes segment 0 although it was not sampled, finds step 2, challenges
 * it, and the panel slashes the provider. Segments whose start failed the screen get no receipt. The same for
 * nan-plant:2 (a NaN written at step 2, every later state NaN with no compute): the screen's finiteness check.
 */
import { join } from "node:path";
import { expect } from "chai";
import { getJob, getJobDisputes } from "../../verifier/src/chain/index.ts";
import { cheatingJob, passAppealWindows, unsampledSecrets } from "./fixture.ts";

const RATE = 0.05;

describe("bot: the state screen catches a persistent cheat in a segment nobody sampled", function () {
  this.timeout(240_000);

  for (const [strategy, kind] of [["state-poison:2", /moment/], ["nan-plant:2", /state-non-finite/]] as const) it(`${strategy}: screens every segment's start, recomputes the unsampled segment that produced the bad state, and slashes`, async () => {
    const { conn, admin, d, jobId, bot, dir } = await cheatingJob(`screen-${strategy.replace(/:/g, "-")}`, 600, { strategy, auditRate: RATE });
    const segments = 3;
    // a sampling secret per bot under which none of the job's segments is sampled (seeded, not luck)
    unsampledSecrets(dir, d.jobMarket, jobId, segments, RATE);
    const bots = [0, 1, 2, 3].map((i) => bot(i));
    for (const b of bots) await b.tick();
    const rows = bots[0]!.summary().screens;
    expect(rows.map((r) => r.screen?.split(":")[0])).to.deep.equal(["ok", "bad", "bad"]);
    expect(rows[1]!.screen).to.match(kind);
    const opened = await getJobDisputes(admin.public, { disputeGame: d.disputeGame!, jobId, fromBlock: BigInt(d.startBlock) });
    expect(opened.map((o) => o.step)).to.deep.equal([2]);
    for (let round = 0; round < 6; round++) {
      await conn.networkHelpers.mine(2);
      await passAppealWindows(conn, admin.public, d.disputeGame!);
      for (const b of bots) await b.tick();
    }
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Refunded");
    // no bot signed a receipt for a segment whose start state failed the screen
    for (const b of bots) expect(b.summary().receipts).to.equal(0);
    for (const b of bots) b.close();
  });
});
