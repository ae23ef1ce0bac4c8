/**
 * A buyer's manifest whose honest training diverges to NaN must not slash the honest provider. The attacker is a buyer
 * with its own bonded auditor address (auditor 0): it posts tiny.json with Adam's learning rate 1e30. The rule's
 * trajectory overflows at step 2 (state 1 is finite, state 2 holds NaNs, and so does every state after it); the honest
 * provider trains it exactly (`pouw provider run`'s runProviderJob, strategy honest) and commits every segment.
 *
 * Before the fix: segment 1's start checkpoint (state 4) decoded, matched its leaf and was then failed as
 * `state-non-finite` by the opening itself (segment.ts fetchState), which carries a claim at the segment's first step
 * (step 5): every bot challenged it, the panel (decideStep opens the segment the same way) voted Fault, the honest
 * provider was slashed and the buyer refunded. Now a verified non-finite state is no failure of the segment it opens:
 * only the recompute of the step that produced it (segment 0, step 2, a finite verified predecessor) decides, and it
 * reproduces the committed leaf. So no bot challenges, and the buyer's hand challenges (step 5, the start claim the
 * bots made; step 2, where the NaN appeared) are voted Valid: the provider keeps its stake.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { getJob, getSegmentCommits, getStakeAccount } from "../../verifier/src/chain/index.ts";
import { nonFinite } from "../../verifier/src/checks/index.ts";
import { openChallenge } from "../../verifier/src/dispute/index.ts";
import { createRun, deploymentSalt } from "../../verifier/src/ml/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import { cheatingJob } from "./fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));

describe("bot: a buyer's diverging manifest (lr 1e30, NaN from step 2) does not slash the honest provider", function () {
  this.timeout(600_000);

  it("no bot challenges; the buyer's hand challenges of step 5 (segment 1's start) and step 2 are voted Valid; the stake stays locked", async () => {
    const base = { ...tiny, optimizer: { name: "adam", lr: 1e30 } };
    const lockedOf = async (f: { admin: typeof g.admin; d: typeof g.d; cheat: typeof g.cheat }) =>
      (await getStakeAccount(f.admin.public, { stakeVault: f.d.stakeVault, provider: f.cheat.account.address })).locked;
    const g = await cheatingJob("diverging", 600, { base, strategy: "honest" });
    const { conn, admin, d, jobId } = g;
    const locked = await lockedOf(g);
    expect(locked > 0n).to.equal(true);

    // the job really diverges: state 1 finite, state 2 (and segment 1's and 2's start checkpoints) non-finite
    const commits = await getSegmentCommits(admin.public, { jobMarket: d.jobMarket, jobId, fromBlock: BigInt(d.startBlock) });
    expect(commits.length).to.equal(3);
    const run = await createRun(g.manifest, { jobId, salt: deploymentSalt(d, jobId) });
    const s1 = run.step(run.initState(), 1).state;
    expect(nonFinite(run, s1)).to.equal(null);
    expect(run.stateHashOf(s1)).to.equal(commits[0]!.stateHashes[1]);
    expect(nonFinite(run, run.step(s1, 2).state)).to.match(/is NaN/);
    for (const seg of [1, 2]) {
      const start = run.loadCheckpoint(await g.store.get(commits[seg]!.checkpointCid), { step: seg * 4 });
      expect(run.stateHashOf(start)).to.equal(commits[seg]!.stateHashes[0]);
      expect(nonFinite(run, start), `segment ${seg}'s start`).to.match(/is NaN/);
    }
    await run.close();

    // the honest bots (1..3; auditor 0 is the buyer's and runs no bot) audit and screen every segment (audit rate 1)
    const bots = [g.bot(1), g.bot(2), g.bot(3)];
    for (let round = 0; round < 3; round++) {
      for (const b of bots) await b.tick();
      await conn.networkHelpers.mine(2);
    }
    expect(await g.disputes(), "no honest bot challenges the honest provider").to.deep.equal([]);
    for (const b of bots) for (const s of [0, 1, 2]) expect(b.db.segment(jobId.toString(), s)!.audit, `bot segment ${s}`).to.equal("ok");

    // the buyer challenges by hand with the provider's own on-chain leaves
    for (const [seg, step] of [[1, 5], [0, 2]] as const) {
      const c = commits[seg]!;
      const tree = new SegmentTree(seg * 4, c.stateHashes);
      const claim = { segment: seg, traceRoot: c.traceRoot, step, prevStateHash: tree.stateHashes[step - 1 - seg * 4]!, prevProof: tree.proof(step - 1), stateHash: tree.stateHashes[step - seg * 4]!, proof: tree.proof(step) };
      const { disputeId } = await openChallenge(g.auditors[0]!, { disputeGame: d.disputeGame!, token: d.token, jobId, audit: claim, endStateHash: c.endStateHash });
      for (let round = 0; round < 8 && (await g.dispute(disputeId)).phase !== "resolved"; round++) {
        await conn.networkHelpers.mine(2);
        for (const b of bots) await b.tick();
      }
      expect((await g.dispute(disputeId)).outcome, `challenge of step ${step}`).to.equal("PanelValid");
    }
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).status).to.not.equal("Refunded");
    expect(await lockedOf(g)).to.equal(locked);
    for (const b of bots) b.close();
  });
});
