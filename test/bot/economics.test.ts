/**
 * A job whose lock cannot pay the panel (docs/disputes.md, "Rewards a sybil cannot take": an honest challenger is
 * whole only when lam L >= n f). A provider could post a job from its own buyer address with a 1-wei stake (or take a
 * small job at a tier discount) and cheat in plain view: a fault would pay a challenger share below the panel's fees,
 * so the fees would come out of the challenger's deposit and nobody would challenge. JobMarket.acceptJob refuses such a
 * lock (JobMarketLockCannotPayPanel; contracts/DisputeGameAttacks.t.sol test_tinyLock_acceptRefused), and the bot still
 * does not challenge at a loss where a lock shrank below the floor later (a timeout slash of a TimedOut job's lock:
 * bot.ts challengePays). challengeReward and lockPaysPanel are checked against hand-computed cases.
 */
import { expect } from "chai";
import { parseEther } from "viem";
import { ContractRevertError } from "../../verifier/src/chain/index.ts";
import { challengeReward, lockPaysPanel, PolicyParamError } from "../../verifier/src/policy/index.ts";
import { cheatingJob } from "./fixture.ts";

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

  it("lockPaysPanel: JobMarket.acceptJob's floor lam L >= n f, at the wei", () => {
    const fees = parseEther("0.15");
    expect(lockPaysPanel({ lockWei: parseEther("0.3"), challengerBps: 5000, panelFeesWei: fees })).to.deep.equal({ rewardWei: fees, panelFeesWei: fees, ok: true });
    expect(lockPaysPanel({ lockWei: parseEther("0.3") - 1n, challengerBps: 5000, panelFeesWei: fees })).to.deep.equal({ rewardWei: fees - 1n, panelFeesWei: fees, ok: false });
    // tiny.json's quoted 0.332 at tier 1 (0.166) is refused; a dispute role without a panel (fees 0) takes any lock
    expect(lockPaysPanel({ lockWei: parseEther("0.166"), challengerBps: 5000, panelFeesWei: fees }).ok).to.equal(false);
    expect(lockPaysPanel({ lockWei: 1n, challengerBps: 0, panelFeesWei: 0n }).ok).to.equal(true);
    for (const bad of [{ lockWei: -1n }, { challengerBps: 10_001 }, { panelFeesWei: -1n }]) {
      expect(() => lockPaysPanel({ lockWei: 1n, challengerBps: 5000, panelFeesWei: 1n, ...bad })).to.throw(PolicyParamError);
    }
  });

  it("a 1-wei lock never exists: acceptJob reverts JobMarketLockCannotPayPanel (lock 1, share 0, fees 0.15)", async () => {
    const err = await cheatingJob("economics", 600, { requiredStake: 1n }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ContractRevertError);
    const e = err as ContractRevertError;
    expect(e.errorName).to.equal("JobMarketLockCannotPayPanel");
    expect(e.args.slice(2)).to.deep.equal([1n, 0n, parseEther("0.15")]);
  });
});
