/**
 * A job whose lock cannot pay the panel (docs/disputes.md, "Rewards a sybil cannot take": an honest challenger is
 * whole only when lam L >= n f). The provider posts a job from its own buyer address with a 1-wei stake and cheats in
 * plain view: a fault pays a challenger share of 0, so the panel's fees (3 x 0.05) come out of the challenger's deposit
 * (contracts/DisputeGameAttacks.t.sol test_tinyLock_honestChallengerPaysThePanel) and the provider's auditors collect
 * them when drawn. The bot does not challenge at a loss: it records the finding, logs why, and sends nothing; the job's
 * own buyer still challenges (a fault refunds its escrow). challengeReward is checked against hand-computed cases.
 */
import { expect } from "chai";
import { join } from "node:path";
import pino from "pino";
import { formatEther, parseEther } from "viem";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { getLockedStake } from "../../verifier/src/chain/index.ts";
import { challengeReward, PolicyParamError } from "../../verifier/src/policy/index.ts";
import { cheatingJob } from "./fixture.ts";

type Line = { level: number; msg: string } & Record<string, unknown>;

describe("bot economics: no challenge at a loss", function () {
  this.timeout(240_000);

  it("challengeReward: lam L less the panel's fees, rounded as settleProviderFault does", () => {
    expect(challengeReward({ lockWei: parseEther("10"), challengerBps: 5000, panelSize: 3, panelFeeWei: parseEther("0.05") })).to.deep.equal({
      rewardWei: parseEther("5"),
      panelFeesWei: parseEther("0.15"),
      netWei: parseEther("4.85"),
    });
    // the quoted stake of examples/tiny.json (docs/economics.md: 0.332) at tier 1 (50%) and lam 0.5: 0.083 < 0.15
    expect(challengeReward({ lockWei: parseEther("0.166"), challengerBps: 5000, panelSize: 3, panelFeeWei: parseEther("0.05") }).netWei).to.equal(-parseEther("0.067"));
    expect(challengeReward({ lockWei: 1n, challengerBps: 5000, panelSize: 3, panelFeeWei: parseEther("0.05") })).to.deep.equal({ rewardWei: 0n, panelFeesWei: parseEther("0.15"), netWei: -parseEther("0.15") });
    expect(challengeReward({ lockWei: 3n, challengerBps: 3333, panelSize: 1, panelFeeWei: 0n }).rewardWei).to.equal(0n); // 9999 / 10000 rounds down
    for (const bad of [{ lockWei: -1n }, { challengerBps: 10_001 }, { challengerBps: 1.5 }, { panelSize: 0 }, { panelFeeWei: -1n }]) {
      expect(() => challengeReward({ lockWei: 1n, challengerBps: 5000, panelSize: 3, panelFeeWei: 1n, ...bad })).to.throw(PolicyParamError);
    }
  });

  it("a 1-wei lock: the auditor's bot records the bad step and sends nothing; the buyer's own bot challenges it", async () => {
    const f = await cheatingJob("economics", 600, { requiredStake: 1n });
    expect(await getLockedStake(f.admin.public, { stakeVault: f.d.stakeVault, provider: f.cheat.account.address, jobId: f.jobId })).to.equal(1n);
    const lines: Line[] = [];
    const log = pino({ level: "debug", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    const auditor = new ChallengerBot({ clients: f.auditors[0]!, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "eco-auditor.sqlite"), dispute: f.hooks(f.auditors[0]!, 0), log });
    await auditor.tick();
    expect(auditor.db.segment(f.jobId.toString(), 0)!.first_bad_step).to.equal(2);
    expect(await f.disputes()).to.have.length(0);
    expect(auditor.summary().intents.filter((i) => i.kind === "challenge")).to.have.length(0);
    const fees = formatEther(parseEther("0.15"));
    expect(lines.filter((l) => l.level === 50 && l.event === "challenge-at-a-loss").map((l) => l.msg)).to.include(
      `NOT CHALLENGING job ${f.jobId}: the provider's lock ${formatEther(1n)} pays a challenger share of 0, below the panel's fees ${fees}, so a challenge would cost this auditor ${fees}; the job's buyer can challenge it`,
    );
    auditor.close();

    // the buyer's bot (not a bonded auditor, funded by the fixture) challenges the same bad step
    const buyerBot = new ChallengerBot({ clients: f.buyer, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "eco-buyer.sqlite"), dispute: f.hooks(f.buyer, 9) });
    await buyerBot.tick();
    await buyerBot.tick();
    const disputes = await f.disputes();
    expect(disputes.map((d) => [d.step, d.challenger])).to.deep.equal([[2, f.buyer.account.address]]);
    buyerBot.close();
  });
});
