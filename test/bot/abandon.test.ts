/**
 * Abandonment does not launder a faulty segment: a stale:2 provider commits the first segment of
 * examples/tiny.json (faulty at step 2) and stops. Nobody audits before the segment deadline passes; an Active job past
 * its deadline takes no new dispute, so the bot that finds the bad step reports the timeout first (the job becomes
 * TimedOut: its committed segment stays disputable for a challenge window, its whole lock locked), then
 * challenges; the panel votes Fault and the provider loses its whole lock. The provider
 * cannot take the job back meanwhile.
 */
import { join } from "node:path";
import { expect } from "chai";
import { parseEventLogs } from "viem";
import { acceptJob, ContractRevertError, getJob, getJobDisputes, stakeVaultAbi } from "../../verifier/src/chain/index.ts";
import { parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { cheatingJob, passAppealWindows } from "./fixture.ts";

describe("bot: a provider that abandons a job after a faulty segment is still slashed", function () {
  this.timeout(240_000);

  it("reports the timeout, challenges the TimedOut job's segment, and the panel slashes the whole lock", async () => {
    const { conn, admin, cheat, d, policy, jobId, bot, store, board, dir } = await cheatingJob("abandon", 600, { cheatSegments: 1 });
    const job0 = await getJob(admin.public, { jobMarket: d.jobMarket, jobId });
    expect(job0.status).to.equal("Active");
    expect(job0.nextSegment).to.equal(1);
    await conn.networkHelpers.time.increaseTo(BigInt(job0.deadline) + 1n);

    const bots = [0, 1, 2, 3].map((i) => bot(i));
    for (const b of bots) await b.tick();
    const timedOut = await getJob(admin.public, { jobMarket: d.jobMarket, jobId });
    expect(timedOut.status).to.equal("TimedOut");
    // the provider cannot take the job back while its segment is disputable
    let refused: unknown;
    try {
      await acceptJob(cheat, { jobMarket: d.jobMarket, jobId });
    } catch (e) {
      refused = e;
    }
    expect(refused).to.be.instanceOf(ContractRevertError);
    expect((refused as ContractRevertError).errorName).to.equal("JobMarketWrongStatus");
    // nor continue training it (`pouw provider run` says why)
    const again = await runProviderJob({ clients: cheat, deployment: d, store, board, stateDir: join(dir, "state") }, jobId, { strategy: parseStrategy("honest") });
    expect(again.status).to.equal("TimedOut");
    expect(again.committed).to.deep.equal([]);
    const opened = await getJobDisputes(admin.public, { disputeGame: d.disputeGame!, jobId, fromBlock: BigInt(d.startBlock) });
    expect(opened.map((o) => o.step)).to.deep.equal([2]);

    for (let round = 0; round < 6; round++) {
      await conn.networkHelpers.mine(2);
      await passAppealWindows(conn, admin.public, d.disputeGame!);
      for (const b of bots) await b.tick();
    }
    const end = await getJob(admin.public, { jobMarket: d.jobMarket, jobId });
    expect(end.status).to.equal("Refunded");
    const logs = await admin.public.getLogs({ address: d.stakeVault, fromBlock: BigInt(d.startBlock), toBlock: "latest" });
    const slashed = parseEventLogs({ abi: stakeVaultAbi, logs, eventName: "StakeSlashed" }).filter((l) => l.args.provider === cheat.account.address);
    // the fault in the TimedOut window takes the whole lock: the timeout slash waits for the window, so none was taken
    expect(slashed.map((l) => l.args.amount)).to.deep.equal([policy.requiredStake]);
    for (const b of bots) b.close();
  });
});
