/**
 * The last segment is recomputed whatever the job's audit rate (bot.ts sample): its end state is the delivered model,
 * and no later segment's screen starts from it. At audit rate 0.05, with every bot's sampling secret chosen so that
 * none of the job's three segments is sampled (seeded, not luck), a provider that plants weights at step 10 (segment 2,
 * the last) and one that does no work at all while advancing Adam's powers (skip-powers, which every screen passes) are
 * both challenged at the first wrong step of the last segment and slashed. The quote prices exactly this: the
 * whole-job vertex of skip-powers and the last-segment vertex of a plant are caught with probability 1.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { getJob } from "../../verifier/src/chain/index.ts";
import { actionSetFromMatrix, everySegmentDetection, parseDetectionMatrix, setDetection, strategyVertices } from "../../verifier/src/policy/index.ts";
import { isLastSegment, isSampled } from "../../verifier/src/bot/sampler.ts";
import { cheatingJob, passAppealWindows, unsampledSecrets } from "./fixture.ts";

const RATE = 0.05;
const SEGMENTS = 3;

describe("bot: the last segment is recomputed whatever the audit rate", function () {
  this.timeout(300_000);

  it("the quote prices the last segment at rate 1: skip-powers over the whole job and a last-segment plant are caught with probability 1", () => {
    const matrix = parseDetectionMatrix(JSON.parse(readFileSync("bench/results/detection.json", "utf8")));
    const actions = actionSetFromMatrix(matrix);
    const set = actions.checks.filter((c) => c.name === "recompute" || c.name === "screen");
    for (const name of ["skip-powers", "plant:10"]) {
      const s = actions.strategies.find((x) => x.name === name);
      expect(s, `${name} in the committed detection matrix`).to.not.equal(undefined);
      const v = strategyVertices(s!, setDetection(s!, set), everySegmentDetection(s!, set, actions), RATE, SEGMENTS, 1, { lastSegmentAudited: true });
      // skip-powers: the whole-job vertex; plant:10: its only vertex (injected in the last segment)
      expect(v[0]!.Q, name).to.equal(1);
    }
  });

  it("skip-powers on every segment but the last is caught at the quote's rate 1 - (1 - p)^(N - 1): the bot samples the others at p, the last always", () => {
    const matrix = parseDetectionMatrix(JSON.parse(readFileSync("bench/results/detection.json", "utf8")));
    const actions = actionSetFromMatrix(matrix);
    const set = actions.checks.filter((c) => c.name === "recompute" || c.name === "screen");
    const s = actions.strategies.find((x) => x.name === "skip-powers")!;
    const p = 0.25;
    const [all, allButLast, lastAlone] = strategyVertices(s, setDetection(s, set), everySegmentDetection(s, set, actions), p, SEGMENTS, 1, { lastSegmentAudited: true });
    expect([all!.Q, lastAlone!.Q]).to.deep.equal([1, 1]);
    expect(allButLast!.Q).to.be.closeTo(1 - (1 - p) ** (SEGMENTS - 1), 1e-15);
    // 4000 auditors (seeded secrets): the share that audits segment 0 or 1 of a job, where the cheat is (recompute
    // detects every skipped segment: the matrix's recompute rate is 1), against the claimed Q; the last always
    const market = "0x5FbDB2315678afecb367f032d93F642f64180aa3" as const;
    let caught = 0;
    const trials = 4000;
    for (let i = 0; i < trials; i++) {
      const secret = createHash("sha256").update(`auditor ${i}`).digest("hex");
      if ([0, 1].some((seg) => isSampled(secret, market, 7n, seg, p))) caught++;
    }
    const tiny = { manifest: { training: { steps: 12, stepsPerSegment: 4 } } } as Parameters<typeof isLastSegment>[0];
    expect([0, 1, 2].map((seg) => isLastSegment(tiny, seg))).to.deep.equal([false, false, true]);
    const sd = Math.sqrt((allButLast!.Q * (1 - allButLast!.Q)) / trials);
    expect(caught / trials).to.be.closeTo(allButLast!.Q, 4 * sd);
  });

  for (const [strategy, step] of [["plant:10", 10], ["skip-powers", 9]] as const) {
    it(`${strategy}: nothing sampled, the last segment's recompute names step ${step}, the panel slashes the provider`, async () => {
      const { conn, admin, d, jobId, bot, dir, disputes } = await cheatingJob(`last-${strategy.replace(/:/g, "-")}`, 600, { strategy, auditRate: RATE });
      unsampledSecrets(dir, d.jobMarket, jobId, SEGMENTS, RATE);
      const bots = [0, 1, 2, 3].map((i) => bot(i));
      for (const b of bots) await b.tick();
      // the last segment was audited although the sampler skipped every segment at this rate
      const summary = bots[0]!.summary();
      expect(summary.audits.map((a) => [a.segment, a.ok, a.firstBadStep])).to.deep.equal([[SEGMENTS - 1, false, step]]);
      expect(summary.sampledOut).to.equal(SEGMENTS - 1);
      expect((await disputes()).map((o) => o.step)).to.deep.equal([step]);
      for (let round = 0; round < 6; round++) {
        await conn.networkHelpers.mine(2);
        await passAppealWindows(conn, admin.public, d.disputeGame!);
        for (const b of bots) await b.tick();
      }
      expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Refunded");
      for (const b of bots) b.close();
    });
  }
});
