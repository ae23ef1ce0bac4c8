/**
 * The buyer's broken fine-tuning base must not slash an honest provider. The attacker is a buyer with its own bonded
 * auditor address (auditor 0): it posts a fine-tuning job whose base checkpoint holds a NaN in one weight. The honest
 * provider trains the job exactly by the rule (h(0) = the base's weights + a fresh optimizer state, then the engine's
 * step), which is deterministic: every state after h(0) holds NaNs too and every leaf matches recomputation. Here the
 * provider is one whose client did not check the base at accept (`pouw provider accept` and `run` now refuse it,
 * test/provider/base-check.test.ts), so the test commits the honest trajectory itself.
 *
 * Before the fix: every bot's audit found `state-non-finite` at segment 0's start, claimed step 1, challenged, and the
 * panel voted Fault (decideStep's openSegment failed the same way): the honest provider was slashed, job Refunded.
 * Now: the pipeline checks the job's own h(0) before it holds any failure against the provider; a non-finite h(0) is a
 * BaseCheckpointError (CANNOT AUDIT, logged at error, no challenge), and a panel member votes Valid on a challenge of
 * such a job, so the attacker's own challenge (auditor 0, by hand) loses its bond and the provider keeps its stake.
 * (A verified non-finite state is no fault by itself either, test/bot/diverging.test.ts: segments 1 and 2, which start
 * from such states, recompute clean; only segment 0, opened from h(0), and every screen are CANNOT AUDIT.)
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import pino from "pino";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { commitSegment, getJob, getSegmentCommits, getStakeAccount } from "../../verifier/src/chain/index.ts";
import { openChallenge } from "../../verifier/src/dispute/index.ts";
import { createRun, deploymentSalt, offlineSalt, parseManifest } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import type { Hex } from "viem";
import { cheatingJob, type CheatingJob } from "./fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));

/** A decodable base checkpoint of tiny.json's model and optimizer with weight W1[3] set to `value`. */
async function brokenBase(value: number): Promise<{ cid: string; bytes: Uint8Array }> {
  const run = await createRun(parseManifest(tiny), { jobId: 99n, salt: offlineSalt(99n) });
  const s = run.initState();
  s.params[0]![3] = value;
  const bytes = run.checkpointBytes(s);
  const cid = await new LocalDirStore(mkdtempSync(join(tmpdir(), "pouw-bad-base-"))).put(bytes);
  await run.close();
  return { cid, bytes };
}

/** What an honest provider that did not check the base commits: the rule's trajectory from h(0), every segment. */
async function commitHonestTrajectory(f: CheatingJob): Promise<{ segment: number; checkpointCid: string; stateHashes: Hex[] }[]> {
  const run = await createRun(f.manifest, { jobId: f.jobId, salt: deploymentSalt(f.d, f.jobId) });
  const K = f.manifest.training.stepsPerSegment;
  let state = await run.initFromStore(f.store);
  const out = [];
  for (let seg = 0; seg < f.manifest.training.steps / K; seg++) {
    const checkpointCid = await f.store.put(run.checkpointBytes(state));
    const hashes: Hex[] = [run.stateHashOf(state)];
    for (let t = seg * K + 1; t <= (seg + 1) * K; t++) {
      state = run.step(state, t).state;
      hashes.push(run.stateHashOf(state));
    }
    await commitSegment(f.cheat, { jobMarket: f.d.jobMarket, jobId: f.jobId, segment: seg, stateHashes: hashes, lossE6: 0n, checkpointCid });
    out.push({ segment: seg, checkpointCid, stateHashes: hashes });
  }
  await run.close();
  return out;
}

describe("bot: a buyer's non-finite fine-tuning base does not slash the honest provider", function () {
  this.timeout(300_000);

  it("no bot challenges (CANNOT AUDIT), the attacker's own challenge of step 1 is voted Valid, the provider keeps its stake", async () => {
    const base = await brokenBase(Number.NaN);
    const f = await cheatingJob("bad-base", 600, { base: { ...tiny, init: { checkpointCid: base.cid, optimizerState: "fresh" } }, content: [base.bytes], train: false });
    const { conn, admin, d, jobId } = f;
    const lockedBefore = (await getStakeAccount(admin.public, { stakeVault: d.stakeVault, provider: f.cheat.account.address })).locked;
    const commits = await commitHonestTrajectory(f);
    // the honest bots (1..3; auditor 0 is the buyer's and runs no bot) audit every segment (audit rate 1)
    const lines: { level: number; msg: string; problem?: string }[] = [];
    const log = pino({ level: "debug", base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const recorded = new ChallengerBot({ clients: f.auditors[1]!, deployment: d, store: f.store, board: f.board, dbPath: join(f.dir, "bot1.sqlite"), dispute: f.hooks(f.auditors[1]!, 1), log });
    const bots = [recorded, f.bot(2), f.bot(3)];
    for (let round = 0; round < 3; round++) {
      for (const b of bots) await b.tick();
      await conn.networkHelpers.mine(2);
    }
    expect(await f.disputes(), "no honest bot challenges the honest provider").to.deep.equal([]);
    for (const b of bots) {
      const rows = [0, 1, 2].map((s) => b.db.segment(jobId.toString(), s)!);
      // segment 0 opens from h(0): CANNOT AUDIT; segments 1 and 2 start from verified (non-finite) states and their
      // steps reproduce the leaves (the rule's trajectory): ok, but their starts' screens are CANNOT AUDIT, no receipt
      expect(rows.map((r) => r.audit)).to.deep.equal(["error", "ok", "ok"]);
      expect(rows[0]!.detail).to.match(/cannot audit: .*base checkpoint .* non-finite/i);
      for (const r of rows) expect(r.screen).to.match(/^error: cannot audit: .*base checkpoint .* non-finite/i);
      expect(b.summary().receipts).to.equal(0);
    }

    // an error a person sees, per segment, naming the base and why (audit and screen)
    const cannot = lines.filter((l) => l.level === 50 && l.msg.startsWith("CANNOT AUDIT"));
    expect(cannot.length).to.be.greaterThanOrEqual(3);
    expect(cannot[0]!.msg).to.contain(base.cid).and.contain("non-finite h(0)").and.contain("not the provider's fault");
    expect(cannot.every((l) => l.problem === "non-finite")).to.equal(true);

    // the attacker challenges step 1 by hand with the provider's own on-chain leaves (a start claim, as the bots made)
    const [seg0] = await getSegmentCommits(admin.public, { jobMarket: d.jobMarket, jobId, fromBlock: BigInt(d.startBlock) });
    expect(seg0!.stateHashes).to.deep.equal(commits[0]!.stateHashes);
    const tree = new SegmentTree(0, seg0!.stateHashes);
    const claim = { segment: 0, traceRoot: seg0!.traceRoot, step: 1, prevStateHash: tree.stateHashes[0]!, prevProof: tree.proof(0), stateHash: tree.stateHashes[1]!, proof: tree.proof(1) };
    const { disputeId } = await openChallenge(f.auditors[0]!, { disputeGame: d.disputeGame!, token: d.token, jobId, audit: claim, endStateHash: seg0!.endStateHash });
    for (let round = 0; round < 8 && (await f.dispute(disputeId)).phase !== "resolved"; round++) {
      await conn.networkHelpers.mine(2);
      for (const b of bots) await b.tick();
    }
    const dispute = await f.dispute(disputeId);
    expect(dispute.outcome).to.equal("PanelValid");
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.not.equal("Refunded");
    expect((await getStakeAccount(admin.public, { stakeVault: d.stakeVault, provider: f.cheat.account.address })).locked).to.equal(lockedBefore);
    for (const b of bots) b.close();
  });
});
