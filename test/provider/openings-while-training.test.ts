/**
 * `pouw provider run` answers the state openings of its job's committed segments while it trains (before training
 * resumes and after every commit), so an opening asked of an Active job is not withheld while the provider is still
 * training and `provider serve` has not started (an unanswered opening is a withholding Fault).
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, type Address } from "viem";
import { acceptJob, deployStateOpenings, getJob, getOpening, requestOpening } from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import type { ProviderContext } from "../../verifier/src/provider/records.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { tempDir, tinyManifest } from "../ml/helpers.ts";

const honest = parseStrategy("honest");

describe("provider run answers state openings while it trains", function () {
  this.timeout(300_000);
  let env: DisputeEnv;
  let dir: string;
  let stateOpenings: Address;

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("openings-while-training");
    ({ stateOpenings } = await deployStateOpenings(env.admin, { jobMarket: env.d.jobMarket, answerWindowSeconds: 600, replaySeconds: 60 }));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("an opening of segment 0 asked after its commit is answered by the run that trains segments 1 and 2", async () => {
    const d = { ...env.d, stateOpenings };
    const store = new LocalDirStore(join(dir, "store"));
    const ctx: ProviderContext = { clients: env.provider, deployment: d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state") };
    const manifest = tinyManifest();
    const { jobId } = await postJob(env.buyer, d, store, manifest, policy(3, manifest.training.stepsPerSegment), parseEther("2"));
    await acceptJob(env.provider, { jobMarket: d.jobMarket, jobId });
    expect((await runProviderJob(ctx, jobId, { strategy: honest, maxSegments: 1 })).committed).to.deep.equal([0]);
    const requester = env.auditors[0]!;
    await requestOpening(requester, { stateOpenings, jobId, segment: 0, step: 2 });
    const rest = await runProviderJob(ctx, jobId, { strategy: honest });
    expect(rest.committed).to.deep.equal([1, 2]);
    expect((await getJob(env.provider.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Committed");
    const o = await getOpening(env.provider.public, { stateOpenings, jobId, step: 2 });
    expect([o.requested, o.answered, o.withheld]).to.deep.equal([true, true, false]);
  });
});
