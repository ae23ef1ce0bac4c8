/**
 * The challenger bot's new round after its own dispute ends NoDecision (docs/disputes.md, "The challenger bot drives
 * disputes"), on the in-process network against a stale-gradient provider:
 *   - round 1: the drawn panels stay silent (a silent round is appealed like a tie, so the dispute's three rounds),
 *     the challenger resolves each and the last ends NoDecision; the bot is restarted after recording
 *     round 2's intents and before sending them; round 2 (`challenge:J:S:r2`) is sent once, the panel votes Fault,
 *     the provider is slashed; no third round, no transaction twice;
 *   - a PanelValid outcome (the panel disagreed) does not start a new round;
 *   - the round limit (maxChallengeRounds) stops the rounds.
 */
import { expect } from "chai";
import { join } from "node:path";
import { parseEther, parseEventLogs } from "viem";
import type { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { getFaultAppeal, getJob, stakeVaultAbi } from "../../verifier/src/chain/index.ts";
import { commitTag } from "../../verifier/src/bot/intent-key.ts";
import { BallotStore, servePanel } from "../../verifier/src/dispute/index.ts";
import { botMarketPerFile, postCheatingJob, type CheatingJob as Setup } from "./fixture.ts";

/** The `J:S:cC` part of the intent keys about the commit of segment `segment` the bot holds (intent-key.ts). */
const at = (b: ChallengerBot, jobId: bigint, segment: number) => `${jobId}:${segment}:c${commitTag(b.db.segment(jobId, segment)!.blockHash)}`;

const WINDOW = 60; // commit and reveal windows, seconds


/** Every bot audits once: bot 0 challenges (round 1), the others' identical challenges are superseded. */
async function roundOne(s: Setup, bots: ChallengerBot[]) {
  for (const b of bots) await b.tick();
  const opened = await s.disputes();
  expect(opened).to.have.length(1);
  expect(opened[0]!.challenger).to.equal(s.auditors[0]!.account.address);
  expect(opened[0]!.step).to.equal(2); // stale:2 reuses step 1's gradient at step 2
  return opened[0]!;
}

/** Silent rounds before the dispute ends NoDecision: a silent round is appealed like a tie while rounds are left. */
const ROUNDS = 3;

/**
 * Only the challenger ticks: each round's panel is drawn but never votes; after each reveal deadline the bot resolves
 * the round, which opens the next (the bot's resolve intent is per round) until the last one ends NoDecision.
 */
async function silentPanel(s: Setup, challenger: ChallengerBot, disputeId: bigint) {
  for (let round = 1; round <= ROUNDS; round++) {
    await s.conn.networkHelpers.mine(2);
    await challenger.tick();
    const open = await s.dispute(disputeId);
    expect(open.round).to.equal(round);
    if (round === 1) expect(open.panel).to.have.length(3);
    await s.conn.networkHelpers.time.increase(2 * WINDOW + 1);
    await challenger.tick();
    const d = await s.dispute(disputeId);
    if (round < ROUNDS) {
      expect(d.status, `round ${round} is appealed, not ended`).to.equal("Open");
      expect(d.outcome).to.equal("None");
    } else {
      expect(d.outcome).to.equal("NoDecision");
      expect(d.commits).to.equal(0);
    }
  }
}

const challengeKeys = (b: ChallengerBot) => b.summary().intents.filter((i) => i.kind === "challenge").map((i) => [i.key, i.status]);

describe("bot dispute step: a new round after its own NoDecision", function () {
  this.timeout(300_000);
  // one deployment for the file; each case reverts to it and posts its own job (job 1 again). Bonds of 15: the three
  // silent rounds forfeit 1 + 2 + 4 of each member, which leaves it drawable for the next round's panel.
  const market = botMarketPerFile(WINDOW, { auditorTokens: () => parseEther("40"), auditorBond: parseEther("15") });

  it("challenges again after a silent panel (restarted in between, sent once) and the second panel slashes the provider", async () => {
    const s = await postCheatingJob(market(), "again");
    const bots = [0, 1, 2, 3].map((i) => s.bot(i));
    const first = await roundOne(s, bots);
    await silentPanel(s, bots[0]!, first.disputeId);

    // crash after round 2's intents are recorded and before they are signed: one drive pass, then a restart
    bots[0]!.close();
    const recorder = s.bot(0);
    await s.hooks(s.auditors[0]!, 0).drive({ db: recorder.db, me: s.auditors[0]!.account.address, log: recorder.log, store: s.store, runFor: async () => undefined });
    expect(challengeKeys(recorder)).to.deep.equal([
      [`challenge:${at(recorder, s.jobId, first.segment)}`, "confirmed"],
      [`challenge:${at(recorder, s.jobId, first.segment)}:r2`, "pending"],
    ]);
    expect(await s.disputes()).to.have.length(1);
    recorder.close();

    bots[0] = s.bot(0);
    await bots[0].tick();
    await bots[0].tick();
    const opened = await s.disputes();
    expect(opened).to.have.length(2);
    const second = opened[1]!;
    expect(second.challenger).to.equal(s.auditors[0]!.account.address);
    expect(second.step).to.equal(first.step);
    expect(challengeKeys(bots[0])).to.deep.equal([
      [`challenge:${at(bots[0], s.jobId, first.segment)}`, "confirmed"],
      [`challenge:${at(bots[0], s.jobId, first.segment)}:r2`, "confirmed"],
    ]);

    // round 2: every bot ticks; the panel (the three other bots) votes Fault
    for (let round = 0; round < 5; round++) {
      await s.conn.networkHelpers.mine(2);
      // a unanimous first-round Fault waits one commit window for the provider's appeal (this cheat does not appeal)
      const appeal = await getFaultAppeal(s.admin.public, { disputeGame: s.d.disputeGame!, disputeId: second.disputeId });
      if (appeal.deadline !== undefined) await s.conn.networkHelpers.time.increaseTo(appeal.deadline + 1n);
      for (const b of bots) await b.tick();
    }
    const d2 = await s.dispute(second.disputeId);
    expect(d2.outcome).to.equal("PanelFault");
    expect(d2.faultVotes).to.equal(3);
    expect((await getJob(s.admin.public, { jobMarket: s.d.jobMarket, jobId: s.jobId })).status).to.equal("Refunded");
    const logs = await s.admin.public.getLogs({ address: s.d.stakeVault, fromBlock: BigInt(s.d.startBlock), toBlock: "latest" });
    const slashed = parseEventLogs({ abi: stakeVaultAbi, logs, eventName: "StakeSlashed" });
    expect(slashed).to.have.length(1);
    expect(slashed[0]!.args.provider).to.equal(s.cheat.account.address);
    expect(slashed[0]!.args.amount).to.equal(s.policy.requiredStake);

    // no third round, no intent twice, and the other bots never re-challenged
    expect(await s.disputes()).to.have.length(2);
    for (const b of bots) {
      const keys = b.summary().intents.map((i) => i.key);
      expect(new Set(keys).size).to.equal(keys.length);
    }
    expect(challengeKeys(bots[0])).to.have.length(2);
    for (const b of bots.slice(1)) expect(challengeKeys(b).filter(([, status]) => status !== "superseded")).to.deep.equal([]);
    for (const b of bots) b.close();
  });

  it("does not challenge again after PanelValid", async () => {
    const s = await postCheatingJob(market(), "valid");
    const bots = [0, 1, 2, 3].map((i) => s.bot(i));
    const first = await roundOne(s, bots);
    for (const b of bots.slice(1)) b.close();
    // the panel (auditors 1..3, not running bots) votes Valid on the stale step
    await s.conn.networkHelpers.mine(2);
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, a] of s.auditors.slice(1).entries()) {
        await servePanel(a, { disputeGame: s.d.disputeGame!, disputeId: first.disputeId, ballots: new BallotStore(join(s.dir, `valid-ballots${i}`)), decide: async () => ({ vote: "Valid", reason: "test panel" }) });
      }
    }
    await bots[0]!.tick();
    expect((await s.dispute(first.disputeId)).outcome).to.equal("PanelValid");
    for (let t = 0; t < 3; t++) {
      await s.conn.networkHelpers.mine(2);
      await bots[0]!.tick();
    }
    expect(await s.disputes()).to.have.length(1);
    expect(challengeKeys(bots[0]!)).to.deep.equal([[`challenge:${at(bots[0]!, s.jobId, first.segment)}`, "confirmed"]]);
    bots[0]!.close();
  });

  it("stops at maxChallengeRounds", async () => {
    const s = await postCheatingJob(market(), "limit");
    const bots = [s.bot(0, 1), s.bot(1), s.bot(2), s.bot(3)];
    const first = await roundOne(s, bots);
    for (const b of bots.slice(1)) b.close();
    await silentPanel(s, bots[0]!, first.disputeId);
    for (let t = 0; t < 3; t++) {
      await s.conn.networkHelpers.mine(2);
      await bots[0]!.tick();
    }
    expect(await s.disputes()).to.have.length(1);
    expect(challengeKeys(bots[0]!)).to.deep.equal([[`challenge:${at(bots[0]!, s.jobId, first.segment)}`, "confirmed"]]);
    bots[0]!.close();
  });
});
