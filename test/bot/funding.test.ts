/**
 * A bot set up like the README's walkthrough (its whole balance bonded) finds the bad step, and its
 * challenge must not revert and be forgotten. It checks the deposit (DisputeGame.requiredDeposit: bond + panel fees)
 * and gas before sending, logs the exact shortfall at error, keeps the challenge pending with backoff, and sends it
 * once the tokens arrive; if the window closes first, the finding is recorded as lost, with why. A revert the contract
 * will repeat is recorded with its decoded reason. The start-up summary names every problem and its fix.
 */
import { expect } from "chai";
import { join } from "node:path";
import pino from "pino";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BotConfigError, ChallengerBot } from "../../verifier/src/bot/index.ts";
import { commitTag } from "../../verifier/src/bot/intent-key.ts";
import { getAuditorFunds, getRequiredDeposit, mintTestToken, providerClients } from "../../verifier/src/chain/index.ts";
import { cheatingJob, type CheatingJob } from "./fixture.ts";

type Line = { level: number; msg: string } & Record<string, unknown>;

/** A logger that keeps every line (debug and up) as an object. */
function recorder() {
  const lines: Line[] = [];
  const log = pino({ level: "debug", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const at = (level: number) => lines.filter((l) => l.level === level);
  return { lines, log, errors: () => at(50), infos: () => at(30) };
}

/** Auditor 0's bot with a recording logger and a fake clock. */
function botOf(f: CheatingJob, rec: ReturnType<typeof recorder>, clock: { t: number }, i = 0) {
  return new ChallengerBot({
    clients: f.auditors[i]!,
    deployment: f.d,
    store: f.store,
    board: f.board,
    dbPath: join(f.dir, `funding-bot${i}.sqlite`),
    dispute: f.hooks(f.auditors[i]!, i),
    log: rec.log,
    now: () => clock.t,
    retryBaseMs: 1_000,
    heartbeatMs: 60_000,
  });
}

/** The `J:S:cC` part of the intent keys about the commit of segment `segment` the bot holds (intent-key.ts). */
const at = (b: ChallengerBot, jobId: bigint, segment = 0) => `${jobId}:${segment}:c${commitTag(b.db.segment(jobId, segment)!.blockHash)}`;

const challengeRows = (b: ChallengerBot) => b.summary().intents.filter((i) => i.kind === "approveBond" || i.kind === "challenge");

describe("bot funding: deposit and gas checked before a challenge", function () {
  this.timeout(240_000);

  it("an unfunded bot logs the shortfall, keeps the challenge pending, and challenges once the tokens arrive", async () => {
    // auditor 0 mints exactly its bond: bonded, with 0 tokens for a deposit (the README's `auditor bond 100 --mint`)
    const f = await cheatingJob("unfunded", 600, { auditorTokens: (i) => (i === 0 ? parseEther("5") : parseEther("20")) });
    const me = f.auditors[0]!.account.address;
    const deposit = await getRequiredDeposit(f.admin.public, { disputeGame: f.d.disputeGame!, jobId: f.jobId });
    const rec = recorder();
    const clock = { t: 1_000_000 };
    const bot = botOf(f, rec, clock);

    const report = await bot.startup();
    expect(report.problems.map((p) => p.kind)).to.deep.equal(["tokens"]);
    expect(report.funds.deposit).to.deep.equal({ amount: deposit, jobId: f.jobId });
    expect(rec.errors().map((l) => l.msg)).to.deep.equal([
      `token balance 0 < the deposit of one challenge ${fmt(deposit)} (job ${f.jobId}, the largest among the jobs followed; short ${fmt(deposit)}): a bad step found now would not be challenged; fix: pouw auditor fund ${fmt(deposit)} --mint`,
    ]);

    await bot.tick();
    // the bad step is found and its challenge recorded, but nothing is sent: no dispute, both intents pending
    expect(bot.db.segment(f.jobId, 0)!.firstBadStep).to.equal(2);
    expect(await f.disputes()).to.have.length(0);
    let rows = challengeRows(bot);
    expect(rows.map((r) => [r.kind, r.status])).to.deep.equal([["approveBond", "pending"], ["challenge", "pending"]]);
    expect(rows[1]!.error).to.equal(`waiting for funds: token balance 0 < deposit ${fmt(deposit)} (short ${fmt(deposit)})`);
    const cannot = () => rec.errors().filter((l) => l.msg.startsWith("CANNOT CHALLENGE"));
    expect(cannot()).to.have.length(1); // once per challenge round, not per intent of the pair
    expect(cannot()[0]!.msg).to.equal(
      `CANNOT CHALLENGE: token balance 0 < deposit ${fmt(deposit)} (short ${fmt(deposit)}); the challenge stays pending and goes out when funded: pouw auditor fund ${fmt(deposit)} --mint`,
    );
    expect(cannot()[0]!.intent).to.equal(`approveBond:${at(bot, f.jobId)}`);
    expect(rec.lines.some((l) => l.level === 40 && l.msg === "intent failed")).to.equal(false);

    // backoff: the same clock reading re-checks nothing; a minute later the re-check repeats nothing at error, and the
    // heartbeat reports the waiting intents (info) with an error line
    await bot.tick();
    expect(cannot()).to.have.length(1);
    clock.t += 60_000;
    await bot.tick();
    expect(cannot()).to.have.length(1);
    const beat = rec.infos().filter((l) => l.msg === "heartbeat").at(-1)!;
    expect(beat).to.deep.include({ jobsFollowed: 1, audited: 3, failedAudits: 3, waitingForFunds: 2, tokens: "0", bonded: true });
    expect(rec.errors().at(-1)!.msg).to.match(/^2 challenge intents waiting for funds: token balance 0 < deposit /);
    rows = challengeRows(bot);
    expect(rows.every((r) => r.status === "pending")).to.equal(true);

    // the tokens arrive: after the backoff the pair goes out and the dispute opens
    await mintTestToken(f.auditors[0]!, { token: f.d.token, to: me, amount: deposit });
    clock.t += 30_000;
    await bot.tick();
    rows = challengeRows(bot);
    expect(rows.map((r) => [r.kind, r.status])).to.deep.equal([["approveBond", "confirmed"], ["challenge", "confirmed"]]);
    const opened = await f.disputes();
    expect(opened).to.have.length(1);
    expect(opened[0]!.challenger).to.equal(me);
    expect(opened[0]!.step).to.equal(2);
    expect((await getAuditorFunds(f.admin.public, { deployment: f.d, account: me })).tokenBalance).to.equal(0n);
    expect(rec.infos().some((l) => l.msg === "challenge confirmed: dispute opened")).to.equal(true);
    await bot.tick(); // follows its dispute
    bot.close();

    // restarted while its whole deposit is out in its own open dispute: short of tokens for another challenge, but
    // acting, and the start-up says so instead of "CANNOT ACT"
    const rec2 = recorder();
    const again = botOf(f, rec2, clock);
    const r2 = await again.startup();
    expect(r2.problems.map((p) => [p.kind, p.held])).to.deep.equal([["tokens", 1]]);
    // INFO, not ERROR: the deposit is out in its own dispute, with when it frees up (the dispute's reveal deadline)
    expect(rec2.errors()).to.deep.equal([]);
    const heldLine = rec2.infos().find((l) => l.event === "deposit-held")!;
    expect(heldLine.msg).to.match(new RegExp(`a further bad step found now would wait for the tokens; a deposit is held in this bot's open dispute \\(job ${f.jobId} step 2\\), returned at resolution \\(after \\d{4}-\\d\\d-\\d\\dT`));
    expect(rec2.infos()[0]!.msg).to.match(/: ready; its deposit is out in its open dispute, so a further challenge waits for tokens \(see the next line\)$/);
    again.close();
  });

  it("commits again when its challenge commitment expired while the challenge waited for funds, then challenges", async () => {
    const f = await cheatingJob("expired", 600, { auditorTokens: (i) => (i === 0 ? parseEther("5") : parseEther("20")) });
    const me = f.auditors[0]!.account.address;
    const deposit = await getRequiredDeposit(f.admin.public, { disputeGame: f.d.disputeGame!, jobId: f.jobId });
    const rec = recorder();
    const clock = { t: 1_000_000 };
    const bot = botOf(f, rec, clock);
    await bot.tick();
    // the commitment went out at once; the challenge waits for the tokens
    const commits = () => bot.summary().intents.filter((i) => i.kind === "commitChallenge");
    expect(commits().map((i) => [i.key, i.status])).to.deep.equal([[`commitChallenge:${at(bot, f.jobId)}`, "confirmed"]]);
    expect(challengeRows(bot).map((r) => r.status)).to.deep.equal(["pending", "pending"]);
    // longer than CHALLENGE_COMMITMENT_TTL_BLOCKS (256) pass before the tokens arrive
    await f.conn.networkHelpers.mine(300);
    await mintTestToken(f.auditors[0]!, { token: f.d.token, to: me, amount: deposit });
    for (let k = 0; k < 6 && (await f.disputes()).length === 0; ++k) {
      clock.t += 60_000;
      await bot.tick();
    }
    expect(rec.lines.some((l) => l.msg === "challenge commitment expired while the challenge waited: committing again, then the challenge")).to.equal(true);
    expect(commits().map((i) => [i.key, i.status])).to.deep.equal([
      [`commitChallenge:${at(bot, f.jobId)}`, "confirmed"],
      [`commitChallenge:${at(bot, f.jobId)}:renew1`, "confirmed"],
    ]);
    const opened = await f.disputes();
    expect(opened).to.have.length(1);
    expect(opened[0]!.challenger).to.equal(me);
    expect(challengeRows(bot).map((r) => [r.kind, r.status])).to.deep.equal([["approveBond", "confirmed"], ["challenge", "confirmed"]]);
    bot.close();
  });

  it("approves again when the allowance fell below the deposit after the pair's approval", async () => {
    const f = await cheatingJob("reapprove", 600, { auditorTokens: (i) => (i === 0 ? parseEther("5") : parseEther("20")) });
    const me = f.auditors[0]!.account.address;
    const rec = recorder();
    const clock = { t: 0 };
    const bot = botOf(f, rec, clock);
    await bot.tick();
    // the pair's approval counts as done (say, sent, then the allowance was spent or reset outside the bot): the
    // challenge finds the allowance at 0 and records and sends a new approval before it goes out
    const approve = bot.db.intentByKey(`approveBond:${at(bot, f.jobId)}`)!;
    bot.db.intentDone(approve.id, "confirmed");
    await mintTestToken(f.auditors[0]!, { token: f.d.token, to: me, amount: parseEther("2") });
    clock.t += 10_000;
    await bot.tick();
    expect(challengeRows(bot).map((r) => [r.key, r.status])).to.deep.equal([
      [`approveBond:${at(bot, f.jobId)}`, "confirmed"],
      [`challenge:${at(bot, f.jobId)}`, "confirmed"],
      [`approveBond:${at(bot, f.jobId)}:top1`, "confirmed"],
    ]);
    expect(rec.lines.some((l) => l.level === 40 && l.msg === "allowance to DisputeGame is below the deposit: approving again")).to.equal(true);
    expect((await f.disputes()).map((d) => d.challenger)).to.deep.equal([me]);
    bot.close();
  });

  it("records the finding as lost, with why, when the window closes while the bot waits for funds", async () => {
    const f = await cheatingJob("lost", 600, { auditorTokens: (i) => (i === 0 ? parseEther("5") : parseEther("20")) });
    const rec = recorder();
    const clock = { t: 1_000_000 };
    const bot = botOf(f, rec, clock);
    await bot.tick();
    expect(challengeRows(bot).map((r) => r.status)).to.deep.equal(["pending", "pending"]);
    await f.conn.networkHelpers.time.increase(f.policy.challengeWindow + 1);
    clock.t += 10_000;
    await bot.tick();
    const rows = challengeRows(bot);
    expect(rows.map((r) => r.status)).to.deep.equal(["failed", "failed"]);
    expect(rows[1]!.error).to.match(new RegExp(`^finding lost: job ${f.jobId}'s challenge window closed at \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z while waiting for funds \\(token balance 0 < deposit `));
    expect(rows[0]!.error).to.equal(rows[1]!.error);
    const lost = rec.errors().filter((l) => l.msg.startsWith("FINDING LOST"));
    expect(lost).to.have.length(1); // once per finding
    expect(lost[0]!.msg).to.equal(`FINDING LOST: ${rows[1]!.error!.replace(/^finding lost: /, "")}`);
    expect(await f.disputes()).to.have.length(0);
    // terminal: later ticks neither resend nor log it again, and the heartbeat has nothing waiting
    const n = rec.errors().length;
    clock.t += 60_000;
    await bot.tick();
    expect(rec.errors()).to.have.length(n);
    expect(rec.infos().filter((l) => l.msg === "heartbeat").at(-1)).to.deep.include({ waitingForFunds: 0, lostFindings: 1 });
    bot.close();
  });

  it("records a permanent revert with its decoded reason: a funded challenge after the window closed", async () => {
    const f = await cheatingJob("revert", 600);
    await f.conn.networkHelpers.time.increase(f.policy.challengeWindow + 1);
    const rec = recorder();
    const bot = botOf(f, rec, { t: 1_000_000 });
    await bot.tick();
    const challenge = challengeRows(bot).find((r) => r.kind === "challenge")!;
    expect(challenge.status).to.equal("failed");
    expect(challenge.error).to.match(new RegExp(`^finding lost: challenge refused: job ${f.jobId}'s challenge window closed at \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z \\(chain time [0-9T:-]+Z\\) \\[JobMarketChallengeWindowClosed\\]$`));
    const line = rec.errors().find((l) => l.msg.startsWith("FINDING LOST"))!;
    expect(line.intent).to.equal(`challenge:${at(bot, f.jobId)}`);
    expect(line.reason).to.equal(challenge.error);
    expect(await f.disputes()).to.have.length(0);
    bot.close();
  });

  it("start-up summary: info line, an error line per problem with its fix; refuses a deployment with no code", async () => {
    const f = await cheatingJob("startup", 600);
    const deposit = await getRequiredDeposit(f.admin.public, { disputeGame: f.d.disputeGame!, jobId: f.jobId });

    // auditor 1: bonded 5, 15 tokens, dev ETH: ready
    let rec = recorder();
    let bot = botOf(f, rec, { t: 0 }, 1);
    let report = await bot.startup();
    expect(report.problems).to.deep.equal([]);
    expect(report.jobsFollowed).to.equal(1);
    expect(report.auditRates).to.deep.equal([1]);
    const [summary] = rec.infos();
    expect(summary!.msg).to.match(
      new RegExp(`^auditor ${f.auditors[1]!.account.address}: bond 5 \\(active\\), tokens 15 for a deposit of ${esc(fmt(deposit))}, ETH \\d+(\\.\\d+)? \\(a challenge's gas ~[0-9.]+\\), following 1 job, audit rate 1: ready$`),
    );
    expect(summary).to.deep.include({ bond: "5", bonded: true, tokens: "15", deposit: fmt(deposit), jobsFollowed: 1, auditRates: "1", disputeGame: f.d.disputeGame });
    expect(rec.errors()).to.deep.equal([]);
    bot.close();

    // a fresh key: no bond, no tokens, no ETH: three error lines, each with its fix; the bot still starts
    const stranger = providerClients(f.conn.provider, 31337, { account: privateKeyToAccount(generatePrivateKey()), pollingIntervalMs: 20 });
    const who: Address = stranger.account.address;
    rec = recorder();
    bot = new ChallengerBot({ clients: stranger, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "stranger.sqlite"), dispute: f.hooks(stranger, 9), log: rec.log });
    report = await bot.startup();
    expect(report.problems.map((p) => p.kind)).to.deep.equal(["unbonded", "tokens", "eth"]);
    expect(rec.infos()[0]!.msg).to.match(/bond 0 \(NOT ACTIVE\), tokens 0 .*: CANNOT ACT, see the errors$/);
    const errors = rec.errors().map((l) => l.msg);
    expect(errors[0]).to.equal(`auditor ${who} is not bonded (bond 0, minimum 1): its receipts cannot be anchored and no panel can draw it; fix: pouw auditor bond 1 --mint`);
    expect(errors[1]).to.match(new RegExp(`^token balance 0 < the deposit of one challenge ${esc(fmt(deposit))} .*; fix: pouw auditor fund ${esc(fmt(deposit))} --mint and send at least [0-9.]+ ETH to ${who}$`));
    expect(errors[2]).to.match(new RegExp(`^ETH 0 < ~[0-9.]+ for the gas of one approve \\+ challenge at \\d+ wei/gas \\(short [0-9.]+\\); fix: send at least [0-9.]+ ETH to ${who}$`));
    await bot.tick(); // it still audits (the job's segments are sampled at rate 1 and checked)
    expect(bot.summary().audits).to.have.length(3);
    bot.close();

    // misconfiguration: no code at the deployment's JobMarket: refuses to start
    bot = new ChallengerBot({ clients: f.auditors[2]!, deployment: { ...f.d, jobMarket: "0x000000000000000000000000000000000000dEaD" }, store: f.store, board: f.board, dbPath: join(f.dir, "bad.sqlite"), log: recorder().log });
    let thrown: unknown;
    await bot.startup().catch((e: unknown) => (thrown = e));
    expect(thrown).to.be.instanceOf(BotConfigError);
    expect((thrown as BotConfigError).shortMessage).to.match(/^no contract code at jobMarket 0x000000000000000000000000000000000000dEaD on chain 31337: the deployment file is stale/);
    bot.close();
  });
});

function fmt(wei: bigint): string {
  const s = wei.toString().padStart(19, "0");
  const frac = s.slice(-18).replace(/0+$/, "");
  return frac ? `${s.slice(0, -18)}.${frac}` : s.slice(0, -18);
}

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
