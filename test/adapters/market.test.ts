/**
 * A LoRA adapter job through the market under the challenger bot: the buyer posts a manifest naming a frozen base by
 * CID (the final checkpoint of an earlier job, in the store), the provider trains the adapter, the bots audit it by
 * recomputation (adapter jobs have no step witness) and receipt it; a provider that plants weights into its adapter
 * is challenged at the planted step and slashed.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { getJob } from "../../verifier/src/chain/index.ts";
import { createRun, offlineSalt, parseManifest, train } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { cheatingJob, passAppealWindows } from "../bot/fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
const sotu = JSON.parse(readFileSync(new URL("../../examples/sotu-v2.json", import.meta.url), "utf8"));

const model = { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16 };
const baseJob = { ...tiny, model, init: { seed: 21 }, corpora: sotu.corpora, data: sotu.data, optimizer: { name: "adam", lr: 0.003 }, training: { batchSize: 4, steps: 6, stepsPerSegment: 2 }, numerics: "bitwise-v2", stateDigest: "sha256-v2" };
const adapterJob = (cid: string) => ({
  ...baseJob,
  init: { checkpointCid: cid, optimizerState: "fresh" },
  data: { ...sotu.data, seed: 77 },
  optimizer: { name: "adam", lr: 0.01 },
  adapter: { kind: "lora", rank: 2, targets: ["wq", "wv"], alpha: 4, seed: 5 },
});

describe("adapters: a LoRA job through the market and the challenger bot", function () {
  this.timeout(600_000);
  let base: { cid: string; bytes: Uint8Array };
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-lora-base-"));
    const { trace } = await train(await createRun(parseManifest(baseJob), { jobId: 99n, salt: offlineSalt(99n) }), { outDir: dir, strategy: { kind: "honest" }, evaluate: false });
    base = { cid: trace.finalCheckpointCid, bytes: await new LocalDirStore(join(dir, "store")).get(trace.finalCheckpointCid) };
  });

  it("an honest adapter job: every segment recomputed and receipted, nobody challenged", async () => {
    const f = await cheatingJob("lora-honest", 600, { strategy: "honest", base: adapterJob(base.cid), content: [base.bytes] });
    expect(f.manifest.adapter?.rank).to.equal(2);
    const bot = f.bot(0);
    await bot.tick();
    await bot.tick();
    expect(bot.summary().receipts).to.equal(3); // audit rate 1
    expect(await f.disputes()).to.deep.equal([]);
    bot.close();
  });

  it("a planted adapter (plant:3): the bots challenge step 3 and the provider is slashed", async () => {
    const { conn, admin, d, jobId, bot, disputes } = await cheatingJob("lora-plant", 600, { strategy: "plant:3", base: adapterJob(base.cid), content: [base.bytes] });
    const bots = [0, 1, 2, 3].map((i) => bot(i));
    for (const b of bots) await b.tick();
    expect((await disputes()).map((o) => o.step)).to.deep.equal([3]);
    for (let round = 0; round < 6; round++) {
      await conn.networkHelpers.mine(2);
      await passAppealWindows(conn, admin.public, d.disputeGame!); // the cheater does not appeal the unanimous Fault
      for (const b of bots) await b.tick();
    }
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Refunded");
    for (const b of bots) b.close();
  });
});
