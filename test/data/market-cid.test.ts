/**
 * The buyer's own data in the market, in-process (test/bot/fixture.ts: a fresh network with the market, a DisputeGame
 * and four bonded auditors): a buyer posts a tabular-mlp job naming its data set only by CID (the canonical bytes are in
 * the content store the parties share, never an npm package); the provider's runner fetches the bytes by CID, checks them
 * and trains; the challenger bot fetches and checks them too and audits every segment. Honest: clean audits, receipts,
 * and the provider is paid at finalize. A `copy` of that job's trace committed for a second job (another job id, so
 * another salt and another state-hash key): the bot flags it at step 1 and challenges it.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { commitSegment, finalize, getCredits, getJob } from "../../verifier/src/chain/index.ts";
import { parseTabular, tabularContent } from "../../verifier/src/data/index.ts";
import { createRun, deploymentSalt, parseStrategy, train, readTraceFile } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { Rng } from "../../verifier/src/ml/prng.ts";
import { botMarket, postCheatingJob } from "../bot/fixture.ts";

/** 600 rows, 4 features, 3 classes; decimals with three places, in a fixed order. */
function csv(): string {
  const rng = new Rng(21, "market-cid", 0);
  const lines = ["a,b,c,d,label"];
  for (let i = 0; i < 600; i++) {
    const x = [0, 1, 2, 3].map(() => (rng.nextInt(2001) - 1000) / 1000);
    lines.push(`${x.join(",")},${x[0]! + x[1]! > 0 ? (x[2]! > 0 ? "hi" : "mid") : "lo"}`);
  }
  return lines.join("\n") + "\n";
}

describe("data sets by content id in the market: provider and challenger bot fetch by CID", function () {
  this.timeout(600_000);
  const data = tabularContent(parseTabular(new TextEncoder().encode(csv()), { format: "csv" }));
  const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
  const base = {
    ...tiny,
    model: { arch: "tabular-mlp", hidden: 8, inputs: 4, classes: 3 },
    corpora: [{ name: "buyer-rows", contentId: data.cid, licence: "CC0-1.0", declaredTokens: 600, payoutAddress: "0x00000000000000000000000000000000000000d1" }],
    data: { seed: 4 },
    training: { batchSize: 16, steps: 12, stepsPerSegment: 4 },
  };

  it("honest: audited clean from the bytes by CID and paid; a copy of it for another job is challenged", async () => {
    const market = await botMarket(600);
    const honest = await postCheatingJob(market, "cid-honest", { base, content: [data.bytes], strategy: "honest" });
    expect(honest.manifest.corpora[0]!.package).to.equal(undefined);
    const bot = honest.bot(0);
    try {
      await bot.startup();
      for (let t = 0; t < 4 && bot.summary().receipts < 3; t++) {
        await bot.tick();
        await honest.conn.networkHelpers.mine();
      }
      const s = bot.summary();
      expect(s.audits.map((a) => [a.segment, a.ok])).to.deep.equal([[0, true], [1, true], [2, true]]);
      expect(s.receipts).to.equal(3);
    } finally {
      bot.close();
    }
    await honest.conn.networkHelpers.time.increase(Number(honest.policy.challengeWindow) + 1);
    const before = await getCredits(honest.admin.public, { deployment: honest.d, account: honest.cheat.account.address });
    await finalize(honest.admin, { jobMarket: honest.d.jobMarket, jobId: honest.jobId });
    expect((await getJob(honest.admin.public, { jobMarket: honest.d.jobMarket, jobId: honest.jobId })).status).to.equal("Finalized");
    const after = await getCredits(honest.admin.public, { deployment: honest.d, account: honest.cheat.account.address });
    expect(after.jobMarket - before.jobMarket, "the provider is paid the job's payment").to.equal(honest.payment);

    // the copy: job 2 on the same market, committed with job 1's states rekeyed to job 2 (pouw train's copy strategy)
    const copy = await postCheatingJob(market, "cid-copy", { base, content: [data.bytes], train: false });
    expect(copy.jobId).to.not.equal(honest.jobId);
    const work = mkdtempSync(join(tmpdir(), "pouw-cid-copy-"));
    const peer = await createRun(honest.manifest, { jobId: honest.jobId, salt: deploymentSalt(honest.d, honest.jobId), store: honest.store });
    await train(peer, { outDir: join(work, "peer"), strategy: parseStrategy("honest") });
    const run = await createRun(copy.manifest, { jobId: copy.jobId, salt: deploymentSalt(copy.d, copy.jobId), store: copy.store });
    await train(run, { outDir: join(work, "copy"), strategy: parseStrategy(`copy:${join(work, "peer")}`) });
    const trace = await readTraceFile(join(work, "copy", "trace.json"));
    const copied = new LocalDirStore(join(work, "copy", trace.store));
    const K = trace.stepsPerSegment;
    for (const seg of trace.segments) {
      await copy.store.put(await copied.get(seg.checkpointCid));
      await commitSegment(copy.cheat, {
        jobMarket: copy.d.jobMarket,
        jobId: copy.jobId,
        segment: seg.index,
        stateHashes: trace.stateHashes.slice(seg.index * K, (seg.index + 1) * K + 1) as Hex[],
        lossE6: BigInt(seg.lossE6),
        checkpointCid: seg.checkpointCid,
      });
    }
    const cheatBot = copy.bot(1);
    try {
      await cheatBot.startup();
      let disputes = await copy.disputes();
      for (let t = 0; t < 12 && disputes.length === 0; t++) {
        await cheatBot.tick();
        disputes = await copy.disputes();
        if (disputes.length === 0) await copy.conn.networkHelpers.mine();
      }
      const row = cheatBot.db.segment(copy.jobId, 0)!;
      expect(row.audit).to.equal("bad");
      expect(row.firstBadStep, "the copied states diverge at the first step").to.equal(1);
      expect(row.detail).to.match(/^state-divergence/);
      expect(disputes.length, "the copied commit is challenged").to.be.greaterThan(0);
    } finally {
      cheatBot.close();
    }
  });
});
