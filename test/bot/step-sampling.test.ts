/**
 * Step sampling on the in-process chain: the bot draws one step of each committed segment with its private secret, asks
 * the provider to open the state before it (StateOpenings), recomputes that ONE step through checks/ and challenges a
 * mismatch. Segment sampling and the state screen are off here (secrets under which no segment is sampled, screen:
 * false) and the provider stops before the last segment (always recomputed), so step sampling is the only check:
 *   - a quarter-batch provider (every step wrong) is caught at the sampled step and challenged there;
 *   - an honest provider is asked, answers, and nothing is challenged;
 *   - an honest provider that does not answer is challenged at the sampled step once the opening is withheld, and the
 *     panel (the other bots, deciding with the pre-state's opening) votes Fault: the provider is slashed.
 */
import { join } from "node:path";
import { expect } from "chai";
import { chainDisputeHooks, ChallengerBot } from "../../verifier/src/bot/index.ts";
import { sampledStep } from "../../verifier/src/bot/sampler.ts";
import type { BotOptions } from "../../verifier/src/bot/context.ts";
import { deployStateOpenings, getJob, getOpening, getStakeSlashes, requestOpening } from "../../verifier/src/chain/index.ts";
import type { SegmentVerdict } from "../../verifier/src/checks/index.ts";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { answerOpenings } from "../../verifier/src/provider/openings.ts";
import { botMarketPerFile, passAppealWindows, postCheatingJob, unsampledSecrets, type CheatingJob } from "./fixture.ts";

const AUDIT_RATE = 0.1;
const ANSWER_WINDOW = 600;
/** StateOpenings' time per queued opening: the n-th opening asked at once is due ANSWER_WINDOW + (n-1) * REPLAY later. */
const REPLAY = 60;
/** Segments 0 and 1 of tiny.json's three (K = 4): the last segment, recomputed whatever the rate, is never committed. */
const COMMITTED = 2;
const K = 4;
/**
 * The job's challenge window: the job stays Active (its last segment is never committed), and StateOpenings gives an
 * Active job's opening at least segmentTimeout (3,600 s) + REPLAY, plus one answer window to dispute a withholding, so
 * tiny.json's 3,600 s window would take no opening at all (docs/checks.md "State openings: limits").
 */
const CHALLENGE_WINDOW = 4 * 3600;

describe("bot: step sampling through state openings", function () {
  this.timeout(300_000);
  const market = botMarketPerFile(600);

  async function setUp(tag: string, strategy: string, terms?: (challengeWindow: number) => { answerWindowSeconds: number; replaySeconds: number }) {
    const f = await postCheatingJob(market(), tag, { strategy, auditRate: AUDIT_RATE, cheatSegments: COMMITTED, challengeWindow: CHALLENGE_WINDOW });
    const { stateOpenings } = await deployStateOpenings(f.admin, { jobMarket: f.d.jobMarket, ...(terms ? terms(Number(f.policy.challengeWindow)) : { answerWindowSeconds: ANSWER_WINDOW, replaySeconds: REPLAY }) });
    f.d.stateOpenings = stateOpenings; // the deployment names it: panel members read openings from there
    unsampledSecrets(f.dir, f.d.jobMarket, f.jobId, COMMITTED, AUDIT_RATE);
    const verdicts: { segment: number; step: number; verdict: SegmentVerdict }[] = [];
    // bot 0 step-samples; every bot sits on panels and decides with the pre-state's opening
    const mkBot = (i: number, stepSampling?: BotOptions["stepSampling"]) =>
      new ChallengerBot({
        clients: f.auditors[i]!,
        deployment: f.d,
        store: f.store,
        board: f.board,
        dbPath: join(f.dir, `bot${i}.sqlite`),
        dispute: chainDisputeHooks({ clients: f.auditors[i]!, deployment: f.d, ballotsDir: join(f.dir, `ballots${i}`) }),
        screen: false,
        ...(stepSampling ? { stepSampling } : {}),
      });
    const bot = mkBot(0, { stateOpenings, rate: 1, onVerdict: (e) => verdicts.push(e) });
    const provider = { clients: f.cheat, deployment: f.d, store: f.store, board: f.board, stateDir: join(f.dir, "state"), stateOpenings };
    const secret = bot.db.getMeta("samplingSecret")!;
    const drawn = [0, 1].map((s) => sampledStep(secret, f.d.jobMarket, f.jobId, s, K, 1)!);
    return { f, bot, verdicts, provider, stateOpenings, drawn, mkBot };
  }

  const ticks = async (f: CheatingJob, bot: ChallengerBot, n: number) => {
    for (let i = 0; i < n; i++) {
      await f.conn.networkHelpers.mine(2);
      await bot.tick();
    }
  };

  it("catches a provider whose every step is wrong (quarter batch) at the sampled step, and challenges that step", async () => {
    const { f, bot, verdicts, provider, stateOpenings, drawn } = await setUp("steps-cheat", "quarter-batch");
    await bot.tick();
    // the bot asked for the state before each drawn step, and audited nothing yet
    for (const s of drawn) {
      expect((await getOpening(f.admin.public, { stateOpenings, jobId: f.jobId, step: s - 1 })).requested).to.equal(true);
    }
    expect(verdicts).to.deep.equal([]);
    const answered = await answerOpenings(provider, { strategy: parseStrategy("quarter-batch"), mode: "recompute" });
    expect(answered.failed).to.deep.equal([]);
    expect(answered.answered.map((a) => a.step).sort((a, b) => a - b)).to.deep.equal(drawn.map((s) => s - 1));
    await ticks(f, bot, 6);
    // both sampled steps fail from the opened (committed) state: the opening serves h(s-1), the step does not give h(s)
    expect(verdicts.map((v) => [v.step, v.verdict.ok, v.verdict.failure?.kind, v.verdict.proof?.step])).to.have.deep.members(drawn.map((s) => [s, false, "state-divergence", s]));
    const disputes = await f.disputes();
    expect(disputes.length).to.equal(1);
    expect(drawn).to.include(Number(disputes[0]!.step));
    expect(disputes[0]!.challenger).to.equal(f.auditors[0]!.account.address);
    bot.close();
  });

  it("asks an honest provider, recomputes the step from its answer, and challenges nothing", async () => {
    const { f, bot, verdicts, provider } = await setUp("steps-honest", "honest");
    await bot.tick();
    const answered = await answerOpenings(provider, { strategy: parseStrategy("honest"), mode: "recompute" });
    expect(answered.answered.length).to.equal(COMMITTED);
    await ticks(f, bot, 3);
    expect(verdicts.map((v) => v.verdict.ok)).to.deep.equal([true, true]);
    expect(verdicts.every((v) => v.verdict.stepsChecked === 1)).to.equal(true);
    expect(await f.disputes()).to.deep.equal([]);
    expect(bot.db.allIntents().filter((i) => i.kind !== "requestOpening")).to.deep.equal([]);
    bot.close();
  });

  it("challenges the sampled step once the provider leaves the opening unanswered past its deadline; the panel votes Fault", async () => {
    const { f, bot, verdicts, drawn, mkBot } = await setUp("steps-withheld", "honest");
    await bot.tick();
    await ticks(f, bot, 2);
    // within the answer window: nothing concluded, nothing challenged
    expect(verdicts).to.deep.equal([]);
    expect(await f.disputes()).to.deep.equal([]);
    // past the last queued deadline: the job is Active, so the first is at least one segment timeout and one replay away
    // (the provider may be training a segment: StateOpenings grants it time to answer at that segment's commit)
    const firstWait = Math.max(ANSWER_WINDOW, Number(f.policy.segmentTimeout) + REPLAY);
    await f.conn.networkHelpers.time.increase(firstWait + (drawn.length - 1) * REPLAY + 1);
    await ticks(f, bot, 6);
    expect(verdicts.map((v) => [v.step, v.verdict.failure?.kind, v.verdict.proof?.step])).to.have.deep.members(drawn.map((s) => [s, "content-unavailable", s]));
    const disputes = await f.disputes();
    expect(disputes.length).to.equal(1);
    expect(drawn).to.include(Number(disputes[0]!.step));
    // the panel: the honest step itself is right, but its pre-state was withheld from the challenger: Fault
    const others = [1, 2, 3].map((i) => mkBot(i));
    for (let round = 0; round < 8; round++) {
      await f.conn.networkHelpers.mine(2);
      await passAppealWindows(f.conn, f.admin.public, f.d.disputeGame!); // the provider does not appeal the unanimous Fault
      for (const b of [bot, ...others]) await b.tick();
      if ((await f.dispute(disputes[0]!.disputeId)).phase === "resolved") break;
    }
    expect((await f.dispute(disputes[0]!.disputeId)).outcome).to.equal("PanelFault");
    const slashes = await getStakeSlashes(f.admin.public, { stakeVault: f.d.stakeVault, fromBlock: BigInt(f.d.startBlock) });
    // one slash, the provider's, for the Fault: it also timed out by stopping (its next segment was due before the
    // opening's deadline, one segment timeout after the request), but a tenure that committed segments keeps its whole
    // lock through their window (the timeout slash waits for reopenJob), so the Fault takes it and refunds the buyer
    expect(slashes.map((s) => s.provider)).to.deep.equal([f.cheat.account.address]);
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Refunded");
    for (const b of [bot, ...others]) b.close();
  });

  it("recomputes the sampled segments when the provider's opening queue is full (a flood), so the flood stops no audit", async () => {
    // a window of a quarter of the Active job's challenge window, one window per queued opening: the first deadline is
    // one segment timeout (a quarter) and one replay away, so two openings fill the queue (the third's deadline plus one
    // window would pass now + challengeWindow)
    const { f, bot, drawn } = await setUp("steps-queue-full", "quarter-batch", (cw) => ({ answerWindowSeconds: Math.floor(cw / 4), replaySeconds: Math.floor(cw / 4) }));
    const so = f.d.stateOpenings!;
    const flood = [0, 1, 2, 3, 4, 5, 6, 7].filter((t) => !drawn.includes(t + 1)).slice(0, 2);
    for (const t of flood) await requestOpening(f.auditors[1]!, { stateOpenings: so, jobId: f.jobId, segment: Math.floor(t / K), step: t });
    await ticks(f, bot, 6);
    // no opening was asked for the drawn steps: both segments were recomputed (the sampler alone skips them here)
    for (const s of drawn) expect((await getOpening(f.admin.public, { stateOpenings: so, jobId: f.jobId, step: s - 1 })).requested, `state ${s - 1}`).to.equal(false);
    expect([0, 1].map((seg) => [bot.db.segment(f.jobId, seg)!.sampled, bot.db.segment(f.jobId, seg)!.audit])).to.deep.equal([
      [true, "bad"],
      [true, "bad"],
    ]);
    expect((await f.disputes()).length).to.be.at.least(1);
    bot.close();
  });
});

/**
 * The final state through an opening: with every segment committed and step sampling on, the bot asks the provider to
 * open the last segment's end state (the final model), screens it, and only then decides the last segment: a passed
 * screen samples it at the job's rate (here: not sampled), a failed screen or a withheld opening recomputes it.
 * Step draws are off (rate 1e-9: no step of any segment is drawn), so the final screen is the only step-sampling check.
 */
describe("bot: the final state opened and screened instead of a forced recompute", function () {
  this.timeout(300_000);
  const market = botMarketPerFile(600);
  /** Short enough that two answer windows fit in the 600 s challenge window left after training. */
  const FINAL_WINDOW = 60;
  const SEGMENTS = 3;
  const FINAL_STATE = SEGMENTS * K;

  async function setUp(tag: string, strategy: string) {
    const f = await postCheatingJob(market(), tag, { strategy, auditRate: AUDIT_RATE });
    const { stateOpenings } = await deployStateOpenings(f.admin, { jobMarket: f.d.jobMarket, answerWindowSeconds: FINAL_WINDOW, replaySeconds: FINAL_WINDOW });
    f.d.stateOpenings = stateOpenings;
    unsampledSecrets(f.dir, f.d.jobMarket, f.jobId, SEGMENTS, AUDIT_RATE);
    const bot = new ChallengerBot({
      clients: f.auditors[0]!,
      deployment: f.d,
      store: f.store,
      board: f.board,
      dbPath: join(f.dir, "bot0.sqlite"),
      dispute: chainDisputeHooks({ clients: f.auditors[0]!, deployment: f.d, ballotsDir: join(f.dir, "ballots0") }),
      screen: false,
      stepSampling: { stateOpenings, rate: 1e-9 },
    });
    const secret = bot.db.getMeta("samplingSecret")!;
    expect([0, 1, 2].map((s) => sampledStep(secret, f.d.jobMarket, f.jobId, s, K, 1e-9))).to.deep.equal([null, null, null]);
    const provider = { clients: f.cheat, deployment: f.d, store: f.store, board: f.board, stateDir: join(f.dir, "state"), stateOpenings };
    await bot.tick();
    // the final state was asked for, and the last segment waits for its screen (no forced recompute yet)
    const asked = await getOpening(f.admin.public, { stateOpenings, jobId: f.jobId, step: FINAL_STATE });
    expect(asked.requested).to.equal(true);
    expect(bot.db.segment(f.jobId, SEGMENTS - 1)!.sampled).to.equal(null);
    return { f, bot, provider };
  }

  const ticks = async (f: CheatingJob, bot: ChallengerBot, n: number) => {
    for (let i = 0; i < n; i++) {
      await f.conn.networkHelpers.mine(2);
      await bot.tick();
    }
  };

  it("an honest provider opens its final state from the kept end checkpoint; the screen passes and the last segment is sampled at the job's rate", async () => {
    const { f, bot, provider } = await setUp("final-honest", "honest");
    const answered = await answerOpenings(provider, { strategy: parseStrategy("honest"), mode: "recompute" });
    expect(answered.failed).to.deep.equal([]);
    expect(answered.answered.map((a) => [a.step, a.mode, a.stepsReplayed])).to.deep.equal([[FINAL_STATE, "kept", 0]]);
    await ticks(f, bot, 3);
    // the secret samples no segment at the job's rate: the last one is not recomputed either
    expect([0, 1, 2].map((s) => bot.db.segment(f.jobId, s)!.sampled)).to.deep.equal([false, false, false]);
    expect(await f.disputes()).to.deep.equal([]);
    bot.close();
  });

  it("a plant in the last segment fails the final screen: the last segment is recomputed and the planted step challenged", async () => {
    const { f, bot, provider } = await setUp("final-plant", "state-poison:10");
    const answered = await answerOpenings(provider, { strategy: parseStrategy("state-poison:10"), mode: "recompute" });
    expect(answered.answered.map((a) => a.step)).to.deep.equal([FINAL_STATE]);
    await ticks(f, bot, 6);
    expect(bot.db.segment(f.jobId, SEGMENTS - 1)!.sampled).to.equal(true);
    const disputes = await f.disputes();
    expect(disputes.length).to.equal(1);
    expect(Number(disputes[0]!.step)).to.be.within((SEGMENTS - 1) * K + 1, FINAL_STATE);
    expect(disputes[0]!.challenger).to.equal(f.auditors[0]!.account.address);
    bot.close();
  });

  it("a final opening left unanswered past its deadline keeps the last segment's recompute", async () => {
    const { f, bot } = await setUp("final-withheld", "honest");
    await ticks(f, bot, 2);
    expect(bot.db.segment(f.jobId, SEGMENTS - 1)!.sampled).to.equal(null);
    // the final opening is the only one asked here: due one window after its request
    await f.conn.networkHelpers.time.increase(FINAL_WINDOW + 1);
    await ticks(f, bot, 3);
    expect(bot.db.segment(f.jobId, SEGMENTS - 1)!.sampled).to.equal(true);
    expect(bot.db.segment(f.jobId, SEGMENTS - 1)!.audit).to.equal("ok");
    expect(await f.disputes()).to.deep.equal([]);
    bot.close();
  });
});
