/**
 * A segment the bot's check cannot process must not stop the bot. A provider's own buyer address posts a job whose
 * on-chain policy (1 segment of 2 steps) does not match its manifest (tiny.json: segments of 4), the provider accepts it
 * and commits 3 leaves; the recompute check throws on it ("3 committed state hashes, expected 5"). That error used to
 * escape the bot's tick before any intent was sent, on every tick, so the provider's cheat on an honest buyer's job was
 * never challenged (bench/attacks.ts, row 13). Now the segment is recorded as an audit error and the bot goes on: it
 * challenges the stale:2 job's bad step in the same tick.
 */
import { expect } from "chai";
import { keccak256, parseEther, toHex } from "viem";
import { acceptJob, commitSegment, mintTestToken } from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { cheatingJob, manifest } from "./fixture.ts";

describe("bot audit: a segment it cannot audit", function () {
  this.timeout(240_000);

  it("records an audit error for the unauditable job and still challenges the cheating one", async () => {
    const s = await cheatingJob("unauditable", 600);
    const sybilBuyer = s.mk(3);
    await mintTestToken(sybilBuyer, { token: s.d.token, to: sybilBuyer.account.address, amount: parseEther("1") });
    const { jobId } = await postJob(sybilBuyer, s.d, s.store, manifest, { ...s.policy, segments: 1, stepsPerSegment: 2 }, parseEther("0.1"));
    await acceptJob(s.cheat, { jobMarket: s.d.jobMarket, jobId });
    const leaves = [0, 1, 2].map((t) => keccak256(toHex(`leaf-${t}`)));
    await commitSegment(s.cheat, { jobMarket: s.d.jobMarket, jobId, segment: 0, stateHashes: leaves, lossE6: 1n, checkpointCid: "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m" });

    const bot = s.bot(0);
    await bot.tick(); // does not throw
    const row = bot.db.segment(jobId.toString(), 0)!;
    expect(row.audit).to.equal("error");
    expect(row.detail).to.contain("commitment 0 carries 3 state hashes, expected 5");
    // the screen of the same segment is recorded as an error too, and did not stop the tick
    expect(row.screen).to.match(/^error: commitment 0 carries 3 state hashes, expected 5/);
    const opened = await s.disputes();
    expect(opened).to.have.length(1);
    expect(opened[0]!.step).to.equal(2);
    expect(opened[0]!.challenger).to.equal(s.auditors[0]!.account.address);
    await bot.tick(); // the errored segment is not re-run
    expect(bot.db.segment(jobId.toString(), 0)!.audit).to.equal("error");
    bot.close();
  });
});
