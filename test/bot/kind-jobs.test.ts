/**
 * The challenger bot audits inference jobs (evaluate, generate) on the in-process network, through its own pipeline
 * (auditor.ts jobFor -> kinds/audit.ts), with nobody challenging by hand: four bonded bots follow a kind job whose
 * provider commits its (possibly forged) per-example leaves. A changed output, skipped examples and an inflated score of
 * an evaluate job, and a changed sample of a generate job, are each challenged by a bot on the example the audit names,
 * a panel of the other bots recomputes that one example, the dispute resolves Fault and the provider's lock is slashed.
 * So is a provider that never publishes a segment's states file (claimed at the first example whose decision reads it:
 * example 2 in the first segment), and one whose server is down past the grace period (postponed until then).
 * An honest evaluate job is receipted (EIP-712 receipts, anchored) at the rate its payment and lock call for, paid at
 * finalize, and no bot logs a warning about the job on any tick.
 */
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { parseEther, parseEventLogs } from "viem";
import { chainDisputeHooks, ChallengerBot } from "../../verifier/src/bot/index.ts";
import { sampledExamples } from "../../verifier/src/bot/sampler.ts";
import { acceptJob, commitSegment, finalize, getDispute, getFaultAppeal, getJob, getJobDisputes, stakeVaultAbi } from "../../verifier/src/chain/index.ts";
import { creditsOf } from "../../verifier/src/dispute/index.ts";
import { collectJobReport, renderJobReport } from "../../verifier/src/report/job.ts";
import { evalSetIdOf, EVALUATE_KIND, parseEvaluateManifest } from "../../verifier/src/evaluate/index.ts";
import { DEFAULT_KIND_AUDIT_RATE, kindAuditRate, kindSegments, segmentsOfStates, statesOf, ZERO32, type ExampleJob, type ExampleResult, type KindSegment } from "../../verifier/src/kinds/index.ts";
import { GENERATE_KIND, parseGenerateManifest, sampleResult, type GenerateJob } from "../../verifier/src/kinds/generate.ts";
import { commitKindSegments } from "../../verifier/src/kinds/provider.ts";
import { createKindJob, openKindJob, type KindManifest } from "../../verifier/src/kinds/market.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, offlineSalt, parseManifest } from "../../verifier/src/ml/index.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { cidOf, LocalDirStore } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { tinyTransformerJson } from "../ml/helpers.ts";
import { botMarketPerFile } from "./fixture.ts";

const K = 4;
const EXAMPLES = 8;
const PAYMENT = parseEther("2");
const STAKE = parseEther("10");
const GRACE_S = 600;

/** A loopback port nobody listens on (bound, then released): connections to it are refused. */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

type Line = { level: number; msg: string; jobId?: string; bot?: number; segment?: number; recompute?: number[] };

describe("bot: the example draw and rate of an inference job", () => {
  const secret = "11".repeat(32);
  const market = "0x00000000000000000000000000000000000000aa" as const;

  it("kindAuditRate is 1 - (1 - P/S)^(1/N), deters forging any m of N examples, and names a bad example count", () => {
    expect(kindAuditRate({ payment: 2n, stake: 10n, examples: 1 })).to.be.closeTo(0.2, 1e-12);
    expect(kindAuditRate({ payment: parseEther("2"), stake: parseEther("10"), examples: 200 })).to.be.closeTo(1 - 0.8 ** (1 / 200), 1e-12);
    expect(kindAuditRate({ payment: 10n, stake: 10n, examples: 5 })).to.equal(1);
    expect(kindAuditRate({ payment: 1n, stake: 0n, examples: 5 })).to.equal(1);
    // independent check of the deterrence claim: catching m forged examples costs the lock at least their share of P
    const [P, S, N] = [3, 20, 50];
    const r = kindAuditRate({ payment: BigInt(P), stake: BigInt(S), examples: N });
    for (let m = 1; m <= N; m++) expect((1 - (1 - r) ** m) * S).to.be.at.least((m * P) / N - 1e-9);
    // and it is the least such rate: 1% lower fails at m = N
    expect((1 - (1 - r * 0.99) ** N) * S).to.be.below(P);
    expect(() => kindAuditRate({ payment: 1n, stake: 10n, examples: 0 })).to.throw(/examples must be a positive integer, got 0/);
  });

  it("sampledExamples draws each example of the segment alone, the same on every call, at the rate", () => {
    expect(sampledExamples(secret, market, 7n, 3, 10, 1)).to.deep.equal([31, 32, 33, 34, 35, 36, 37, 38, 39, 40]);
    expect(sampledExamples(secret, market, 7n, 3, 10, 0)).to.deep.equal([]);
    const a = sampledExamples(secret, market, 7n, 2, 1000, 0.3);
    expect(sampledExamples(secret, market, 7n, 2, 1000, 0.3)).to.deep.equal(a);
    expect(a.every((e) => e > 2000 && e <= 3000)).to.equal(true);
    expect(a.length / 1000).to.be.within(0.25, 0.35);
    // another secret draws other examples (private: the provider cannot predict them)
    expect(sampledExamples("22".repeat(32), market, 7n, 2, 1000, 0.3)).to.not.deep.equal(a);
    expect(() => sampledExamples(secret, market, 7n, 0, 4, 1.5)).to.throw(RangeError, /rate 1.5 is not in \[0, 1\]/);
    expect(() => sampledExamples(secret, market, 7n, 0, 0, 0.5)).to.throw(RangeError, /examplesPerSegment 0/);
  });
});

describe("bot: audits evaluate and generate jobs", function () {
  this.timeout(900_000);
  const market = botMarketPerFile(600);
  let weights: Uint8Array;
  let evaluate: KindManifest;
  let generate: KindManifest;
  let honestEval: ExampleResult[];
  let honestGen: Uint8Array[];
  const dirs: string[] = [];

  before(async () => {
    // the model: the tiny char-transformer's initial weights (a model is a checkpoint; trained or not does not matter here)
    const t = tinyTransformerJson();
    const run = await createRun(parseManifest(t), { jobId: 0n, salt: offlineSalt(0n) });
    weights = run.checkpointBytes(run.initState());
    const base = { model: t.model, weightsCid: cidOf(weights), corpus: (t.corpora as object[])[0], data: t.data, harness: { engine: "pouw-engine-1", backend: "cpu", numerics: "bitwise", batch: 16 } };
    const probe = parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples: EXAMPLES, contentId: cidOf(new Uint8Array(1)) } });
    const contentId = await evalSetIdOf(probe);
    evaluate = { kind: "evaluate", manifest: parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, ...base, evalSet: { split: "test", examples: EXAMPLES, contentId } }) };
    generate = { kind: "generate", manifest: parseGenerateManifest({ version: 1, kind: GENERATE_KIND, ...base, prompts: { split: "test", examples: EXAMPLES, promptChars: 8, contentId }, sampling: { tokens: 12, temperatureMilli: 800, topK: 20, seed: 11 } }) };
    honestEval = await (await openKindJob(evaluate, weights, { jobId: 0n, examplesPerSegment: K })).results(0, EXAMPLES);
    const g = (await openKindJob(generate, weights, { jobId: 0n, examplesPerSegment: K })) as unknown as GenerateJob;
    honestGen = Array.from({ length: EXAMPLES }, (_, j) => g.sample(j));
  });
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  /** Posts `km` as a market job (the buyer's `buyer create` path), the provider commits `forge`'s segments; four bots. */
  /**
   * `rate`: the bots' least per-example rate; `unserved`: segments whose states file the provider never publishes;
   * `remoteDown`: the bots read through a layered store whose only other source, a server, is down (every miss is
   * SourceUnavailableError), with a grace of GRACE_S.
   */
  async function kindJob(tag: string, km: KindManifest, forge: (job: ExampleJob) => KindSegment[], o: { rate?: number; unserved?: readonly number[]; remoteDown?: boolean } = {}) {
    const kindAuditRate = o.rate;
    const unserved = o.unserved ?? [];
    const m = market();
    const dir = mkdtempSync(join(tmpdir(), `pouw-bot-kind-${tag}-`));
    dirs.push(dir);
    const store = new LocalDirStore(join(dir, "store"));
    const board = new SegmentBoard(join(dir, "board"), store);
    await store.put(weights);
    const { jobId } = await createKindJob({ clients: m.buyer, deployment: m.d, store }, km, { payment: PAYMENT, examplesPerSegment: K, overrides: { requiredStake: STAKE }, subject: tag });
    await acceptJob(m.cheat, { jobMarket: m.d.jobMarket, jobId });
    const job = await openKindJob(km, weights, { jobId, examplesPerSegment: K });
    const segments = forge(job);
    if (unserved.length === 0) await commitKindSegments(m.cheat, { jobMarket: m.d.jobMarket, jobId, store, segments });
    else {
      // a provider that commits segments whose states files it never publishes
      for (const sg of segments) {
        const checkpointCid = unserved.includes(sg.index) ? cidOf(sg.file) : await store.put(sg.file);
        await commitSegment(m.cheat, { jobMarket: m.d.jobMarket, jobId, segment: sg.index, stateHashes: [...sg.stateHashes], lossE6: sg.lossE6, checkpointCid });
      }
    }
    const lines: Line[] = [];
    const log = pino({ level: "debug", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    const botStore = o.remoteDown ? new LayeredStore(store, [new HttpContentStore(`http://127.0.0.1:${await deadPort()}`, { retries: 0, timeoutMs: 2_000 })]) : store;
    const bots = m.auditors.map(
      (a, i) =>
        new ChallengerBot({
          clients: a,
          deployment: m.d,
          store: botStore,
          ...(o.remoteDown ? { unavailableGraceS: GRACE_S } : {}),
          board,
          dbPath: join(dir, `bot${i}.sqlite`),
          dispute: chainDisputeHooks({ clients: a, deployment: m.d, ballotsDir: join(dir, `ballots${i}`) }),
          log: log.child({ bot: i }),
          ...(kindAuditRate === undefined ? {} : { kindAuditRate }),
        }),
    );
    return { m, jobId, job, bots, lines, store, board };
  }

  /** Ticks every bot until the job's first dispute resolves (the cheats do not appeal); returns the dispute. */
  async function disputedToTheEnd(k: Awaited<ReturnType<typeof kindJob>>) {
    const { m, jobId, bots } = k;
    for (const b of bots) await b.tick();
    const opened = await getJobDisputes(m.admin.public, { disputeGame: m.d.disputeGame!, jobId, fromBlock: BigInt(m.d.startBlock) });
    expect(opened, "a bot challenged the job").to.have.length(1);
    for (let round = 0; round < 6; round++) {
      await m.conn.networkHelpers.mine(2);
      const appeal = await getFaultAppeal(m.admin.public, { disputeGame: m.d.disputeGame!, disputeId: opened[0]!.disputeId });
      if (appeal.deadline !== undefined) await m.conn.networkHelpers.time.increaseTo(appeal.deadline + 1n);
      for (const b of bots) await b.tick();
      if ((await getDispute(m.admin.public, { disputeGame: m.d.disputeGame!, disputeId: opened[0]!.disputeId })).phase === "resolved") break;
    }
    return getDispute(m.admin.public, { disputeGame: m.d.disputeGame!, disputeId: opened[0]!.disputeId });
  }

  async function expectSlashed(k: Awaited<ReturnType<typeof kindJob>>) {
    const { m, jobId } = k;
    expect((await getJob(m.admin.public, { jobMarket: m.d.jobMarket, jobId })).status).to.equal("Refunded");
    const logs = await m.admin.public.getLogs({ address: m.d.stakeVault, fromBlock: BigInt(m.d.startBlock), toBlock: "latest" });
    const slashed = parseEventLogs({ abi: stakeVaultAbi, logs, eventName: "StakeSlashed" });
    expect(slashed).to.have.length(1);
    expect(slashed[0]!.args.provider).to.equal(m.cheat.account.address);
    expect(slashed[0]!.args.amount).to.equal(STAKE);
  }

  it("an honest evaluate job is audited at its deterrence rate or the bots' 5% floor, receipted, paid, and no bot warns about it on any tick", async () => {
    const k = await kindJob("honest", evaluate, (j) => kindSegments(j, honestEval));
    const { m, jobId, bots, lines } = k;
    for (let t = 0; t < 3; t++) for (const b of bots) await b.tick();
    const rate = kindAuditRate({ payment: PAYMENT, stake: STAKE, examples: EXAMPLES });
    // independent expectation: 1 - (1 - P/S)^(1/N) with P/S = 0.2
    expect(rate).to.be.closeTo(1 - 0.8 ** (1 / EXAMPLES), 1e-12);
    const used = Math.max(rate, DEFAULT_KIND_AUDIT_RATE); // 0.0275 here: the floor (0.05) rules
    expect(used).to.equal(0.05);
    for (const b of bots) {
      expect(b.db.job(jobId)!.auditRate).to.equal(used);
      expect(b.db.receipts().map((r) => r.segment).sort()).to.deep.equal([0, 1]);
      const secret = b.db.getMeta("samplingSecret")!;
      for (const s of [0, 1]) expect(b.db.segment(jobId, s)!.audit).to.equal("ok");
      expect(b.summary().intents.filter((i) => i.kind === "recordReceipt" && i.status === "confirmed")).to.have.length(2);
      // each audit recomputed exactly the examples this bot's private draw picked in that segment
      const started = lines.filter((l) => l.bot === bots.indexOf(b) && l.msg === "audit started").map((l) => ({ segment: l.segment, recompute: l.recompute }));
      expect(started).to.deep.equal([0, 1].map((s) => ({ segment: s, recompute: sampledExamples(secret, m.d.jobMarket, jobId, s, K, used) })));
      expect(b.summary().intents.some((i) => i.kind === "challenge")).to.equal(false);
    }
    const warned = lines.filter((l) => l.level >= 40 && (l.jobId === String(jobId) || /manifest/.test(l.msg)));
    expect(warned.map((l) => l.msg), "no warning about the kind job").to.deep.equal([]);
    expect(lines.filter((l) => /audit ok; receipt signed/.test(l.msg)).length).to.equal(8); // 4 bots x 2 segments
    const before = await creditsOf(m.cheat, { deployment: m.d });
    await m.conn.networkHelpers.time.increase(86_401);
    await finalize(m.buyer, { jobMarket: m.d.jobMarket, jobId });
    expect((await creditsOf(m.cheat, { deployment: m.d })).jobMarket - before.jobMarket).to.equal(PAYMENT);
    // the report shows the claimed score (checked against the last leaf) and the examples the receipts recomputed
    const drawn = bots.reduce((a, b) => a + [0, 1].reduce((x, s) => x + sampledExamples(b.db.getMeta("samplingSecret")!, m.d.jobMarket, jobId, s, K, used).length, 0), 0);
    const r = await collectJobReport({ client: m.admin.public, deployment: m.d, store: k.store, board: k.board, symbol: "PDT" }, jobId);
    expect(r.kind).to.deep.include({ kind: "evaluate", examples: EXAMPLES, committedExamples: EXAMPLES, leafCheck: "verified", examplesAudited: drawn, okReceipts: 8 });
    expect(r.kind!.claimed!.total).to.equal(honestEval.reduce((a, x) => a + x.score, 0n).toString());
    expect(renderJobReport(r)).to.match(/<h2>Result \(evaluate\)<\/h2>/);
    // each anchored receipt states the examples its auditor's draw recomputed, and the recompute bit only when there was one
    for (const rc of r.receipts) {
      const i = m.auditors.findIndex((a) => a.account.address === rc.auditor);
      const n = sampledExamples(bots[i]!.db.getMeta("samplingSecret")!, m.d.jobMarket, jobId, rc.segment, K, used).length;
      expect({ segment: rc.segment, sampledSteps: rc.sampledSteps, checks: rc.checks }).to.deep.equal({ segment: rc.segment, sampledSteps: n, checks: n > 0 ? ["recompute"] : [] });
    }
    for (const b of bots) b.close();
  });

  // rate: the bot's least per-example rate; 1 recomputes every example, so the bot names the first wrong one (the draw
  // itself is covered by the honest case). The inflated score is caught at the job's own rate: its running totals are
  // checked by hashing in every audit.
  const cheats: { name: string; km: () => KindManifest; example: number; rate?: number; unserved?: number[]; forge: (j: ExampleJob) => KindSegment[] }[] = [
    { name: "an evaluate provider that changes one example's output", km: () => evaluate, example: 3, rate: 1, forge: (j) => kindSegments(j, honestEval.map((r, i) => (i === 2 ? { ...r, item: ZERO32 } : r))) },
    { name: "an evaluate provider that skips examples (placeholders for 5..8)", km: () => evaluate, example: 5, rate: 1, forge: (j) => kindSegments(j, honestEval.map((r, i) => (i >= 4 ? { item: ZERO32, score: 0n, hits: 1n } : r))) },
    {
      name: "an evaluate provider that reports a better score than its leaves give (the last leaf's total and hits)",
      km: () => evaluate,
      example: 8,
      forge: (j) => {
        const states = statesOf(honestEval);
        const last = states[states.length - 1]!;
        states[states.length - 1] = { ...last, total: last.total / 2n, hits: last.hits + 3n };
        return segmentsOfStates(j, states);
      },
    },
    // example 1 is decided from the fixed initial state, so the claim names example 2, whose pre-state is in the file
    { name: "an evaluate provider that withholds its first segment's states file (honest leaves)", km: () => evaluate, example: 2, unserved: [0], forge: (j) => kindSegments(j, honestEval) },
    { name: "a generate provider that changes one sample", km: () => generate, example: 6, rate: 1, forge: (j) => kindSegments(j, honestGen.map((s, i) => sampleResult(i === 5 ? s.map((x) => (x + 1) % 96) : s))) },
  ];
  for (const cheat of cheats) {
    it(`${cheat.name} is challenged by a bot on example ${cheat.example}, judged Fault by the bots' panel and slashed`, async () => {
      const k = await kindJob(cheat.name.split(" ")[3]!, cheat.km(), cheat.forge, { ...(cheat.rate === undefined ? {} : { rate: cheat.rate }), ...(cheat.unserved ? { unserved: cheat.unserved } : {}) });
      const d = await disputedToTheEnd(k);
      expect(Number(d.step)).to.equal(cheat.example);
      expect(d.outcome).to.equal("PanelFault");
      expect(d.faultVotes).to.equal(3);
      await expectSlashed(k);
      for (const b of k.bots) b.close();
    });
  }
  it("a states file no source serves is postponed within the grace, then its first file-read example is challenged and slashed", async () => {
    const k = await kindJob("unreachable", evaluate, (j) => kindSegments(j, honestEval), { unserved: [1], remoteDown: true });
    const { m, jobId, bots, lines } = k;
    for (const b of bots) await b.tick();
    // within the grace: segment 0 audited (receipt), segment 1 postponed, nothing challenged
    expect(await getJobDisputes(m.admin.public, { disputeGame: m.d.disputeGame!, jobId, fromBlock: BigInt(m.d.startBlock) })).to.have.length(0);
    expect(lines.some((l) => /audit postponed: the segment's content is unavailable from every source/.test(l.msg))).to.equal(true);
    for (const b of bots) expect(b.db.segment(jobId, 0)!.audit).to.equal("ok");
    await m.conn.networkHelpers.time.increase(GRACE_S + 1);
    const d = await disputedToTheEnd(k);
    expect(Number(d.step)).to.equal(K + 1);
    expect(d.outcome).to.equal("PanelFault");
    await expectSlashed(k);
    for (const b of bots) b.close();
  });
});
