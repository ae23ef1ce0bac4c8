/**
 * A withheld manifest must not make honest panel members forfeit. A buyer and a provider post a job whose manifest
 * no source serves to anyone else (the auditors' only remote is down), the provider trains stale:2, and the buyer's
 * address challenges a step. Before, the honest members (bots) could not load the manifest, retried "manifest
 * unavailable" on every tick, never committed, and forfeited for silence when the dispute resolved NoDecision (the
 * challenger refunded, the cheater paid). Now a member retries until its margin before the commit deadline (half the
 * commit window by default) and then votes Fault with the reason: the provider accepted the job, so it must serve
 * what the job needs. An honest provider that serves the manifest before the margin is judged on its step as usual.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { getAuditor, getJob, getSegmentCommits, getStakeSlashes } from "../../verifier/src/chain/index.ts";
import { challengeProof, jobRun, segmentLeaves } from "../../verifier/src/checks/index.ts";
import { BallotStore, openChallenge } from "../../verifier/src/dispute/index.ts";
import { MANIFEST_URI_PREFIX, publishManifest } from "../../verifier/src/market/manifest-store.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { type CheatingJob, botMarketPerFile, passAppealWindows, postCheatingJob } from "./fixture.ts";

/** The commit and reveal windows (seconds); a member's default margin is half the commit window. */
const WINDOW = 600;

/** A loopback port nobody listens on (bound, then released): connections to it are refused. */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** The auditors' store: everything the provider has but the job's manifest, and the only other source down. */
async function withoutManifest(f: CheatingJob) {
  const { uri } = await publishManifest(f.store, f.manifest);
  const cid = uri.slice(MANIFEST_URI_PREFIX.length);
  const local = join(f.dir, "auditors-store");
  mkdirSync(local, { recursive: true });
  cpSync(join(f.dir, "store"), local, { recursive: true });
  rmSync(new LocalDirStore(local).pathOf(cid), { force: true });
  const remote = new HttpContentStore(`http://127.0.0.1:${await deadPort()}`, { retries: 0, timeoutMs: 2_000 });
  return { store: new LayeredStore(new LocalDirStore(local), [remote]), local, cid };
}

/** The buyer's address challenges `step` of segment 0 with the provider's own leaves (it holds the manifest). */
async function buyerChallenges(f: CheatingJob, step: number): Promise<bigint> {
  const commits = await getSegmentCommits(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId, fromBlock: BigInt(f.d.startBlock) });
  const commitments = commits.map((c) => ({ index: c.segment, traceRoot: c.traceRoot, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes }));
  const run = await jobRun(f.manifest, f.d, f.jobId, f.store);
  const leaves = segmentLeaves({ run, store: f.store, commitments }, 0);
  if (!leaves.ok) throw new Error(leaves.failure.message);
  const r = await openChallenge(f.buyer, { disputeGame: f.d.disputeGame!, token: f.d.token, jobId: f.jobId, audit: challengeProof(leaves.value, step), endStateHash: commits[0]!.endStateHash });
  return r.disputeId;
}

describe("bot: a withheld manifest does not make honest panel members forfeit", function () {
  this.timeout(300_000);
  const market = botMarketPerFile(WINDOW);

  it("members retry until the margin, then vote Fault: the cheater is slashed and no member forfeits", async () => {
    const f = await postCheatingJob(market(), "withheld-manifest", { strategy: "stale:2" });
    const { store } = await withoutManifest(f);
    const bots = f.auditors.map((a, i) => new ChallengerBot({ clients: a, deployment: f.d, store, board: f.board, dbPath: join(f.dir, `mbot${i}.sqlite`), dispute: f.hooks(a, i) }));
    const bonds = async () => Promise.all(f.auditors.map(async (a) => (await getAuditor(f.admin.public, { auditorRegistry: f.d.auditorRegistry, auditor: a.account.address })).bond));
    const before = await bonds();
    for (const b of bots) await b.tick();
    // nobody can audit the job: no bot challenges it
    expect(await f.disputes()).to.deep.equal([]);

    const disputeId = await buyerChallenges(f, 2);
    // the seed block passes, the panel is drawn; the members cannot load the manifest and do not vote yet
    for (let i = 0; i < 3; i++) {
      await f.conn.networkHelpers.mine(2);
      for (const b of bots) await b.tick();
    }
    let d = await f.dispute(disputeId);
    expect(d.panel).to.have.length(3);
    expect(d.commits).to.equal(0);
    // still short of the margin (half the commit window before the deadline): no vote
    await f.conn.networkHelpers.time.increase(WINDOW / 2 - 60);
    for (const b of bots) await b.tick();
    expect((await f.dispute(disputeId)).commits).to.equal(0);

    // past the margin, the manifest still unavailable: every member votes Fault, reveals, and the dispute resolves
    await f.conn.networkHelpers.time.increase(90);
    for (let round = 0; round < 5; round++) {
      for (const b of bots) await b.tick();
      await f.conn.networkHelpers.mine(2);
      await passAppealWindows(f.conn, f.admin.public, f.d.disputeGame!); // the withholder does not appeal
    }
    d = await f.dispute(disputeId);
    expect(d.phase).to.equal("resolved");
    expect(d.outcome).to.equal("PanelFault");
    expect(d.faultVotes).to.equal(3);
    // the reason is in each member's ballot
    for (const [i, a] of f.auditors.entries()) {
      if (!d.panel.some((m) => m.toLowerCase() === a.account.address.toLowerCase())) continue;
      const ballot = await new BallotStore(join(f.dir, `ballots${i}`)).load(f.d.disputeGame!, disputeId, a.account.address, 1);
      expect(ballot!.vote).to.equal("Fault");
      expect(ballot!.reason).to.contain("manifest").and.contain("the provider accepted the job, so it must serve what the job needs");
    }
    expect(await bonds()).to.deep.equal(before);
    const slashes = await getStakeSlashes(f.admin.public, { stakeVault: f.d.stakeVault, fromBlock: BigInt(f.d.startBlock) });
    expect(slashes.map((s) => s.provider)).to.deep.equal([f.cheat.account.address]);
    expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId: f.jobId })).status).to.equal("Refunded");
    for (const b of bots) b.close();
  });

  it("an honest provider that serves the manifest before the margin is judged on its step: Valid", async () => {
    const f = await postCheatingJob(market(), "served-manifest", { strategy: "honest" });
    const { store, local } = await withoutManifest(f);
    const bots = f.auditors.map((a, i) => new ChallengerBot({ clients: a, deployment: f.d, store, board: f.board, dbPath: join(f.dir, `hbot${i}.sqlite`), dispute: f.hooks(a, i) }));
    const disputeId = await buyerChallenges(f, 2);
    for (let i = 0; i < 3; i++) {
      await f.conn.networkHelpers.mine(2);
      for (const b of bots) await b.tick();
    }
    expect((await f.dispute(disputeId)).commits).to.equal(0);
    // the provider serves the manifest (here: it reaches the auditors' store) before the margin
    await f.conn.networkHelpers.time.increase(WINDOW / 4);
    cpSync(join(f.dir, "store"), local, { recursive: true });
    for (let round = 0; round < 6; round++) {
      for (const b of bots) await b.tick();
      await f.conn.networkHelpers.mine(2);
    }
    const d = await f.dispute(disputeId);
    expect(d.outcome).to.equal("PanelValid");
    expect(d.validVotes).to.equal(3);
    expect(await getStakeSlashes(f.admin.public, { stakeVault: f.d.stakeVault, fromBlock: BigInt(f.d.startBlock) })).to.deep.equal([]);
    for (const b of bots) b.close();
  });
});
