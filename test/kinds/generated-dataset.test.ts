/**
 * A generate job's dataset as the data of a training job, on the in-process network: the generate job runs through
 * `provider run` (which publishes its dataset), finalizes and is recorded on KindRecords; a training manifest names the
 * dataset by its CID; `buyer create` and `provider accept` check its chain before any money or stake moves, the provider
 * trains on the samples' text, and `buyer fetch` (fetchVerified) returns the verified chain training job -> dataset ->
 * generate job -> model and prompts. A dataset whose bytes do not chain to the record naming it is refused with one
 * error before any transaction (buyer) and before the stake is locked (provider).
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, type Address } from "viem";
import { writeDeployment } from "../../verifier/src/chain/deployment.ts";
import { deployKindRecords, finalize, getJob, getJobCount, getSegmentCommits, hasKindResultCid, recordKindResult, stakeVaultAbi, type Deployment } from "../../verifier/src/chain/index.ts";
import { decodeGenerated, generatedText, DataFormatError } from "../../verifier/src/data/index.ts";
import { evalSetIdOf, EVALUATE_KIND, parseEvaluateManifest } from "../../verifier/src/evaluate/index.ts";
import { datasetOf, endStateOf, GENERATE_KIND, generateJob, GeneratedProvenanceError, parseGenerateManifest, provenanceLines, sampleResult, statesOf, verifyGeneratedProvenance, type GenerateManifest } from "../../verifier/src/kinds/index.ts";
import { createKindJob, kindManifestHash, kindManifestOf } from "../../verifier/src/kinds/market.ts";
import { fetchVerified } from "../../verifier/src/market/buyer.ts";
import { quoteKindJob } from "../../verifier/src/market/quote-kind.ts";
import { createJobFromManifest } from "../../verifier/src/market/create-job.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { acceptProviderJob, claimProviderJobs } from "../../verifier/src/market/provider-jobs.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { cidOf, LocalDirStore } from "../../verifier/src/store/index.ts";
import { serveProvider } from "../cli/rpc-over-http.ts";
import { disputeEnv, expectRevert, type DisputeEnv } from "../dispute/helpers.ts";
import { runPouw } from "../helpers/cli.ts";
import { tempDir, tinyTransformerJson } from "../ml/helpers.ts";
import { MANIFEST_CID } from "./fixture.ts";

const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);
const amounts = { fmt: (w: bigint) => w.toString(), symbol: "T" };

describe("kinds: a generated dataset as a training job's data", () => {
  it("the text is the samples' 96-symbol ids as ASCII, sample 0 first, under the text rules (fixed vector)", () => {
    // ids: 0 is '\n', k is the byte 31 + k: "Hi" is 72 - 31 = 41 and 105 - 31 = 74
    const file = { format: "pouw-generated-1", manifestHash: `0x${"ab".repeat(32)}`, model: MANIFEST_CID, prompts: MANIFEST_CID, samples: ["0x294a294a294a", "0x00294a294a"] };
    const bytes = new TextEncoder().encode(JSON.stringify(file)); // keys already in RFC 8785 order
    const t = generatedText(decodeGenerated(bytes));
    expect(new TextDecoder().decode(Uint8Array.from(t.ids, (id) => t.schema.vocabulary[id]!))).to.equal("HiHiHi\nHiHi");
    expect(t.schema.files).to.deep.equal([{ name: "sample-000000", bytes: 6 }, { name: "sample-000001", bytes: 5 }]);
    expect(t.schema.vocabulary).to.deep.equal([10, 72, 105]);
    expect(t.schema.split.testTokens).to.equal(1); // last:10% of 11 tokens
    expect(() => decodeGenerated(new TextEncoder().encode(JSON.stringify({ ...file, samples: ["0x2960"] })))).to.throw(DataFormatError, /sample 0 token 1 is id 96, outside the 96-symbol vocabulary/);
    expect(() => decodeGenerated(new TextEncoder().encode(JSON.stringify(file, null, 1)))).to.throw(DataFormatError, /not its own canonical JSON/);
    expect(() => decodeGenerated(new TextEncoder().encode(JSON.stringify({ ...file, extra: 1 })))).to.throw(DataFormatError, /fields are extra,format/);
  });

  describe("on the market", function () {
    this.timeout(600_000);
    let env: DisputeEnv;
    let d: Deployment & { kindRecords: Address };
    let dir: string;
    let store: LocalDirStore;
    let board: SegmentBoard;
    let weights: Uint8Array;
    let manifest: GenerateManifest;
    const buyerCtx = () => ({ clients: env.buyer, deployment: d, store });
    const providerCtx = () => ({ clients: env.provider, deployment: d, store, board, stateDir: join(dir, "state") });

    /** Posts, accepts and runs a generate job, finalizes it and records `resultCid` (default: the dataset it published). */
    async function finalizedGenerateJob(resultCid?: (honest: Uint8Array) => Promise<string>) {
      // no --stake: the kind quote's stake, floored by the deployed panel's fees so that the provider's accept passes
      const posted = await createKindJob(buyerCtx(), kindManifestOf(manifest)!, { payment: parseEther("2"), mint: true, subject: "manifest generate.json" });
      expect(posted.policy.requiredStake).to.equal(quoteKindJob(kindManifestOf(manifest)!, { paymentWei: parseEther("2"), panel: { size: 3, feeWei: parseEther("0.05") } }).stakeWei);
      const jobId = posted.jobId;
      await acceptProviderJob(providerCtx(), jobId, { amounts });
      const run = await runProviderJob(providerCtx(), jobId, { strategy: parseStrategy("honest") });
      expect(run.datasetCid).to.be.a("string");
      await env.increaseTime(86_401);
      await finalize(env.buyer, { jobMarket: d.jobMarket, jobId });
      const job = await generateJob(manifest, weights, { jobId, examplesPerSegment: posted.policy.stepsPerSegment });
      const samples = Array.from({ length: manifest.prompts.examples }, (_, j) => job.sample(j));
      const states = statesOf(samples.map(sampleResult));
      const commits = await getSegmentCommits(env.buyer.public, { jobMarket: d.jobMarket, jobId, fromBlock: 0n });
      const cid = resultCid ? await resultCid(await store.get(run.datasetCid!)) : run.datasetCid!;
      const record = (c: string, by = env.provider) => recordKindResult(by, { kindRecords: d.kindRecords, jobId, traceRoot: commits[commits.length - 1]!.traceRoot, end: endStateOf(job, states[states.length - 1]!), modelCid: manifest.weightsCid, resultCid: c });
      await record(cid);
      return { jobId, datasetCid: cid, samples, published: run.datasetCid!, record };
    }

    /** A small training manifest on the dataset `cid` (the vocabulary is the generated text's). */
    async function trainingOn(cid: string) {
      const text = generatedText(decodeGenerated(await store.get(cid)));
      return parseManifest({
        version: 2,
        kind: "pouw/training-job",
        model: { arch: "char-transformer", vocab: text.schema.vocabulary.length, layers: 1, dModel: 16, heads: 2, context: 16 },
        init: { seed: 5 },
        corpora: [{ name: "generated", contentId: cid, licence: "CC0-1.0", declaredTokens: text.schema.tokens, payoutAddress: "0x00000000000000000000000000000000000000d3" }],
        data: { seed: 9 },
        optimizer: { name: "adam", lr: 0.01 },
        training: { batchSize: 2, steps: 4, stepsPerSegment: 2 },
        numerics: "bitwise",
        stateDigest: "sha256-v2",
        policy: { auditRate: 0.25, minTier: 4, challengeWindowSeconds: 3600, providerStakeWei: "1000000000000000000", paymentWei: "100000000000000000" },
      });
    }

    before(async () => {
      env = await disputeEnv();
      const { kindRecords } = await deployKindRecords(env.admin, { jobMarket: env.d.jobMarket, minStake: parseEther("0.1") });
      d = { ...env.d, kindRecords };
      dir = await tempDir("generated-dataset");
      store = new LocalDirStore(join(dir, "store"));
      board = new SegmentBoard(join(dir, "board"), store);
      // the model: the tiny char-transformer's initial weights, published under the manifest's weightsCid
      const t = tinyTransformerJson();
      const run = await createRun(parseManifest(t), { jobId: 0n, salt: offlineSalt(0n) });
      weights = run.checkpointBytes(run.initState());
      await store.put(weights);
      const base = { model: t.model, weightsCid: cidOf(weights), corpus: (t.corpora as object[])[0], data: t.data, harness: { engine: "pouw-engine-1", backend: "cpu", numerics: "bitwise", batch: 16 } };
      const examples = 8;
      const contentId = await evalSetIdOf(parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples, contentId: MANIFEST_CID } }));
      manifest = parseGenerateManifest({ version: 1, kind: GENERATE_KIND, ...base, prompts: { split: "test", examples, promptChars: 8, contentId }, sampling: { tokens: 48, temperatureMilli: 800, topK: 20, seed: 11 } });
    });
    after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("provider run publishes the dataset; a training job on it is posted, accepted, trained, and buyer fetch returns the verified chain", async () => {
      const gen = await finalizedGenerateJob();
      // independent expectation: the dataset file of the same samples, drawn again here
      expect(gen.datasetCid).to.equal(cidOf(datasetOf(manifest, gen.samples)));
      const training = await trainingOn(gen.datasetCid);
      const { posted } = await createJobFromManifest(buyerCtx(), training, { mint: true, subject: "manifest t.json" });
      const jobId = posted.jobId;
      await acceptProviderJob(providerCtx(), jobId, { amounts });
      expect((await runProviderJob(providerCtx(), jobId, { strategy: parseStrategy("honest") })).committed).to.deep.equal([0, 1]);
      await env.increaseTime(3601);
      await claimProviderJobs(providerCtx(), [jobId]);
      const r = await fetchVerified({ clients: env.buyer, deployment: d, store, board }, jobId, join(dir, "fetched"));
      expect(r.generated).to.deep.equal([
        { corpus: "generated", datasetCid: gen.datasetCid, generateJobId: gen.jobId, manifestHash: kindManifestHash({ kind: "generate", manifest }), modelCid: manifest.weightsCid, promptsCid: manifest.prompts.contentId, samples: 8, chain: statesOf(gen.samples.map(sampleResult))[8]!.chain },
      ]);
      expect(provenanceLines(jobId, r.generated)[0]).to.equal(
        `job ${jobId}: trained on generated dataset ${gen.datasetCid} (corpus generated, 8 samples) <- generate job ${gen.jobId} (manifest ${kindManifestHash({ kind: "generate", manifest })}, finalized, recorded on KindRecords, samples chain ${r.generated[0]!.chain}) <- model ${manifest.weightsCid}, prompts ${manifest.prompts.contentId}`,
      );
      // the command: `pouw buyer fetch` (in-process, over HTTP RPC, this state dir's store and board) prints the same chain
      const rpc = await serveProvider(env.provider1193);
      try {
        const { gasUsed: _gas, ...deployment } = d as typeof d & { gasUsed?: bigint }; // deployMarket's gas is not a deployment field
        await writeDeployment(join(dir, "deployment.json"), deployment);
        const cli = await runPouw(["buyer", "fetch", String(jobId), "--out", join(dir, "cli-fetched"), "--rpc", rpc.url, "--state-dir", dir]);
        expect(cli.code, cli.stderr).to.equal(0);
        expect(cli.stdout).to.contain(`${provenanceLines(jobId, r.generated)[0]}\n`);
      } finally {
        await rpc.close();
      }
      // without KindRecords in the deployment the chain cannot be checked: buyer fetch says so and writes nothing
      const { kindRecords: _k, ...bare } = d;
      const err = await caught(fetchVerified({ clients: env.buyer, deployment: bare, store, board }, jobId, join(dir, "fetched-bare")));
      expect(err).to.be.instanceOf(GeneratedProvenanceError);
      expect(err!.message).to.match(/provenance of its data not verified \(nothing written\): generated dataset \w+: the deployment names no KindRecords contract/);
    });

    it("a dataset whose bytes do not chain to the record naming it is refused before the buyer pays and before the provider's stake is locked", async () => {
      // the provider records a forged dataset (sample 3 changed) as its generate job's result: KindRecords does not check resultCid
      const forge = async (honest: Uint8Array) => {
        const f = decodeGenerated(honest);
        return store.put(datasetOf(manifest, f.samples.map((s, i) => (i === 3 ? s.map((x) => (x + 1) % 96) : s))));
      };
      const gen = await finalizedGenerateJob(forge);
      const training = await trainingOn(gen.datasetCid);
      const jobs = await getJobCount(env.buyer.public, { jobMarket: d.jobMarket });
      const err = await caught(createJobFromManifest(buyerCtx(), training, { mint: true, subject: "manifest t.json" }));
      expect(err).to.be.instanceOf(GeneratedProvenanceError);
      expect(err!.message).to.match(
        new RegExp(`^manifest t\\.json: not posted \\(no transaction sent, nothing escrowed\\): generated dataset ${gen.datasetCid}: its bytes do not match the recorded generate job: generate job ${gen.jobId}: generated dataset's samples chain to 0x[0-9a-f]{64}, the recorded result to 0x[0-9a-f]{64}$`),
      );
      expect(await getJobCount(env.buyer.public, { jobMarket: d.jobMarket })).to.equal(jobs);
      // a buyer that posts it anyway (postJob has no data check): the provider refuses it before locking a stake
      const posted = await postJob(env.buyer, d, store, training, { segments: 2, stepsPerSegment: 2, requiredStake: parseEther("1"), segmentTimeout: 86_400, challengeWindow: 3600, challengerBps: 5000, buyerBps: 3000, burnBps: 2000, timeoutSlashBps: 5000 }, parseEther("0.1"));
      const refused = await caught(acceptProviderJob(providerCtx(), posted.jobId, { amounts }));
      expect(refused).to.be.instanceOf(GeneratedProvenanceError);
      expect(refused!.message).to.match(new RegExp(`^job ${posted.jobId} not accepted \\(no stake locked\\): generated dataset ${gen.datasetCid}: its bytes do not match`));
      expect((await getJob(env.buyer.public, { jobMarket: d.jobMarket, jobId: posted.jobId })).status).to.equal("Open");
      expect(await env.provider.public.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [env.provider.account.address, posted.jobId] })).to.equal(0n);
      // the forged CID was recorded first (as a griefer front-running the honest record would): the true dataset is
      // still recorded after it, by another party, and its chain verifies while the forged one's still does not
      await gen.record(gen.published, env.buyer);
      await expectRevert(gen.record(gen.published, env.buyer), "KindRecordsAlreadyRecorded");
      // (the first test's generate job made the same dataset, so the chain may name either job)
      expect(await hasKindResultCid(env.buyer.public, { kindRecords: d.kindRecords, jobId: gen.jobId, resultCid: gen.published })).to.equal(true);
      expect(await hasKindResultCid(env.buyer.public, { kindRecords: d.kindRecords, jobId: gen.jobId, resultCid: gen.datasetCid })).to.equal(true);
      const reader = { client: env.buyer.public, deployment: d, store };
      expect((await verifyGeneratedProvenance(reader, gen.published)).datasetCid).to.equal(gen.published);
      expect(await caught(verifyGeneratedProvenance(reader, gen.datasetCid))).to.be.instanceOf(GeneratedProvenanceError);
    });
  });
});
