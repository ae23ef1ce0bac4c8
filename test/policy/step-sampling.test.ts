/**
 * The quote's price of per-step detection (policy/step-sampling.ts) against hand-computed cases and a brute-force
 * count of which segments an auditor samples.
 */
import { expect } from "chai";
import { detectionOver, PolicyParamError, quoteStepSampling, stepRateForDetection } from "../../verifier/src/policy/index.ts";

describe("policy: step sampling's rate and cost", () => {
  it("the rate for 0.99 over 8 segments is 1 - 0.01^(1/8) = 0.43766 and catches an every-step cheat of all 8 with 0.99", () => {
    const r = stepRateForDetection(8, 0.99);
    expect(r).to.be.closeTo(0.437659, 1e-6);
    expect(detectionOver(8, r)).to.be.closeTo(0.99, 1e-12);
    // one segment only: r itself
    expect(quoteStepSampling({ segments: 8, stepsPerSegment: 50 }, 0.99).detectOneSegment).to.be.closeTo(0.437659, 1e-6);
  });

  it("a class that leaves some steps right (q = 0.75) needs r / q, and caps at 1", () => {
    expect(stepRateForDetection(8, 0.99, 0.75)).to.be.closeTo(0.437659 / 0.75, 1e-6);
    expect(stepRateForDetection(2, 0.99, 0.5)).to.equal(1);
    expect(quoteStepSampling({ segments: 2, stepsPerSegment: 10 }, 0.99, 0.5).detectAllSegments).to.be.closeTo(0.75, 1e-12);
  });

  it("agrees with a brute-force sum over every set of sampled segments (S = 4, q = 1)", () => {
    const S = 4;
    const r = stepRateForDetection(S, 0.9);
    // an every-step cheat is caught iff at least one segment is sampled: the probability of each non-empty set
    let caught = 0;
    for (let mask = 1; mask < 1 << S; mask++) {
      const k = [...Array(S).keys()].filter((i) => mask & (1 << i)).length;
      caught += r ** k * (1 - r) ** (S - k);
    }
    expect(caught).to.be.closeTo(0.9, 1e-12);
    expect(detectionOver(S, r)).to.be.closeTo(caught, 1e-12);
  });

  it("prices the auditors' and the provider's work in training steps: S r step audits + the final screen, over S K", () => {
    const q = quoteStepSampling({ segments: 8, stepsPerSegment: 50 }, 0.99, 1, { stepAudit: 2, opening: 10, finalScreen: 1, finalOpening: 0.5 });
    const r = 1 - 0.01 ** (1 / 8);
    expect(q.auditorShare).to.be.closeTo((8 * r * 2 + 1) / 400, 1e-12);
    expect(q.providerShare).to.be.closeTo((8 * r * 10 + 0.5) / 400, 1e-12);
    expect(q.openingsPerJob).to.be.closeTo(8 * r + 1, 1e-12);
    expect(quoteStepSampling({ segments: 8, stepsPerSegment: 50 }, 0.99).auditorShare).to.equal(null);
  });

  it("rejects each bad input with an error naming the value", () => {
    expect(() => stepRateForDetection(0, 0.99)).to.throw(PolicyParamError, "segments must be a positive integer, got 0");
    expect(() => stepRateForDetection(8, 1)).to.throw(PolicyParamError, "detection must be in (0, 1), got 1");
    expect(() => stepRateForDetection(8, 0.99, 0)).to.throw(PolicyParamError, "perStepDetection must be in (0, 1], got 0");
    expect(() => quoteStepSampling({ segments: 8, stepsPerSegment: 0 }, 0.99)).to.throw(PolicyParamError, "stepsPerSegment must be a positive integer, got 0");
    expect(() => quoteStepSampling({ segments: 8, stepsPerSegment: 50 }, 0.99, 1, { stepAudit: -1, opening: 1, finalScreen: 1, finalOpening: 1 })).to.throw(PolicyParamError, "cost stepAudit must be a non-negative number of training steps, got -1");
  });
});
