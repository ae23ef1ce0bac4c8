/**
 * Withholding by unavailability: an honest-looking provider commits every segment (its leaves are on chain) and then
 * serves its checkpoints to nobody: its content server is down (a remote that refuses connections), so every fetch
 * is SourceUnavailableError, never "not found". Before, the bots postponed the audit on every tick until the window
 * closed, and the provider was paid for work nobody could check. Now a segment unavailable from every source for the
 * grace period is withheld: the bot challenges its first step, the panel (which cannot fetch it either) votes Fault,
 * and the provider is slashed inside the challenge window. A provider whose server comes back within the grace is
 * audited normally and not challenged.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { getDispute, getDisputeParams, getJob, getSegmentCommits, getStakeSlashes } from "../../verifier/src/chain/index.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { createRun, offlineSalt, parseManifest, train } from "../../verifier/src/ml/index.ts";
import { type CheatingJob, botMarketPerFile, passAppealWindows, postCheatingJob } from "./fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));

/** A loopback port nobody listens on (bound, then released): connections to it are refused. */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/**
 * What the auditors can read: the buyer's content (manifest, data) in their own store, none of the provider's
 * checkpoints (or, with `missing`, none of those files), and the only other source, a server, down.
 */
async function withheld(f: CheatingJob, missing?: readonly string[]) {
  const commits = await getSegmentCommits(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId, fromBlock: BigInt(f.d.startBlock) });
  expect(commits).to.have.length(3);
  const local = join(f.dir, "auditors-store");
  cpSync(join(f.dir, "store"), local, { recursive: true });
  for (const cid of missing ?? commits.map((c) => c.checkpointCid)) rmSync(new LocalDirStore(local).pathOf(cid), { force: true });
  const remote = new HttpContentStore(`http://127.0.0.1:${await deadPort()}`, { retries: 0, timeoutMs: 2_000 });
  return { store: new LayeredStore(new LocalDirStore(local), [remote]), local };
}

const GRACE_S = 600;

describe("bot: a provider that withholds its checkpoints by being unreachable is slashed", function () {
  this.timeout(240_000);
  // one deployment for the file; each case reverts to it and posts its own job (job 1 again)
  const market = botMarketPerFile(600);

  it("postpones within the grace, then challenges the segment's first step; the panel votes Fault and the stake is slashed", async () => {
    const f = await postCheatingJob(market(), "withhold", { strategy: "honest" });
    const { store } = await withheld(f);
    const bots = f.auditors.map(
      (a, i) => new ChallengerBot({ clients: a, deployment: f.d, store, board: f.board, dbPath: join(f.dir, `wbot${i}.sqlite`), dispute: f.hooks(a, i), unavailableGraceS: GRACE_S }),
    );
    const disputes = async () => (await f.disputes()).map((d) => ({ step: d.step, challenger: d.challenger }));
    const openedIds = async () => (await f.disputes()).map((d) => ({ disputeId: d.disputeId }));

    // within the grace: no verdict, no challenge, the segments stay open
    for (const b of bots) await b.tick();
    expect(await disputes()).to.deep.equal([]);
    expect(bots[0]!.summary().screens.map((r) => r.screen)).to.deep.equal([null, null, null]);
    await f.conn.networkHelpers.time.increase(GRACE_S - 60);
    for (const b of bots) await b.tick();
    expect(await disputes()).to.deep.equal([]);

    // past the grace, still unavailable: bot 0 challenges the first step of the first withheld segment it screens
    await f.conn.networkHelpers.time.increase(120);
    for (const b of bots) await b.tick();
    expect((await disputes())[0]).to.deep.equal({ step: 1, challenger: f.auditors[0]!.account.address });
    const opened = await openedIds();
    const screens = bots[0]!.summary().screens;
    expect(screens[0]!.screen).to.match(/^bad: content-unavailable: unavailable from every source since /);
    // the job was still inside its challenge window when the challenge went out
    const job = await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId });
    expect(job.status).to.not.equal("Finalized");

    // members retry the unavailable checkpoint until half the commit window is left (a provider node down for a minute
    // is no withholder), then vote Fault: no commit before that point, all three after it
    const { commitWindowSeconds } = await getDisputeParams(f.admin.public, { disputeGame: f.d.disputeGame! });
    let waited = false;
    for (let round = 0; round < 8; round++) {
      await f.conn.networkHelpers.mine(2);
      await passAppealWindows(f.conn, f.admin.public, f.d.disputeGame!);
      for (const b of bots) await b.tick();
      const d = await getDispute(f.admin.public, { disputeGame: f.d.disputeGame!, disputeId: opened[0]!.disputeId });
      if (!waited && d.phase === "commit") {
        expect(d.commits, "no member votes Fault before the margin").to.equal(0);
        await f.conn.networkHelpers.time.increase(Math.ceil(commitWindowSeconds / 2) + 1);
        waited = true;
      }
    }
    expect(waited).to.equal(true);
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Refunded");
    const slashes = await getStakeSlashes(f.admin.public, { stakeVault: f.d.stakeVault, fromBlock: BigInt(f.d.startBlock) });
    expect(slashes.map((s) => s.provider)).to.deep.equal([f.cheat.account.address]);
    for (const b of bots) b.close();
  });

  it("a grace longer than the window is cut to halfway to the challenge deadline: the challenge still goes out in time", async () => {
    const f = await postCheatingJob(market(), "withhold-late", { strategy: "honest" });
    const { store } = await withheld(f);
    const bot = new ChallengerBot({ clients: f.auditors[0]!, deployment: f.d, store, board: f.board, dbPath: join(f.dir, "lbot.sqlite"), dispute: f.hooks(f.auditors[0]!, 0), unavailableGraceS: 30 * 86_400 });
    await bot.tick();
    const job = await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId });
    expect(job.status).to.equal("Committed");
    const since = bot.db.segment(f.jobId, 0)!.unavailableSince!;
    const half = Math.floor((Number(job.deadline) - since) / 2);
    await f.conn.networkHelpers.time.increase(half - 30);
    await bot.tick();
    expect(await f.disputes()).to.deep.equal([]);
    await f.conn.networkHelpers.time.increase(60);
    await bot.tick();
    expect((await f.disputes()).map((d) => d.step)).to.deep.equal([1]);
    bot.close();
  });

  it("a buyer that withholds its own base checkpoint gets no honest provider challenged: the provider's checkpoints are served", async () => {
    // a fine-tuning job: h(0) is the buyer's base checkpoint (a trained tiny run's final state), not a seed
    const offline = mkdtempSync(join(tmpdir(), "pouw-withhold-base-"));
    const { trace } = await train(await createRun(parseManifest(tiny), { jobId: 99n, salt: offlineSalt(99n) }), { outDir: offline, strategy: { kind: "honest" }, evaluate: false });
    const baseCid = trace.finalCheckpointCid;
    const baseBytes = await new LocalDirStore(join(offline, "store")).get(baseCid);
    const f = await postCheatingJob(market(), "withhold-base", { strategy: "honest", base: { ...tiny, init: { checkpointCid: baseCid, optimizerState: "fresh" } }, content: [baseBytes] });
    // the auditors hold everything but the buyer's base checkpoint; the buyer's server is down
    const { store } = await withheld(f, [baseCid]);
    const bot = new ChallengerBot({ clients: f.auditors[0]!, deployment: f.d, store, board: f.board, dbPath: join(f.dir, "bbot.sqlite"), dispute: f.hooks(f.auditors[0]!, 0), unavailableGraceS: GRACE_S });
    await bot.tick();
    await f.conn.networkHelpers.time.increase(GRACE_S + 60);
    await bot.tick();
    await bot.tick();
    // segment 0's start cannot be checked against the manifest's h(0) without the base: no verdict, no challenge;
    // the later segments' starts need only the provider's content and pass the screen (h(0) has a fresh optimizer state)
    expect(bot.summary().screens.map((r) => r.screen)).to.deep.equal([null, "ok", "ok"]);
    expect(bot.db.segment(f.jobId, 0)!.unavailableSince).to.be.a("number");
    expect(await f.disputes()).to.deep.equal([]);
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Committed");
    bot.close();
  });

  it("an outage shorter than the grace is not a finding: the bot audits once the content is back, and nobody is challenged", async () => {
    const f = await postCheatingJob(market(), "outage", { strategy: "honest" });
    const { store, local } = await withheld(f);
    const bot = new ChallengerBot({ clients: f.auditors[0]!, deployment: f.d, store, board: f.board, dbPath: join(f.dir, "obot.sqlite"), dispute: f.hooks(f.auditors[0]!, 0), unavailableGraceS: GRACE_S });
    await bot.tick();
    expect(bot.summary().screens.map((r) => r.screen)).to.deep.equal([null, null, null]);
    // the provider's content is back (here: published to the auditor's own store) before the grace ends
    await f.conn.networkHelpers.time.increase(GRACE_S / 2);
    cpSync(join(f.dir, "store"), local, { recursive: true });
    await bot.tick();
    expect(bot.summary().screens.map((r) => r.screen)).to.deep.equal(["ok", "ok", "ok"]);
    // a later outage starts a new grace period: far past the first failure, the re-read is not a finding
    expect(bot.db.segmentsOf(f.jobId).map((s) => s.unavailableSince)).to.deep.equal([null, null, null]);
    expect(await f.disputes()).to.deep.equal([]);
    expect(bot.summary().receipts).to.equal(3); // audit rate 1: every segment recomputed and receipted
    bot.close();
  });
});
