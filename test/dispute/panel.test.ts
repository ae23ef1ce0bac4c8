/**
 * End to end on the in-process network: a provider trains examples/tiny.json with a cheat strategy through the
 * engine, commits its segments on chain, an auditor recomputes and finds the first bad step, a challenger opens a
 * dispute from that audit result, and the panel (servePanel: recompute the one step, commit, reveal) decides it in
 * one round of challenge plus one of votes: the provider loses its stake. Also: a challenger who disputes an honest
 * step loses its bond, a member who never reveals forfeits, and reverts decode by error name.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { maxUint256, parseEther, parseEventLogs, type Hex } from "viem";
import { commitChallenge, newChallengeSalt } from "../../verifier/src/chain/commitChallenge.ts";
import { segmentStateHashes } from "../../verifier/src/ml/trace-file.ts";
import {
  acceptJob,
  approveToken,
  getFaultAppeal,
  challengeStep,
  disputeGameAbi,
  commitSegment,
  createJob,
  getDispute,
  getSegmentCommits,
  resolveDispute,
  stakeVaultAbi,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { auditRun, challengeProof, openTraceDir, segmentLeaves, type AuditContext } from "../../verifier/src/checks/index.ts";
import {
  BallotStore,
  claimCredits,
  creditsOf,
  decideStep,
  disputeStatus,
  formatDisputeStatus,
  openChallenge,
  servePanel,
  DisputeInputError,
} from "../../verifier/src/dispute/index.ts";
import { createRun, deploymentSalt, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { pouw, tempDir, tinyManifest } from "../ml/helpers.ts";
import { disputeEnv, expectRevert, PARAMS, policy, type DisputeEnv } from "./helpers.ts";

const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";

describe("dispute: panel path end to end", function () {
  let env: DisputeEnv;
  let dir: string;

  /** A job of tiny.json trained with `strategy` and committed on chain; returns its audit context. */
  async function committedJob(strategy: string): Promise<{ jobId: bigint; ctx: AuditContext }> {
    const manifest = tinyManifest();
    const probe = await createRun(manifest, { jobId: 1n, salt: deploymentSalt(env.d, 1n) });
    const { jobId } = await createJob(env.buyer, {
      jobMarket: env.d.jobMarket,
      manifestHash: probe.manifestHash,
      manifestUri: `cid:${CID}`,
      token: env.d.token,
      payment: parseEther("2"),
      policy: policy(3, manifest.training.stepsPerSegment),
    });
    const run = await createRun(manifest, { jobId, salt: deploymentSalt(env.d, jobId) });
    const out = join(dir, `${strategy.replace(/[:/]/g, "-")}-${jobId}`);
    const { trace } = await train(run, { outDir: out, strategy: parseStrategy(strategy), evaluate: false });
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    for (const s of trace.segments) {
      await commitSegment(env.provider, { jobMarket: env.d.jobMarket, jobId, segment: s.index, stateHashes: segmentStateHashes(trace, s.index), lossE6: BigInt(s.lossE6), checkpointCid: s.checkpointCid });
    }
    const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
    const ctx = await openTraceDir(run, out, commits.map((c) => ({ index: c.segment, traceRoot: c.traceRoot, checkpointCid: c.checkpointCid })));
    return { jobId, ctx };
  }

  /** Every auditor runs one servePanel pass; returns the actions. */
  async function panelPass(ctx: AuditContext, disputeId: bigint, ballots: BallotStore, skip: ChainClients[] = []): Promise<string[]> {
    const actions: string[] = [];
    for (const a of env.auditors) {
      if (skip.includes(a)) continue;
      const r = await servePanel(a, {
        disputeGame: env.d.disputeGame,
        disputeId,
        ballots,
        decide: async () => {
          const d = await getDispute(a.public, { disputeGame: env.d.disputeGame, disputeId });
          return decideStep({ target: ctx, segment: d.segment, step: Number(d.step), hPrev: d.hPrev, hStep: d.hStep, stepStates: ctx.stepStates });
        },
      });
      actions.push(r.action);
    }
    return actions;
  }

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("dispute-panel");
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a cheating provider caught by a recompute audit loses its stake by panel decision", async () => {
    const { jobId, ctx } = await committedJob("plant:5");
    const report = await auditRun(ctx, { checks: ["recompute"] });
    const bad = report.segments.find((s) => !s.ok);
    expect(bad, "the audit catches the cheat").to.not.equal(undefined);
    const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });

    // round 1: the challenge
    const { disputeId, bond, fees } = await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit: bad!, endStateHash: commits[bad!.segment]!.endStateHash });
    expect(fees).to.equal(parseEther("0.15")); // 3 members * 0.05
    expect(bond).to.equal(parseEther("1") + (parseEther("10") * 5000n * 300n + 10_000n * 9_700n - 1n) / (10_000n * 9_700n));
    await expectRevert(openChallenge(env.buyer, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit: bad!, endStateHash: commits[bad!.segment]!.endStateHash }), "DisputeGameDisputeOpen");

    // round 2: the votes (each member recomputes the one step, commits with a persisted salt, then reveals)
    await env.mine(PARAMS_SEED_BLOCKS + 1);
    const ballots = new BallotStore(join(dir, "ballots"));
    const commitsDone = await panelPass(ctx, disputeId, ballots);
    expect(commitsDone.filter((a) => a === "committed")).to.have.length(3);
    expect(commitsDone.filter((a) => a === "not-member")).to.have.length(2);
    const reveals = await panelPass(ctx, disputeId, ballots);
    expect(reveals.filter((a) => a === "revealed")).to.have.length(3);

    // a unanimous first-round Fault first waits one commit window for the provider's appeal; unappealed, it settles
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    const { deadline } = await getFaultAppeal(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(deadline, "the provider's appeal window").to.not.equal(undefined);
    await env.increaseTime(PARAMS.commitWindowSeconds + 1);
    const resolved = await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    const d = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(d.outcome).to.equal("PanelFault");
    // every member revealed Fault: each earned its fee, paid out of the fault's reward, so the challenger's deposit of
    // fees comes back whole
    const paid = parseEventLogs({ abi: disputeGameAbi, logs: resolved.receipt.logs, eventName: "PanelFeePaid" });
    expect(paid.map((l) => l.args.member).sort()).to.deep.equal([...d.panel].sort());
    expect(paid.every((l) => l.args.amount === parseEther("0.05"))).to.equal(true);
    const refunded = parseEventLogs({ abi: disputeGameAbi, logs: resolved.receipt.logs, eventName: "PanelFeesRefunded" });
    expect(refunded.map((l) => [l.args.challenger, l.args.amount])).to.deep.equal([[env.challenger.account.address, parseEther("0.15")]]);
    const pooled = parseEventLogs({ abi: disputeGameAbi, logs: resolved.receipt.logs, eventName: "RewardPooled" });
    expect(pooled.map((l) => [l.args.reward, l.args.toPanel, l.args.shares])).to.deep.equal([[parseEther("5"), parseEther("0.15"), 1n]]);
    for (const a of env.auditors.filter((x) => d.panel.includes(x.account.address))) {
      expect((await creditsOf(a, { deployment: env.d })).disputeGame).to.equal(parseEther("0.05"));
    }
    expect(d.faultVotes).to.equal(3);
    const locked = await env.provider.public.readContract({ address: env.d.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [env.provider.account.address, jobId] });
    expect(locked).to.equal(0n);

    const credits = await creditsOf(env.challenger, { deployment: env.d });
    // bond + fees back, and the challenger share (5) less the panel's fees (0.15), all in the game
    expect(credits.disputeGame).to.equal(bond + parseEther("0.15") + parseEther("4.85"));
    expect(credits.stakeVault).to.equal(0n);
    const claimed = await claimCredits(env.challenger, { deployment: env.d });
    expect(claimed.disputeGame).to.equal(bond + parseEther("5"));
    expect((await creditsOf(env.challenger, { deployment: env.d })).disputeGame).to.equal(0n);

    const rows = await disputeStatus(env.challenger.public, { disputeGame: env.d.disputeGame, jobId, fromBlock: 0n });
    expect(rows).to.have.length(1);
    expect(formatDisputeStatus(jobId, rows)).to.match(/resolved\s+PanelFault/);
    await expectRevert(resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId }), "DisputeGameAlreadyResolved");
  });

  it("a challenger who disputes an honest step loses its bond to the provider; a silent member forfeits", async () => {
    const { jobId, ctx } = await committedJob("honest");
    const leaves = segmentLeaves(ctx, 0);
    if (!leaves.ok) throw new Error(leaves.failure.message);
    const proof = challengeProof(leaves.value, 2);
    const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
    // a challenger that approved only the bond is refused by name: challenge pulls the bond and the panel's fees
    const bondOnly = await env.buyer.public.readContract({ address: env.d.disputeGame, abi: disputeGameAbi, functionName: "requiredBond", args: [jobId] });
    await approveToken(env.buyer, { token: env.d.token, spender: env.d.disputeGame, amount: bondOnly });
    const salt = newChallengeSalt();
    const step = { disputeGame: env.d.disputeGame, jobId, segment: proof.segment, step: proof.step, traceRoot: proof.traceRoot, endStateHash: commits[0]!.endStateHash, hPrev: proof.prevStateHash, proofPrev: proof.prevProof, hStep: proof.stateHash, proofStep: proof.proof, salt };
    // no commitment first: the challenge reveals nothing it committed to (a copy from the mempool looks like this)
    await expectRevert(challengeStep(env.buyer, step), "DisputeGameChallengeNotCommitted");
    await commitChallenge(env.buyer, { disputeGame: env.d.disputeGame, jobId, segment: proof.segment, step: proof.step, salt });
    await expectRevert(challengeStep(env.buyer, step), "DisputeGameDepositNotApproved");
    await approveToken(env.buyer, { token: env.d.token, spender: env.d.disputeGame, amount: maxUint256 });

    const challengerBefore = await creditsOf(env.challenger, { deployment: env.d });
    const { disputeId, bond } = await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit: proof, endStateHash: commits[0]!.endStateHash });
    const before = await creditsOf(env.provider, { deployment: env.d });
    await env.mine(PARAMS_SEED_BLOCKS + 1);
    const ballots = new BallotStore(join(dir, "ballots-honest"));
    await panelPass(ctx, disputeId, ballots);
    const d = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    const silent = env.auditors.find((a) => a.account.address === d.panel[2])!;
    await env.increaseTime(3601); // commit window over: reveals open
    const reveals = await panelPass(ctx, disputeId, ballots, [silent]);
    expect(reveals.filter((a) => a === "revealed")).to.have.length(2);
    await expectRevert(resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId }), "DisputeGameVotingOpen");
    await env.increaseTime(3601);
    const feesBefore = new Map<string, bigint>();
    for (const a of env.auditors) feesBefore.set(a.account.address, (await creditsOf(a, { deployment: env.d })).disputeGame);
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    const after = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(after.outcome).to.equal("PanelValid");
    expect(after.validVotes).to.equal(2);
    expect((await creditsOf(env.provider, { deployment: env.d })).disputeGame - before.disputeGame).to.equal(bond);
    // the silent member's forfeit (2 tokens) went to the two majority members
    const majority = env.auditors.filter((a) => d.panel.includes(a.account.address) && a !== silent);
    const got = await Promise.all(majority.map((a) => creditsOf(a, { deployment: env.d })));
    expect(got.reduce((s, c) => s + c.auditorRegistry, 0n)).to.equal(parseEther("2"));
    // the two Valid revealers earned their fees; the silent member's fee went back to the challenger
    for (const [i, c] of got.entries()) expect(c.disputeGame - feesBefore.get(majority[i]!.account.address)!).to.equal(parseEther("0.05"));
    expect((await creditsOf(silent, { deployment: env.d })).disputeGame).to.equal(feesBefore.get(silent.account.address));
    expect((await creditsOf(env.challenger, { deployment: env.d })).disputeGame - challengerBefore.disputeGame).to.equal(parseEther("0.05"));
  });

  it("a split Fault is appealed: every member of the larger round-2 panel decides anew, commits a fresh ballot and reveals, and round 2's majority slashes", async () => {
    const { jobId, ctx } = await committedJob("plant:5");
    const report = await auditRun(ctx, { checks: ["recompute"] });
    const bad = report.segments.find((s) => !s.ok)!;
    const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
    const { disputeId } = await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit: bad, endStateHash: commits[bad.segment]!.endStateHash });
    await env.mine(PARAMS_SEED_BLOCKS + 1);
    const ballots = new BallotStore(join(dir, "ballots-appeal"));
    await panelPass(ctx, disputeId, ballots);
    const r1 = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    // round 1: two Fault votes and one silent seat, a split Fault: resolving it opens round 2 instead of slashing
    const silent = env.auditors.find((a) => a.account.address === r1.panel[2])!;
    await env.increaseTime(3601);
    expect((await panelPass(ctx, disputeId, ballots, [silent])).filter((a) => a === "revealed")).to.have.length(2);
    await env.increaseTime(3601);
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    const appealed = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(appealed.phase).to.not.equal("resolved");
    expect(Number(appealed.round)).to.equal(2);
    expect(await env.provider.public.readContract({ address: env.d.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [env.provider.account.address, jobId] }) > 0n).to.equal(true);

    // round 2: a larger panel from the same pool (here every auditor, round-1 members included); each member serves it
    await env.mine(PARAMS_SEED_BLOCKS + 1);
    const commits2 = await panelPass(ctx, disputeId, ballots);
    const r2 = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(r2.panel.length).to.be.greaterThan(r1.panel.length);
    expect(commits2.filter((a) => a === "committed")).to.have.length(r2.panel.length);
    // a member of both rounds committed a fresh ballot in round 2 (its round-1 salt is public once revealed)
    const both = env.auditors.find((a) => r1.panel.includes(a.account.address) && a !== silent && r2.panel.includes(a.account.address))!;
    const b1 = await ballots.load(env.d.disputeGame, disputeId, both.account.address, 1);
    const b2 = await ballots.load(env.d.disputeGame, disputeId, both.account.address, 2);
    expect(b2, "round-2 ballot persisted").to.not.equal(undefined);
    expect(b2!.salt).to.not.equal(b1!.salt);
    expect(b2!.round).to.equal(2);
    expect((await panelPass(ctx, disputeId, ballots)).filter((a) => a === "revealed")).to.have.length(r2.panel.length);
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    const done = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(done.outcome).to.equal("PanelFault");
    expect(done.faultVotes).to.equal(r2.panel.length);
    expect(await env.provider.public.readContract({ address: env.d.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [env.provider.account.address, jobId] })).to.equal(0n);
  });

  it("openChallenge refuses an audit that passed, and pouw dispute status rejects a bad dispute id", async () => {
    try {
      await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId: 1n, audit: { ok: true, proof: null }, endStateHash: `0x${"00".repeat(32)}` as Hex });
      expect.fail("expected DisputeInputError");
    } catch (err) {
      expect(err).to.be.instanceOf(DisputeInputError);
    }
    const r = pouw(["dispute", "status", "abc"]);
    expect(r.status).to.equal(2);
    expect(r.stderr).to.match(/DISPUTE must be a dispute id/);
  });
});

const PARAMS_SEED_BLOCKS = 2;
