/**
 * A dispute that closes as Superseded (another dispute on its job faulted first, docs/disputes.md "Several disputes on
 * one job") in front of the bots. getDispute did not know outcome 6 (Superseded) and threw on it; the bots read every
 * dispute they follow on every tick, so one Superseded dispute anywhere on the network made every bot's tick throw
 * before it sent anything: a provider that conceded a sybil's dispute once was never challenged again
 * (bench/attacks.ts, row 12). Here: bot 0 challenges the stale:2 job's bad step 2, the provider's second address
 * disputes the valid step 1, the provider concedes that one, and bot 0's dispute closes Superseded; the bots keep
 * ticking, mark it done and claim bot 0's deposit and its half of the reward.
 */
import { expect } from "chai";
import { maxUint256, parseEther } from "viem";
import { approveToken, concede, getJob, getSegmentCommits, mintTestToken, resolveDispute, testTokenAbi } from "../../verifier/src/chain/index.ts";
import { openChallenge } from "../../verifier/src/dispute/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import { cheatingJob } from "./fixture.ts";

describe("bot dispute step: a Superseded dispute", function () {
  this.timeout(240_000);

  it("getDispute reads Superseded and the bots keep working: the challenger claims its deposit and half the reward", async () => {
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
    await resolveDispute(sybil, { disputeGame: s.d.disputeGame!, disputeId: honest!.disputeId });
    const d = await s.dispute(honest!.disputeId);
    expect(d.outcome).to.equal("Superseded");
    expect(d.phase).to.equal("resolved");
    expect((await getJob(s.admin.public, { jobMarket: s.d.jobMarket, jobId: s.jobId })).status).to.equal("Refunded");

    // every bot ticks without throwing; bot 0 claims bond + fees + half of the challenger share (lam L / 2)
    const balance = () => s.admin.public.readContract({ address: s.d.token, abi: testTokenAbi, functionName: "balanceOf", args: [s.auditors[0]!.account.address] });
    const before = await balance();
    for (const b of bots) await b.tick();
    const claims = bots[0]!.summary().intents.filter((i) => i.kind === "claimDispute");
    expect(claims.map((i) => i.status)).to.deep.equal(["confirmed"]);
    const after = await balance();
    const share = (s.policy.requiredStake * BigInt(s.policy.challengerBps)) / 10_000n;
    expect(after - before).to.equal(d.bond + d.fees + share / 2n);
    for (const b of bots) b.close();
  });
});
