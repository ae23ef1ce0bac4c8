/**
 * The evaluate kind end to end on the in-process network: an evaluate manifest (examples/evaluate-tiny.json) posted
 * as a market job, its per-example leaves committed through JobMarket.commitSegment, audited by recomputing examples,
 * and every dispute decided by a panel that recomputes ONE example (kinds/job.ts decideExample). The honest provider
 * is paid; a provider that changes one example's output, one that skips examples and one that reports a better
 * aggregate than its examples give are each challenged on that example and slashed; a griefer who challenges a
 * correct example loses its bond to the provider. The finalized score is recorded on KindRecords only as the preimage
 * of the committed last leaf, and read back by the model's CID.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { keccak256, parseEther, toBytes } from "viem";
import { deployKindRecords, finalize, getJob, getKindResult, getKindResultsForModel, hasKindResultCid, recordKindResult } from "../../verifier/src/chain/index.ts";
import { creditsOf } from "../../verifier/src/dispute/index.ts";
import { evaluateManifestHash, openHarness, parseEvaluateManifest, type Harness } from "../../verifier/src/evaluate/index.ts";
import { auditKindSegment, endStateOf, KIND_CODES, subjectOf, evaluateJob, kindChallengeProof, kindSegments, segmentsOfStates, statesOf, ZERO32, type EvaluateJob, type ExampleResult, type KindCommit, type KindSegment } from "../../verifier/src/kinds/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, expectRevert, type DisputeEnv } from "../dispute/helpers.ts";
import { disputed as disputedOf, firstWrong as firstWrongOf, lockedStake, MANIFEST_CID, postedJob as posted, type KindMarket } from "./fixture.ts";
import { ROOT, tempDir } from "../ml/helpers.ts";

const K = 50;

describe("kinds: evaluate jobs on the market", function () {
  this.timeout(600_000);
  let env: DisputeEnv;
  let dir: string;
  let store: LocalDirStore;
  let weights: Uint8Array;
  let harness: Harness;
  let honest: ExampleResult[];
  const manifest = parseEvaluateManifest(JSON.parse(readFileSync(join(ROOT, "examples/evaluate-tiny.json"), "utf8")));

  let m: KindMarket;
  const postedJob = (forge: (job: EvaluateJob) => KindSegment[]) =>
    posted(m, { manifestHash: evaluateManifestHash(manifest), examples: manifest.evalSet.examples, K, open: (jobId) => evaluateJob(manifest, weights, { jobId, examplesPerSegment: K, harness }), forge, kind: { kind: KIND_CODES.evaluate, modelCidHash: subjectOf(manifest.weightsCid) } });
  const firstWrong = (job: EvaluateJob, commits: KindCommit[]) => firstWrongOf(m, job, commits);
  const disputed = (jobId: bigint, job: EvaluateJob, commits: KindCommit[], proof: ReturnType<typeof kindChallengeProof>, label: string) => disputedOf(m, jobId, job, commits, proof, label);
  const locked = (jobId: bigint) => lockedStake(m, jobId);

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("kinds-evaluate");
    store = new LocalDirStore(join(dir, "store"));
    // the committed model: the tiny training job's final weights (job 0, its offline salt), bit-reproducible
    const tiny = parseManifest(JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")));
    await train(await createRun(tiny, { jobId: 0n, salt: offlineSalt(0n) }), { outDir: join(dir, "tiny"), strategy: parseStrategy("honest"), evaluate: false });
    weights = new Uint8Array(readFileSync(join(dir, "tiny", "final.safetensors")));
    harness = await openHarness(manifest);
    m = { env, store, dir };
    honest = await (await evaluateJob(manifest, weights, { jobId: 0n, examplesPerSegment: K, harness })).results(0, manifest.evalSet.examples);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("an honest provider's leaves pass the audit, a griefer's challenge of a correct example loses its bond, the provider is paid and the score is recorded for the model's CID", async () => {
    const { jobId, job, commits } = await postedJob((j) => kindSegments(j, honest));
    for (const c of commits) expect((await auditKindSegment(job, store, c, [c.segment * K + 1, c.segment * K + 17])).ok).to.equal(true);
    expect(await firstWrong(job, commits)).to.equal(undefined);
    const before = await creditsOf(env.provider, { deployment: env.d });
    const griefed = await disputed(jobId, job, commits, kindChallengeProof(job, commits[1]!, 77), "griefer");
    expect(griefed.outcome).to.equal("PanelValid");
    expect(griefed.reasons.every((r) => /matches the committed leaf/.test(r))).to.equal(true);
    expect((await creditsOf(env.provider, { deployment: env.d })).disputeGame - before.disputeGame).to.equal(griefed.bond);
    const { kindRecords } = await deployKindRecords(env.admin, { jobMarket: env.d.jobMarket, minStake: parseEther("5") });
    const last = commits[commits.length - 1]!;
    const states = statesOf(honest);
    const end = endStateOf(job, states[states.length - 1]!);
    // anyone records the score (resultCid "" or a CID); a result CID is a claim anyone adds once per job, the score is
    // written once
    const record = (e = end, modelCid = manifest.weightsCid, id = jobId, who = env.buyer, resultCid = "") => recordKindResult(who, { kindRecords, jobId: id, traceRoot: last.traceRoot, end: e, modelCid, resultCid });
    // INVARIANT: no result before the challenge window closed with no fault
    await expectRevert(record(), "KindRecordsWrongStatus");
    await env.increaseTime(86_401);
    await finalize(env.buyer, { jobMarket: env.d.jobMarket, jobId });
    await expectRevert(record(end, manifest.weightsCid, 999n), "KindRecordsUnknownJob");
    await expectRevert(record({ ...end, kind: 3 }), "KindRecordsUnknownKind");
    // a better score than the leaves give is not the committed h(N)'s preimage; another model's CID is not the job's
    await expectRevert(record({ ...end, total: end.total / 2n }), "KindRecordsEndStateMismatch");
    await expectRevert(record({ ...end, hits: end.hits + 1n }), "KindRecordsEndStateMismatch");
    await expectRevert(record(end, MANIFEST_CID), "KindRecordsKindMismatch");
    await record();
    await expectRevert(record(), "KindRecordsAlreadyRecorded");
    await record(end, manifest.weightsCid, jobId, env.provider, MANIFEST_CID);
    await expectRevert(record(end, manifest.weightsCid, jobId, env.buyer, MANIFEST_CID), "KindRecordsAlreadyRecorded");
    expect(await hasKindResultCid(env.buyer.public, { kindRecords, jobId, resultCid: MANIFEST_CID })).to.equal(true);
    const onChain = await getKindResult(env.buyer.public, { kindRecords, jobId });
    // the independent expectation: the sum of the per-example scores and hits the harness gives
    expect(onChain).to.deep.include({ kind: "evaluate", examples: 200n, total: honest.reduce((a, r) => a + r.score, 0n), hits: honest.reduce((a, r) => a + r.hits, 0n), manifestHash: evaluateManifestHash(manifest) });
    expect((await getKindResultsForModel(env.buyer.public, { kindRecords, modelCid: manifest.weightsCid })).map((r) => r.jobId)).to.deep.equal([jobId]);
    expect(await getKindResult(env.buyer.public, { kindRecords, jobId: 999n })).to.equal(undefined);
    expect((await getJob(env.buyer.public, { jobMarket: env.d.jobMarket, jobId })).status).to.equal("Finalized");
    expect(await locked(jobId)).to.equal(0n);
    const after = await creditsOf(env.provider, { deployment: env.d });
    expect(after.jobMarket - before.jobMarket).to.equal(parseEther("2"));
  });

  const cheats: { name: string; example: number; forge: (job: EvaluateJob) => KindSegment[] }[] = [
    {
      name: "changes one example's output",
      example: 123,
      forge: (j) => kindSegments(j, honest.map((r, i) => (i === 122 ? { ...r, item: ZERO32 } : r))),
    },
    {
      name: "skips examples (commits placeholders for examples 101..200)",
      example: 101,
      forge: (j) => kindSegments(j, honest.map((r, i) => (i >= 100 ? { item: ZERO32, score: 0n, hits: 1n } : r))),
    },
    {
      name: "reports a better aggregate than its examples give (the last leaf's total and hits)",
      example: 200,
      forge: (j) => {
        const states = statesOf(honest);
        const last = states[states.length - 1]!;
        states[states.length - 1] = { ...last, total: last.total / 2n, hits: last.hits + 20n };
        return segmentsOfStates(j, states);
      },
    },
  ];
  for (const cheat of cheats) {
    it(`a provider that ${cheat.name} is challenged on example ${cheat.example} and slashed`, async () => {
      const { jobId, job, commits } = await postedJob(cheat.forge);
      const wrong = await firstWrong(job, commits);
      expect(wrong, "the audit finds the cheat").to.not.equal(undefined);
      if (!wrong || wrong.ok) return;
      expect(wrong.proof.step).to.equal(cheat.example);
      const r = await disputed(jobId, job, commits, wrong.proof, cheat.name.split(" ")[0]!);
      expect(r.outcome).to.equal("PanelFault");
      expect(await locked(jobId)).to.equal(0n);
    });
  }
});
