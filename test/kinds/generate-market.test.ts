/**
 * The generate kind: the exact sampler against hand-computed weights, and a generate job end to end on the in-process
 * network: an honest provider is paid and its dataset's chain is recorded on KindRecords and verified against the
 * dataset's bytes; a provider that changes one sample is challenged on that sample and slashed; a griefer's challenge
 * of a correct sample loses its bond.
 */
import { expect } from "chai";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseEther, zeroAddress } from "viem";
import { deployKindRecords, finalize, getKindResult, recordKindResult } from "../../verifier/src/chain/index.ts";
import { creditsOf } from "../../verifier/src/dispute/index.ts";
import { evalSetIdOf, EVALUATE_KIND, parseEvaluateManifest } from "../../verifier/src/evaluate/index.ts";
import {
  datasetOf,
  DatasetError,
  endStateOf,
  EXP2_TABLE,
  GENERATE_KIND,
  generateJob,
  KIND_CODES,
  subjectOf,
  generateManifestHash,
  kindChallengeProof,
  kindSegments,
  openGenerateHarness,
  parseGenerateManifest,
  sampleResult,
  samplingWeights,
  sampleToken,
  statesOf,
  verifyDataset,
  type GenerateJob,
  type GenerateManifest,
} from "../../verifier/src/kinds/index.ts";
import { createRun, offlineSalt, parseManifest, Rng, ManifestError } from "../../verifier/src/ml/index.ts";
import { cidOf, LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, expectRevert } from "../dispute/helpers.ts";
import { runPouw } from "../helpers/cli.ts";
import { tempDir, tinyTransformerJson } from "../ml/helpers.ts";
import { disputed, firstWrong, lockedStake, MANIFEST_CID, postedJob, type KindMarket } from "./fixture.ts";

const K = 4;

describe("kinds: exact sampling", () => {
  it("weights are the 2^22 x 2^(-q/16) table entries, q from the logit gap, log2(e) and the temperature", () => {
    // independent expectation: the table recomputed with Math.pow (the module holds integer literals)
    for (let r = 0; r < 16; r++) expect(EXP2_TABLE[r]).to.equal(Math.round(2 ** 22 * 2 ** (-r / 16)));
    // gap 2 at T = 1: q = floor(2 * 1.4426950408889634 * 16) = 46 -> table[14] >> 2
    const { candidates, weights } = samplingWeights([0, 2, 2, -Infinity], { temperatureMilli: 1000, topK: 0 });
    expect(candidates).to.deep.equal([1, 2, 0, 3]);
    expect(weights).to.deep.equal([4194304, 4194304, Math.round(2 ** 22 * 2 ** (-14 / 16)) >>> 2, 0]);
    // T = 2 halves q: floor(23.08) = 23 -> table[7] >> 1
    expect(samplingWeights([0, 2], { temperatureMilli: 2000, topK: 0 }).weights).to.deep.equal([4194304, Math.round(2 ** 22 * 2 ** (-7 / 16)) >>> 1]);
  });

  it("temperature 0 and top-1 are argmax with the lowest index on ties; NaN never wins; bad parameters are named", () => {
    const rng = new Rng(1, "t");
    expect(sampleToken([1, 3, 3, 2], { temperatureMilli: 0, topK: 0 }, rng)).to.equal(1);
    expect(sampleToken([1, 3, NaN, 2], { temperatureMilli: 1500, topK: 1 }, rng)).to.equal(1);
    expect(samplingWeights([NaN, 0], { temperatureMilli: 1000, topK: 0 }).candidates).to.deep.equal([1, 0]);
    expect(() => samplingWeights([0], { temperatureMilli: -1, topK: 0 })).to.throw(/temperatureMilli must be a non-negative integer, got -1/);
    expect(() => samplingWeights([0], { temperatureMilli: 1, topK: 1.5 })).to.throw(/topK must be a non-negative integer, got 1.5/);
  });

  it("a seeded stream draws the same tokens twice, in proportion to the weights", () => {
    const draw = () => {
      const rng = new Rng(7, "generate", 0);
      return Array.from({ length: 4000 }, () => sampleToken([0, Math.log(3)], { temperatureMilli: 1000, topK: 0 }, rng));
    };
    const a = draw();
    expect(draw()).to.deep.equal(a);
    const ones = a.filter((x) => x === 1).length / a.length;
    expect(ones).to.be.within(0.72, 0.78); // e^ln3 : 1 = 3 : 1
  });
});

describe("kinds: generate jobs on the market", function () {
  this.timeout(600_000);
  let m: KindMarket;
  let dir: string;
  let weights: Uint8Array;
  let manifest: GenerateManifest;
  let honestSamples: Uint8Array[];

  const open = (jobId: bigint) => generateJob(manifest, weights, { jobId, examplesPerSegment: K });
  const post = (forge: (job: GenerateJob) => ReturnType<typeof kindSegments>) => postedJob(m, { manifestHash: generateManifestHash(manifest), examples: manifest.prompts.examples, K, open, forge, kind: { kind: KIND_CODES.generate, modelCidHash: subjectOf(manifest.weightsCid) } });

  before(async () => {
    const env = await disputeEnv();
    dir = await tempDir("kinds-generate");
    m = { env, store: new LocalDirStore(join(dir, "store")), dir };
    // the model: the tiny char-transformer's initial weights (a model is a checkpoint; trained or not does not matter here)
    const t = tinyTransformerJson();
    const run = await createRun(parseManifest(t), { jobId: 0n, salt: offlineSalt(0n) });
    weights = run.checkpointBytes(run.initState());
    const base = { model: t.model, weightsCid: cidOf(weights), corpus: (t.corpora as object[])[0], data: t.data, harness: { engine: "pouw-engine-1", backend: "cpu", numerics: "bitwise", batch: 16 } };
    const examples = 8;
    const contentId = await evalSetIdOf(parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples, contentId: MANIFEST_CID } }));
    manifest = parseGenerateManifest({ version: 1, kind: GENERATE_KIND, ...base, prompts: { split: "test", examples, promptChars: 8, contentId }, sampling: { tokens: 12, temperatureMilli: 800, topK: 20, seed: 11 } });
    const job = await open(0n);
    honestSamples = Array.from({ length: examples }, (_, j) => job.sample(j));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses a manifest whose model is not a char-transformer, naming the field", () => {
    expect(() => parseGenerateManifest({ ...manifest, model: { arch: "mnist-mlp", hidden: 16 } })).to.throw(ManifestError, /generate manifest field model.arch: generate jobs sample from a char-transformer, not mnist-mlp/);
    expect(() => parseGenerateManifest({ ...manifest, prompts: { ...manifest.prompts, promptChars: 17 } })).to.throw(ManifestError, /prompts.promptChars: must be at most model.context \(16\)/);
  });

  it("each sample recomputes alone to the same bytes in a fresh harness, and samples differ by their stream", async () => {
    const again = await generateJob(manifest, weights, { jobId: 0n, examplesPerSegment: K, harness: await openGenerateHarness(manifest) });
    expect(again.sample(5)).to.deep.equal(honestSamples[5]);
    expect(new Set(honestSamples.map((s) => Buffer.from(s).toString("hex"))).size).to.be.greaterThan(1);
    expect(honestSamples.every((s) => s.length === 12)).to.equal(true);
  });

  it("pouw generate writes the dataset offline: the CID and chain of the same samples; bad input exits 2 with one line", async () => {
    const mPath = join(dir, "generate.json");
    const wPath = join(dir, "weights.safetensors");
    await writeFile(mPath, JSON.stringify(manifest));
    await writeFile(wPath, weights);
    const r = await runPouw(["generate", "--manifest", mPath, "--weights", wPath, "--out", join(dir, "gen"), "--json"]);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { datasetCid: string; chain: string; samples: number };
    const states = statesOf(honestSamples.map(sampleResult));
    expect(out).to.deep.include({ datasetCid: cidOf(datasetOf(manifest, honestSamples)), chain: states[states.length - 1]!.chain, samples: 8 });
    const id = await runPouw(["generate", "--manifest", mPath, "--prompts-id"]);
    expect(id.stdout.trim()).to.equal(manifest.prompts.contentId);
    const bad = await runPouw(["generate", "--manifest", mPath, "--prompts-id", "--out", dir]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/give exactly one of --out DIR, --prompts-id/);
  });

  it("an honest provider is paid, a griefer loses its bond, and the dataset's chain is recorded and verified", async () => {
    const { jobId, job, commits } = await post((j) => kindSegments(j, honestSamples.map(sampleResult)));
    expect(await firstWrong(m, job, commits)).to.equal(undefined);
    const before = await creditsOf(m.env.provider, { deployment: m.env.d });
    const griefed = await disputed(m, jobId, job, commits, kindChallengeProof(job, commits[1]!, 6), "gen-griefer");
    expect(griefed.outcome).to.equal("PanelValid");
    expect((await creditsOf(m.env.provider, { deployment: m.env.d })).disputeGame - before.disputeGame).to.equal(griefed.bond);
    await m.env.increaseTime(86_401);
    await finalize(m.env.buyer, { jobMarket: m.env.d.jobMarket, jobId });
    expect((await creditsOf(m.env.provider, { deployment: m.env.d })).jobMarket - before.jobMarket).to.equal(parseEther("2"));

    const dataset = datasetOf(manifest, honestSamples);
    const datasetCid = await m.store.put(dataset);
    const { kindRecords } = await deployKindRecords(m.env.admin, { jobMarket: m.env.d.jobMarket, minStake: parseEther("5") });
    const states = statesOf(honestSamples.map(sampleResult));
    await recordKindResult(m.env.provider, { kindRecords, jobId, traceRoot: commits[commits.length - 1]!.traceRoot, end: endStateOf(job, states[states.length - 1]!), modelCid: manifest.weightsCid, resultCid: datasetCid });
    const r = (await getKindResult(m.env.buyer.public, { kindRecords, jobId }))!;
    expect(r.kind).to.equal("generate");
    expect(r.total).to.equal(BigInt(8 * 12));
    // a buyer fetching the dataset by its CID checks it against the on-chain chain: provenance names model and prompts
    const got = verifyDataset(await m.store.get(datasetCid), { chain: r.chain, modelCid: manifest.weightsCid });
    expect(got.prompts).to.equal(manifest.prompts.contentId);
    expect(got.manifestHash).to.equal(r.manifestHash);
    const forged = datasetOf(manifest, honestSamples.map((s, i) => (i === 3 ? s.map((x) => x ^ 1) : s)));
    expect(() => verifyDataset(forged, { chain: r.chain, modelCid: manifest.weightsCid })).to.throw(DatasetError, /samples chain to 0x[0-9a-f]{64}, the recorded result to/);
  });

  it("KindRecords refuses the zero market by name", async () => {
    await expectRevert(deployKindRecords(m.env.admin, { jobMarket: zeroAddress, minStake: 0n }), "KindRecordsZeroMarket");
  });

  it("a provider that skips samples (placeholder tokens for the second half) is challenged on the first skipped sample and slashed", async () => {
    const half = Math.floor(honestSamples.length / 2);
    const { jobId, job, commits } = await post((j) => kindSegments(j, honestSamples.map((s, i) => sampleResult(i >= half ? s.map(() => 0) : s))));
    const wrong = await firstWrong(m, job, commits);
    if (!wrong || wrong.ok) expect.fail("the audit finds the skipped samples");
    expect(wrong.proof.step).to.equal(half + 1);
    const r = await disputed(m, jobId, job, commits, wrong.proof, "gen-skip");
    expect(r.outcome).to.equal("PanelFault");
    expect(await lockedStake(m, jobId)).to.equal(0n);
  });

  it("a provider that changes one sample is challenged on that sample and slashed", async () => {
    const { jobId, job, commits } = await post((j) => kindSegments(j, honestSamples.map((s, i) => sampleResult(i === 5 ? s.map((x) => (x + 1) % 96) : s))));
    const wrong = await firstWrong(m, job, commits);
    if (!wrong || wrong.ok) expect.fail("the audit finds the changed sample");
    expect(wrong.proof.step).to.equal(6);
    const r = await disputed(m, jobId, job, commits, wrong.proof, "gen-cheat");
    expect(r.outcome).to.equal("PanelFault");
    expect(await lockedStake(m, jobId)).to.equal(0n);
  });
});
