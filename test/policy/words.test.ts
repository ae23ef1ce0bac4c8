/**
 * policy/words.ts: token amounts to 4 significant digits (fixed vectors) and cheat classes in words.
 */
import { expect } from "chai";
import { approxTokens, cheatInWords, stakeReasonInWords } from "../../verifier/src/policy/words.ts";

describe("policy/words: a quote in a buyer's words", () => {
  it("rounds wei to 4 significant digits of a token, without an exponent and with every integer digit above 9999", () => {
    const cases: [bigint, string][] = [
      [0n, "0"],
      [10n ** 18n, "1"],
      [1752911923192006656n, "1.753"],
      [155_049_999_999_999_999n, "0.155"],
      [66666666666666664n, "0.06667"],
      [123_456n * 10n ** 14n, "12.35"],
      [9999_4n * 10n ** 17n, "9999"],
      [12_345_678n * 10n ** 17n, "1234568"],
      [12_345_5n * 10n ** 17n, "12346"],
      [-(15n * 10n ** 17n), "-1.5"],
    ];
    for (const [wei, text] of cases) expect(approxTokens(wei), String(wei)).to.equal(text);
    expect(approxTokens("1752911923192006656")).to.equal("1.753");
  });

  it("names each class of the committed matrix as what the cheater does; an unknown one by its name", () => {
    expect(cheatInWords("skip:0.25")).to.equal("skipping 25% of the steps");
    expect(cheatInWords("stale:2")).to.equal("reusing each gradient for 2 steps");
    expect(cheatInWords("copy")).to.equal("copying another job's committed states");
    expect(cheatInWords("plant:6")).to.equal("planting chosen weights at step 6");
    expect(cheatInWords("plant-spread:5")).to.equal("planting weights spread over 5 steps");
    expect(cheatInWords("something-new")).to.equal('the cheat "something-new"');
    expect(stakeReasonInWords("copy")).to.equal("enough that copying another job's committed states (copy, the measured cheat that needs the largest stake) loses more than it saves");
    expect(stakeReasonInWords("challenger")).to.match(/^enough to pay an honest challenger's costs and reward/);
  });
});
