/**
 * The opening flood on the in-process network: five bonded auditors ask an honest provider for every state of a
 * committed job (examples/tiny.json: 3 segments of K = 4, its 12 pre-states and the final state), each state asked by
 * one and then again by the four others. The second asks are refused (one opening per state serves everyone) and
 * queue nothing; the 13 deadlines are one replaySeconds apart (the provider's queue); and the provider's watcher
 * answers all 13 in one pass, walking each segment once (at most K - 1 steps replayed a segment, not one replay from
 * the segment start per opening). Nothing is withheld once every deadline has passed, so no panel can slash it.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, type Address } from "viem";
import { acceptJob, deployStateOpenings, getOpening, requestOpening } from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { answerOpenings, type OpeningsContext } from "../../verifier/src/provider/openings.ts";
import { runProviderJob, type ProviderContext } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, expectRevert, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { tempDir, tinyManifest } from "../ml/helpers.ts";

const WINDOW = 600;
const REPLAY = 60;
const honest = parseStrategy("honest");

describe("red team: an opening flood from five bonded addresses", function () {
  this.timeout(240_000);
  let env: DisputeEnv;
  let dir: string;
  let stateOpenings: Address;
  let ctx: OpeningsContext & ProviderContext;
  let jobId: bigint;

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("opening-flood");
    ({ stateOpenings } = await deployStateOpenings(env.admin, { jobMarket: env.d.jobMarket, answerWindowSeconds: WINDOW, replaySeconds: REPLAY }));
    const store = new LocalDirStore(join(dir, "store"));
    ctx = { clients: env.provider, deployment: env.d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state"), stateOpenings };
    const manifest = tinyManifest();
    ({ jobId } = await postJob(env.buyer, env.d, store, manifest, policy(3, manifest.training.stepsPerSegment), parseEther("2")));
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    expect((await runProviderJob(ctx, jobId, { strategy: honest })).committed).to.deep.equal([0, 1, 2]);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("every state asked by all five: refused after the first, queued one replay apart, all answered in one walk a segment", async () => {
    const K = 4;
    const states = Array.from({ length: 3 * K + 1 }, (_, t) => t); // 0..11 pre-states, 12 the final model
    expect(env.auditors).to.have.length(5);
    for (const t of states) {
      const segment = Math.min(Math.floor(t / K), 2);
      const first = env.auditors[t % 5]!;
      await requestOpening(first, { stateOpenings, jobId, segment, step: t });
      for (const other of env.auditors.filter((a) => a !== first)) {
        await expectRevert(requestOpening(other, { stateOpenings, jobId, segment, step: t }), "StateOpeningsAlreadyRequested");
      }
    }
    const deadlines: number[] = [];
    for (const t of states) deadlines.push((await getOpening(env.provider.public, { stateOpenings, jobId, step: t })).deadline);
    for (let i = 1; i < deadlines.length; i++) expect(deadlines[i]! - deadlines[i - 1]!, `deadline of state ${i}`).to.be.at.least(REPLAY);

    const r = await answerOpenings(ctx, { strategy: honest, mode: "recompute" });
    expect(r.failed).to.deep.equal([]);
    expect(r.answered.map((a) => a.step).sort((x, y) => x - y)).to.deep.equal(states);
    // one walk a segment: K - 1 steps replayed in each (states 0, 4, 8 are the start checkpoints; 12 is kept at commit)
    const replayed = [0, 1, 2].map((s) => r.answered.filter((a) => a.segment === s).reduce((n, a) => n + a.stepsReplayed, 0));
    expect(replayed).to.deep.equal([K - 1, K - 1, K - 1]);
    // every answer mined before its deadline: past the last one, nothing is withheld
    const now = Number((await env.provider.public.getBlock()).timestamp);
    expect(now <= deadlines[0]!).to.equal(true);
    await env.increaseTime(deadlines.at(-1)! - now + 1);
    await env.mine(1);
    for (const t of states) {
      const o = await getOpening(env.provider.public, { stateOpenings, jobId, step: t });
      expect([t, o.answered, o.withheld]).to.deep.equal([t, true, false]);
    }
  });
});
