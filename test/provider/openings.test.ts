/**
 * State openings on the in-process network, end to end: a provider trains examples/tiny.json honestly and commits it;
 * bonded auditors ask for states inside committed segments (StateOpenings.requestOpening). The provider's watcher
 * answers one by replaying from the segment's start checkpoint and one from the per-state checkpoints it kept while
 * training; each answer's CID holds exactly the committed state. An opening the provider leaves unanswered becomes a
 * withheld state once its deadline passes: a late answer reverts, a challenger disputes the step after it with the
 * committed leaves, and the panel votes Fault on the withheld state (docs/disputes.md, "Data availability"): the
 * provider's lock is slashed.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, type Address } from "viem";
import {
  acceptJob,
  answerOpening,
  challengeStep,
  commitChallenge,
  deployStateOpenings,
  getDispute,
  getJob,
  getLockedStake,
  getOpening,
  getOpeningRequests,
  getSegmentCommits,
  getStakeSlashes,
  newChallengeSalt,
  requestOpening,
  resolveDispute,
  type SegmentCommit,
} from "../../verifier/src/chain/index.ts";
import { BallotStore, servePanel } from "../../verifier/src/dispute/index.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, deploymentSalt, parseStrategy } from "../../verifier/src/ml/index.ts";
import { answerOpenings, readStateCids, type OpeningsContext } from "../../verifier/src/provider/openings.ts";
import { runProviderJob, type ProviderContext } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import { disputeEnv, expectRevert, PARAMS, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { tempDir, tinyManifest } from "../ml/helpers.ts";

const ANSWER_WINDOW = 600;
const honest = parseStrategy("honest");

describe("provider: state openings answered and withheld", function () {
  this.timeout(180_000);
  let env: DisputeEnv;
  let dir: string;
  let stateOpenings: Address;
  let ctx: OpeningsContext & ProviderContext;
  let jobId: bigint;
  let commits: SegmentCommit[];

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("provider-openings");
    ({ stateOpenings } = await deployStateOpenings(env.admin, { jobMarket: env.d.jobMarket, answerWindowSeconds: ANSWER_WINDOW, replaySeconds: 60 }));
    const store = new LocalDirStore(join(dir, "store"));
    ctx = { clients: env.provider, deployment: env.d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state"), stateOpenings };
    const manifest = tinyManifest();
    ({ jobId } = await postJob(env.buyer, env.d, store, manifest, policy(3, manifest.training.stepsPerSegment), parseEther("2")));
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    const r = await runProviderJob(ctx, jobId, { strategy: honest, keepStepStates: true });
    expect(r.committed).to.deep.equal([0, 1, 2]);
    commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The committed h(step), from the segment's calldata leaves (K = 4). */
  const leafOf = (step: number): `0x${string}` => commits[Math.floor(step / 4)]!.stateHashes[step % 4]!;

  it("answers an opening by replaying from the segment start, and one from kept per-state checkpoints", async () => {
    await requestOpening(env.auditors[0]!, { stateOpenings, jobId, segment: 1, step: 6 });
    const replayed = await answerOpenings(ctx, { strategy: honest, mode: "recompute" });
    expect(replayed.failed).to.deep.equal([]);
    expect(replayed.answered.map((a) => [a.step, a.mode, a.stepsReplayed])).to.deep.equal([[6, "recompute", 2]]);

    await requestOpening(env.auditors[1]!, { stateOpenings, jobId, segment: 2, step: 9 });
    const kept = await answerOpenings(ctx, { strategy: honest, mode: "kept" });
    expect(kept.answered.map((a) => [a.step, a.mode, a.stepsReplayed])).to.deep.equal([[9, "kept", 0]]);
    expect(kept.answered[0]!.checkpointCid).to.equal((await readStateCids(ctx, jobId, 2))![1]);

    // each answer is on chain, and its CID holds the committed state (checked with a fresh run, as an auditor would)
    const run = await createRun(tinyManifest(), { jobId, salt: deploymentSalt(env.d, jobId) });
    try {
      for (const step of [6, 9]) {
        expect((await getOpening(env.auditors[0]!.public, { stateOpenings, jobId, step })).answered).to.equal(true);
        const [req] = (await getOpeningRequests(env.auditors[0]!.public, { stateOpenings, jobId, fromBlock: 0n })).filter((r) => r.step === step);
        expect(req!.answered!.stateHash).to.equal(leafOf(step));
        const state = run.loadCheckpoint(await ctx.store.get(req!.answered!.checkpointCid), { step });
        expect(run.stateHashOf(state)).to.equal(leafOf(step));
      }
    } finally {
      await run.close();
    }
    // a second pass has nothing to do
    expect((await answerOpenings(ctx, { strategy: honest, mode: "recompute" })).answered).to.deep.equal([]);
  });

  it("an unanswered opening is withheld after its deadline, and the panel slashes the provider on the next step", async () => {
    const step = 2;
    await requestOpening(env.auditors[2]!, { stateOpenings, jobId, segment: 0, step });
    // its deadline is the provider's queue's: one window from now, or one replay after the openings asked before it
    const { deadline } = await getOpening(env.challenger.public, { stateOpenings, jobId, step });
    const now = Number((await env.provider.public.getBlock()).timestamp);
    expect(deadline - now >= ANSWER_WINDOW).to.equal(true);
    await env.increaseTime(deadline - now + 1);
    await env.mine(1);
    const o = await getOpening(env.challenger.public, { stateOpenings, jobId, step });
    expect([o.requested, o.answered, o.withheld]).to.deep.equal([true, false, true]);
    // too late to answer now: the watcher reports it, and a direct answer reverts
    const late = await answerOpenings(ctx, { strategy: honest, mode: "recompute" });
    expect(late.failed.map((f) => f.step)).to.deep.equal([step]);
    const c = commits[0]!;
    const tree = new SegmentTree(0, c.stateHashes);
    await expectRevert(
      answerOpening(env.provider, { stateOpenings, jobId, step, checkpointCid: "bafylate", traceRoot: c.traceRoot, endStateHash: c.endStateHash, stateHash: leafOf(step), proof: tree.proof(step) }),
      "StateOpeningsAnswerLate",
    );

    // the challenge: step 3, whose pre-state is the withheld state 2, with the provider's own committed leaves
    const salt = newChallengeSalt();
    await commitChallenge(env.challenger, { disputeGame: env.d.disputeGame, jobId, segment: 0, step: step + 1, salt });
    const { disputeId } = await challengeStep(env.challenger, {
      disputeGame: env.d.disputeGame,
      jobId,
      segment: 0,
      step: step + 1,
      traceRoot: c.traceRoot,
      endStateHash: c.endStateHash,
      hPrev: leafOf(step),
      proofPrev: tree.proof(step),
      hStep: leafOf(step + 1),
      proofStep: tree.proof(step + 1),
      salt,
    });
    const lockedBefore = await getLockedStake(env.provider.public, { stakeVault: env.d.stakeVault, provider: env.provider.account.address, jobId });
    expect(lockedBefore > 0n).to.equal(true);

    // the panel's rule for a withheld pre-state: Fault (as for a withheld start checkpoint)
    await env.mine(3);
    const ballots = new BallotStore(join(dir, "ballots"));
    const pass = async () => {
      for (const a of env.auditors) {
        await servePanel(a, {
          disputeGame: env.d.disputeGame,
          disputeId,
          ballots,
          decide: async () => {
            const d = await getDispute(a.public, { disputeGame: env.d.disputeGame, disputeId });
            const pre = await getOpening(a.public, { stateOpenings, jobId: d.jobId, step: Number(d.step) - 1 });
            return pre.withheld ? { vote: "Fault", reason: `state ${Number(d.step) - 1} withheld (opening unanswered)` } : { vote: "Valid", reason: "pre-state available" };
          },
        });
      }
    };
    await pass(); // commit
    await pass(); // reveal
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    // a unanimous first-round Fault waits one commit window for the provider's appeal; unappealed, it settles
    await env.increaseTime(PARAMS.commitWindowSeconds + 1);
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    const d = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(d.outcome).to.equal("PanelFault");
    expect(await getLockedStake(env.provider.public, { stakeVault: env.d.stakeVault, provider: env.provider.account.address, jobId })).to.equal(0n);
    const slashes = await getStakeSlashes(env.provider.public, { stakeVault: env.d.stakeVault, jobId, fromBlock: 0n });
    expect(slashes.reduce((s, x) => s + x.amount, 0n)).to.equal(lockedBefore);
    expect((await getJob(env.provider.public, { jobMarket: env.d.jobMarket, jobId })).status).to.not.equal("Finalized");
  });
});
