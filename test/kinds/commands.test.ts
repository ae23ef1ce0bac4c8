/**
 * Evaluate jobs through the market commands' code on the in-process network: `pouw buyer create --manifest` of an
 * evaluate manifest (kinds/market.ts createKindJob: the policy is one example a step), `pouw provider accept` (its
 * kind check before any stake) and `pouw provider run` (provider/run-job.ts dispatches by the manifest's kind). The
 * committed leaves pass the full audit and end in the aggregate of the harness's own per-example results; a kind job
 * the commands cannot run is refused with one clear error before any transaction.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther } from "viem";
import { getJob, getJobCount, getSegmentCommits, jobMarketAbi } from "../../verifier/src/chain/index.ts";
import { parseEvaluateManifest } from "../../verifier/src/evaluate/index.ts";
import { auditKindSegment, evaluateJob, exampleStateHash, KIND_CODES, statesOf, subjectOf } from "../../verifier/src/kinds/index.ts";
import { createKindJob, kindManifestOf, kindPolicy } from "../../verifier/src/kinds/market.ts";
import { decideKindDispute, KindJobs } from "../../verifier/src/kinds/bot.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { acceptProviderJob } from "../../verifier/src/market/provider-jobs.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, type DisputeEnv } from "../dispute/helpers.ts";
import { ROOT, tempDir } from "../ml/helpers.ts";

const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);

describe("kinds: evaluate jobs through buyer create, provider accept and provider run", function () {
  this.timeout(600_000);
  let env: DisputeEnv;
  let dir: string;
  let store: LocalDirStore;
  const raw = JSON.parse(readFileSync(join(ROOT, "examples/evaluate-tiny.json"), "utf8"));
  const manifest = parseEvaluateManifest(raw);

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("kinds-commands");
    store = new LocalDirStore(join(dir, "store"));
    // the committed model: the tiny training job's final weights, published under the manifest's weightsCid
    const tiny = parseManifest(JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")));
    await train(await createRun(tiny, { jobId: 0n, salt: offlineSalt(0n) }), { outDir: join(dir, "tiny"), strategy: parseStrategy("honest"), evaluate: false });
    expect(await store.put(new Uint8Array(readFileSync(join(dir, "tiny", "final.safetensors"))))).to.equal(manifest.weightsCid);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the policy is one example a step, and what a kind manifest lacks is one clear error", () => {
    const km = kindManifestOf(raw)!;
    expect(km.kind).to.equal("evaluate");
    expect(kindManifestOf(JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")))).to.equal(undefined);
    const stake = { requiredStake: parseEther("1") };
    expect(kindPolicy(km, { payment: 1n, overrides: stake }).policy).to.deep.include({ segments: 4, stepsPerSegment: 50 });
    expect(kindPolicy(km, { payment: 1n, examplesPerSegment: 20, overrides: stake }).policy).to.deep.include({ segments: 10, stepsPerSegment: 20 });
    expect(() => kindPolicy(km, { payment: 1n, examplesPerSegment: 30, overrides: stake })).to.throw(/200 examples are not a whole number of segments of 30/);
    expect(() => kindPolicy(km, { overrides: stake })).to.throw(/--pay/);
    // without --stake the stake is the kind quote's (market/quote-kind.ts; test/kinds/quote-kind.test.ts)
    expect(kindPolicy(km, { payment: 1n }).quote?.stakeWei).to.be.a("bigint");
  });

  it("a kind job whose model is not in the store is refused before any transaction", async () => {
    const before = await getJobCount(env.buyer.public, { jobMarket: env.d.jobMarket });
    const km = kindManifestOf({ ...raw, weightsCid: "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m" })!;
    const err = await caught(createKindJob({ clients: env.buyer, deployment: env.d, store }, km, { payment: parseEther("2"), overrides: { requiredStake: parseEther("1") }, mint: true, subject: "manifest m.json" }));
    expect(err?.message).to.match(/manifest m\.json: the evaluate job cannot run \(not posted, no transaction sent\)/);
    expect(await getJobCount(env.buyer.public, { jobMarket: env.d.jobMarket })).to.equal(before);
  });

  it("buyer create posts it, provider accept checks it, provider run commits every example's leaf and the audit passes", async () => {
    const km = kindManifestOf(raw)!;
    const posted = await createKindJob({ clients: env.buyer, deployment: env.d, store }, km, { payment: parseEther("2"), overrides: { requiredStake: parseEther("1") }, mint: true, subject: "manifest evaluate-tiny.json" });
    const jobId = posted.jobId;
    // the job's kind and model are fixed on chain with its escrow (createKindJob): KindRecords records for them only
    expect(await env.buyer.public.readContract({ address: env.d.jobMarket, abi: jobMarketAbi, functionName: "kindOf", args: [jobId] })).to.deep.equal([KIND_CODES.evaluate, subjectOf(manifest.weightsCid)]);
    const ctx = { clients: env.provider, deployment: env.d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state") };
    await acceptProviderJob(ctx, jobId, { amounts: { fmt: (w) => w.toString(), symbol: "T" } });
    const r = await runProviderJob(ctx, jobId, { strategy: parseStrategy("honest") });
    expect(r.kind).to.equal("evaluate");
    expect(r.committed).to.deep.equal([0, 1, 2, 3]);
    expect((await getJob(env.buyer.public, { jobMarket: env.d.jobMarket, jobId })).status).to.equal("Committed");
    const commits = await getSegmentCommits(env.buyer.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n });
    // the independent expectation: the auditor's own job over the same model, and the harness's own results
    const job = await evaluateJob(manifest, await store.get(manifest.weightsCid), { jobId, examplesPerSegment: 50 });
    for (const c of commits) expect((await auditKindSegment(job, store, c, [c.segment * 50 + 1, c.segment * 50 + 50])).ok).to.equal(true);
    const states = statesOf(await job.results(0, 200));
    expect(commits[3]!.endStateHash).to.equal(exampleStateHash(job.ctx, states[200]!));
    // the bot's panel entry point (kinds/bot.ts): the job from its database row, one example decided from the leaves
    const kinds = new KindJobs(store);
    const botJob = await kinds.jobFor({ jobId, manifestUri: posted.manifestUri, manifestHash: posted.manifestHash, stepsPerSegment: 50 });
    expect(botJob?.ctx).to.deep.equal(job.ctx);
    const c1 = { index: 1, traceRoot: commits[1]!.traceRoot, checkpointCid: commits[1]!.checkpointCid, stateHashes: commits[1]!.stateHashes };
    const honestVote = await decideKindDispute(botJob!, store, c1, { segment: 1, step: 77, hPrev: c1.stateHashes[26]!, hStep: c1.stateHashes[27]! });
    expect(honestVote.vote).to.equal("Valid");
    // a member that cannot read the provider's states file (another store): Fault, the provider did not serve state 76
    expect((await decideKindDispute(botJob!, new LocalDirStore(join(dir, "empty")), c1, { segment: 1, step: 77, hPrev: c1.stateHashes[26]!, hStep: c1.stateHashes[27]! })).vote).to.equal("Fault");
    // a second run has nothing left to commit
    expect((await runProviderJob(ctx, jobId, { strategy: parseStrategy("honest") })).committed).to.deep.equal([]);
  });
});
