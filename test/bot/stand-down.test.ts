/**
 * One dispute per cheater: a bot that finds a second fault of a job while another dispute holds the job at a fault it
 * also found waits for that dispute instead of opening another. Here a stale:2 provider commits segment 0; bot 0
 * challenges its step 2, bot 1 finds the same fault and stands down (its round superseded). The provider commits the
 * rest (stale again at steps 6 and 10); bot 1 audits them and records a challenge of segment 1. Before, it went out
 * (two disputes on one cheater, bench:bot's 2.00 per cheater); now bot 1 waits (event `stand-down`, naming bot 0's
 * dispute), sends nothing, and its round closes superseded once bot 0's dispute slashed the provider.
 */
import { join } from "node:path";
import { expect } from "chai";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { getJob, getStakeSlashes } from "../../verifier/src/chain/index.ts";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { botMarketPerFile, passAppealWindows, postCheatingJob } from "./fixture.ts";

describe("bot: a late finder of another fault of a disputed job stands down", function () {
  this.timeout(300_000);
  const market = botMarketPerFile(600);

  it("waits for the open dispute at a fault it also found, opens no second dispute, and closes its round once the job is refunded", async () => {
    const f = await postCheatingJob(market(), "stand-down", { cheatSegments: 1 });
    // bot 1 re-checks a waiting intent on every tick (no backoff), so the end of its wait is seen when it happens
    const bots = [0, 1, 2, 3].map((i) =>
      i === 1 ? new ChallengerBot({ clients: f.auditors[1]!, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "bot1.sqlite"), dispute: f.hooks(f.auditors[1]!, 1), retryBaseMs: 1, retryMaxMs: 1 }) : f.bot(i),
    );

    await bots[0]!.tick();
    const [first] = await f.disputes();
    expect(first!.segment).to.equal(0);
    expect(first!.step).to.equal(2);
    await bots[1]!.tick();
    const challenges = () => bots[1]!.db.allIntents().filter((i) => i.kind === "challenge");
    expect(challenges().map((i) => i.status)).to.deep.equal(["superseded"]);

    // the provider commits segments 1 and 2 (still stale:2) while bot 0's dispute is open
    await runProviderJob({ clients: f.cheat, deployment: f.d, store: f.store, board: f.board, stateDir: join(f.dir, "state") }, f.jobId, { strategy: parseStrategy("stale:2") });
    await bots[1]!.tick();
    await bots[1]!.tick();
    // bot 1 found segment 1 bad and recorded its challenge; it waits behind bot 0's dispute: nothing sent
    const waiting = challenges().find((i) => i.segment === 1)!;
    expect(waiting.status).to.equal("pending");
    expect(waiting.error).to.contain(`dispute ${first!.disputeId} `).and.contain("holds job").and.contain("a fault this bot also found");
    expect(await f.disputes()).to.have.length(1);

    // bot 0's dispute: panel (bots 1-3) votes Fault, the provider is slashed, the job refunded
    for (let round = 0; round < 6; round++) {
      await f.conn.networkHelpers.mine(2);
      await f.conn.networkHelpers.time.increase(30);
      await passAppealWindows(f.conn, f.admin.public, f.d.disputeGame!); // the provider does not appeal the unanimous Fault
      for (const b of bots) await b.tick();
    }
    expect((await f.dispute(first!.disputeId)).outcome).to.equal("PanelFault");
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Refunded");
    expect((await getStakeSlashes(f.admin.public, { stakeVault: f.d.stakeVault, fromBlock: BigInt(f.d.startBlock) })).map((s) => s.provider)).to.deep.equal([f.cheat.account.address]);
    // one dispute for the cheater; bot 1's waiting round closed (superseded), none of its intents of it ever sent
    expect(await f.disputes()).to.have.length(1);
    const round = bots[1]!.db.allIntents().filter((i) => i.segment === 1 && ["approveBond", "commitChallenge", "challenge"].includes(i.kind));
    expect(round.length).to.be.greaterThan(0);
    expect(round.map((i) => [i.kind, i.status, i.tx_hash])).to.deep.equal(round.map((i) => [i.kind, "superseded", null]));
    for (const b of bots) b.close();
  });
});
