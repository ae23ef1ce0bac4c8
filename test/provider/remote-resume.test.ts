/**
 * A provider resumes a job on a new machine: its old machine committed segment 0 and now only serves its
 * store and board (`pouw serve`'s server); the new machine has an empty store and state directory and
 * reads the old one with a --source. Without the source the resume cannot start; with it, the manifest
 * and segment 0's start checkpoint are fetched (verified, cached), segment 0 is re-run to its committed end
 * state and segments 1..2 are committed.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { maxUint256, parseEther } from "viem";
import { HttpBoard } from "../../verifier/src/board/http.ts";
import { acceptJob, approveToken, deployMarket, devAccount, getSegmentCommits, mintTestToken, providerClients, stakeDeposit } from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { startContentServer } from "../../verifier/src/serve/index.ts";
import { ContentNotFoundError, LocalDirStore } from "../../verifier/src/store/index.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));

describe("provider: resume on another machine from a served store", function () {
  this.timeout(120_000);

  it("re-runs the last committed segment from the old machine's checkpoint and commits the rest", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-remote-resume-"));
    const { provider: eip1193 } = await network.create();
    const mk = (i: number) => providerClients(eip1193, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    const [admin, buyer, provider] = [mk(0), mk(1), mk(2)];
    const d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n, registries: false });
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("10") });
    await mintTestToken(provider, { token: d.token, to: provider.account.address, amount: parseEther("10") });
    await approveToken(provider, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("10") });

    const oldStore = new LocalDirStore(join(dir, "old/store"));
    const oldBoard = new SegmentBoard(join(dir, "old/board"), oldStore);
    const manifest = parseManifest(tiny);
    const { policy, payment } = await jobPolicyFor(manifest, {});
    const { jobId } = await postJob(buyer, d, oldStore, manifest, policy, payment);
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    const honest = parseStrategy("honest");
    const first = await runProviderJob({ clients: provider, deployment: d, store: oldStore, board: oldBoard, stateDir: join(dir, "old/state") }, jobId, { strategy: honest, maxSegments: 1 });
    expect(first.committed).to.deep.equal([0]);

    // a new machine with nothing local cannot even read the manifest
    const bare = new LocalDirStore(join(dir, "bare/store"));
    const noSource = await runProviderJob({ clients: provider, deployment: d, store: bare, board: new SegmentBoard(join(dir, "bare/board"), bare), stateDir: join(dir, "bare/state") }, jobId, { strategy: honest }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(noSource).to.be.instanceOf(ContentNotFoundError);

    const server = await startContentServer({ store: oldStore, port: 0 });
    try {
      const local = new LocalDirStore(join(dir, "new/store"));
      const store = new LayeredStore(local, [new HttpContentStore(server.url)]);
      const board = new SegmentBoard(join(dir, "new/board"), store, [new HttpBoard(server.url)]);
      // the new machine runs 2 threads (state hashes pipelined on a worker): re-running segment 0 must still
      // reach the end state the 1-thread machine committed, and the later segments' hashes are the same bits
      const r = await runProviderJob({ clients: provider, deployment: d, store, board, stateDir: join(dir, "new/state") }, jobId, { strategy: honest, threads: 2 });
      expect(r.resumedFrom).to.equal(1);
      expect(r.committed).to.deep.equal([1, 2]);
      // segment 0's start checkpoint was fetched from the old machine and cached; segment 0 was re-run from it
      const commits = await getSegmentCommits(provider.public, { jobMarket: d.jobMarket, jobId, fromBlock: BigInt(d.startBlock) });
      expect(await local.has(commits.find((c) => c.segment === 0)!.checkpointCid)).to.equal(true);
      expect(r.stepLosses.map((s) => s.step)).to.deep.equal([5, 6, 7, 8, 9, 10, 11, 12]);
      expect(first.flops).to.be.greaterThan(0);
      expect(r.flops).to.equal(3 * first.flops); // 4 re-run + 8 trained steps, 4 steps each segment
      expect(await local.has(commits.find((c) => c.segment === 2)!.checkpointCid)).to.equal(true);
    } finally {
      await server.close();
    }
  });
});
