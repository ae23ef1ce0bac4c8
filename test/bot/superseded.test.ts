/**
 * A dispute still open when another dispute on its job faulted the provider (docs/disputes.md "Several disputes on one
 * job") in front of the bots: it is decided by its own panel, never closed as a free refund. Here: bot 0 challenges
 * the stale:2 job's bad step 2, the provider's second address disputes the valid step 1, the provider concedes that one
 * (the job is Refunded), and bot 0's dispute can no longer be conceded nor resolved early; the other bots serve on its
 * panel and vote Fault, it ends PanelFault, and bot 0 claims its whole deposit back (the panel is paid out of the held
 * challenger share) plus the rest of that share: a fault a panel decided takes it all, the concession none.
 */
import { expect } from "chai";
import { maxUint256, parseEther } from "viem";
import { approveToken, concede, getJob, getSegmentCommits, mintTestToken, resolveDispute, testTokenAbi } from "../../verifier/src/chain/index.ts";
import { openChallenge } from "../../verifier/src/dispute/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import { expectRevert } from "../dispute/helpers.ts";
import { cheatingJob } from "./fixture.ts";

describe("bot dispute step: a dispute decided after its job faulted", function () {
  this.timeout(240_000);

  it("the bots vote on its panel after the fault; it ends PanelFault and the challenger claims its deposit and the share less the panel", async () => {
    const s = await cheatingJob("superseded", 600);
    const bots = [0, 1, 2, 3].map((i) => s.bot(i));
    await bots[0]!.tick();
    const [honest] = await s.disputes();
    expect(honest!.step).to.equal(2);
    expect(honest!.challenger).to.equal(s.auditors[0]!.account.address);

    // the provider's second address disputes step 1 (valid: stale:2 computes a fresh gradient at step 1)
    const sybil = s.mk(3);
    await mintTestToken(sybil, { token: s.d.token, to: sybil.account.address, amount: parseEther("10") });
    await approveToken(sybil, { token: s.d.token, spender: s.d.disputeGame!, amount: maxUint256 });
    const [seg0] = await getSegmentCommits(sybil.public, { jobMarket: s.d.jobMarket, jobId: s.jobId, fromBlock: BigInt(s.d.startBlock) });
    const tree = new SegmentTree(0, seg0!.stateHashes);
    const { disputeId } = await openChallenge(sybil, {
      disputeGame: s.d.disputeGame!,
      token: s.d.token,
      jobId: s.jobId,
      endStateHash: seg0!.endStateHash,
      audit: { segment: 0, traceRoot: seg0!.traceRoot, step: 1, prevStateHash: tree.stateHashes[0]!, prevProof: tree.proof(0), stateHash: tree.stateHashes[1]!, proof: tree.proof(1) },
    });
    await concede(s.cheat, { disputeGame: s.d.disputeGame!, disputeId });
    expect((await getJob(s.admin.public, { jobMarket: s.d.jobMarket, jobId: s.jobId })).status).to.equal("Refunded");
    // nothing decided the honest dispute yet: resolving it now reverts (its panel still votes)
    await expectRevert(resolveDispute(sybil, { disputeGame: s.d.disputeGame!, disputeId: honest!.disputeId }), "DisputeGameVotingOpen");

    const balance = () => s.admin.public.readContract({ address: s.d.token, abi: testTokenAbi, functionName: "balanceOf", args: [s.auditors[0]!.account.address] });
    const before = await balance();
    // every bot ticks: the panel (bots 1-3) commits and reveals Fault, bot 0 resolves and claims
    for (let round = 0; round < 6; round++) {
      await s.conn.networkHelpers.mine(2);
      for (const b of bots) await b.tick();
    }
    const d = await s.dispute(honest!.disputeId);
    expect(d.outcome).to.equal("PanelFault");
    expect(d.phase).to.equal("resolved");
    const claims = bots[0]!.summary().intents.filter((i) => i.kind === "claimDispute");
    expect(claims.map((i) => i.status)).to.include("confirmed");
    const after = await balance();
    const share = (s.policy.requiredStake * BigInt(s.policy.challengerBps)) / 10_000n;
    const panelPaid = BigInt(d.faultVotes) * (d.fees / BigInt(d.panel.length));
    // deposit back whole; the panel's fees came out of the held share first, and the rest is its own
    expect(after - before).to.equal(d.bond + d.fees + share - panelPaid);
    for (const b of bots) b.close();
  });
});
