/**
 * Panel duty against an audit pass, and one re-challenger per silent dispute:
 *   - a bot drawn on a panel while it has segments to audit commits its vote before its audit pass ends (the auditor
 *     yields to panel duty between segments), not after the whole pass: a pass of hundreds of segments on a loaded
 *     machine outlasted bench:bot's 60 s voting windows, and every such dispute ended NoDecision;
 *   - when a dispute of another bot ended NoDecision only because its seats were silent, a bot holding a round at a
 *     fault that dispute named waits for that challenger's next round instead of opening a dispute of its own beside it
 *     (two disputes on one cheater at once); the next round slashes the provider and the waiting round closes.
 */
import { expect } from "chai";
import pino from "pino";
import { parseEther } from "viem";
import { join } from "node:path";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { getJob } from "../../verifier/src/chain/index.ts";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { botMarketPerFile, passAppealWindows, postCheatingJob } from "./fixture.ts";

const WINDOW = 60; // commit and reveal windows, seconds

type Line = { level: number; msg: string; event?: string; action?: string; segment?: number };
function recorder() {
  const lines: Line[] = [];
  const log = pino({ level: "debug", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  return { lines, log };
}

describe("bot: panel duty never waits behind an audit pass; one re-challenger per silent dispute", function () {
  this.timeout(300_000);
  // bonds of 15: three silent rounds forfeit 1 + 2 + 4 of each member, which leaves it drawable for the next dispute
  const market = botMarketPerFile(WINDOW, { auditorTokens: () => parseEther("40"), auditorBond: parseEther("15") });

  it("a panel member with segments to audit commits its vote before its audit pass ends", async () => {
    const f = await postCheatingJob(market(), "panel-yield");
    const b0 = f.bot(0);
    await b0.tick();
    const [first] = await f.disputes();
    expect(first, "bot 0 challenged").to.not.equal(undefined);
    // past the seed block: the panel can be drawn
    await f.conn.networkHelpers.mine(2);

    // bot 1 has audited nothing yet: its tick audits every committed segment of the job
    const rec = recorder();
    const b1 = new ChallengerBot({ clients: f.auditors[1]!, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "bot1.sqlite"), dispute: f.hooks(f.auditors[1]!, 1), log: rec.log });
    await b1.tick();
    const audits = rec.lines.map((l, i) => [l, i] as const).filter(([l]) => l.msg === "audit started");
    const vote = rec.lines.findIndex((l) => l.event === "vote" && l.action === "committed");
    expect(audits.length, "bot 1 audited the job's segments in this tick").to.be.greaterThan(1);
    expect(vote, "bot 1 committed its vote in this tick").to.be.greaterThan(-1);
    expect(vote, "the vote went out before the audit pass ended").to.be.lessThan(audits.at(-1)![1]);
    expect((await f.dispute(first!.disputeId)).commits).to.equal(1);
    b0.close();
    b1.close();
  });

  it("waits for the first challenger's next round after a silent NoDecision instead of disputing beside it", async () => {
    const f = await postCheatingJob(market(), "silent-hold", { cheatSegments: 1 });
    // bot 1 re-checks a waiting intent on every tick (no backoff)
    const bots = [0, 1, 2, 3].map((i) =>
      i === 1 ? new ChallengerBot({ clients: f.auditors[1]!, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "bot1.sqlite"), dispute: f.hooks(f.auditors[1]!, 1), retryBaseMs: 1, retryMaxMs: 1 }) : f.bot(i),
    );
    await bots[0]!.tick();
    const [first] = await f.disputes();
    expect(first!.segment).to.equal(0);
    await bots[1]!.tick();
    // the provider commits the rest (stale again); bot 1 finds segment 1 bad and holds it behind bot 0's dispute
    await runProviderJob({ clients: f.cheat, deployment: f.d, store: f.store, board: f.board, stateDir: join(f.dir, "state") }, f.jobId, { strategy: parseStrategy("stale:2") });
    await bots[1]!.tick();
    await bots[1]!.tick();
    const held = () => bots[1]!.db.allIntents().filter((i) => i.segment === 1 && ["approveBond", "commitChallenge", "challenge"].includes(i.kind));
    expect(held().find((i) => i.kind === "challenge")!.status).to.equal("pending");

    // bot 0's dispute: the panel (bots 1-3) stays silent in every round (a silent round is appealed like a tie while
    // rounds are left); bot 0 resolves each after its reveal deadline, and the last ends NoDecision
    for (let round = 1; round <= 3; round++) {
      await f.conn.networkHelpers.mine(2);
      await bots[0]!.tick();
      await f.conn.networkHelpers.time.increase(2 * WINDOW + 1);
      await bots[0]!.tick();
    }
    const d1 = await f.dispute(first!.disputeId);
    expect(d1.round).to.equal(3);
    expect(d1.outcome).to.equal("NoDecision");
    expect([d1.validVotes, d1.faultVotes]).to.deep.equal([0, 0]); // nothing revealed: silent seats

    // bot 1 ticks before bot 0 opens its next round: it holds its round (before, it went out: a second dispute)
    await bots[1]!.tick();
    await bots[1]!.tick();
    expect(await f.disputes()).to.have.length(1);
    const waiting = held().find((i) => i.kind === "challenge")!;
    expect(waiting.status).to.equal("pending");
    expect(waiting.error).to.contain(`dispute ${first!.disputeId} `).and.contain("ended NoDecision with no vote revealed");
    expect(held().every((i) => i.tx_hash === null)).to.equal(true);

    // bot 0's next round; the panel votes Fault; the provider is slashed once and bot 1's round closes unsent
    for (let round = 0; round < 6; round++) {
      await f.conn.networkHelpers.mine(2);
      await f.conn.networkHelpers.time.increase(30);
      await passAppealWindows(f.conn, f.admin.public, f.d.disputeGame!);
      for (const b of bots) await b.tick();
    }
    const all = await f.disputes();
    expect(all.map((d) => d.challenger)).to.deep.equal([f.auditors[0]!.account.address, f.auditors[0]!.account.address]);
    expect((await f.dispute(all[1]!.disputeId)).outcome).to.equal("PanelFault");
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Refunded");
    expect(held().map((i) => [i.kind, i.status, i.tx_hash])).to.deep.equal(held().map((i) => [i.kind, "superseded", null]));
    for (const b of bots) b.close();
  });
});
