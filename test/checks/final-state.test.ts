/**
 * The final state screened through a state opening, on the in-process network: a provider trains examples/tiny.json
 * (3 segments of 4) and commits it; a bonded auditor asks StateOpenings for the job's final state (the last segment's
 * end state, step 12); the provider's watcher answers it; the auditor screens the CID it was answered with
 * (checks/ screenFinalState). An honest final state passes; a provider that poisons Adam's moments in the last
 * segment (state-poison at step 10) answers with its committed final state, which fails the screen and names the last
 * segment for the recompute that finds the step. So the last segment needs no recompute of its own to catch a cheat
 * that persists into the delivered model.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, type Address } from "viem";
import { acceptJob, deployStateOpenings, getOpeningRequests, getSegmentCommits, requestOpening } from "../../verifier/src/chain/index.ts";
import { screenFinalState, type AuditTarget } from "../../verifier/src/checks/index.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, deploymentSalt, parseStrategy, type Strategy } from "../../verifier/src/ml/index.ts";
import { answerOpenings, type OpeningsContext } from "../../verifier/src/provider/openings.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import type { ProviderContext } from "../../verifier/src/provider/records.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { tempDir, tinyManifest } from "../ml/helpers.ts";

describe("checks: the final state screened through a state opening (local chain)", function () {
  this.timeout(240_000);
  let env: DisputeEnv;
  let dir: string;
  let stateOpenings: Address;
  let ctx: ProviderContext & OpeningsContext;

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("final-state");
    ({ stateOpenings } = await deployStateOpenings(env.admin, { jobMarket: env.d.jobMarket, answerWindowSeconds: 600, replaySeconds: 60 }));
    const store = new LocalDirStore(join(dir, "store"));
    ctx = { clients: env.provider, deployment: env.d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state"), stateOpenings };
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Posts, accepts and trains a tiny job with `strategy`; an auditor asks for its final state and the provider answers. */
  async function openFinalState(strategy: Strategy) {
    const manifest = tinyManifest();
    const K = manifest.training.stepsPerSegment;
    const S = manifest.training.steps / K;
    const { jobId } = await postJob(env.buyer, env.d, ctx.store, manifest, policy(S, K), parseEther("2"));
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    await runProviderJob(ctx, jobId, { strategy });
    const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
    expect(commits.length).to.equal(S);
    await requestOpening(env.auditors[0]!, { stateOpenings, jobId, segment: S - 1, step: S * K });
    const answered = await answerOpenings(ctx, { strategy, mode: "recompute" });
    expect(answered.failed).to.deep.equal([]);
    // answered from the end checkpoint the provider kept when it committed the last segment: no replay
    expect(answered.answered.map((a) => [a.step, a.stepsReplayed])).to.deep.equal([[S * K, 0]]);
    const [req] = await getOpeningRequests(env.auditors[0]!.public, { stateOpenings, jobId, fromBlock: 0n });
    expect(req!.answered!.stateHash).to.equal(commits[S - 1]!.stateHashes[K]);
    const run = await createRun(manifest, { jobId, salt: deploymentSalt(env.d, jobId) });
    const target: AuditTarget = { run, store: ctx.store, commitments: commits.map((c) => ({ index: c.segment, traceRoot: c.traceRoot, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes })) };
    return { run, target, cid: req!.answered!.checkpointCid, S };
  }

  let honest: Awaited<ReturnType<typeof openFinalState>> | undefined;
  after(async () => honest?.run.close());

  it("an honest provider's final state, opened on chain, passes the screen", async () => {
    honest = await openFinalState(parseStrategy("honest"));
    const r = await screenFinalState(honest.target, honest.cid);
    expect(r.ok, r.failure?.message).to.equal(true);
    expect(r.state!.step).to.equal(12);
    expect(r.segment).to.equal(honest.S);
  });

  it("a state poisoned in the last segment is caught at the opened final state, and names the last segment", async () => {
    const { run, target, cid, S } = await openFinalState(parseStrategy("state-poison:10"));
    try {
      const r = await screenFinalState(target, cid);
      expect(r.ok).to.equal(false);
      expect(r.failure!.kind).to.equal("moment-bound-exceeded");
      expect(r.details).to.include({ recompute: S - 1, producedBy: S - 1 });
    } finally {
      await run.close();
    }
  });

  it("refuses a job whose segments are not all committed, and an empty CID", async () => {
    const { target, cid } = honest!;
    let err: unknown;
    await screenFinalState({ ...target, commitments: target.commitments!.slice(0, 2) }, cid).catch((e: unknown) => (err = e));
    expect(String(err)).to.match(/2 of the job's 3 segments are committed/);
    err = undefined;
    await screenFinalState(target, "").catch((e: unknown) => (err = e));
    expect(String(err)).to.match(/needs the CID/);
  });
});
