/**
 * The forged-tier sizing (verifier/src/attest/forgery.ts) against hand-computed cases: the hypergeometric chance of a
 * sybil quorum and the cost/saving inequality of docs/checks.md with the deployment defaults plugged in.
 */
import { expect } from "chai";
import { forgedTierCost, quorumChance } from "../../verifier/src/attest/forgery.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

describe("attest/forgery: what a forged tier costs a sybil minority against the stake it saves", () => {
  it("2 of 12 auditors land a 2-of-3 committee on C(2,2)C(10,1)/C(12,3) = 10/220 of requests", () => {
    expect(quorumChance(12, 2, 3, 2)).to.equal(10 / 220);
    // 3 of 13 (10 honest): (C(3,2)C(10,1) + C(3,3)) / C(13,3) = 31/286, the 10.8% of docs/panels.md
    expect(quorumChance(13, 3, 3, 2)).to.equal(31 / 286);
    // fewer own auditors than the quorum: never
    expect(quorumChance(12, 1, 3, 2)).to.equal(0);
  });

  it("with the defaults (fee 1, bond 100, committee 3, quorum 2) a disputed forgery costs 222 tokens: tier 1 breaks even at 444 of stake", () => {
    const r = forgedTierCost({ eligible: 12, attacker: 2, committee: 3, quorum: 2, requestFee: 1, bond: 100, disputeChance: 1, tier: 1 });
    expect(r.feeCost).to.be.closeTo(22, 1e-9);
    expect(r.forfeit).to.equal(200);
    expect(r.cost).to.be.closeTo(222, 1e-9);
    expect(r.breakEvenStake).to.be.closeTo(444, 1e-9);
    // undisputed, only the fees stand; tier 2 discounts 37.5%, so it breaks even at cost / 0.375
    const none = forgedTierCost({ eligible: 12, attacker: 2, committee: 3, quorum: 2, requestFee: 1, bond: 100, disputeChance: 0, tier: 2 });
    expect(none.cost).to.be.closeTo(22, 1e-9);
    expect(none.breakEvenStake).to.be.closeTo(22 / 0.375, 1e-9);
  });

  it("no quorum possible: the cost is unbounded", () => {
    expect(forgedTierCost({ eligible: 12, attacker: 1, committee: 3, quorum: 2, requestFee: 1, bond: 100, disputeChance: 1, tier: 1 }).cost).to.equal(Infinity);
  });

  it("refuses impossible parameters by name", () => {
    const ok = { eligible: 12, attacker: 2, committee: 3, quorum: 2, requestFee: 1, bond: 100, disputeChance: 1, tier: 1 as const };
    expect(() => forgedTierCost({ ...ok, attacker: 13 })).to.throw(InputError, /attacker 13 exceeds eligible 12/);
    expect(() => forgedTierCost({ ...ok, quorum: 4 })).to.throw(InputError, /quorum 4 must be 1..committee/);
    expect(() => forgedTierCost({ ...ok, disputeChance: 2 })).to.throw(InputError, /disputeChance/);
    expect(() => forgedTierCost({ ...ok, eligible: 2.5 })).to.throw(InputError, /eligible must be a non-negative integer/);
  });
});
