/**
 * A finalized kind job's result reaches KindRecords without a person, on the in-process network: the challenger bots
 * record a finalized evaluate job they followed (the score only, resultCid ""), and `provider claim`
 * (claimProviderJobs -> finalizeAndAnchor) records its generate job with the dataset CID `provider run` published, or
 * names that CID on a record a stranger made first. The stake floor: with KindRecords deployed the kind quote never
 * gives a stake whose best-tier lock is below its minStake, and `buyer create` refuses an explicit one, naming both.
 */
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { parseEther, type Address } from "viem";
import { chainDisputeHooks, ChallengerBot } from "../../verifier/src/bot/index.ts";
import { formatIntentKey, IntentKeyError, parseIntentKey } from "../../verifier/src/bot/intent-key.ts";
import { acceptJob, deployKindRecords, finalize, getKindResult, hasKindResultCid, type Deployment } from "../../verifier/src/chain/index.ts";
import { evalSetIdOf, EVALUATE_KIND, parseEvaluateManifest } from "../../verifier/src/evaluate/index.ts";
import { commitKindSegments, kindSegments, statesOf, type ExampleResult } from "../../verifier/src/kinds/index.ts";
import { GENERATE_KIND, parseGenerateManifest } from "../../verifier/src/kinds/generate.ts";
import { createKindJob, openKindJob, type KindManifest } from "../../verifier/src/kinds/market.ts";
import { recordKindJobResult } from "../../verifier/src/kinds/record.ts";
import { recordableStakeWei } from "../../verifier/src/market/quote-kind.ts";
import { acceptProviderJob, claimProviderJobs } from "../../verifier/src/market/provider-jobs.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { cidOf, LocalDirStore } from "../../verifier/src/store/index.ts";
import { botMarketPerFile } from "../bot/fixture.ts";
import { tinyTransformerJson } from "../ml/helpers.ts";

const K = 4;
const EXAMPLES = 8;
const PAYMENT = parseEther("2");
const MIN_STAKE = parseEther("3");
const amounts = { fmt: (w: bigint) => w.toString(), symbol: "T" };

describe("kinds: the bot's record intent key", () => {
  it("recordKindResult:J formats and parses back; a malformed one is refused by name", () => {
    expect(formatIntentKey({ kind: "recordKindResult", jobId: 7n })).to.equal("recordKindResult:7");
    expect(parseIntentKey("recordKindResult:7")).to.deep.equal({ kind: "recordKindResult", jobId: 7n });
    expect(() => parseIntentKey("recordKindResult:7:1")).to.throw(IntentKeyError, /wrong number of parts for recordKindResult/);
    expect(() => parseIntentKey("recordKindResult:x")).to.throw(IntentKeyError, /job id "x" is not a non-negative integer/);
  });
});

describe("kinds: results recorded on KindRecords without a person", function () {
  this.timeout(900_000);
  const market = botMarketPerFile(600);
  let weights: Uint8Array;
  let evaluate: KindManifest;
  let generate: KindManifest;
  let honestEval: ExampleResult[];
  const dirs: string[] = [];

  before(async () => {
    const t = tinyTransformerJson();
    const run = await createRun(parseManifest(t), { jobId: 0n, salt: offlineSalt(0n) });
    weights = run.checkpointBytes(run.initState());
    const base = { model: t.model, weightsCid: cidOf(weights), corpus: (t.corpora as object[])[0], data: t.data, harness: { engine: "pouw-engine-1", backend: "cpu", numerics: "bitwise", batch: 16 } };
    const probe = parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples: EXAMPLES, contentId: cidOf(new Uint8Array(1)) } });
    const contentId = await evalSetIdOf(probe);
    evaluate = { kind: "evaluate", manifest: parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples: EXAMPLES, contentId } }) };
    generate = { kind: "generate", manifest: parseGenerateManifest({ version: 1, kind: GENERATE_KIND, ...base, prompts: { split: "test", examples: EXAMPLES, promptChars: 8, contentId }, sampling: { tokens: 8, temperatureMilli: 800, topK: 20, seed: 11 } }) };
    honestEval = await (await openKindJob(evaluate, weights, { jobId: 0n, examplesPerSegment: K })).results(0, EXAMPLES);
  });
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  async function setup(tag: string) {
    const m = market();
    const { kindRecords } = await deployKindRecords(m.admin, { jobMarket: m.d.jobMarket, minStake: MIN_STAKE });
    const d: Deployment & { kindRecords: Address } = { ...m.d, kindRecords };
    const dir = mkdtempSync(join(tmpdir(), `pouw-record-kind-${tag}-`));
    dirs.push(dir);
    const store = new LocalDirStore(join(dir, "store"));
    await store.put(weights);
    return { m, d, dir, store, board: new SegmentBoard(join(dir, "board"), store) };
  }

  it("the bots record a finalized evaluate job they followed (score only), once", async () => {
    const { m, d, dir, store, board } = await setup("bot");
    const { jobId } = await createKindJob({ clients: m.buyer, deployment: d, store }, evaluate, { payment: PAYMENT, examplesPerSegment: K, overrides: { requiredStake: parseEther("10") }, subject: "bot" });
    await acceptJob(m.cheat, { jobMarket: d.jobMarket, jobId });
    const job = await openKindJob(evaluate, weights, { jobId, examplesPerSegment: K });
    await commitKindSegments(m.cheat, { jobMarket: d.jobMarket, jobId, store, segments: kindSegments(job, honestEval) });
    const log = pino({ level: "silent" });
    const bots = m.auditors.map((a, i) => new ChallengerBot({ clients: a, deployment: d, store, board, dbPath: join(dir, `bot${i}.sqlite`), dispute: chainDisputeHooks({ clients: a, deployment: d, ballotsDir: join(dir, `ballots${i}`) }), log: log.child({ bot: i }) }));
    for (const b of bots) await b.tick();
    expect(await getKindResult(m.admin.public, { kindRecords: d.kindRecords, jobId }), "nothing before finalize").to.equal(undefined);
    await m.conn.networkHelpers.time.increase(86_401);
    await finalize(m.buyer, { jobMarket: d.jobMarket, jobId });
    for (let t = 0; t < 2; t++) for (const b of bots) await b.tick();
    const r = await getKindResult(m.admin.public, { kindRecords: d.kindRecords, jobId });
    // independent expectation: the sums of the per-example scores and hits the harness gives
    expect(r).to.deep.include({ kind: "evaluate", examples: BigInt(EXAMPLES), total: honestEval.reduce((a, x) => a + x.score, 0n), hits: honestEval.reduce((a, x) => a + x.hits, 0n), chain: statesOf(honestEval)[EXAMPLES]!.chain });
    expect(await hasKindResultCid(m.admin.public, { kindRecords: d.kindRecords!, jobId, resultCid: "" })).to.equal(true); // the bot names no result CID
    const sent = bots.flatMap((b) => b.summary().intents.filter((i) => i.kind === "recordKindResult"));
    expect(sent.filter((i) => i.status === "confirmed"), "one bot's record").to.have.length(1);
    expect(sent.filter((i) => i.status === "failed"), "no failed record").to.deep.equal([]);
    for (const b of bots) b.close();
  });

  it("provider claim records its generate job with the dataset CID provider run published; it names it on a stranger's earlier record", async () => {
    const { m, d, dir, store, board } = await setup("claim");
    const providerCtx = { clients: m.cheat, deployment: d, store, board, stateDir: join(dir, "state") };
    const floor = recordableStakeWei({ minStakeWei: MIN_STAKE, leastLockBps: 5_000 });
    expect(floor).to.equal(parseEther("6"));
    // buyer create against the deployed KindRecords: an explicit stake under the floor is refused by name, before any transaction
    const err = await createKindJob({ clients: m.buyer, deployment: d, store }, generate, { payment: PAYMENT, examplesPerSegment: K, overrides: { requiredStake: parseEther("5") }, subject: "low" }).then(() => undefined, (e: unknown) => e as Error);
    expect(err?.message).to.equal("the stake 5 tokens is below what KindRecords needs to record the generate job's result: its least lock (50% at the best tier) must reach minStake 3 tokens, so the stake must be at least 6 tokens (not posted, no transaction sent)");
    // the quote's own stake (the panel floor alone would be 0.375 tokens) is raised to the floor
    const posted = await createKindJob({ clients: m.buyer, deployment: d, store }, generate, { payment: PAYMENT, examplesPerSegment: K, subject: "claim" });
    expect(posted.policy.requiredStake).to.equal(floor);
    expect(posted.quote?.kindRecords).to.deep.equal({ minStakeWei: MIN_STAKE, floorWei: floor, binds: true });
    const jobId = posted.jobId;
    await acceptProviderJob(providerCtx, jobId, { amounts });
    const run = await runProviderJob(providerCtx, jobId, { strategy: parseStrategy("honest") });
    expect(run.datasetCid).to.be.a("string");
    await m.conn.networkHelpers.time.increase(86_401);
    await finalize(m.buyer, { jobMarket: d.jobMarket, jobId });
    // a stranger records first: the score only (only the provider's claim names the dataset it published)
    const stranger = await recordKindJobResult({ clients: m.buyer, deployment: d, store }, jobId, { resultCid: async () => "bafkreiforged" });
    expect(stranger.tx).to.not.equal(undefined);
    expect(stranger.resultCid).to.equal("");
    expect(await getKindResult(m.admin.public, { kindRecords: d.kindRecords, jobId })).to.not.equal(undefined);
    expect(await hasKindResultCid(m.admin.public, { kindRecords: d.kindRecords!, jobId, resultCid: run.datasetCid! })).to.equal(false);
    const claimed = await claimProviderJobs(providerCtx, [jobId]);
    expect(claimed.jobs[0]!.kindResult).to.deep.include({ kind: "generate", resultCid: run.datasetCid });
    expect(await hasKindResultCid(m.admin.public, { kindRecords: d.kindRecords!, jobId, resultCid: run.datasetCid! })).to.equal(true);
    // a second claim sends nothing
    const again = await claimProviderJobs(providerCtx, [jobId]);
    expect(again.jobs[0]!.kindResult).to.deep.equal({ jobId, kind: "generate", skipped: `already recorded on KindRecords with result ${run.datasetCid}` });
  });
});
