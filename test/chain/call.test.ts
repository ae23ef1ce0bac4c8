/**
 * chain/call.ts: each write action's call description encodes to the calldata its Solidity signature defines (fixed
 * selectors and ABI words, written out here), and the send action sends that same description. The challenger bot's intents carry these
 * encodings: each is pinned here as the bytes an intent recorded by an older bot holds, so a recorded intent still matches.
 */
import { expect } from "chai";
import { concatHex, encodeAbiParameters, numberToHex, padHex, toFunctionSelector, type Address, type Hex } from "viem";
import {
  approveTokenCall,
  challengeStepCall,
  claimBondCreditCall,
  claimDisputeCreditCall,
  claimStakeCreditCall,
  commitChallengeCall,
  encodeCall,
  recordReceiptCall,
  reopenJobCall,
  reportTimeoutCall,
  resolveDisputeCall,
} from "../../verifier/src/chain/index.ts";

const game: Address = "0x1111111111111111111111111111111111111111";
const market: Address = "0x2222222222222222222222222222222222222222";
const token: Address = "0x3333333333333333333333333333333333333333";
const vault: Address = "0x4444444444444444444444444444444444444444";
const spender: Address = "0x5555555555555555555555555555555555555555";
const word = (n: bigint) => numberToHex(n, { size: 32 });
const commitment: Hex = `0x${"ab".repeat(32)}`;

describe("chain: call descriptions", () => {
  it("encode to the selector and ABI words of the Solidity signature, sent to the action's contract", () => {
    expect(encodeCall(resolveDisputeCall({ disputeGame: game, disputeId: 7n }))).to.deep.equal({ to: game, data: concatHex([toFunctionSelector("resolve(uint256)"), word(7n)]) });
    expect(encodeCall(reportTimeoutCall({ jobMarket: market, jobId: 2n }))).to.deep.equal({ to: market, data: concatHex([toFunctionSelector("reportTimeout(uint256)"), word(2n)]) });
    expect(encodeCall(reopenJobCall({ jobMarket: market, jobId: 2n })).data).to.equal(concatHex([toFunctionSelector("reopenJob(uint256)"), word(2n)]));
    expect(encodeCall(approveTokenCall({ token, spender, amount: 10n ** 18n }))).to.deep.equal({
      to: token,
      data: concatHex([toFunctionSelector("approve(address,uint256)"), padHex(spender, { size: 32 }), word(10n ** 18n)]),
    });
    expect(encodeCall(claimStakeCreditCall({ stakeVault: vault }))).to.deep.equal({ to: vault, data: toFunctionSelector("claim()") });
    expect(encodeCall(commitChallengeCall({ disputeGame: game, jobId: 1n, segment: 3, commitment })).data).to.equal(
      concatHex([toFunctionSelector("commitChallenge(uint256,uint256,bytes32)"), word(1n), word(3n), commitment]),
    );
  });

  it("give the bytes of every intent the bot records (claims, challenge, receipt) as the Solidity signature defines them", () => {
    const registry: Address = "0x6666666666666666666666666666666666666666";
    const records: Address = "0x7777777777777777777777777777777777777777";
    expect(encodeCall(claimDisputeCreditCall({ disputeGame: game }))).to.deep.equal({ to: game, data: toFunctionSelector("claim()") });
    expect(encodeCall(claimBondCreditCall({ auditorRegistry: registry }))).to.deep.equal({ to: registry, data: toFunctionSelector("claim()") });

    const h = (b: string): Hex => `0x${b.repeat(32)}`;
    const [traceRoot, endStateHash, hPrev, hStep, salt] = [h("01"), h("02"), h("03"), h("04"), h("05")];
    const proofPrev = [h("06"), h("07")];
    const proofStep = [h("08")];
    const challenge = encodeCall(challengeStepCall({ disputeGame: game, jobId: 9n, segment: 2, step: 17, traceRoot, endStateHash, hPrev, proofPrev, hStep, proofStep, salt }));
    expect(challenge.to).to.equal(game);
    expect(challenge.data).to.equal(
      concatHex([
        toFunctionSelector("challenge((uint256,uint256,uint256,bytes32,bytes32,bytes32,bytes32[],bytes32,bytes32[],bytes32))"),
        encodeAbiParameters(
          [{ type: "tuple", components: [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }, { type: "bytes32[]" }, { type: "bytes32" }, { type: "bytes32[]" }, { type: "bytes32" }] }],
          [[9n, 2n, 17n, traceRoot, endStateHash, hPrev, proofPrev, hStep, proofStep, salt]],
        ),
      ]),
    );

    const receipt = { jobId: 9n, segment: 2, traceRoot, checks: 3, sampledSteps: 4, verdict: 1 };
    const signature: Hex = `0x${"cd".repeat(65)}`;
    const recorded = encodeCall(recordReceiptCall({ jobRecords: records, receipt, endStateHash, signature }));
    expect(recorded.to).to.equal(records);
    expect(recorded.data).to.equal(
      concatHex([
        toFunctionSelector("recordReceipt((uint256,uint32,bytes32,uint32,uint32,uint8),bytes32,bytes)"),
        encodeAbiParameters(
          [{ type: "tuple", components: [{ type: "uint256" }, { type: "uint32" }, { type: "bytes32" }, { type: "uint32" }, { type: "uint32" }, { type: "uint8" }] }, { type: "bytes32" }, { type: "bytes" }],
          [[9n, 2, traceRoot, 3, 4, 1], endStateHash, signature],
        ),
      ]),
    );
  });
});
