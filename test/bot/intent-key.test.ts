import { expect } from "chai";
import { formatIntentKey, IntentKeyError, parseIntentKey, roundOf, type IntentKey } from "../../verifier/src/bot/intent-key.ts";

const provider = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("bot intent keys: one typed key, one format, one parse", () => {
  // the strings are written out by hand: the keys dispute.ts and the databases of earlier bots hold
  const cases: [string, IntentKey][] = [
    ["challenge:7:2", { kind: "challenge", jobId: 7n, segment: 2, round: 1 }],
    ["challenge:7:2:r3", { kind: "challenge", jobId: 7n, segment: 2, round: 3 }],
    ["approveBond:7:2:top1", { kind: "approveBond", jobId: 7n, segment: 2, round: 1, top: 1 }],
    ["approveBond:7:2:r2:top4", { kind: "approveBond", jobId: 7n, segment: 2, round: 2, top: 4 }],
    ["commitChallenge:7:0:renew2", { kind: "commitChallenge", jobId: 7n, segment: 0, round: 1, renew: 2 }],
    ["receipt:12:0", { kind: "receipt", jobId: 12n, segment: 0 }],
    ["receipt:12:0:c0a1b2c3d4e5f", { kind: "receipt", jobId: 12n, segment: 0, commit: "0a1b2c3d4e5f" }],
    ["challenge:7:2:c00ff00ff00ff", { kind: "challenge", jobId: 7n, segment: 2, commit: "00ff00ff00ff", round: 1 }],
    ["approveBond:7:2:cabcdef012345:r2:top1", { kind: "approveBond", jobId: 7n, segment: 2, commit: "abcdef012345", round: 2, top: 1 }],
    ["commitChallenge:7:2:cabcdef012345:renew1", { kind: "commitChallenge", jobId: 7n, segment: 2, commit: "abcdef012345", round: 1, renew: 1 }],
    [`reportTimeout:3:${provider}:1`, { kind: "reportTimeout", jobId: 3n, provider, nextSegment: 1 }],
    [`reopenJob:3:${provider}:2`, { kind: "reopenJob", jobId: 3n, provider, nextSegment: 2 }],
    ["resolve:5", { kind: "resolve", disputeId: 5n, round: 1 }],
    ["resolve:5:r2", { kind: "resolve", disputeId: 5n, round: 2 }],
    ["claimStake:0", { kind: "claimStake", n: 0 }],
    ["claimDispute:2", { kind: "claimDispute", n: 2 }],
    ["claimForfeit:1", { kind: "claimForfeit", n: 1 }],
    ["requestOpening:4:107", { kind: "requestOpening", jobId: 4n, step: 107 }],
  ];

  it("parses each key kind to its typed value and formats it back to the same string", () => {
    for (const [text, key] of cases) {
      expect(parseIntentKey(text), text).to.deep.equal(key);
      expect(formatIntentKey(key), text).to.equal(text);
    }
  });

  it("names the round of the intents of one challenge round, and none for other keys", () => {
    expect(["approveBond:7:2", "approveBond:7:2:top3", "commitChallenge:7:2:renew1", "challenge:7:2"].map(roundOf)).to.deep.equal(["7:2", "7:2", "7:2", "7:2"]);
    expect(roundOf("challenge:7:2:r2")).to.equal("7:2:r2");
    // two commits of one (job, segment) (a reorg replaced the first) are two rounds
    expect(roundOf("approveBond:7:2:caaaaaaaaaaaa:top1")).to.equal("7:2:caaaaaaaaaaaa");
    expect(roundOf("challenge:7:2:cbbbbbbbbbbbb")).to.not.equal(roundOf("challenge:7:2:caaaaaaaaaaaa"));
    expect(roundOf("receipt:7:2")).to.equal(undefined);
    expect(roundOf("mint:1")).to.equal(undefined);
  });

  it("rejects a key it does not write, with the part that is wrong", () => {
    const bad: [string, RegExp][] = [
      ["challenge:7", /segment undefined/],
      ["challenge:x:2", /job id "x"/],
      ["challenge:7:2:r1", /round 1 is written without/],
      ["challenge:7:2:top1", /unexpected part "top1"/],
      ["commitChallenge:7:2:top1", /unexpected part "top1"/],
      ["receipt:7", /wrong number of parts/],
      ["receipt:7:2:x12", /unexpected part "x12"/],
      ["challenge:7:2:cXYZ", /unexpected part "cXYZ"/],
      ["reportTimeout:3:0x12:1", /provider "0x12" is not an address/],
      ["claimStake:-1", /claim number "-1"/],
      ["resolve:5:r1", /round 1 is written without/],
      ["resolve:5:x2", /unexpected part "x2"/],
      ["nonsense:1", /unknown kind "nonsense"/],
    ];
    for (const [text, reason] of bad) {
      let err: unknown;
      try {
        parseIntentKey(text);
      } catch (e) {
        err = e;
      }
      expect(err, text).to.be.instanceOf(IntentKeyError);
      expect((err as Error).message, text).to.match(reason);
    }
  });
});
