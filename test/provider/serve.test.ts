/**
 * The provider's service (provider/serve.ts, `pouw provider serve`) on the in-process network, after `provider run`
 * has committed every segment: it answers a state opening, appeals a unanimous first-round Fault that lying panel
 * members put on an honest step (10 bonded auditors, so round 2 seats 7 fresh members: 3 + 7), which the honest
 * appeal round overturns (PanelValid: the provider's lock is whole and it earns the false challenger's bond), leaves
 * a unanimous Fault on a really faulty step (a planted weight delta) unappealed, and exits once every job is past its
 * challenge window with no open dispute.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, type Address } from "viem";
import {
  acceptJob,
  approveToken,
  challengeStep,
  commitChallenge,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  deployStateOpenings,
  devAccount,
  getDispute,
  getFaultAppeal,
  getLockedStake,
  getOpeningRequests,
  getSegmentCommits,
  getStakeSlashes,
  getTokenAllowance,
  mintTestToken,
  newChallengeSalt,
  postBond,
  providerClients,
  requestOpening,
  resolveDispute,
  type ChainClients,
  type SegmentCommit,
} from "../../verifier/src/chain/index.ts";
import { decideStep, type SegmentCommitment, type StepDecision } from "../../verifier/src/checks/index.ts";
import { BallotStore, servePanel } from "../../verifier/src/dispute/index.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, deploymentSalt, parseStrategy, type Manifest } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { servePass, serveProvider, type ServeContext } from "../../verifier/src/provider/serve.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree, type Bytes32 } from "../../verifier/src/trace/index.ts";
import { disputeEnv, PARAMS, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { tempDir, tinyManifest } from "../ml/helpers.ts";

const honest = parseStrategy("honest");
/** The disputed step: not the first of its segment (K = 4), so only the panel decides it. */
const STEP = 6;

describe("provider serve: openings answered, a captured Fault appealed, a real Fault not appealed", function () {
  this.timeout(600_000);
  let env: DisputeEnv;
  let dir: string;
  let store: LocalDirStore;
  let auditors: ChainClients[];
  let ctx: ServeContext;
  let manifest: Manifest;
  let stateOpenings: Address;
  let honestJob: bigint;
  let cheatJob: bigint;

  const pass = () => servePass(ctx, { strategy: honest, openings: "recompute" });

  async function trainJob(strategy: string): Promise<bigint> {
    const { jobId } = await postJob(env.buyer, env.d, store, manifest, policy(3, manifest.training.stepsPerSegment), parseEther("2"));
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    const board = new SegmentBoard(join(dir, "board"), store);
    const r = await runProviderJob({ clients: env.provider, deployment: env.d, store, board, stateDir: join(dir, "state") }, jobId, { strategy: parseStrategy(strategy) });
    expect(r.committed).to.deep.equal([0, 1, 2]);
    return jobId;
  }

  /** The challenger disputes step STEP of `jobId` with the provider's own committed leaves. */
  async function challenge(jobId: bigint): Promise<bigint> {
    const commits: SegmentCommit[] = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
    const K = manifest.training.stepsPerSegment;
    const c = commits.find((x) => x.segment === Math.floor(STEP / K))!;
    const tree = new SegmentTree(c.segment * K, c.stateHashes);
    const leaf = (s: number) => c.stateHashes[s - c.segment * K]!;
    const salt = newChallengeSalt();
    await commitChallenge(env.challenger, { disputeGame: env.d.disputeGame, jobId, segment: c.segment, step: STEP, salt });
    const { disputeId } = await challengeStep(env.challenger, {
      disputeGame: env.d.disputeGame,
      jobId,
      segment: c.segment,
      step: STEP,
      traceRoot: c.traceRoot,
      endStateHash: c.endStateHash,
      hPrev: leaf(STEP - 1),
      proofPrev: tree.proof(STEP - 1),
      hStep: leaf(STEP),
      proofStep: tree.proof(STEP),
      salt,
    });
    return disputeId;
  }

  /** An honest member's decision: the members' rule (checks decideStep) over the on-chain commitments. */
  async function truth(disputeId: bigint): Promise<StepDecision> {
    const d = await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    const commitments: SegmentCommitment[] = (await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId: d.jobId, fromBlock: 0n })).map((c) => ({
      index: c.segment,
      traceRoot: c.traceRoot as Bytes32,
      checkpointCid: c.checkpointCid,
      stateHashes: c.stateHashes as Bytes32[],
    }));
    const run = await createRun(manifest, { jobId: d.jobId, salt: deploymentSalt(env.d, d.jobId), store });
    try {
      return await decideStep({ target: { run, store, commitments }, segment: Number(d.segment), step: Number(d.step), hPrev: d.hPrev, hStep: d.hStep });
    } finally {
      await run.close();
    }
  }

  /** Plays the dispute's current round: every drawn member votes `vote(round)`, then it is resolved. */
  async function playRound(disputeId: bigint, vote: (round: number) => Promise<StepDecision>): Promise<void> {
    await env.mine(PARAMS.seedDelayBlocks + 1);
    const ballots = new BallotStore(join(dir, "ballots"));
    for (let sweep = 0; sweep < 2; ++sweep) {
      for (const a of auditors) {
        await servePanel(a, {
          disputeGame: env.d.disputeGame,
          disputeId,
          ballots,
          decide: async () => vote(Number((await getDispute(a.public, { disputeGame: env.d.disputeGame, disputeId })).round)),
        });
      }
    }
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
  }

  const locked = (jobId: bigint) => getLockedStake(env.provider.public, { stakeVault: env.d.stakeVault, provider: env.provider.account.address, jobId });
  const rowOf = async (jobId: bigint, disputeId: bigint) => (await pass()).jobs.find((j) => j.jobId === jobId)!.disputes.find((r) => r.disputeId === disputeId)!;

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("provider-serve");
    store = new LocalDirStore(join(dir, "store"));
    manifest = tinyManifest();
    // five more bonded auditors (ten in all): round 2 seats 7 members other than round 1's 3
    const more = [9, 10, 11, 12, 13].map((i) => providerClients(env.provider1193, 31337, { account: devAccount(i), pollingIntervalMs: 20 }));
    for (const a of more) {
      await mintTestToken(a, { token: env.d.token, to: a.account.address, amount: parseEther("100") });
      await approveToken(a, { token: env.d.token, spender: env.d.auditorRegistry, amount: parseEther("100") });
      await postBond(a, { auditorRegistry: env.d.auditorRegistry, amount: parseEther("20") });
    }
    await env.increaseTime(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
    auditors = [...env.auditors, ...more];
    ({ stateOpenings } = await deployStateOpenings(env.admin, { jobMarket: env.d.jobMarket, answerWindowSeconds: 600, replaySeconds: 60 }));
    ctx = { clients: env.provider, deployment: { ...env.d, stateOpenings }, store, stateDir: join(dir, "state") };
    honestJob = await trainJob("honest");
    cheatJob = await trainJob(`plant:${STEP}`);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("answers a state opening of a committed job", async () => {
    await requestOpening(auditors[0]!, { stateOpenings, jobId: honestJob, segment: 1, step: 5 });
    const p = await pass();
    const job = p.jobs.find((j) => j.jobId === honestJob)!;
    expect(job.openings.failed).to.deep.equal([]);
    expect(job.openings.answered.map((a) => [a.step, a.mode, a.stepsReplayed])).to.deep.equal([[5, "recompute", 1]]);
    expect(job.remaining).to.match(/^disputable until /);
    const [req] = await getOpeningRequests(env.provider.public, { stateOpenings, jobId: honestJob, fromBlock: 0n });
    const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId: honestJob, fromBlock: 0n });
    expect(req!.answered?.stateHash).to.equal(commits[1]!.stateHashes[1]);
  });

  it("appeals a unanimous first-round Fault on an honest step, and the appeal round leaves the lock whole", async () => {
    const lockBefore = await locked(honestJob);
    const disputeId = await challenge(honestJob);
    // round 1: every member lies
    await playRound(disputeId, async () => ({ vote: "Fault", reason: "captured seat" }));
    const { deadline } = await getFaultAppeal(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(deadline, "a unanimous first-round Fault opens the provider's appeal window").to.not.equal(undefined);
    // the provider's allowance is spent elsewhere: the service approves the bond itself
    await approveToken(env.provider, { token: env.d.token, spender: env.d.disputeGame, amount: 0n });
    const bond = (await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId })).bond;

    const row = await rowOf(honestJob, disputeId);
    expect([row.action, row.open, row.bond], row.reason).to.deep.equal(["appealed", true, bond]);
    expect((await getFaultAppeal(env.provider.public, { disputeGame: env.d.disputeGame, disputeId })).providerBond).to.equal(bond);
    expect(await getTokenAllowance(env.provider.public, { token: env.d.token, owner: env.provider.account.address, spender: env.d.disputeGame })).to.equal(0n);
    const d2 = await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(Number(d2.round)).to.equal(2);

    // round 2: 7 fresh seats, every member decides by the members' rule
    await playRound(disputeId, () => truth(disputeId));
    const settled = await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(settled.panel.length).to.equal(7);
    expect(settled.outcome).to.equal("PanelValid");
    expect(await locked(honestJob)).to.equal(lockBefore);
    expect(await getStakeSlashes(env.provider.public, { stakeVault: env.d.stakeVault, jobId: honestJob, fromBlock: 0n })).to.deep.equal([]);
    const after = await rowOf(honestJob, disputeId);
    expect([after.action, after.open]).to.deep.equal(["resolved", false]);
  });

  it("does not appeal a unanimous Fault on a really faulty step, and says so", async () => {
    const disputeId = await challenge(cheatJob);
    expect((await truth(disputeId)).vote).to.equal("Fault");
    await playRound(disputeId, () => truth(disputeId));
    const { deadline } = await getFaultAppeal(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(deadline).to.not.equal(undefined);
    const row = await rowOf(cheatJob, disputeId);
    expect(row.action, row.reason).to.equal("not-appealed");
    expect(row.reason).to.match(/faulty by the members' rule/);
    const appeal = await getFaultAppeal(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect([appeal.deadline, appeal.providerBond]).to.deep.equal([deadline, 0n]);
    // unappealed, the Fault settles after the window
    await env.increaseTime(PARAMS.commitWindowSeconds + 1);
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    expect((await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId })).outcome).to.equal("PanelFault");
  });

  it("keeps serving until the challenge windows end, then exits with nothing remaining", async () => {
    const before = await pass();
    expect(before.remaining).to.be.greaterThan(0);
    await env.increaseTime(policy(3, 4).challengeWindow + 1);
    await env.mine(1);
    let passes = 0;
    // the signal only bounds a broken service (one that never finds nothing remaining); a sound one returns at once
    const last = await serveProvider(ctx, { strategy: honest, openings: "recompute", pollMs: 10, signal: AbortSignal.timeout(30_000), onPass: () => ++passes });
    expect([last.remaining, passes]).to.deep.equal([0, 1]);
  });
});
