/**
 * The provider refuses a fine-tuning job whose base checkpoint gives no usable h(0) before anything is at risk: the
 * accept check (`pouw provider accept` calls checkJobBeforeAccept before acceptJob) and `runProviderJob` (before any
 * commit). The attacker is the buyer, who posts the job with a base that holds a NaN, holds an infinity, does not
 * decode, or that it never publishes. A seed-init job and a usable base pass (the control).
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther } from "viem";
import { cancelJob, getJob, getSegmentCommits, getStakeAccount, mintTestToken } from "../../verifier/src/chain/index.ts";
import { BaseCheckpointError } from "../../verifier/src/checks/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { checkJobBeforeAccept } from "../../verifier/src/provider/check-base.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { cheatingJob } from "../bot/fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));

/** Bytes of a tiny.json checkpoint with W1[3] = value. */
async function baseBytes(value: number): Promise<Uint8Array> {
  const run = await createRun(parseManifest(tiny), { jobId: 99n, salt: offlineSalt(99n) });
  const s = run.initState();
  s.params[0]![3] = value;
  const bytes = run.checkpointBytes(s);
  await run.close();
  return bytes;
}

const caught = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe("provider: a fine-tuning base that gives no usable h(0) is refused at accept and before any commit", function () {
  this.timeout(300_000);

  it("accept: NaN, infinity, undecodable and missing bases are refused with BaseCheckpointError, no stake locked; the buyer cancels; a usable base and a seed job pass", async () => {
    const nan = await baseBytes(Number.NaN);
    const f = await cheatingJob("base-accept", 600, { base: tiny, train: false });
    const ctx = { clients: f.cheat, deployment: f.d, store: f.store };
    const cids = {
      nan: await f.store.put(nan),
      inf: await f.store.put(await baseBytes(Number.POSITIVE_INFINITY)),
      invalid: await f.store.put(new TextEncoder().encode("not a checkpoint")),
      missing: "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m",
      usable: await f.store.put(await baseBytes(0.25)),
    };
    await mintTestToken(f.buyer, { token: f.d.token, to: f.buyer.account.address, amount: parseEther("10") });
    const post = async (cid: string) => {
      const m = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 }, init: { checkpointCid: cid, optimizerState: "fresh" } });
      return (await postJob(f.buyer, f.d, f.store, m, f.policy, f.payment)).jobId;
    };
    const locked = async () => (await getStakeAccount(f.admin.public, { stakeVault: f.d.stakeVault, provider: f.cheat.account.address })).locked;
    const before = await locked();
    for (const [kind, problem, text] of [
      ["nan", "non-finite", /W1\[3\] is NaN/],
      ["inf", "non-finite", /W1\[3\] is Infinity/],
      ["invalid", "invalid", /does not decode/],
      ["missing", "missing", /not served by any source/],
    ] as const) {
      const jobId = await post(cids[kind]);
      const err = await caught(checkJobBeforeAccept(ctx, jobId));
      expect(err, kind).to.be.instanceOf(BaseCheckpointError);
      expect((err as BaseCheckpointError).problem).to.equal(problem);
      expect((err as BaseCheckpointError).shortMessage).to.match(new RegExp(`^job ${jobId}: the job's base checkpoint ${cids[kind]} `)).and.match(text).and.match(/not accepted \(no stake locked\)/);
      expect(await locked()).to.equal(before);
      expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId })).status).to.equal("Open");
      await cancelJob(f.buyer, { jobMarket: f.d.jobMarket, jobId }); // the job's economic end: the buyer's refund
      expect((await getJob(f.admin.public, { jobMarket: f.d.jobMarket, jobId })).status).to.equal("Cancelled");
    }
    // the control: a usable base and a seed-init job are accepted by the check (it returns the manifest)
    expect((await checkJobBeforeAccept(ctx, await post(cids.usable))).init).to.deep.equal({ checkpointCid: cids.usable, optimizerState: "fresh" });
    expect((await checkJobBeforeAccept(ctx, f.jobId)).init).to.deep.equal({ seed: tiny.init.seed });
  });

  it("run: a provider that accepted a NaN-base job (a client without the check) commits nothing and gets a named error", async () => {
    const nan = await baseBytes(Number.NaN);
    const cid = await new LocalDirStore(mkdtempSync(join(tmpdir(), "pouw-base-cid-"))).put(nan);
    const f0 = await cheatingJob("base-run", 600, { base: { ...tiny, init: { checkpointCid: cid, optimizerState: "fresh" } }, content: [nan], train: false });
    const err = await caught(runProviderJob({ clients: f0.cheat, deployment: f0.d, store: f0.store, board: f0.board, stateDir: join(f0.dir, "state") }, f0.jobId, { strategy: parseStrategy("honest") }));
    expect(err).to.be.instanceOf(BaseCheckpointError);
    expect((err as BaseCheckpointError).shortMessage).to.match(/non-finite h\(0\).*not trained \(nothing committed\)$/);
    expect(await getSegmentCommits(f0.admin.public, { jobMarket: f0.d.jobMarket, jobId: f0.jobId, fromBlock: BigInt(f0.d.startBlock) })).to.deep.equal([]);
  });
});
