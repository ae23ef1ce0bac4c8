/**
 * market/plan-job.ts and market/funding.ts: the plan `pouw buyer create` and the dApp both post (data terms, policy,
 * quote against the deployed panel) and the funding check before a job is posted.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { network } from "hardhat";
import { parseEther } from "viem";
import { DEFAULT_DISPUTE_PARAMS, deployDisputeGame, deployMarket, devAccount, getTokenAllowance, getTokenBalance, providerClients, type ChainClients, type Deployment } from "../../verifier/src/chain/index.ts";
import { ensureTokenFunds, TokenFundsError } from "../../verifier/src/market/funding.ts";
import { jobFunding, planJob } from "../../verifier/src/market/plan-job.ts";
import { parseManifest } from "../../verifier/src/ml/index.ts";
import { loadDetectionMatrix, packageDetectionPath } from "../../verifier/src/policy/index.ts";

const manifest = parseManifest(JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8")));

describe("market: plan a job and fund it", function () {
  this.timeout(120_000);
  let admin: ChainClients, buyer: ChainClients, poor: ChainClients;
  let d: Deployment;

  before(async () => {
    const conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    [admin, buyer, poor] = [mk(0), mk(1), mk(5)];
    const market = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 691_272n }) // >= three dispute rounds, the appeal window and a day (DisputeGameExitDelayTooShort);
    // a panel of 5 with a fee of 0.01 per member: not the quote's own choice, so the plan must read it from the chain
    const game = await deployDisputeGame(admin, { deployment: market, params: { ...DEFAULT_DISPUTE_PARAMS, panelSize: 5, panelFee: parseEther("0.01") } });
    d = { ...market, disputeGame: game.disputeGame };
  });

  it("quotes against the deployed panel (its size and fee per member) and says why no data terms attach", async () => {
    const detection = { path: packageDetectionPath(), matrix: loadDetectionMatrix(packageDetectionPath(), { isDefault: true }) };
    const plan = await planJob(buyer.public, d, manifest, { payment: parseEther("1"), detection });
    expect(plan.stakeFrom).to.equal("quote");
    expect(plan.quote!.quote.panelSize).to.equal(5);
    expect(plan.quote!.quote.options.panelFee).to.equal(0.01);
    expect(plan.policy.requiredStake).to.equal(BigInt(plan.quote!.stakeWei));
    expect(plan.payment).to.equal(parseEther("1"));
    // the tiny manifest's corpus is not registered in this market's DataRegistry
    expect(plan.terms.attached).to.equal(false);
    const off = await planJob(buyer.public, d, manifest, { dataTerms: { mode: "off" } });
    expect(off.terms).to.deep.equal({ attached: false, reason: "data terms turned off (--no-data-terms)" });
    expect(off.stakeFrom).to.equal("manifest");
  });

  it("reports the buyer's shortfall and allowance against the payment", async () => {
    const f = await jobFunding(poor.public, d, poor.account.address, parseEther("2"));
    expect(f).to.deep.equal({ payment: parseEther("2"), balance: 0n, allowance: 0n, shortfall: parseEther("2"), approveNeeded: true });
  });

  it("refuses a short balance without --mint (typed, with the amounts), mints and approves with it, then sends nothing more", async () => {
    let err: unknown;
    try {
      await ensureTokenFunds(buyer, d, d.jobMarket, parseEther("3"));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(TokenFundsError);
    expect((err as TokenFundsError).message).to.equal("token balance 0 is below 3 (pass --mint on the dev chain)");
    const txs = await ensureTokenFunds(buyer, d, d.jobMarket, parseEther("3"), { mint: true });
    expect(txs.map((t) => t.what)).to.deep.equal(["mint", "approve"]);
    expect(await getTokenBalance(buyer.public, { token: d.token, account: buyer.account.address })).to.equal(parseEther("3"));
    expect(await getTokenAllowance(buyer.public, { token: d.token, owner: buyer.account.address, spender: d.jobMarket })).to.equal(parseEther("3"));
    expect(await ensureTokenFunds(buyer, d, d.jobMarket, parseEther("3"), { mint: true })).to.deep.equal([]);
  });
});
