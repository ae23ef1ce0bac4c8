/**
 * Fine-tuning jobs (manifest init.checkpointCid) under the challenger bot. The base checkpoint is the final state of a
 * short earlier honest run of the same model with Adam (examples/tiny.json, another job), published by the buyer.
 *
 * An earlier rule had h(0) carry the base's Adam state (moments and the bias-correction powers of the base's last
 * step) with the step reset to 0, so every later segment start of an HONEST fine-tuning job failed the screen with
 * optimizer-state-invalid: the bot recomputed, found the steps right, and signed no receipt for those segments. Now
 * a fine-tuning job starts from the base's weights with a fresh optimizer state (init.optimizerState "fresh"), so the
 * honest job passes the screen everywhere and is receipted, and a provider that plants moments in a fine-tuning job
 * is still caught by the screen in a segment nobody sampled, challenged and slashed.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { getJob } from "../../verifier/src/chain/index.ts";
import { createRun, offlineSalt, parseManifest, train } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { cheatingJob, passAppealWindows, unsampledSecrets } from "./fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));

/** A base checkpoint: the final state of an honest 12-step tiny run (job 99, offline), and its bytes. */
async function baseCheckpoint(): Promise<{ cid: string; bytes: Uint8Array }> {
  const dir = mkdtempSync(join(tmpdir(), "pouw-ft-base-"));
  const { trace } = await train(await createRun(parseManifest(tiny), { jobId: 99n, salt: offlineSalt(99n) }), { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
  return { cid: trace.finalCheckpointCid, bytes: await new LocalDirStore(join(dir, "store")).get(trace.finalCheckpointCid) };
}

const fineTune = (cid: string) => ({ ...tiny, init: { checkpointCid: cid, optimizerState: "fresh" } });

describe("bot: fine-tuning jobs and the state screen", function () {
  this.timeout(300_000);
  let base: { cid: string; bytes: Uint8Array };
  before(async () => {
    base = await baseCheckpoint();
  });

  it("an honest fine-tuning job: every segment's start passes the screen, every segment is receipted, nobody is challenged", async () => {
    const f = await cheatingJob("ft-honest", 600, { strategy: "honest", base: fineTune(base.cid), content: [base.bytes] });
    const bot = f.bot(0);
    await bot.tick();
    await bot.tick();
    expect(bot.summary().screens.map((r) => r.screen)).to.deep.equal(["ok", "ok", "ok"]);
    expect(bot.summary().receipts).to.equal(3); // audit rate 1: every segment recomputed and receipted
    expect(await f.disputes()).to.deep.equal([]);
    bot.close();
  });

  it("state-poison:2 in a fine-tuning job nobody samples: the screen of segment 1's start fails, the bot recomputes segment 0, challenges step 2, and the provider is slashed", async () => {
    const RATE = 0.05;
    const { conn, admin, d, jobId, bot, dir, disputes } = await cheatingJob("ft-poison", 600, { strategy: "state-poison:2", auditRate: RATE, base: fineTune(base.cid), content: [base.bytes] });
    // a sampling secret per bot under which none of the job's 3 segments is sampled (seeded, not luck)
    unsampledSecrets(dir, d.jobMarket, jobId, 3, RATE);
    const bots = [0, 1, 2, 3].map((i) => bot(i));
    for (const b of bots) await b.tick();
    const rows = bots[0]!.summary().screens;
    expect(rows.map((r) => r.screen?.split(":")[0])).to.deep.equal(["ok", "bad", "bad"]);
    expect(rows[1]!.screen).to.match(/moment/);
    expect((await disputes()).map((o) => o.step)).to.deep.equal([2]);
    for (let round = 0; round < 6; round++) {
      await conn.networkHelpers.mine(2);
      await passAppealWindows(conn, admin.public, d.disputeGame!);
      for (const b of bots) await b.tick();
    }
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Refunded");
    for (const b of bots) expect(b.summary().receipts).to.equal(0);
    for (const b of bots) b.close();
  });
});
