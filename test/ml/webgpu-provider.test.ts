/**
 * `pouw provider run --engine webgpu` (provider/run-job.ts `engine`): the provider trains an on-chain bitwise-v3 job
 * with its matmuls on the WebGPU device (SwiftShader without a GPU) through the one segment loop, commits every
 * segment, and an auditor on the CPU engine (the wasm kernels) recomputes every segment bit for bit. An engine the
 * job's numerics do not allow is refused before anything is committed. The device case skips, saying why, only when
 * Dawn finds no adapter.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther } from "viem";
import { acceptJob, getSegmentCommits } from "../../verifier/src/chain/index.ts";
import { recomputeSegment, type AuditTarget } from "../../verifier/src/checks/index.ts";
import { jobRun } from "../../verifier/src/checks/target.ts";
import { InputError } from "../../verifier/src/errors/index.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { CharTransformer } from "../../verifier/src/ml/models/transformer.ts";
import { useSwiftShaderWhenNoIcd, WebGpuUnavailableError } from "../../verifier/src/ml/webgpu/device.ts";
import { WebGpuMatmulV3 } from "../../verifier/src/ml/webgpu/sync-kernels.ts";
import type { ProviderContext } from "../../verifier/src/provider/records.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { tempDir, tinyManifest, tinyTransformerJson } from "./helpers.ts";

describe("provider run --engine webgpu: a GPU-trained job audits clean on the CPU engine", function () {
  this.timeout(600_000);
  let env: DisputeEnv;
  let dir: string;
  let ctx: ProviderContext;

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("webgpu-provider");
    const store = new LocalDirStore(join(dir, "store"));
    ctx = { clients: env.provider, deployment: env.d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state") };
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const post = async (manifest: ReturnType<typeof parseManifest>) => {
    const K = manifest.training.stepsPerSegment;
    const S = manifest.training.steps / K;
    const { jobId } = await postJob(env.buyer, env.d, ctx.store, manifest, policy(S, K), parseEther("2"));
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    return { jobId, K, S };
  };

  it("refuses --engine webgpu for a job whose numerics it cannot give (bitwise mnist-mlp), committing nothing", async () => {
    const { jobId } = await post(tinyManifest());
    let err: unknown;
    await runProviderJob(ctx, jobId, { strategy: parseStrategy("honest"), engine: "webgpu" }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(InputError);
    expect((err as Error).message).to.match(new RegExp(`job ${jobId}: engine webgpu: manifest numerics "bitwise" runs only on pouw or cpu`));
    expect(await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n })).to.deep.equal([]);
  });

  describe("on the adapter Dawn finds", () => {
    before(async function () {
      useSwiftShaderWhenNoIcd();
      try {
        await (await WebGpuMatmulV3.open()).close();
      } catch (err) {
        if (!(err instanceof WebGpuUnavailableError)) throw err;
        console.log(`      SKIPPED: no WebGPU adapter (${err.message}${err.details ? `: ${err.details}` : ""})`);
        this.skip();
      }
    });

    it("trains and commits every segment on the device; the wasm engine recomputes every segment bit for bit", async () => {
      const manifest = parseManifest({ ...tinyTransformerJson(), numerics: "bitwise-v3", stateDigest: "sha256-v2", training: { batchSize: 2, steps: 4, stepsPerSegment: 2 } });
      const { jobId, S } = await post(manifest);
      const r = await runProviderJob(ctx, jobId, { strategy: parseStrategy("honest"), engine: "webgpu" });
      expect(r.committed).to.deep.equal([...Array(S).keys()]);
      expect(r.engine?.backend).to.equal("webgpu");
      expect(r.engine?.deviceMatmuls, "the job's matmuls ran on the device").to.be.greaterThan(0);
      const commits = await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
      expect(commits).to.have.length(S);
      // the auditor: the job's run on the default engine (pouw: the wasm kernels), from the chain's commitments
      const run = await jobRun(manifest, env.d, jobId, ctx.store);
      try {
        expect(run.backend).to.equal("pouw");
        expect((run.model as CharTransformer).kernels?.name).to.match(/wasm/);
        const target: AuditTarget = { run, store: ctx.store, commitments: commits.map((c) => ({ index: c.segment, traceRoot: c.traceRoot, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes })) };
        for (let i = 0; i < S; i++) {
          const v = await recomputeSegment(target, i);
          expect(v.ok, `segment ${i}: ${v.failure?.message}`).to.equal(true);
        }
      } finally {
        await run.close();
      }
    });
  });
});
